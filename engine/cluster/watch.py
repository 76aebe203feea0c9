"""The Extract's Spark application never hangs: a watchdog that turns a stall into one line.

On a cluster an Extract can wait forever inside Spark: no executor is ever granted (the
cluster's cores are held by another application), executors are granted but cannot call
the driver back (a wrong ``spark.driver.host``: they crash-loop on the workers), the
master was restarted and no longer knows the application (standalone without recovery),
or a job simply stops finishing tasks. Spark itself only logs a warning. The
:class:`Watchdog` polls the application once a second (the status tracker, and the
driver's Spark log when it is ggsci's own, ``dirrpt/<GROUP>_spark.log``) and, past a
bound, records a :class:`SparkFault` (an OGG code and one line saying what it waited for),
cancels the application's jobs and calls ``on_fault`` (the Extract then abends: the
Manager's AUTORESTART can act on it). :meth:`Watchdog.status` says what it waits for
(``SEND ... STATUS``).

The bounds (``SPARKCONF`` keys of ggsci's own, as Spark's libraries name theirs; a time as
Spark writes one: ``90``, ``90s``, ``2min``, ``1h``):

- ``spark.ggsci.startupTimeout`` (120 s): the most the session may take to start (the
  JVM, registration with the master);
- ``spark.ggsci.executorTimeout`` (the startup bound when not set): the most, once the
  session is up, until the Extract's executors have run their first tasks (executors
  granted and started, the shipped code imported);
- ``spark.ggsci.progressTimeout`` (300 s): a job in flight with no task finished;
- ``spark.ggsci.masterTimeout`` (60 s): the connection to a standalone master lost without
  a new master taking the application over (docs/cluster.md, "Master high availability").

Before the first job the driver also connects to its own advertised address
(``spark.driver.host``:``spark.driver.port``): an address it cannot reach itself is one
the executors cannot call back either, and the Extract stops at once with that.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from engine.cluster.cause import text_cause
from engine.errors import GGError
from params.sparksettings import GGSCI_TIMES, spark_seconds

STARTUP_KEY: Final = "spark.ggsci.startupTimeout"
EXECUTOR_KEY: Final = "spark.ggsci.executorTimeout"
PROGRESS_KEY: Final = "spark.ggsci.progressTimeout"
MASTER_KEY: Final = "spark.ggsci.masterTimeout"
DEFAULTS: Final[Mapping[str, float]] = GGSCI_TIMES
#: The abend code of a stalled application (OGG's "process abending" family).
CODE: Final = "OGG-01668"
POLL_S: Final = 1.0


class SparkFault(GGError):
    """The application cannot go on: an OGG code and one line."""

    def __init__(self, text: str, code: str = CODE) -> None:
        super().__init__(code, text)


def seconds(key: str, text: str) -> float:
    """A Spark time setting in seconds (a bare number is seconds)."""
    got = spark_seconds(text)
    if got is None:
        raise SparkFault(f"{key}={text}: expected a time such as 120s, 5min or 1h")
    return got


@dataclass(frozen=True)
class Limits:
    startup_s: float = DEFAULTS[STARTUP_KEY]
    progress_s: float = DEFAULTS[PROGRESS_KEY]
    master_s: float = DEFAULTS[MASTER_KEY]
    executor_s: float = DEFAULTS[EXECUTOR_KEY]

    @classmethod
    def of(cls, conf: Mapping[str, str]) -> Limits:
        """The bounds of a session's settings (the defaults where not set; the executors'
        bound is the startup bound unless set)."""
        got = {k: seconds(k, conf[k]) if k in conf else v for k, v in DEFAULTS.items()}
        executor = got[EXECUTOR_KEY] if EXECUTOR_KEY in conf else got[STARTUP_KEY]
        return cls(got[STARTUP_KEY], got[PROGRESS_KEY], got[MASTER_KEY], executor)


def _fmt(s: float) -> str:
    return f"{s:.0f} s"


@dataclass
class LogSigns:
    """What the driver's Spark log said since the watchdog started (standalone's scheduler
    backend and application client log at INFO there: engine/spark_log4j2.properties)."""

    granted: int = 0
    removed: int = 0
    last_removal: str = ""
    disconnected_at: float | None = None
    dead: str = ""
    no_resources: bool = False
    refused: str = ""  # why the master refused the connection (its innermost cause)
    _refusing: bool = False

    def read(self, line: str, now: float) -> None:
        if "Failed to connect to master" in line:
            self._refusing = True
        elif self._refusing and line.startswith("Caused by: "):
            self.refused = text_cause(line) or self.refused
        elif line[:4].isdigit():  # the next logged line: the trace is over
            self._refusing = False
        if "Granted executor ID" in line:
            self.granted += 1
        elif " removed: " in line and "Executor " in line:
            self.removed += 1
            self.last_removal = line.split(" removed: ", 1)[1].strip()
        elif "Disconnected from Spark cluster" in line or "waiting for master to reconnect" in line:
            if self.disconnected_at is None:
                self.disconnected_at = now
        elif "Master has changed, new master is at" in line or "Connected to Spark cluster" in line:
            self.disconnected_at = None
        elif "All masters are unresponsive" in line or "Master removed our application" in line:
            self.dead = line.split(": ", 1)[-1].strip()
        elif "Initial job has not accepted any resources" in line:
            self.no_resources = True


class LogTail:
    """The lines appended to a file since it was opened here (a missing file: none)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.offset = path.stat().st_size if path is not None and path.is_file() else 0
        self._rest = b""

    def lines(self) -> list[str]:
        if self.path is None:
            return []
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read(1 << 20)
        except OSError:
            return []
        self.offset += len(data)
        data = self._rest + data
        *whole, self._rest = data.split(b"\n")
        return [w.decode(errors="replace") for w in whole]


