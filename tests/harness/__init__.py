"""The test harness: what tests, benchmarks and the demo use and the runtime does not.

:mod:`~tests.harness.pipeline_home` (a home set up for Extract ==> pump ==> Replicat),
:mod:`~tests.harness.soak` (crash soaks and their independent audits),
:mod:`~tests.harness.livecheck` (live against catch-up runs), :mod:`~tests.harness.logical`
(the reference decoder the miner is held to), :mod:`~tests.harness.runners` (the built-in group
runner that only checks parameters).
"""
