"""``ggsci params check|show``: thin typer commands over :mod:`params.check`."""

from __future__ import annotations

import dataclasses
import enum
import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from engine.home.layout import Home, HomeError, resolve_home
from engine.runtime.paramcheck import group_of_file
from params import textfile
from params.check import CheckResult, check_file
from params.errors import render, to_json
from params.masking import MASK, mask_secrets, secret_key
from params.models import ExpectedGroup

app = typer.Typer(help="Check and show GoldenGate parameter files.", no_args_is_help=True)


def _home_of_cwd() -> Home | None:
    """The home ``--home``/$GGHOME names, or the current directory when it is one; None
    otherwise (then a file is only what its name says)."""
    if os.environ.get("GGHOME") or Path("dirprm").is_dir():
        try:
            return resolve_home()
        except HomeError as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(1) from None
    return None


def _check(file: Path, home: Home | None) -> CheckResult:
    """Check ``file`` as GGSCI would: a relative name missing here is the home's
    (``ggsci --home H params check dirprm/rep1.prm``), OBEY/INCLUDE names resolve in the
    home, and a group's parameter file is checked as that group's (a Replicat's as a
    Replicat's, its first parameter naming it)."""
    if home is not None and not file.is_absolute() and not textfile.exists(file):
        file = home.root / file if textfile.exists(home.root / file) else file
    where = file.resolve().parent
    owner = home or (Home(where.parent) if where.name == "dirprm" else None)  # a home's file
    whose = group_of_file(owner, file) if owner is not None else None
    expected = ExpectedGroup(*whose) if whose else None
    return check_file(file, cwd=home.root if home else None, expected=expected)


def _summary(result: CheckResult) -> str:
    errors = len(result.errors)
    warnings = sum(1 for d in result.diagnostics if d.severity.value == "warning")
    state = "OK" if result.ok else "FAILED"
    kind = result.model.kind.value
    return f"{result.path}: {state} ({kind}, {errors} error(s), {warnings} warning(s))"


@app.command("check")
def check(
    files: Annotated[list[Path], typer.Argument(help="Parameter files to check.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Errors only, no warnings.")] = False,
) -> None:
    """Check parameter files whole; exit 0 when all are valid (warnings allowed), else 1."""
    home = _home_of_cwd()
    results = [_check(f, home) for f in files]
    if as_json:
        out = [
            {
                "path": r.path,
                "ok": r.ok,
                "kind": r.model.kind.value,
                "group": r.model.group,
                "diagnostics": [
                    to_json(d) for d in r.diagnostics if not (quiet and not d.is_error)
                ],
            }
            for r in results
        ]
        typer.echo(json.dumps(out, indent=2))
    else:
        for r in results:
            for d in r.diagnostics:
                if quiet and not d.is_error:
                    continue
                typer.echo(render(d))
            typer.echo(_summary(r))
    raise typer.Exit(0 if all(r.ok for r in results) else 1)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        if len(value) == 2 and str(value[0]).startswith("spark.") and secret_key(value[0]):
            return [value[0], MASK]  # a (setting, value) pair: SPARKCONF's
        return [_plain(v) for v in value]
    return value


@app.command("show")
def show(
    file: Annotated[Path, typer.Argument(help="The parameter file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the model as JSON.")] = False,
) -> None:
    """Print the effective parameters (after OBEY, INCLUDE, macros and ?VAR) and the model."""
    r = _check(file, _home_of_cwd())
    for d in r.diagnostics:
        if d.is_error:
            typer.echo(render(d), err=True)
    if not r.ok:
        raise typer.Exit(1)
    model = _plain(r.model)
    if as_json:
        typer.echo(json.dumps(model, indent=2))
        return
    typer.echo(f"-- effective parameters of {r.path}")
    for st in r.statements:
        o = st.origin
        where = f"{Path(o.path).name}:{o.line}"
        typer.echo(f"{mask_secrets(st.text):<72} -- {where}")
    typer.echo("")
    typer.echo("-- model")
    typer.echo(json.dumps(model, indent=2))
