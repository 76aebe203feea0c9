"""``ggsci logdump``: dump trail files (text or ``--json``), or an interactive Logdump
when no file is given. Thin: the work is in :mod:`engine.logdump`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from engine.logdump.dump import dump_files
from engine.logdump.session import LogdumpSession
from engine.logdump.views import DisplayOptions
from engine.trail.errors import TrailError

_DETAIL = ("OFF", "ON", "DATA")
_FILEHEADER = ("OFF", "ON", "DETAIL")


def logdump(
    files: Annotated[
        list[Path] | None, typer.Argument(help="Trail files (dirdat/aa000000000 ...).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per record.")] = False,
    ghdr: Annotated[bool, typer.Option("--ghdr/--no-ghdr", help="Record header block.")] = True,
    detail: Annotated[str, typer.Option(help="Column detail: OFF, ON or DATA.")] = "ON",
    fileheader: Annotated[str, typer.Option(help="File header: OFF, ON or DETAIL.")] = "DETAIL",
    home: Annotated[
        Path | None,
        typer.Option("--home", help="The home whose trails relative names are (else $GGHOME)."),
    ] = None,
) -> None:
    """Show trail records as Logdump does; without FILE, run an interactive Logdump."""
    if detail.upper() not in _DETAIL or fileheader.upper() not in _FILEHEADER:
        typer.echo("--detail takes OFF|ON|DATA, --fileheader takes OFF|ON|DETAIL", err=True)
        raise typer.Exit(2)
    root = home or (Path(os.environ["GGHOME"]) if os.environ.get("GGHOME") else None)
    if root is not None and root.is_dir():  # ggsci --home H logdump: H's names, as Logdump
        files = [f if f.exists() or f.is_absolute() else root / f for f in files or ()]
        if not files:  # run in the home, where ./dirdat/... is
            os.chdir(root)
    if not files:
        LogdumpSession(sys.stdin, sys.stdout, echo=not sys.stdin.isatty()).run()
        return
    options = DisplayOptions(ghdr=ghdr, detail=detail.upper(), fileheader=fileheader.upper())
    try:
        dump_files(files, sys.stdout, as_json=as_json, options=options)
    except TrailError as exc:
        typer.echo(f"logdump: {exc}", err=True)
        raise typer.Exit(1) from exc
