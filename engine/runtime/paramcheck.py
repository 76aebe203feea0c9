"""The one place the runtime and GGSCI ask ``params`` whether a parameter file is valid.

``params.check.check_file`` reports every problem of a file; ``params.errors.render`` renders
one as ``file:line:col: severity: message`` with a caret excerpt. Imported lazily: building the
parameter grammar is not on the shell's start-up path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.home.layout import Home
    from engine.runtime.process import GroupContext
    from params.models import ParamFile


@dataclass(frozen=True)
class CheckResult:
    """Rendered diagnostics of one file, and how many of them are errors."""

    rendered: tuple[str, ...]
    errors: int

    @property
    def ok(self) -> bool:
        return self.errors == 0


def check_param_file(
    path: Path, cwd: Path | None = None, group: tuple[str, str] | None = None
) -> CheckResult:
    """Validate ``path``; ``cwd`` is where OBEY/INCLUDE names resolve (the home); ``group``
    (kind, name): the group whose file it is (its first parameter must name that group)."""
    from params.check import check_file
    from params.errors import render
    from params.models import ExpectedGroup

    expected = ExpectedGroup(group[0], group[1].upper()) if group else None
    result = check_file(path, cwd=cwd, expected=expected)
    return CheckResult(tuple(render(d) for d in result.diagnostics), len(result.errors))


def group_of_file(home: Home, path: Path) -> tuple[str, str] | None:
    """(kind, name) of the group of ``home`` whose parameter file ``path`` is, if any."""
    from engine.home.groups import GroupStore

    try:
        target = path.resolve()
        groups = GroupStore(home).scan()[0]
    except OSError:
        return None
    for g in groups:
        if g.param_file(home).resolve() == target:
            return (g.kind, g.name)
    return None


def load_group_params(ctx: GroupContext) -> ParamFile:
    """A group process's parameter file, checked whole: every diagnostic goes to the report;
    a missing file abends with OGG-00303 and a file with errors with OGG-10144, as a real
    process abends on a bad parameter file."""
    from engine.runtime.process import ProcessAbend
    from params.check import check_file
    from params.errors import render
    from params.models import ExpectedGroup

    path = ctx.param_file
    if not path.exists():
        raise ProcessAbend("OGG-00303", f"Could not open parameter file {path}.")
    # checked as this group's file: a Replicat's file that begins EXTRACT is an error that
    # names the REPLICAT, and its lines are judged as a Replicat's
    expected = ExpectedGroup(ctx.group.kind, ctx.group.name)
    result = check_file(path, cwd=ctx.home.root, expected=expected)
    for d in result.diagnostics:
        ctx.report.line(render(d))
    ctx.parameters = tuple(st.text for st in result.statements)
    if not result.ok:
        raise ProcessAbend(
            "OGG-10144",
            f"Parameter file {path.name} has {len(result.errors)} error(s); see the report.",
        )
    return result.model
