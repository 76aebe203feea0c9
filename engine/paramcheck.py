"""The one place the runtime and GGSCI ask ``params`` whether a parameter file is valid.

``params.check.check_file(path) -> list[Diagnostic]`` reports every problem of the file;
``params.errors.render(diag)`` renders one as ``file:line:col: message`` with a caret excerpt.
A diagnostic whose ``severity`` says warning does not make the file invalid.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CheckResult:
    """Rendered diagnostics of one file, and whether any of them is an error."""

    rendered: tuple[str, ...]
    errors: int

    @property
    def ok(self) -> bool:
        return self.errors == 0


class CheckUnavailable(RuntimeError):
    """``params.check`` / ``params.errors`` cannot be imported (not installed or not written)."""


def check_param_file(path: Path) -> CheckResult:
    """Validate ``path`` with the parameter-language checker; all diagnostics, rendered."""
    try:
        from params.check import check_file  # type: ignore[import-not-found,unused-ignore]

        from params.errors import render  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise CheckUnavailable(f"parameter validation is not available ({exc})") from exc

    diagnostics = check_file(path)
    rendered = tuple(str(render(d)) for d in diagnostics)
    errors = sum(1 for d in diagnostics if not _is_warning(d))
    return CheckResult(rendered, errors)


def _is_warning(diag: object) -> bool:
    severity = getattr(diag, "severity", None)
    name = getattr(severity, "name", None) or getattr(severity, "value", None) or severity
    return str(name).upper().startswith("WARN") if name is not None else False
