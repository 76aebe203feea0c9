"""Where a Collector may write a pump's remote trail: GLOBALS ``ALLOWOUTPUTDIR``.

A pump that an ACCESSRULE lets in names its RMTTRAIL; without a limit it could have trail
files written in any directory the Collector's user may write (``dircrd/``, ``dirprm/``).
GoldenGate limits it with GLOBALS ``ALLOWOUTPUTDIR dir`` (repeatable: each directory and its
subdirectories, a relative name being the home's, symbolic links resolved before comparing),
refusing anything else (``OGG-01882 Output file ... is not in any allowed output
directories``) and any file in the installation directory itself (``OGG-01881``); an
ALLOWOUTPUTDIR that is the installation directory is ignored (``OGG-01880``).

GoldenGate's reference gives no default for a GLOBALS without the parameter ("a directory
must be specified" is its syntax). Ours, chosen: without ALLOWOUTPUTDIR, anywhere inside the
Collector's home (as before) but never in the home's own directories (:data:`OWN`: dirprm,
dirchk, dircrd, dirdb, ...; dirdat and directories the owner made, such as dirrmt, are
allowed). Those stay refused with ALLOWOUTPUTDIR too: they hold what the home believes. A
GLOBALS with errors allows nothing (the refusal says to check it); an ALLOWOUTPUTDIR that
does not exist allows nothing and is named in ggserr.log.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from engine.home.layout import SUBDIRS, Home
from engine.runtime.events import Severity

#: The home's own directories, never a trail's (GoldenGate's dirdat is the trails' own).
OWN: Final = tuple(d for d in SUBDIRS if d != "dirdat")

Warn = Callable[[str, Severity, str], None]


class OutputRefused(Exception):
    """The trail may not be written there; ``code`` and ``text`` are the OGG line."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text


def _under(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


def allowed_dirs(home: Home, warn: Warn) -> tuple[Path, ...] | None:
    """The resolved ALLOWOUTPUTDIR directories of the home's GLOBALS (None: none given)."""
    from params.check import check_file
    from params.errors import render_line

    if not home.globals_file.is_file():
        return None
    result = check_file(home.globals_file, cwd=home.root)
    if not result.ok:
        raise OutputRefused(
            "OGG-01882",
            f"GLOBALS has {len(result.errors)} error(s), so no output directory is allowed "
            f"(ggsci params check GLOBALS), the first: {render_line(result.errors[0])}",
        )
    names = result.model.allow_output_dirs
    if not names:
        return None
    root = home.root.resolve()
    dirs: list[Path] = []
    for name in names:
        given = Path(name)
        try:
            full = (given if given.is_absolute() else home.root / given).resolve(strict=True)
        except (OSError, RuntimeError):
            warn("OGG-01882", Severity.WARNING, f"ALLOWOUTPUTDIR {name} does not exist.")
            continue
        if full == root:
            warn(
                "OGG-01880",
                Severity.WARNING,
                f"ALLOWOUTPUTDIR {name} is the same directory where this GoldenGate instance "
                "is installed; it allows nothing.",
            )
            continue
        if full.is_dir():
            dirs.append(full)
    return tuple(dirs)


def check_output(home: Home, full: Path, shown: str, warn: Warn) -> None:
    """:class:`OutputRefused` unless a trail of resolved prefix ``full`` may be written."""
    root = home.root.resolve()
    where = full.parent
    if where == root:
        raise OutputRefused(
            "OGG-01881",
            f"Output file {shown} in the GoldenGate installation directory is not allowed",
        )
    for own in OWN:
        if _under(where, (root / own).resolve()):
            raise OutputRefused(
                "OGG-01882",
                f"Output file {shown} is not in any allowed output directories ({own}/ is "
                "the home's own directory, never a trail's)",
            )
    dirs = allowed_dirs(home, warn)
    if dirs is None:
        if not _under(where, root):
            raise OutputRefused(
                "OGG-01882",
                f"Output file {shown} is not in any allowed output directories (without "
                f"ALLOWOUTPUTDIR in GLOBALS: the Collector's home {root})",
            )
        return
    if not any(_under(where, d) for d in dirs):
        allowed = ", ".join(str(d) for d in dirs) or "none that exists"
        raise OutputRefused(
            "OGG-01882",
            f"Output file {shown} is not in any allowed output directories (GLOBALS "
            f"ALLOWOUTPUTDIR: {allowed})",
        )
