"""Soak checks: what a crash soak of the pipeline must prove, independently of the engine.

The source's committed transactions are read back from its redo with the sequential
reference decoder (:mod:`tests.harness.logical`, not the Extract's Spark or C path)
(:mod:`tests.harness.soak.expected`); a trail is held to them transaction by transaction
(:mod:`tests.harness.soak.trailcheck`); an apply audit by trigger on the target records every row
the Replicat changed, so a change applied twice shows even when the final state is right
(:mod:`tests.harness.soak.audit`); kills are counted only when they landed mid-stream
(:mod:`tests.harness.soak.kills`); :mod:`tests.harness.soak.pipeline` runs the end-to-end soak that
``benchmarks/e2e_soak.py`` and ``tests/trust/test_soak_checks.py`` share. Nothing here
imports pyspark.
"""
