"""The rule of a LOG_ARCHIVE_FORMAT (Oracle's initialization parameter; GoldenGate's
TRANLOGOPTIONS ALTARCHIVEDLOGFORMAT gives one to the Extract): its variables and what a
format must hold. Stated here once, pure, so that ``params check`` (which may import nothing
of the engine) and the engine's names (:mod:`engine.redo.archnames`, where the table of
variables and Oracle's sources are described) use the same rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

DEFAULT_FORMAT: Final = "%t_%s_%r.dbf"


@dataclass(frozen=True, slots=True)
class Variable:
    """One ``%x`` of a LOG_ARCHIVE_FORMAT: what it names, its width in upper case, its base."""

    names: str
    width: int
    hex: bool = False

    @property
    def regex(self) -> str:
        return r"[0-9a-fA-F]+" if self.hex else r"\d+"

    def render(self, value: int, padded: bool) -> str:
        if self.hex:
            return f"{value:0{self.width}X}" if padded else f"{value:x}"
        return f"{value:0{self.width}d}" if padded else str(value)


VARIABLES: Final[dict[str, Variable]] = {
    "t": Variable("thread", 4),
    "s": Variable("sequence", 10),
    "r": Variable("resetlogs_id", 10),
    "a": Variable("activation", 10),
    "d": Variable("dbid", 8, hex=True),
}
READ_ONLY: Final = {"h": r"[^/]*"}  # in names other tools write; never rendered
REQUIRED: Final = ("s", "t", "r")  # ORA-19905


def parts(fmt: str) -> list[tuple[str, str]]:
    """``fmt`` as (kind, text): ("lit", text) or ("var", letter as written)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c == "%" and i + 1 < len(fmt) and fmt[i + 1].lower() in (*VARIABLES, *READ_ONLY):
            out.append(("var", fmt[i + 1]))
            i += 2
            continue
        out.append(("lit", c))
        i += 1
    return out


def format_problem(
    fmt: str, *, writing: bool = True, name: str = "LOG_ARCHIVE_FORMAT"
) -> str | None:
    """What is wrong with ``fmt`` as a LOG_ARCHIVE_FORMAT (None: nothing), said of ``name``
    (the parameter that gave it). Writing, it must hold %s, %t and %r, as Oracle's; reading,
    %s is enough. Never a directory part."""
    if not fmt.strip():
        return f"{name} is empty"
    if "/" in fmt or "\\" in fmt:
        return f"{name} {fmt!r} names a directory: that is the destination's part"
    letters = {text.lower() for kind, text in parts(fmt) if kind == "var"}
    if writing:
        if "h" in letters:
            return f"{name} {fmt!r}: %h is not a variable Oracle writes"
        bad = re.search(r"%(?![tTsSrRaAdD])(.?)", fmt)
        if bad:
            return f"{name} {fmt!r}: %{bad.group(1)} is not one of its variables"
        if not all(r in letters for r in REQUIRED):
            return f"{name} {fmt!r} must contain %s, %t and %r (ORA-19905)"
    elif "s" not in letters:
        return f"{name} {fmt!r} has no %s (the log sequence number)"
    return None
