"""A Spark task's Python worker settles once: what it holds for good leaves the collector's
walks, and the C heap a split needs stays between splits.

Called by the Extract's tasks at their first split and by the executor check
(:func:`engine.cluster.spark`), so a worker that was warmed is settled already.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from typing import Any, Final

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


#: The first bytes of a task's result that is not a mined split but the reason the task's
#: Python cannot run the miner (a kernel that does not load, a module that is missing).
CANNOT_RUN: Final = b"GGSCI-CANNOT-RUN:"


def run_task(target: str, plan_bc: Any, splits: Iterator[Any]) -> Iterator[bytes]:
    """A Spark task that runs ``target`` (``"module:function"``, named by its caller: this
    module imports nothing of the engine's above it) over ``plan_bc`` and ``splits``: the
    function's results, or one :data:`CANNOT_RUN` line when its modules cannot be imported
    here. Such a task succeeds, so that Spark does not retry it on another executor and hide
    a broken one: the driver abends with the line
    (:func:`engine.extract.redo_source.decode_splits`). Checked in each Python worker at
    its first task (a module that failed to import is tried again by the next task)."""
    module, _, name = target.partition(":")
    try:
        import importlib

        function = getattr(importlib.import_module(module), name)
    except Exception as exc:
        import socket
        import sys

        yield CANNOT_RUN + cannot_run_line(exc, socket.gethostname(), sys.executable).encode()
        return
    yield from function(plan_bc, splits)


def cannot_run_line(exc: BaseException, host: str, python: str) -> str:
    """One line: why this executor's Python cannot run the shipped code."""
    from engine._native import MISSING

    text = str(exc)
    if MISSING in text:
        return f"{MISSING}: " + " ".join(text.split(MISSING, 1)[1].lstrip(": ").split())
    return (
        f"{MISSING}: an executor on host {host} cannot run the shipped code with {python}: "
        f"{type(exc).__name__}: {' '.join(text.split())} (docs/cluster.md, \"The executors' "
        'environment")'
    )


#: How a warm-up task reports that it cannot run ggsci's code.
FAILED: Final = "FAILED: "


def warm_task(modules: tuple[str, ...], _: Iterator[Any]) -> list[str]:
    """A warm-up task (:func:`engine.cluster.spark.warm_workers`; shipped from this
    module, which imports nothing of ggsci's but the heap's): import ``modules``; where the
    task's ggsci code comes from, or :data:`FAILED` and why not (one line)."""
    import importlib
    import socket

    host = socket.gethostname()
    try:
        import engine

        for name in modules:
            importlib.import_module(name)
        settle_worker()  # what was just imported stays: out of the collector's walks
    except Exception as exc:
        return [FAILED + cannot_run_line(exc, host, sys.executable)]
    return [f"{os.path.dirname(engine.__file__ or '?')} on {host}"]
