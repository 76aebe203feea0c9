"""The one place the runtime and GGSCI ask ``params`` whether a parameter file is valid.

``params.check.check_file`` reports every problem of a file; ``params.errors.render`` renders
one as ``file:line:col: severity: message`` with a caret excerpt. Imported lazily: building the
parameter grammar is not on the shell's start-up path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CheckResult:
    """Rendered diagnostics of one file, and how many of them are errors."""

    rendered: tuple[str, ...]
    errors: int

    @property
    def ok(self) -> bool:
        return self.errors == 0


def check_param_file(path: Path, cwd: Path | None = None) -> CheckResult:
    """Validate ``path``; ``cwd`` is where OBEY/INCLUDE names resolve (the home)."""
    from params.check import check_file
    from params.errors import render

    result = check_file(path, cwd=cwd)
    return CheckResult(tuple(render(d) for d in result.diagnostics), len(result.errors))
