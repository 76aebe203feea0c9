"""Spark plumbing: the one SparkSession of a process and what its executors need.

Modules, one job each: :mod:`~engine.cluster.spark` (the session, built once, configured for
where it runs), :mod:`~engine.cluster.ship` (the code that travels to executors),
:mod:`~engine.cluster.jobturn` (jobs reach the scheduler in the order asked),
:mod:`~engine.cluster.heap` (a mining process keeps its C heap between splits).
Only engine processes import this; the shell never does.
"""
