"""A group process: ``python -m engine.runtime.process EXTRACT EXT1 --home DIR``.

The Manager starts one OS process per group with this entry point. The process takes its
lock, chdirs to the home, writes its process file (STARTING), ages and opens its report and
listens for SEND requests on ``dirpcs/<GROUP>.pce.sock`` (RUNNING), all before it imports its
engine (let alone pyspark or a JVM): a started process answers from its first second. Then the
runner registered for its kind prepares (``SEND ... STATUS`` answers ``starting: <what it
waits for>`` meanwhile, and STOP stops it cleanly) and gets the main thread until a STOP request
or SIGTERM. A clean return is STOPPED (OGG-00991); an exception is ABENDED (OGG-01668) with its
message in the report and ggserr.log.

Plug-in points for the engines (Extract, pump, Replicat):

- :data:`RUNNERS` maps a group kind to ``"module:Class"`` of a :class:`GroupRunner`; the class is
  imported only inside the group process, so it may import pyspark.
- :meth:`GroupRunner.prepare` registers SEND request handlers in ``ctx.handlers`` (a
  :class:`engine.runtime.ipc.HandlerTable`): SHOWTRANS, SKIPTRANS, BR, ... The defaults
  registered here (STOP, FORCESTOP, STATUS, REPORT, GETLAG) may be replaced the same way. A
  slow step of ``prepare`` (starting Spark) goes through :meth:`GroupContext.wait_for`, which
  runs it in a background thread and gives up on it when STOP comes first; ``run`` is called
  even then (its loop ends at once) so that whatever ``prepare`` opened is closed.
"""

from __future__ import annotations

import abc
import argparse
import contextlib
import errno
import importlib
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from engine.errors import GGError
from engine.home.checkpoints import Checkpoints, load_checkpoints
from engine.home.groups import GroupDef, GroupStore, SourceType, checked_checkpoints
from engine.home.layout import Home
from engine.home.names import InvalidGroupName, check_group_name
from engine.home.status import (
    LockHeld,
    ProcessFile,
    ProcessLock,
    State,
    socket_path,
    start_ticks,
    write_process_file,
)
from engine.home.trust import BadFile, NotHomeOwner, check_home_owner, display, private_umask
from engine.runtime import paraminfo
from engine.runtime.events import (
    CAPTURE_COMPONENT,
    DELIVERY_COMPONENT,
    Clock,
    Event,
    Severity,
    log_event,
)
from engine.runtime.ipc import HandlerTable, IpcServer, Reply, Request
from engine.runtime.report import ReportWriter
from engine.runtime.reportschedule import ReportSchedule
from engine.runtime.stats import StatsBook

RUNNERS: dict[str, str] = {
    "EXTRACT": "engine.extract.runner:ExtractRunner",
    "PUMP": "engine.pump.runner:PumpRunner",
    "REPLICAT": "engine.replicat.runner:ReplicatRunner",
}
"""Runner kind (:func:`runner_kind`) → ``module:Class`` of its :class:`GroupRunner`."""


def runner_kind(group: GroupDef) -> str:
    """A data pump is an Extract group added with EXTTRAILSOURCE; it runs the pump's runner."""
    if group.kind == "EXTRACT" and group.source == SourceType.EXTTRAILSOURCE:
        return "PUMP"
    return group.kind


class ProcessAbend(GGError):
    """Raised by a runner to abend with an OGG message (code and text go to report and log)."""


