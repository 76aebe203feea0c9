"""What runs in the Extract's Spark tasks: what a task is given and hands back
(:mod:`~engine.extract.tasks.plan`), the miner over a split of redo
(:mod:`~engine.extract.tasks.miner`, :mod:`~engine.extract.tasks.rowpieces`,
:mod:`~engine.extract.tasks.decode`, :mod:`~engine.extract.tasks.values`), the grouping of a
split's changes into transactions and fragments (:mod:`~engine.extract.tasks.txngroup`) and
their closing into trail records (:mod:`~engine.extract.tasks.closing`), the TABLE options'
selection (:mod:`~engine.extract.tasks.tablerules`, :mod:`~engine.extract.tasks.rowselect`)
and trail assembly (:mod:`~engine.extract.tasks.assemble`). Everything here must pickle and
import on a bare executor (docs/cluster.md); the driver uses the same code in process.
"""
