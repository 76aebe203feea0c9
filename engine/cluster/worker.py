"""A Spark task's Python worker settles once: what it holds for good leaves the collector's
walks, and the C heap a split needs stays between splits.

Called by the Extract's tasks at their first split and by the executor check
(:func:`engine.cluster.spark`), so a worker that was warmed is settled already.
"""

from __future__ import annotations

import gc

from engine.cluster.heap import keep_heap

_SETTLED: list[bool] = []  # whether this process has run settle_worker


def settle_worker() -> None:
    """Once per Python worker, when it is warmed or at its first task:

    - exempt what it holds for good (the modules it imported: pyspark, pyarrow, ggsci,
      about 58,000 objects) from the cyclic collector. PySpark's daemon runs
      ``gc.collect()`` after every task of a reused worker: walking those objects cost
      about 27 ms of CPU a task, more than the rest of an empty task. Later objects are
      collected as before; the frozen ones are still freed by reference counting.
    - keep the C heap a split needs from one split to the next
      (:func:`engine.cluster.heap.keep_heap`):
      about 4,000 fresh page faults a split otherwise.

    (benchmarks/extract_scaling.py; docs/cluster.md. A flag, not ``gc.get_freeze_count()``:
    that walks the frozen objects, about 9 ms.)"""
    if not _SETTLED:
        gc.collect()
        gc.freeze()
        keep_heap()
        _SETTLED.append(True)
