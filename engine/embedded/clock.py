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

_EPOCH = datetime(1970, 1, 1)


def to_micros(t: datetime) -> int:
    d = t - _EPOCH
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


class Clock(Protocol):
    def now(self) -> datetime: ...

    def now_us(self) -> int:
        """``now()`` as microseconds since 1970-01-01 (the redo timestamp encoding)."""
        ...

    def advance(self, seconds: float) -> None: ...


@dataclass
class SimClock:
    """Redo time = ``start + elapsed wall time * rate + advanced``; never goes backwards."""

    start: datetime
    rate: float = 1.0
    wall: Callable[[], float] = time.monotonic
    _wall0: float = field(init=False)
    _start_us: int = field(init=False)
    _offset_us: int = field(init=False, default=0)
    _last_us: int = field(init=False)

    def __post_init__(self) -> None:
        self._wall0 = self.wall()
        self._start_us = self._last_us = to_micros(self.start)

    def now_us(self) -> int:
        us = self._start_us + int((self.wall() - self._wall0) * self.rate * 1e6) + self._offset_us
        if us < self._last_us:
            us = self._last_us
        self._last_us = us
        return us

    def now(self) -> datetime:
        return _EPOCH + timedelta(microseconds=self.now_us())

    def advance(self, seconds: float) -> None:
        self._offset_us += int(seconds * 1e6)


@dataclass
class ManualClock:
    """A clock for tests: time moves only by :meth:`advance` (or ``step`` per reading)."""

    current: datetime
    step: float = 0.0

    def now(self) -> datetime:
        t = self.current
        self.current = t + timedelta(seconds=self.step)
        return t

    def now_us(self) -> int:
        return to_micros(self.now())

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)
