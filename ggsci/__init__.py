"""The command interpreter: GGSCI command grammar, shell, CLI, rendering."""