@dataclass
class GroupContext:
    """What a runner gets: its home, definition, stop signal, report, log and SEND handlers.

    Everything here lives in the group process (driver side); none of it needs to pickle.
    """

    home: Home
    group: GroupDef
    clock: Clock
    report: ReportWriter
    stop_requested: threading.Event = field(default_factory=threading.Event)
    force_stop: threading.Event = field(default_factory=threading.Event)
    handlers: HandlerTable = field(default_factory=HandlerTable)
    started: datetime = field(default_factory=datetime.now)
    start_options: dict[str, int] = field(default_factory=dict)
    """START's positioning options for this run: ``{"ATCSN": n}`` or ``{"AFTERCSN": n}``."""
    parameters: tuple[str, ...] = ()
    """The parameter statements read at start-up (GETPARAMINFO answers them)."""
    starting: str | None = "loading the engine"
    """What the process waits for while it starts (``SEND ... STATUS`` says it), None once up."""
    runner: GroupRunner | None = None
    stats_book: StatsBook | None = None
    """The runner's operation counts (its STATS): the report's Run Time Statistics."""
    monotonic: Callable[[], float] = time.monotonic
    created: float = field(default_factory=time.monotonic)
    """When the group process set up (``time.monotonic``): start-up phases count from it."""
    _phase: tuple[str, float] | None = None

    def phase(self, what: str | None) -> None:
        """Start-up phases in the report (START to capturing): the phase that ends, with its
        seconds; ``None`` when the process is up, with the seconds since it set up."""
        now = self.monotonic()
        if self._phase is not None:
            name, since = self._phase
            self.report.line(f"Start-up phase: {name}: {now - since:.2f} s.")
        if what is None:
            if self._phase is not None:
                self.report.line(
                    f"Start-up done: {now - self.created:.2f} s after the process set up."
                )
            self._phase = None
        else:
            self._phase = (what, now)

    def report_schedule(
        self, entries: tuple[str, ...], rollover: tuple[str, ...] = ()
    ) -> Callable[[], None]:
        """What a run calls after each batch: the Run Time Statistics when REPORT says; when
        REPORTROLLOVER says, them and then a new report file."""
        schedule = ReportSchedule(entries, self.clock)
        rolls = ReportSchedule(rollover, self.clock)

        def tick() -> None:
            rolled = rolls.due()
            if schedule.due() or rolled:
                self.run_time_statistics()
            if rolled:
                self.report.rollover()

        return tick

    def run_time_statistics(self) -> None:
        """Write the Run Time Statistics to the report (at stop, on SEND ... REPORT)."""
        if self.stats_book is not None:
            for line in self.stats_book.run_time_statistics():
                self.report.line(line)

    def wait_for(
        self, what: str, work: Callable[[], T], detail: Callable[[], str | None] | None = None
    ) -> T | None:
        """Do ``work`` (a slow start-up step: a Spark session) in a background thread while
        ``SEND ... STATUS`` answers ``starting: <what>`` (``: <detail()>`` when it says
        what the step waits for); its result, or None when STOP (or SIGTERM) came first: the
        thread is abandoned (it is a daemon; a JVM it launched ends with the process, whose
        end closes the JVM's standard input). Its exception is raised here."""
        self.starting = what
        box: list[T] = []
        failed: list[BaseException] = []
        done = threading.Event()

        def body() -> None:
            try:
                box.append(work())
            except BaseException as exc:  # handed to the main thread
                failed.append(exc)
            finally:
                done.set()

        threading.Thread(target=body, name=f"start-up: {what}", daemon=True).start()
        while not done.wait(STARTUP_POLL):
            now = detail() if detail is not None else None
            self.starting = f"{what}: {now}" if now else what
            if self.stop_requested.is_set():
                self.report.line(f"Stopped while starting ({what}).")
                return None
        if failed:
            raise failed[0]
        return box[0]

    @property
    def component(self) -> str:
        return CAPTURE_COMPONENT if self.group.kind == "EXTRACT" else DELIVERY_COMPONENT

    @property
    def param_file(self) -> Path:
        return self.group.param_file(self.home)

    def event(self, code: str, severity: Severity, text: str) -> None:
        """Write one OGG message to the report and to ggserr.log."""
        ev = Event(code, severity, text, self.component, self.param_file.name)
        self.report.event(ev)
        log_event(self.home.ggserr_log, ev, self.clock)

    def checkpoints(self) -> Checkpoints | None:
        return load_checkpoints(self.home, self.group.kind, self.group.name)


STARTUP_POLL = 0.05
T = TypeVar("T")


