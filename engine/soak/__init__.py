"""Soak checks: what a crash soak of the pipeline must prove, independently of the engine.

The source's committed transactions are read back from its redo with the sequential
reference decoder (:mod:`engine.source.logical`, not the Extract's Spark or C path)
(:mod:`engine.soak.expected`); a trail is held to them transaction by transaction
(:mod:`engine.soak.trailcheck`); an apply audit by trigger on the target records every row
the Replicat changed, so a change applied twice shows even when the final state is right
(:mod:`engine.soak.audit`); kills are counted only when they landed mid-stream
(:mod:`engine.soak.kills`); :mod:`engine.soak.pipeline` runs the end-to-end soak that
``benchmarks/e2e_soak.py`` and ``tests/trust/test_soak_checks.py`` share. Nothing here
imports pyspark.
"""
