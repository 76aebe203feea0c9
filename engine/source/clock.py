"""The simulated clock: redo time that may run faster than wall time.

Redo timestamps come from a :class:`Clock`, injected into the database. ``SimClock`` maps
wall time to redo time as ``start + (wall - wall_at_start) * rate``, so ``--clock-rate 3600``
turns a second of work into an hour of redo. ``advance`` jumps redo time forward (used by
the workload's long transactions and by tests, which never sleep).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...

    def advance(self, seconds: float) -> None: ...


@dataclass
class SimClock:
    """Redo time = ``start + elapsed wall time * rate + advanced``; never goes backwards."""

    start: datetime
    rate: float = 1.0
    wall: Callable[[], float] = time.monotonic
    _wall0: float = field(init=False)
    _offset: float = field(init=False, default=0.0)
    _last: datetime = field(init=False)

    def __post_init__(self) -> None:
        self._wall0 = self.wall()
        self._last = self.start

    def now(self) -> datetime:
        t = self.start + timedelta(seconds=(self.wall() - self._wall0) * self.rate + self._offset)
        if t < self._last:
            t = self._last
        self._last = t
        return t

    def advance(self, seconds: float) -> None:
        self._offset += seconds


@dataclass
class ManualClock:
    """A clock for tests: time moves only by :meth:`advance` (or ``step`` per reading)."""

    current: datetime
    step: float = 0.0

    def now(self) -> datetime:
        t = self.current
        self.current = t + timedelta(seconds=self.step)
        return t

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)
