"""The front door: check a parameter file whole and return its model and diagnostics.

``check_file`` reads a file, preprocesses it (OBEY, INCLUDE, macros, ``?VAR``), parses
and validates every statement, and returns a :class:`CheckResult`. It never raises for a
user's mistake: an unreadable file is a diagnostic too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from params.build import all_parameters, build
from params.catalog import MAP_OPTIONS, TABLE_OPTIONS
from params.errors import Diagnostic, Origin, ParamFileError, Severity
from params.handlerprops import check_properties
from params.models import ExpectedGroup, FileKind, HandlerPropsFile, ParamFile
from params.preprocess import Reader, preprocess, read_text
from params.text import Statement


@dataclass(frozen=True)
class CheckResult:
    path: str
    model: ParamFile
    diagnostics: tuple[Diagnostic, ...]
    statements: tuple[Statement, ...]

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.is_error)

    @property
    def ok(self) -> bool:
        return not self.errors

    def require(self) -> ParamFile:
        """The model, or :class:`ParamFileError` when the file has errors (for the engine)."""
        if not self.ok:
            raise ParamFileError(self.diagnostics)
        return self.model


def default_search_dirs(path: Path, cwd: Path | None = None) -> list[Path]:
    """Where OBEY/INCLUDE look for relative names: the current directory (GoldenGate runs
    processes in its home), the home (the parent of ``dirprm/``), the file's directory."""
    here = (cwd or Path.cwd()).resolve()
    parent = path.resolve().parent
    dirs = [here, parent.parent, parent]
    out: list[Path] = []
    for d in dirs:
        if d not in out:
            out.append(d)
    return out


def check_text(
    text: str,
    path: str = "<text>",
    *,
    env: Mapping[str, str] | None = None,
    reader: Reader = read_text,
    search_dirs: Sequence[Path] | None = None,
    is_globals: bool = False,
    expected: ExpectedGroup | None = None,
) -> CheckResult:
    """Check a file's text; OBEY/INCLUDE names resolve in ``search_dirs`` (default: the
    current directory) and then in the including file's own directory. ``expected``: the
    group the file is read for (its first parameter must name it; judged as its kind)."""
    if search_dirs is None:
        search_dirs = [Path.cwd()]
    statements, pre_diags = preprocess(
        text,
        path,
        env=env,
        reader=reader,
        search_dirs=search_dirs,
        parameters=all_parameters(),
        table_options=frozenset(TABLE_OPTIONS) | frozenset(MAP_OPTIONS),
    )
    model, diags = build(path, statements, is_globals=is_globals, expected=expected)
    if model.handler_props is not None:
        diags = [*diags, *_check_handler_props(path, model.handler_props, search_dirs, reader)]
    ordered = sorted(
        [*pre_diags, *diags],
        key=lambda d: (d.origin.path != path, d.origin.path, d.origin.line, d.origin.col),
    )
    return CheckResult(path, model, tuple(ordered), tuple(statements))


def find_handler_props(ref: HandlerPropsFile, search_dirs: Sequence[Path]) -> Path | None:
    """The properties file TARGETDB LIBFILE ... SET property= names: an absolute path, or
    relative to the first of ``search_dirs`` (the home first) that holds it."""
    p = Path(ref.path).expanduser()
    if p.is_absolute():
        return p if p.is_file() else None
    return next((d / p for d in search_dirs if (d / p).is_file()), None)


def _check_handler_props(
    path: str, ref: HandlerPropsFile, search_dirs: Sequence[Path], reader: Reader
) -> list[Diagnostic]:
    where = Origin(path, ref.line, ref.col, ref.source)
    found = find_handler_props(ref, search_dirs)
    if found is None:
        return [Diagnostic(Severity.ERROR, "missing-file",
                           f"properties file {ref.path} does not exist", where)]  # fmt: skip
    try:
        text = reader(found)
    except (OSError, UnicodeDecodeError) as exc:
        return [Diagnostic(Severity.ERROR, "missing-file",
                           f"cannot read properties file {ref.path}: {exc}", where)]  # fmt: skip
    return check_properties(text, ref.path)[1]


def check_file(
    path: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    reader: Reader = read_text,
    expected: ExpectedGroup | None = None,
) -> CheckResult:
    p = Path(path)
    shown = str(path)
    try:
        text = reader(p)
    except OSError as exc:
        diag = Diagnostic(
            Severity.ERROR,
            "missing-file",
            f"cannot read parameter file: {exc.strerror or exc}",
            Origin(shown, 1, 1, ""),
        )
        return CheckResult(shown, ParamFile(shown, FileKind.OTHER), (diag,), ())
    return check_text(
        text,
        shown,
        env=env,
        reader=reader,
        search_dirs=default_search_dirs(p, cwd),
        is_globals=p.name.upper() == "GLOBALS",
        expected=expected,
    )
