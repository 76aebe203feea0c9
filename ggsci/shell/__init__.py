"""The interactive shell: completion, highlighting, key bindings and the prompt session."""
