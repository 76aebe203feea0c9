"""``ggsci extract paramfile FILE [reportfile FILE] [BRRESET] [--stop-at-eof]``.

GoldenGate's own command line for running an Extract in the foreground. It hands over to
engine code (which starts a JVM for Spark); importing this module starts nothing.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Protocol

import typer

from engine.home.layout import in_home

if TYPE_CHECKING:
    from engine.home.groups import GroupDef
    from engine.home.layout import Home
    from engine.pump.pump import Emit
    from engine.runtime.report import ReportWriter
    from params.check import CheckResult
    from params.models import ExpectedGroup, ParamFile

HomePath = Annotated[
    Path | None,
    typer.Option("--home", help="The home directory (default: $GGHOME or the current directory)."),
]

_KEYWORDS = {
    "PARAMFILE": "paramfile",
    "PF": "paramfile",
    "REPORTFILE": "reportfile",
    "RF": "reportfile",
}


def _parse(words: list[str]) -> tuple[Path, Path | None, bool]:
    paramfile: Path | None = None
    reportfile: Path | None = None
    brreset = False
    i = 0
    while i < len(words):
        w = words[i].upper()
        if w == "BRRESET":
            brreset = True
            i += 1
            continue
        key = _KEYWORDS.get(w)
        if key is None or i + 1 >= len(words):
            raise typer.BadParameter(
                f"expected PARAMFILE file [REPORTFILE file] [BRRESET], found {words[i]!r}"
            )
        if key == "paramfile":
            paramfile = Path(words[i + 1])
        else:
            reportfile = Path(words[i + 1])
        i += 2
    if paramfile is None:
        raise typer.BadParameter("PARAMFILE is required")
    return paramfile, reportfile, brreset


def home_of(home: str | Path | None) -> Home:
    """The home (``--home``, then $GGHOME, then the current directory); one line and exit 1
    when it names no directory."""
    from engine.home.layout import HomeError, resolve_home

    try:
        return resolve_home(home)
    except HomeError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None


def checked(h: Home, paramfile: Path, expected: ExpectedGroup) -> CheckResult:
    """The file checked as ``expected``'s, every diagnostic on stderr; exit 1 on an error."""
    from params.check import check_file
    from params.errors import render

    result = check_file(paramfile, cwd=h.root, expected=expected)
    for d in result.diagnostics:
        typer.echo(render(d), err=True)
    if not result.ok:
        typer.echo(
            f"ERROR OGG-10144  Parameter file {paramfile} has {len(result.errors)} error(s).",
            err=True,
        )
        raise typer.Exit(1)
    return result


def locked_report(
    h: Home,
    kind: str,
    name: str,
    paramfile: Path,
    reportfile: Path | None,
    component: str,
    desc: str | None = None,
) -> ReportWriter:
    """Take the group's lock for this process's life (the home's owner only, one instance of
    the group: else one line and exit 1), then start its report with the parameter echo."""
    from engine.home.status import LockHeld, ProcessLock
    from engine.home.trust import NotHomeOwner, check_home_owner
    from engine.runtime.report import ReportWriter

    try:
        check_home_owner(h)
        ProcessLock.acquire(h, kind, name)
    except (NotHomeOwner, LockHeld) as exc:
        typer.echo(
            f"ERROR OGG-01454  {exc.strerror}" if isinstance(exc, LockHeld) else exc, err=True
        )
        raise typer.Exit(1) from exc
    report = ReportWriter(reportfile or h.dirrpt / f"{name}.rpt")
    lines = paramfile.read_text(errors="replace").splitlines()
    report.start(component, desc, [ln.rstrip() for ln in lines])
    return report


