"""What runs in the Extract's Spark tasks: the miner over a split of redo
(:mod:`~engine.extract.tasks.miner`, :mod:`~engine.extract.tasks.decode`,
:mod:`~engine.extract.tasks.values`), the grouping of a split's changes into transactions and
fragments (:mod:`~engine.extract.tasks.txngroup`), the TABLE options' selection
(:mod:`~engine.extract.tasks.tablerules`, :mod:`~engine.extract.tasks.rowselect`) and trail
assembly (:mod:`~engine.extract.tasks.assemble`). Everything here must pickle and import on a
bare executor (docs/cluster.md); the driver uses the same code in process.
"""