class GroupRunner(abc.ABC):
    """One kind of group process. Both methods run in the group process's main thread."""

    def prepare(self, ctx: GroupContext) -> None:  # noqa: B027 - optional hook
        """Validate and register SEND handlers in ``ctx.handlers``; raise ProcessAbend to fail."""

    @abc.abstractmethod
    def run(self, ctx: GroupContext) -> None:
        """Do the work until ``ctx.stop_requested`` is set; return to stop cleanly."""

    def status_lines(self, ctx: GroupContext) -> list[str]:
        """What ``SEND ... STATUS`` answers; engines report their read/write positions."""
        return [f"{ctx.group.kind} {ctx.group.name}: RUNNING"]

    def at_eof(self, ctx: GroupContext) -> bool:
        """Whether the last read found nothing more to process (LAG's 'At EOF' line)."""
        return False


RUNNER_ENV = "GGSCI_RUNNER_{kind}"
"""``GGSCI_RUNNER_EXTRACT=module:Class`` in the environment of the Manager (inherited by the
groups it starts) replaces :data:`RUNNERS`'s entry: for tests that need a process without its
engine, and for trying an engine before it is registered."""


def runner_spec(kind: str) -> str:
    """The runner of ``kind``: an environment override, else :data:`RUNNERS`'s. A pump is an
    Extract group, so ``GGSCI_RUNNER_EXTRACT`` overrides pumps too unless ``_PUMP`` is set."""
    env = os.environ.get
    if kind == "PUMP":
        return (
            env(RUNNER_ENV.format(kind="PUMP"))
            or env(RUNNER_ENV.format(kind="EXTRACT"))
            or RUNNERS[kind]
        )
    return env(RUNNER_ENV.format(kind=kind)) or RUNNERS[kind]


def load_runner(kind: str) -> GroupRunner:
    spec = runner_spec(kind)
    module_name, _, attr = spec.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    runner = cls()
    if not isinstance(runner, GroupRunner):
        raise TypeError(f"{spec} is not a GroupRunner")
    return runner


class StartingTable(HandlerTable):
    """The process's SEND handlers: while it starts, a request its engine will answer once
    up gets one line saying so (not a list of valid requests)."""

    def __init__(self, ctx: GroupContext) -> None:
        super().__init__()
        self.ctx = ctx

    def dispatch(self, request: Request) -> Reply:
        waiting = self.ctx.starting
        if waiting is not None and request.command not in self.names():
            g = self.ctx.group
            return Reply.error(
                f"ERROR: {g.kind} {g.name} is starting ({waiting}); "
                f"{request.command or 'the request'} is answered once it is up."
            )
        return super().dispatch(request)


def starting_lines(ctx: GroupContext) -> list[str]:
    return [
        f"{ctx.group.kind} {ctx.group.name}: RUNNING",
        f"  Current status: starting: {ctx.starting}",
    ]


def default_handlers(ctx: GroupContext, runner: GroupRunner | None = None) -> HandlerTable:
    table = StartingTable(ctx)
    if runner is not None:
        ctx.runner = runner

    def stop(_: Request) -> Reply:
        ctx.stop_requested.set()
        return Reply(("Request processed.",))

    def forcestop(_: Request) -> Reply:
        ctx.force_stop.set()
        ctx.stop_requested.set()
        return Reply(("Request processed.",))

    def status(_: Request) -> Reply:
        if ctx.starting is not None or ctx.runner is None:
            return Reply(tuple(starting_lines(ctx)))
        return Reply(tuple(ctx.runner.status_lines(ctx)))

    def report(_: Request) -> Reply:
        ctx.report.line(
            f"{ctx.clock():%Y-%m-%d %H:%M:%S}  Report requested by SEND {ctx.group.kind}."
        )
        ctx.run_time_statistics()
        return Reply(("Request processed.",))

    def getlag(_: Request) -> Reply:
        cps = ctx.checkpoints()
        at_eof = ctx.runner is not None and ctx.runner.at_eof(ctx)  # set after this table
        eof = ("At EOF, no more records to process.",) if at_eof else ()
        if cps is None or cps.lag_seconds is None:
            return Reply(("No records yet processed.", *eof))
        return Reply((f"Last record lag: {round(cps.lag_seconds)} seconds.", *eof))

    g = ctx.group
    try:
        source = str(ctx.param_file.relative_to(ctx.home.root))
    except ValueError:
        source = str(ctx.param_file)
    table.add(
        "GETPARAMINFO",
        paraminfo.handler(
            f"{g.kind} {g.name}", source, lambda: ctx.parameters, lambda: ctx.starting
        ),
    )
    table.add("STOP", stop)
    table.add("FORCESTOP", forcestop)
    table.add("STATUS", status)
    table.add("REPORT", report)
    table.add("GETLAG", getlag)
    return table


