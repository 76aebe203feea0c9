"""Command handlers, one module per area, found through one dispatch table."""
