"""Diagnostics for parameter files: positioned problems as data, rendered separately.

Exception tree (the package root first)::

    ParamError(ValueError)          any failure of this package that is not a diagnostic
      └─ ParamFileError             a file cannot be used; carries its diagnostics

Validation never raises for a user's mistake: it returns :class:`Diagnostic` values, so
that a file is checked whole and every problem is reported at once. Rendering (text with a
caret, or JSON) is done by :func:`render` / :func:`to_json` and nowhere else.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True)
class Origin:
    """Where a piece of text came from: file, 1-based line and column, the line's text."""

    path: str
    line: int
    col: int
    source: str

    def shifted(self, delta: int) -> Origin:
        return Origin(self.path, self.line, self.col + delta, self.source)


@dataclass(frozen=True)
class Diagnostic:
    """One problem (or remark) about a parameter file, at a position."""

    severity: Severity
    code: str
    message: str
    origin: Origin

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


class ParamError(ValueError):
    """Root of this package's exceptions."""


class ParamFileError(ParamError):
    """A parameter file has errors; the diagnostics say which."""

    def __init__(self, diagnostics: tuple[Diagnostic, ...]) -> None:
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.is_error]
        first = render_line(errors[0]) if errors else "no errors"
        super().__init__(f"{len(errors)} error(s) in parameter file; first: {first}")


def render_line(diag: Diagnostic) -> str:
    o = diag.origin
    return f"{o.path}:{o.line}:{o.col}: {diag.severity.value}: {diag.message}"


def render(diag: Diagnostic) -> str:
    """``path:line:col: severity: message``, then the source line and a caret under the column.

    Tabs before the column are kept in the caret line so that the caret lines up in a
    terminal whatever its tab width.
    """
    head = render_line(diag)
    src = diag.origin.source.rstrip("\r\n")
    if not src.strip():
        return head
    col = max(1, diag.origin.col)
    prefix = "".join("\t" if ch == "\t" else " " for ch in src[: col - 1])
    if col - 1 > len(src):
        prefix += " " * (col - 1 - len(src))
    return f"{head}\n  {src}\n  {prefix}^"


def to_json(diag: Diagnostic) -> dict[str, object]:
    o = diag.origin
    return {
        "path": o.path,
        "line": o.line,
        "column": o.col,
        "severity": diag.severity.value,
        "code": diag.code,
        "message": diag.message,
        "source": o.source.rstrip("\r\n"),
    }