def _param_echo(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except OSError:
        return []


def _refuse(home: Home, kind: str, code: str, text: str, clock: Clock) -> None:
    """A start refused before the process exists as the group: one line to stderr (the
    Manager's ``dirout/<GROUP>.out``) and to ggserr.log; the process file is not touched."""
    component = CAPTURE_COMPONENT if kind == "EXTRACT" else DELIVERY_COMPONENT
    ev = Event(code, Severity.ERROR, text, component)
    sys.stderr.write(ev.format(clock()) + "\n")
    if home.root.is_dir():
        log_event(home.ggserr_log, ev, clock)


def run_group(
    home: Home,
    kind: str,
    name: str,
    clock: Clock = datetime.now,
    start_options: dict[str, int] | None = None,
) -> int:
    """The whole life of a group process; returns its exit status (0 stopped, 1 abended,
    2 not startable: bad name, not the home's owner, undefined or unusable group, or another
    instance holds the group's lock)."""
    try:
        check_home_owner(home)
        name = check_group_name(name)
    except (NotHomeOwner, InvalidGroupName) as exc:
        sys.stderr.write(f"{str(exc).removeprefix('ERROR: ')}\n")
        return 2
    os.chdir(home.root)
    try:
        lock = ProcessLock.acquire(home, kind, name)
    except LockHeld as exc:
        _refuse(home, kind, "OGG-01454", exc.strerror or str(exc), clock)
        return 2
    try:
        return _run_locked(home, kind, name, clock, start_options)
    finally:
        lock.release()


def _run_locked(
    home: Home,
    kind: str,
    name: str,
    clock: Clock,
    start_options: dict[str, int] | None,
) -> int:
    try:
        group = GroupStore(home).get(name)
        if group is not None and group.kind == kind:
            checked_checkpoints(home, kind, name)
    except BadFile as exc:
        _refuse(home, kind, "OGG-00444", str(exc), clock)
        return 2
    if group is None or group.kind != kind:
        log_event(
            home.ggserr_log,
            Event(
                "OGG-01028",
                Severity.ERROR,
                f"{kind} {name.upper()} is not defined.",
                CAPTURE_COMPONENT if kind == "EXTRACT" else DELIVERY_COMPONENT,
            ),
            clock,
        )
        return 2
    started = clock()
    pid = os.getpid()
    sock = socket_path(home, kind, group.name)
    pf = ProcessFile(
        kind,
        group.name,
        pid,
        State.STARTING,
        started.isoformat(" ", "seconds"),
        ticks=start_ticks(pid),
        socket=str(sock),
    )
    write_process_file(home, pf)
    report = ReportWriter(group.report_file(home), clock)
    ctx = GroupContext(
        home, group, clock, report, started=started, start_options=dict(start_options or {})
    )
    try:
        report.start(ctx.component, group.desc, _param_echo(ctx.param_file))
    except OSError as exc:  # dirrpt full or unwritable: ggserr.log is all there is
        return _no_report(home, ctx, pf, exc)
    ctx.event("OGG-00992", Severity.INFO, f"{kind} {group.name} starting.")
    for word, value in ctx.start_options.items():
        ctx.report.line(f"Start option: {word} {value}")

    signal.signal(signal.SIGTERM, lambda *_: ctx.stop_requested.set())
    server: IpcServer | None = None
    try:
        # Answer first (STATUS, STOP, GETLAG), then load the engine and let it prepare.
        ctx.handlers = default_handlers(ctx)
        server = IpcServer(
            sock,
            ctx.handlers,
            on_error=lambda exc: ctx.event(
                "OGG-01668", Severity.WARNING, f"SEND request failed: {exc}"
            ),
        ).start()
        write_process_file(home, pf.with_state(State.RUNNING))
        ctx.event("OGG-00993", Severity.INFO, f"{kind} {group.name} started.")
        ctx.runner = load_runner(runner_kind(group))
        ctx.starting = "parameter file"
        ctx.runner.prepare(ctx)
        ctx.starting = None
        ctx.runner.run(ctx)
    except GGError as exc:  # ProcessAbend, or any concern's error that reached the top
        return _abend(home, ctx, pf, server, exc.code, exc.text)
    except OSError as exc:
        if not exc.filename:  # without its file the traceback is what tells where
            ctx.report.line(traceback.format_exc().rstrip())
        return _abend(home, ctx, pf, server, "OGG-01668", os_error_text(exc, home))
    except Exception as exc:
        ctx.report.line(traceback.format_exc().rstrip())
        return _abend(home, ctx, pf, server, "OGG-01668", f"{type(exc).__name__}: {exc}")
    if server is not None:
        server.close()
    ctx.run_time_statistics()
    ctx.event("OGG-00991", Severity.INFO, f"{kind} {group.name} stopped normally.")
    write_process_file(
        home, pf.with_state(State.STOPPED, stopped=clock().isoformat(" ", "seconds"))
    )
    return 0


def _no_report(home: Home, ctx: GroupContext, pf: ProcessFile, exc: OSError) -> int:
    """The report cannot be written at start: abend with OGG's message, in ggserr.log only."""
    path = exc.filename or ctx.report.path
    for code, text in (
        ("OGG-01091", f'Unable to open file "{path}" (error {exc.errno}, {exc.strerror}).'),
        ("OGG-01668", "PROCESS ABENDING."),
    ):
        ev = Event(code, Severity.ERROR, text, ctx.component, ctx.param_file.name)
        log_event(home.ggserr_log, ev, ctx.clock)
    write_process_file(
        home, pf.with_state(State.ABENDED, stopped=ctx.clock().isoformat(" ", "seconds"))
    )
    return 1


def _abend(
    home: Home, ctx: GroupContext, pf: ProcessFile, server: IpcServer | None, code: str, text: str
) -> int:
    if server is not None:
        server.close()
    ctx.event(code, Severity.ERROR, text)
    if code != "OGG-01668":
        ctx.event("OGG-01668", Severity.ERROR, "PROCESS ABENDING.")
    with contextlib.suppress(OSError):  # dirpcs full too: the lock, dropped at exit, tells
        write_process_file(
            home, pf.with_state(State.ABENDED, stopped=ctx.clock().isoformat(" ", "seconds"))
        )
    return 1


def os_error_text(exc: OSError, home: Home) -> str:
    """One line for an I/O error, naming its file (relative to the home) when it has one."""
    reason = f"(error {exc.errno}, {exc.strerror or exc})"
    if not exc.filename:
        return f"I/O error {reason}."
    name = display(Path(str(exc.filename)), home)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return f"Cannot write {name} {reason}."
    return f"I/O error on {name} {reason}."


def main(argv: Sequence[str] | None = None) -> int:
    private_umask()
    parser = argparse.ArgumentParser(prog="python -m engine.runtime.process")
    parser.add_argument("kind", choices=sorted(RUNNERS))
    parser.add_argument("group")
    parser.add_argument("--home", required=True)
    parser.add_argument("--atcsn", type=int)
    parser.add_argument("--aftercsn", type=int)
    args = parser.parse_args(argv)
    options = {
        k: v for k, v in (("ATCSN", args.atcsn), ("AFTERCSN", args.aftercsn)) if v is not None
    }
    return run_group(Home(Path(args.home).resolve()), args.kind, args.group, start_options=options)


if __name__ == "__main__":
    # Run the canonical module, not this ``__main__`` copy, so that classes (GroupRunner) are
    # the ones runner modules import.
    from engine.runtime import process as _canonical

    sys.exit(_canonical.main())
