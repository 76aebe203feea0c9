"""The parameter-file language: grammar, preprocessing, typed models, validation.

Pure: imports nothing from ``engine`` or ``ggsci`` (and never pyspark).
"""
