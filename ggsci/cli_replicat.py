"""``ggsci replicat paramfile FILE [reportfile FILE] [--stop-at-eof]``.

GoldenGate's own command line for running a Replicat in the foreground (``replicat paramfile
dirprm/rep1.prm``), as ``ggsci extract`` does for an Extract. The group must have been added
(ADD REPLICAT: its trail and checkpoints); the file is checked as that group's, so a file that
is not a Replicat's is refused at its first line, naming the REPLICAT. No JVM is started.
"""

from __future__ import annotations

import sys
import threading
from datetime import datetime
from typing import Annotated

import typer

from ggsci.cli_extract import HomePath


def replicat(
    words: Annotated[list[str], typer.Argument(help="PARAMFILE file [REPORTFILE file]")],
    stop_at_eof: Annotated[
        bool,
        typer.Option("--stop-at-eof", help="Stop once the trail's last record is applied."),
    ] = False,
    home: HomePath = None,
) -> None:
    """Run a Replicat in the foreground, as GoldenGate's ``replicat paramfile ...`` does."""
    from engine.home.groups import GroupKind, GroupStore
    from engine.home.layout import in_home
    from engine.replicat import ReplicatError
    from engine.replicat.runner import open_run
    from engine.runtime.events import DELIVERY_COMPONENT, Event, Severity, log_event
    from engine.targets import TargetError
    from ggsci.cli_extract import _parse, checked, home_of, locked_report
    from params.check import check_file
    from params.models import ExpectedGroup

    paramfile, reportfile, brreset = _parse(words)
    if brreset:
        raise typer.BadParameter("BRRESET is an Extract's start-up option, not a Replicat's")
    h = home_of(home)
    paramfile, reportfile = in_home(h, paramfile), reportfile and in_home(h, reportfile)
    first = check_file(paramfile, cwd=h.root, expected=ExpectedGroup("REPLICAT"))
    name = (first.model.group or paramfile.stem).upper()
    group = GroupStore(h).get(name)
    # then as that group's file (its name in the first line), if it is a Replicat
    ours = group is not None and group.kind == GroupKind.REPLICAT
    result = checked(h, paramfile, ExpectedGroup("REPLICAT", name if ours else None))
    if group is None or group.kind != GroupKind.REPLICAT:
        typer.echo(f"ERROR OGG-01028  REPLICAT {name} is not defined (ADD REPLICAT).", err=True)
        raise typer.Exit(1)
    report = locked_report(
        h, "REPLICAT", name, paramfile, reportfile, DELIVERY_COMPONENT, group.desc
    )

    def emit(code: str, severity: Severity, text: str) -> None:
        ev = Event(code, severity, text, DELIVERY_COMPONENT, paramfile.name)
        report.event(ev)
        log_event(h.ggserr_log, ev)
        if severity is not Severity.INFO:
            typer.echo(ev.format(datetime.now()), err=True)

    try:
        run = open_run(h, result.model, group, emit)
        run.report_counter.line = report.line  # REPORTCOUNT's lines
    except (ReplicatError, TargetError) as exc:
        if isinstance(exc, ReplicatError):
            emit(exc.code, Severity.ERROR, exc.text)
        else:
            emit("OGG-00664", Severity.ERROR, exc.message)
        raise typer.Exit(1) from exc
    emit("OGG-00993", Severity.INFO, f"REPLICAT {name} started.")
    stop = threading.Event()
    try:
        run.run(stop.is_set, stop_at_eof=stop_at_eof)
    except KeyboardInterrupt:
        stop.set()
        run.checkpoint()
    except ReplicatError as exc:
        emit(exc.code, Severity.ERROR, exc.text)
        raise typer.Exit(1) from exc
    except TargetError as exc:
        emit("OGG-01004", Severity.ERROR, exc.message)
        raise typer.Exit(1) from exc
    finally:
        run.close()
    summary = run.status_lines()[2].strip()
    report.line(f"REPLICAT {name}: {summary}")
    emit("OGG-00991", Severity.INFO, f"REPLICAT {name} stopped normally.")
    typer.echo(f"REPLICAT {name}: {summary}")
    sys.stdout.flush()
