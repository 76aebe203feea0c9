"""Validation state and the small converters every parameter handler uses.

:class:`Builder` collects, top to bottom, what a file sets and every diagnostic; the
converters turn parsed tokens into numbers, durations, sizes and object names, reporting
positioned errors instead of raising.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from params import models as m
from params.errors import Diagnostic, Severity
from params.grammar import Option, Parsed, Tok
from params.text import Statement

#: GGSCI commands people paste into parameter files by mistake.
GGSCI_COMMANDS = frozenset(
    {"ADD", "ALTER", "DELETE", "INFO", "START", "STOP", "SEND", "DBLOGIN", "EDIT", "VIEW",
     "REGISTER", "UNREGISTER", "KILL", "STATUS", "LAG", "CREATE", "CLEANUP", "STATS", "GGSCI"}
)  # fmt: skip

DURATION_UNITS: dict[str, int] = {
    **dict.fromkeys(("S", "SEC", "SECS", "SECOND", "SECONDS"), 1),
    **dict.fromkeys(("M", "MIN", "MINS", "MINUTE", "MINUTES"), 60),
    **dict.fromkeys(("H", "HOUR", "HOURS"), 3600),
    **dict.fromkeys(("D", "DAY", "DAYS"), 86400),
}
SIZE_UNITS: dict[str, int] = {
    "": 1, "B": 1, "BYTE": 1, "BYTES": 1, "K": 1 << 10, "KB": 1 << 10, "M": 1 << 20,
    "MB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "T": 1 << 40, "TB": 1 << 40,
}  # fmt: skip

BRINTERVAL_MIN = 20 * 60
BRINTERVAL_MAX = 96 * 3600
CHECKINTERVAL_MIN = 300
CHECKINTERVAL_MAX = 20_000_000
TRANSCLEANUP_RANGE = (1, 43_200)
BUFSIZE_RANGE = (8_192, 10_000_000)
PORT_RANGE = (1, 65_535)
# Size options that share a name take their range from their own parameter's page (the
# release each comes from: docs/params.md, "Numeric ranges").
TRAIL_MEGABYTES = (1, 2_000)  # EXTTRAIL, RMTTRAIL, EXTFILE, RMTFILE MEGABYTES
DISCARD_MEGABYTES = (1, 4_096)  # DISCARDFILE MEGABYTES
DISCARD_MAXBYTES = (1, 2_147_483_646)  # DISCARDFILE MAXBYTES
GROUP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,7}")
#: Parameters that may precede EXTRACT / REPLICAT.
MAY_PRECEDE_GROUP = frozenset({"CHARSET", "NOLIST", "LIST", "MACROCHAR", "SETENV", "INCLUDE"})


@dataclass
class Builder:
    """Mutable state while a file is read top to bottom; frozen by :meth:`finish`."""

    path: str
    fields: dict[str, Any] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    statement: Statement | None = None
    tables: list[m.TableSpec] = field(default_factory=list)
    trails: list[m.Trail] = field(default_factory=list)
    ext_files: list[m.ExtFile] = field(default_factory=list)
    unused: list[m.Unused] = field(default_factory=list)
    reperrors: list[m.RepError] = field(default_factory=list)
    tranlog: dict[str, Any] = field(default_factory=dict)
    tranlog_other: list[tuple[str, str]] = field(default_factory=list)
    manager: dict[str, Any] = field(default_factory=dict)
    get_truncates: bool = False
    get_update_befores: bool = False
    full_deletes: bool = False  # NOCOMPRESSDELETES in force
    current_trail: str | None = None
    seen: dict[str, Statement] = field(default_factory=dict)
    count: int = 0
    br_statement: Statement | None = None
    br_interval_loc: int = 0
    tainted: set[str] = field(default_factory=set)
    expected: m.ExpectedGroup | None = None
    """Whose file this is (a group process, EDIT PARAMS of a group, ``ggsci extract``): its
    first parameter must name that kind (and group), and the file is judged as that kind."""

    # -- diagnostics -------------------------------------------------------------
    def add(self, sev: Severity, code: str, message: str, loc: int | None = None) -> None:
        st = self.statement
        assert st is not None
        origin = st.origin if loc is None else st.locate(loc)
        self.diagnostics.append(Diagnostic(sev, code, message, origin))

    def error(self, code: str, message: str, loc: int | None = None) -> None:
        self.add(Severity.ERROR, code, message, loc)

    def warn(self, code: str, message: str, loc: int | None = None) -> None:
        self.add(Severity.WARNING, code, message, loc)

    @property
    def line(self) -> int:
        return self.statement.origin.line if self.statement else 0

    def once(self, name: str) -> bool:
        """False (with an error) when a parameter that may appear once appears again."""
        if name in self.seen:
            first = self.seen[name].origin
            self.error("duplicate", f"{name} may appear only once (first at line {first.line})")
            return False
        assert self.statement is not None
        self.seen[name] = self.statement
        return True


Handler = Callable[[Builder, Parsed], None]


# ------------------------------------------------------------------ small converters


def opt_named(p: Parsed, name: str) -> Option | None:
    return next((o for o in reversed(p.options) if o.name == name), None)


def arg_of(o: Option | None, i: int = 0) -> Tok | None:
    if o is None or len(o.args) <= i:
        return None
    a = o.args[i]
    return a if isinstance(a, Tok) else None


def unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def as_int(
    b: Builder, tok: Tok | None, what: str, lo: int | None = None, hi: int | None = None
) -> int | None:
    if tok is None:
        return None
    try:
        value = int(tok.text)
    except ValueError:
        b.error("syntax", f"{what} must be a whole number, not {tok.text!r}", tok.loc)
        return None
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        rng = f"{lo} to {hi}" if hi is not None else f"at least {lo}"
        b.error("value-range", f"{what} must be {rng} (got {value})", tok.loc)
        return None
    return value


def as_duration(b: Builder, tok: Tok, what: str) -> int | None:
    """``<int><unit>`` with no space, units S/M/H/D spelled as GG_REFERENCE §2.3 lists."""
    mt = re.fullmatch(r"(\d+)(\s*)([A-Za-z]*)", tok.text)
    if not mt:
        b.error("syntax", f"{what} must be a number followed by a unit, like 2H", tok.loc)
        return None
    number, space, unit = mt.groups()
    if not unit:
        b.error(
            "syntax",
            f"{what} needs a unit right after the number (S, M, H or D): {number}H?",
            tok.loc + len(number),
        )
        return None
    if space:
        b.error(
            "syntax",
            f"no space is allowed between the number and the unit ({number}{unit})",
            tok.loc + len(number),
        )
        return None
    factor = DURATION_UNITS.get(unit.upper())
    if factor is None:
        b.error(
            "syntax",
            f"unknown unit {unit!r} in {what}; use S, SEC(S), SECOND(S), M, MIN(S), MINUTE(S), "
            "H, HOUR(S), D or DAY(S)",
            tok.loc + len(number),
        )
        return None
    return int(number) * factor


def as_size(b: Builder, tok: Tok, what: str) -> int | None:
    mt = re.fullmatch(r"(\d+)\s*([A-Za-z]*)", tok.text)
    unit = mt.group(2).upper() if mt else "?"
    if not mt or unit not in SIZE_UNITS:
        b.error("syntax", f"{what} must be a size like 512MB or 8GB, not {tok.text!r}", tok.loc)
        return None
    return int(mt.group(1)) * SIZE_UNITS[unit]


def as_object_name(
    b: Builder, tok: Tok, what: str, catalog: str | None, target: bool = False
) -> m.ObjectName | None:
    parts = split_name(tok.text)
    if len(parts) < 2 or len(parts) > 3 or any(p == "" for p in parts):
        b.error(
            "syntax",
            f"{what} must be owner.object or catalog.owner.object, not {tok.text!r}",
            tok.loc,
        )
        return None
    if target:
        for p in parts:
            if re.search(r"(?<!\\)\?", p) and not (p.startswith('"')):
                b.error(
                    "syntax",
                    "the ? wildcard is not allowed in a TARGET name",
                    tok.loc + tok.text.index("?"),
                )
                return None
    norm = [p if p.startswith('"') else p.upper() for p in parts]
    if len(norm) == 3:
        return m.ObjectName(norm[1], norm[2], norm[0], tok.text)
    return m.ObjectName(norm[0], norm[1], catalog.upper() if catalog else None, tok.text)


def split_name(text: str) -> list[str]:
    parts: list[str] = []
    cur = ""
    quote = False
    for ch in text:
        if ch == '"':
            quote = not quote
        if ch == "." and not quote:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    parts.append(cur)
    return parts
