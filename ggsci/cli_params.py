"""``ggsci params check|show``: thin typer commands over :mod:`params.check`."""

from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from params.check import CheckResult, check_file
from params.errors import render, to_json
from params.masking import mask_secrets

app = typer.Typer(help="Check and show GoldenGate parameter files.", no_args_is_help=True)


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
    results = [check_file(f) for f in files]
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
        return [_plain(v) for v in value]
    return value


@app.command("show")
def show(
    file: Annotated[Path, typer.Argument(help="The parameter file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the model as JSON.")] = False,
) -> None:
    """Print the effective parameters (after OBEY, INCLUDE, macros and ?VAR) and the model."""
    r = check_file(file)
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
