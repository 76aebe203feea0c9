"""The GGSCI command language: keyword tables, grammar, typed commands, parsing."""
