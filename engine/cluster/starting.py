"""A process's Spark session started in the background, while the process already works.

An Extract does not wait for its session to capture: the JVM, the SparkContext and the
Python workers take 5–20 s on this machine, and a source with a trickle of changes needs
none of it. The Extract mines in its own process (the same miner a task runs) until the
session is up, then hands its batches to Spark (docs/extract.md, "Start-up"). A session that
cannot start fails the process as it did when the start waited for it: the watchdog bounds
it (``spark.ggsci.startupTimeout``) and its failure is raised by :meth:`SessionStart.take`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.cluster.watch import Watchdog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Started = tuple["SparkSession", str]
"""The session and the line for the report (master, share, where the tasks' code is)."""


class SessionStart:
    """``work`` (engine.cluster.spark.extract_session) in a daemon thread: if the process
    stops first, the thread is abandoned and a JVM it launched ends with the process."""

    def __init__(
        self,
        work: Callable[[], Started],
        watch: Watchdog,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.watch = watch
        self.clock = clock
        self.began = clock()
        self.took: float | None = None
        self._done = threading.Event()
        self._result: Started | None = None
        self._error: BaseException | None = None
        self._taken = False
        self._thread = threading.Thread(
            target=self._body, args=(work,), name="start-up: Spark session", daemon=True
        )
        self._thread.start()

    def _body(self, work: Callable[[], Started]) -> None:
        try:
            self._result = work()
        except BaseException as exc:  # handed to the run's thread by take()
            self._error = exc
        finally:
            self.took = self.clock() - self.began
            self._done.set()

    @property
    def pending(self) -> bool:
        """Not taken yet (starting, or up and not handed over)."""
        return not self._taken

    def take(self) -> Started | None:
        """The session once it is up, exactly once (None before, and after it was taken);
        the start's failure (a :class:`~engine.cluster.spark.SparkConfigError`) is raised."""
        if self._taken or not self._done.is_set():
            return None
        self._taken = True
        if self._error is not None:
            raise self._error
        return self._result

    def wait(self, timeout: float | None = None) -> bool:
        """Whether the start ended (up or failed) within ``timeout`` seconds."""
        return self._done.wait(timeout)

    def status(self) -> str | None:
        """For STATUS while the session starts: what it waits for."""
        if self._done.is_set():
            return None
        waited = self.clock() - self.began
        return self.watch.status() or f"starting the Spark session ({waited:.0f} s)"