def probe(host: str, port: int, timeout: float = 3.0) -> str | None:
    """None when ``host:port`` accepts a connection from here, else why not."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


class Watchdog:
    """Watches one application (its SparkContext ``sc``) from a daemon thread.

    ``starting`` until :meth:`started` (the first tasks ran): the start-up bound counts
    from the watchdog's creation. The clock and the poll are injected for tests."""

    def __init__(
        self,
        limits: Limits,
        log_file: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits
        self.clock = clock
        self.t0 = clock()
        self.sc: Any = None
        self.master = ""
        self.fault: SparkFault | None = None
        self.signs = LogSigns()
        self._tail = LogTail(log_file)
        self._starting = True
        self._progress: tuple[object, ...] = ()
        self._since = self.t0
        self._executors = 0
        self._on_fault: list[Callable[[SparkFault], None]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- life -----------------------------------------------------------------------
    def attach(self, sc: Any) -> None:
        """The session is up: check the driver's address, then watch from a thread."""
        self.sc = sc
        self.t0 = self._since = self.clock()  # the executors' own start-up bound from now
        conf = sc.getConf()
        self.master = conf.get("spark.master") or ""
        host, port = conf.get("spark.driver.host"), conf.get("spark.driver.port")
        if host and port and port.isdigit():
            why = probe(host, int(port))
            if why is not None:
                self._raise(
                    f"The executors cannot call the driver back at {host}:{port} "
                    f"(spark.driver.host): the driver itself cannot connect there ({why}). "
                    "Set spark.driver.host to an address of this host that the workers reach."
                )
        self._thread = threading.Thread(target=self._loop, name="spark watchdog", daemon=True)
        self._thread.start()

    def follow_log(self, log_file: Path | None) -> None:
        """Read the driver's Spark log from now on (None: it is not ggsci's to read)."""
        self._tail = LogTail(log_file)

    def on_fault(self, action: Callable[[SparkFault], None]) -> None:
        self._on_fault.append(action)

    def started(self) -> None:
        """The first tasks ran: from now on a stall is judged by the progress bound."""
        self._starting = False
        self._since = self.clock()

    def close(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(POLL_S):
            if self.fault is not None:  # a job asked for since (mining ahead): cancelled too
                with contextlib.suppress(Exception):
                    self.sc.cancelAllJobs()
                continue
            try:
                self.check()
            except SparkFault:
                continue
            except Exception:  # the JVM going away: the run's own error says it
                if self.sc is None or self._stopped():
                    return

    def _raise(self, text: str) -> None:
        fault = SparkFault(text)
        if self.fault is None:
            self.fault = fault
            with contextlib.suppress(Exception):
                if self.sc is not None:
                    self.sc.cancelAllJobs()
            for action in self._on_fault:
                action(fault)
        raise fault

    def _stopped(self) -> bool:
        return bool(self.sc._jsc.sc().isStopped())

    # --- one look -------------------------------------------------------------------
    def check(self) -> None:
        """One poll: raises (and records) :class:`SparkFault` past a bound."""
        if self.fault is not None:
            raise self.fault
        now = self.clock()
        for line in self._tail.lines():
            self.signs.read(line, now)
        if self.sc is None:  # the session is still starting
            if now - self.t0 > self.limits.startup_s:
                self._raise(
                    f"The Spark session did not start within {_fmt(self.limits.startup_s)}"
                    f"{self._cause()}. {self._bound_hint(STARTUP_KEY)}"
                )
            return
        if self._stopped():
            self._raise(f"The Spark application stopped{self._cause() or ' (its log says why)'}.")
        tracker = self.sc.statusTracker()
        infos = tracker.getExecutorInfos()
        self._executors = max(0, len(infos) - 1)  # (the driver is listed too)
        lost = self.signs.disconnected_at
        if lost is not None and now - lost > self.limits.master_s:
            self._raise(
                f"The connection to the Spark master {self.master} was lost "
                f"{_fmt(now - lost)} ago and no master took the application over (a master "
                f"restarted without recovery forgets its applications: docs/cluster.md). "
                f"{self._bound_hint(MASTER_KEY)}"
            )
        jobs = sorted(tracker.getActiveJobsIds())
        stages = sorted(tracker.getActiveStageIds())
        done = 0
        for sid in stages:
            info = tracker.getStageInfo(sid)
            if info is not None:
                done += int(info.numCompletedTasks)
        progress = (tuple(jobs), done)
        if not jobs or progress != self._progress:
            self._progress = progress
            if not self._starting or not jobs:
                self._since = now
        if self._starting:
            if now - self.t0 > self.limits.executor_s:
                self._raise(
                    f"The Spark application did not start within {_fmt(self.limits.executor_s)}: "
                    f"{self._waiting(now)}. {self._bound_hint(self._executor_key())}"
                )
        elif jobs and now - self._since > self.limits.progress_s:
            self._raise(
                f"No Spark task finished for {_fmt(now - self._since)}: {self._waiting(now)}. "
                f"{self._bound_hint(PROGRESS_KEY)}"
            )

    def _bound_hint(self, key: str) -> str:
        return f"(bound: {key})"

    def _executor_key(self) -> str:
        """The setting that bounds the executors' start: their own when it differs."""
        same = self.limits.executor_s == self.limits.startup_s
        return STARTUP_KEY if same else EXECUTOR_KEY

    def _cause(self) -> str:
        s = self.signs
        if s.dead:
            return f": {s.dead}"
        if s.disconnected_at is not None:
            return f": the connection to the master {self.master} was lost"
        if s.refused:
            return f": the master refused the application ({s.refused})"
        return ""

    def _waiting(self, now: float) -> str:
        s = self.signs
        if s.disconnected_at is not None:
            return (
                f"the connection to the master {self.master} is lost "
                f"(for {_fmt(now - s.disconnected_at)}); waiting for a master to take it over"
            )
        if self._executors == 0:
            text = f"no executor registered from {self.master}"
            if s.removed:
                text += (
                    f"; {s.removed} executor(s) were granted and ended before they registered "
                    f"(last: {s.last_removal}): can they reach the driver (spark.driver.host)? "
                    "Their logs are on the workers"
                )
            elif s.granted == 0 and (s.no_resources or self._tail.path is not None):
                text += (
                    "; none granted: the cluster has no free cores or memory for it (held by "
                    "other applications?) or no worker"
                )
            return text
        return f"{self._executors} executor(s), no task finished for {_fmt(now - self._since)}"

    def status(self) -> str | None:
        """What the application waits for, when it waits (for STATUS), else None."""
        if self.fault is not None:
            return f"failed: {self.fault.text}"
        now = self.clock()
        if self.sc is None:
            return f"starting the Spark session ({_fmt(now - self.t0)})"
        if self._starting:
            bound = self.limits.executor_s
            return f"{self._waiting(now)} ({_fmt(now - self.t0)} of {_fmt(bound)})"
        idle = now - self._since
        if self.signs.disconnected_at is not None or (self._progress[:1] != ((),) and idle > 10):
            return f"{self._waiting(now)} ({_fmt(idle)} of {_fmt(self.limits.progress_s)})"
        return None


def bounded(work: Callable[[], Any], watch: Watchdog, poll: float = 0.2) -> Any:
    """``work()`` in a daemon thread; its result, or the watchdog's fault as soon as there
    is one (the thread is abandoned: the process is about to end)."""
    box: list[Any] = []
    failed: list[BaseException] = []
    done = threading.Event()

    def body() -> None:
        try:
            box.append(work())
        except BaseException as exc:  # handed to the caller
            failed.append(exc)
        finally:
            done.set()

    threading.Thread(target=body, name="spark start-up", daemon=True).start()
    while not done.wait(poll):
        if watch.fault is not None:
            raise watch.fault
        if watch.sc is None:
            try:
                watch.check()  # before the session exists (no thread yet)
            except SparkFault:
                raise
    if watch.fault is not None:
        raise watch.fault
    if failed:
        raise failed[0]
    return box[0]
