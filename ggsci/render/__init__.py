"""GGSCI screens and replies as text (pure functions of the data they show)."""
