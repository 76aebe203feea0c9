"""Spark jobs asked for from several threads reach Spark's scheduler in the order asked.

Spark's FIFO scheduler runs the tasks of the job with the lowest number first, and a job
is numbered when its thread calls into the JVM. The Extract asks for a batch and, a moment
later from another thread, for the batch after it (mined ahead); the two race to the JVM,
and when the one ahead wins it runs first while the driver waits for the other. Measured
on the 1,000,000-change catch-up (benchmarks/extract_throughput.py, local[2]): the batch
the driver waited for came back after the one ahead in 2 runs of 3, and the driver sat
idle about 0.4 s longer (docs/cluster.md, "Job order").

A :class:`JobOrder` hands out :class:`Turn` objects in the order the batches are asked
for; :func:`in_turn` lets a thread call in only once the job of the turn before it is
known to Spark (its job group has a job id) or that turn has ended without one.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

#: How often a waiting thread asks Spark whether the job before it is known (a py4j call
#: costs 0.1–1.5 ms here; the job before it is usually known within a few milliseconds).
POLL_S: Final = 0.002


@dataclass(frozen=True, slots=True)
class Turn:
    """One job's place: its job group, and the group and end of the turn before it."""

    group: str
    before: str | None
    before_ended: threading.Event | None
    ended: threading.Event = field(default_factory=threading.Event)
    waiting: threading.Event = field(default_factory=threading.Event)  # (seen by tests)


class JobOrder:
    """The turns of one caller's jobs (the Extract's batches), in the order asked for."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._last: Turn | None = None

    def next(self) -> Turn:
        with self._lock:
            last = self._last
            turn = Turn(
                f"{self._name}-{next(self._numbers)}",
                None if last is None else last.group,
                None if last is None else last.ended,
            )
            self._last = turn
            return turn


@contextlib.contextmanager
def in_turn(sc: Any, turn: Turn | None) -> Iterator[None]:
    """Around the call that submits ``turn``'s job from this thread: first wait until the
    job before it is known to Spark (or its turn ended without one), then name this job's
    group. The turn ends when the block does, whatever happens in it."""
    if turn is None:
        yield
        return
    try:
        ended = turn.before_ended
        if turn.before is not None and ended is not None:
            tracker = sc.statusTracker()
            turn.waiting.set()
            while not ended.is_set() and not tracker.getJobIdsForGroup(turn.before):
                ended.wait(POLL_S)
        sc.setJobGroup(turn.group, "ggsci: mining redo")
        try:
            yield
        finally:  # this thread's later jobs are not of the group
            for key in ("spark.jobGroup.id", "spark.job.description"):
                sc.setLocalProperty(key, None)
    finally:
        turn.ended.set()


def job_ids(sc: Any, turn: Turn) -> list[int]:
    """The ids Spark gave the jobs of ``turn`` (for reports and tests)."""
    return sorted(int(i) for i in sc.statusTracker().getJobIdsForGroup(turn.group))