def extract(
    words: Annotated[list[str], typer.Argument(help="PARAMFILE file [REPORTFILE file] [BRRESET]")],
    stop_at_eof: Annotated[
        bool,
        typer.Option(
            "--stop-at-eof", help="Stop once the available redo is processed and the trail flushed."
        ),
    ] = False,
    home: HomePath = None,
    master: Annotated[
        str | None,
        typer.Option(
            "--master",
            help="Spark master (default: $GGSCI_SPARK_MASTER, else SPARKMASTER of the "
            "parameter file, else of GLOBALS, else local[*]; under spark-submit, its --master).",
        ),
    ] = None,
) -> None:
    """Run an Extract in the foreground, as GoldenGate's ``extract paramfile ...`` does."""
    from engine.embedded.catalog import RedoGapError
    from engine.extract.run import ExtractRun
    from engine.extract.start import ExtractError
    from engine.home.groups import GroupStore
    from engine.runtime.events import CAPTURE_COMPONENT, Event, Severity, log_event
    from engine.runtime.process import runner_kind
    from params.models import ExpectedGroup

    paramfile, reportfile, brreset = _parse(words)
    h = home_of(home)
    paramfile, reportfile = in_home(h, paramfile), reportfile and in_home(h, reportfile)
    # an Extract's file: a Replicat's is refused at its first line, naming the REPLICAT
    result = checked(h, paramfile, ExpectedGroup("EXTRACT"))
    model = result.model
    name = (model.group or paramfile.stem).upper()
    report = locked_report(h, "EXTRACT", name, paramfile, reportfile, CAPTURE_COMPONENT)

    def emit(code: str, severity: Severity, text: str) -> None:
        ev = Event(code, severity, text, CAPTURE_COMPONENT, paramfile.name)
        report.event(ev)
        h.dirrpt.mkdir(parents=True, exist_ok=True)
        log_event(h.ggserr_log, ev)
        if severity is not Severity.INFO:
            typer.echo(ev.format(datetime.now()), err=True)

    group = GroupStore(h).get(name)
    if group is not None and runner_kind(group) == "PUMP":  # as START EXTRACT runs it
        _pump(h, model, group, emit, report, stop_at_eof)
        return

    from engine.cluster.spark import SparkConfigError, task_failure

    stop = threading.Event()
    try:  # a stall of the Spark application: the run stops, then abends below
        run = ExtractRun.start(
            h, model, group, emit, master=master, brreset=brreset, report_line=report.line,
            on_fault=stop.set,
        )  # fmt: skip
    except (ExtractError, SparkConfigError) as exc:
        emit(exc.code, Severity.ERROR, exc.text)
        raise typer.Exit(1) from exc
    watch = run.watch  # (None: no session asked for)
    try:  # in the foreground, what the run mines Spark mines, from the first batch
        run.wait_for_session()
    except SparkConfigError as exc:
        run.close()
        emit(exc.code, Severity.ERROR, exc.text)
        raise typer.Exit(1) from exc
    emit("OGG-00993", Severity.INFO, f"EXTRACT {name} started.")
    try:
        run.run(stop, stop_at_eof=stop_at_eof)
    except KeyboardInterrupt:
        stop.set()
        run.checkpoint()
    except RedoGapError as exc:  # redo missing, cut short or unreadable: one line, named
        emit(exc.code, Severity.ERROR, exc.message)
        raise typer.Exit(1) from exc
    except ExtractError as exc:  # e.g. a captured table's structure changed in the redo
        emit(exc.code, Severity.ERROR, exc.text)
        raise typer.Exit(1) from exc
    except Exception as exc:
        fault = watch.fault if watch is not None else None
        line = fault.text if fault is not None else task_failure(exc)
        if line is None:  # (a task's own check, or the watchdog's: one line, no trace)
            raise
        emit("OGG-01668", Severity.ERROR, line)
        raise typer.Exit(1) from None
    finally:
        run.close()
    if watch is not None and watch.fault is not None:
        emit(watch.fault.code, Severity.ERROR, watch.fault.text)
        raise typer.Exit(1)
    s = run.capture.stats
    summary = (
        f"EXTRACT {name}: {s.records_read} redo records, {s.transactions} committed "
        f"transaction(s), {s.rollbacks} rolled back, {s.trail_records} trail record(s) "
        f"to {run.trail_path}."
    )
    report.line(summary)
    emit("OGG-00991", Severity.INFO, f"EXTRACT {name} stopped normally.")
    typer.echo(summary)
    sys.stdout.flush()


class _Foreground(Protocol):
    """What a foreground run is to :func:`_foreground` (a data pump)."""

    name: str
    trail_path: str

    def run(self, stop: Callable[[], bool], *, stop_at_eof: bool = False) -> None: ...
    def checkpoint(self) -> None: ...
    def close(self) -> None: ...


def _failed(emit: Emit, exc: Exception) -> NoReturn:
    """The run's error in one line (its code and text), exit 1."""
    from engine.runtime.events import Severity

    code = str(getattr(exc, "code", "OGG-01668"))
    emit(code, Severity.ERROR, str(getattr(exc, "text", None) or getattr(exc, "message", exc)))
    raise typer.Exit(1) from exc


def _foreground(
    open_run: Callable[[], _Foreground],
    errors: tuple[type[Exception], ...],
    emit: Emit,
    report: ReportWriter,
    stop_at_eof: bool,
    summary: Callable[[Any], str],
) -> None:
    """Open a run that needs no Spark session, run it in the foreground until the end of its
    input (``--stop-at-eof``) or Ctrl-C, then write ``summary(run)``; ``errors`` are one line."""
    from engine.runtime.events import Severity

    try:
        run = open_run()
    except errors as exc:
        _failed(emit, exc)
    emit(
        "OGG-01055",
        Severity.INFO,
        f"Recovery initialization completed for target file {run.trail_path}.",
    )
    emit("OGG-00993", Severity.INFO, f"EXTRACT {run.name} started.")
    try:
        run.run(lambda: False, stop_at_eof=stop_at_eof)
    except KeyboardInterrupt:
        run.checkpoint()
    except errors as exc:  # e.g. OGG-00446 naming the sequence, a Collector refusing
        _failed(emit, exc)
    finally:
        run.close()
    line = summary(run)
    report.line(line)
    emit("OGG-00991", Severity.INFO, f"EXTRACT {run.name} stopped normally.")
    typer.echo(line)
    sys.stdout.flush()


def _pump(
    h: Home,
    model: ParamFile,
    group: GroupDef,
    emit: Emit,
    report: ReportWriter,
    stop_at_eof: bool,
) -> None:
    """A data pump (an Extract group added with EXTTRAILSOURCE) in the foreground: it copies
    its source trail as under the Manager, with no Spark session."""
    from engine.pump import PumpError
    from engine.pump.pump import Pump

    def summary(pump: Pump) -> str:
        return (
            f"EXTRACT {pump.name} (data pump): {pump.copied_transactions} transaction(s), "
            f"{pump.copied_records} record(s) copied from {pump.source_path} to "
            f"{pump.trail_path}."
        )

    _foreground(
        lambda: Pump(h, model, group, emit, report_line=report.line),
        (PumpError,), emit, report, stop_at_eof, summary,
    )  # fmt: skip
