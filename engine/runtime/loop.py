"""The one run protocol of a group process's engine: Extract, pump and Replicat alike.

A run reads and applies one batch at a time (:meth:`GroupRun.poll`, which returns how many
records or changes it handled), publishes a checkpoint after work or every CHECKPOINTSECS
when idle (:meth:`GroupRun.checkpoint`), stops at end of data when asked (``--stop-at-eof``)
and waits when idle. SEND requests are answered meanwhile by the process's IPC thread
(:mod:`engine.runtime.process`); a run that must act on one between batches (the Extract's
ROLLOVER) does it in :meth:`GroupRun.between`.
"""

from __future__ import annotations

import abc
import threading
import time
from collections.abc import Callable

Stop = threading.Event | Callable[[], bool]
"""What ends a run: the process's stop event, or a function (tests, ``ggsci replicat``)."""


class GroupRun(abc.ABC):
    """Driver side; nothing here pickles."""

    at_eof: bool = False
    """The last poll found nothing (``LAG``/``STATUS``: 'At EOF')."""
    last_checkpoint: float = 0.0
    """``time.monotonic()`` of the last checkpoint published."""
    after_batch: Callable[[], None] | None = None
    """Called after every batch and every idle wait (the REPORT schedule of the process)."""

    @property
    @abc.abstractmethod
    def checkpoint_secs(self) -> int:
        """CHECKPOINTSECS: how often an idle run publishes its checkpoint."""

    @abc.abstractmethod
    def poll(self) -> int:
        """Read and apply one batch; how many items it handled (0: at end of data)."""

    @abc.abstractmethod
    def checkpoint(self) -> None:
        """Publish the position of what is durable (and set :attr:`last_checkpoint`)."""

    def between(self) -> None:  # noqa: B027  (most runs have nothing to do between batches)
        """Work due before the next batch (a request acted on between batches)."""

    def wake(self) -> bool:
        """Whether an idle run should not wait (a request is waiting for :meth:`between`)."""
        return False

    def run(self, stop: Stop, *, stop_at_eof: bool = False, idle: float = 0.2) -> None:
        """Batches until ``stop``; the last checkpoint is published on the way out."""
        if isinstance(stop, threading.Event):
            stopped: Callable[[], bool] = stop.is_set
            wait: Callable[[float], object] = stop.wait
        else:
            stopped, wait = stop, time.sleep
        interval = max(1, self.checkpoint_secs)
        while not stopped():
            self.between()
            n = self.poll()
            self.at_eof = n == 0
            if self.after_batch is not None:
                self.after_batch()
            if n or time.monotonic() - self.last_checkpoint >= interval:
                self.checkpoint()
            if n == 0:
                if stop_at_eof:
                    break
                if not self.wake():
                    wait(idle)
        self.checkpoint()
