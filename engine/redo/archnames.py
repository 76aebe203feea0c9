"""Archived log names from a LOG_ARCHIVE_FORMAT, Oracle's initialization parameter.

The name of an archived log is LOG_ARCHIVE_FORMAT with its variables replaced, appended to
LOG_ARCHIVE_DEST (Oracle Database Reference, "LOG_ARCHIVE_FORMAT"; Data Guard Concepts and
Administration, "Archived Redo Log File Name Format Parameters"):

====  =========================================  ====================================
%t    thread number                              %T: zero-filled to 4 digits
%s    log sequence number                        %S: zero-filled to 10 digits
%r    resetlogs id (of the incarnation)          %R: zero-filled to 10 digits
%a    activation id                              %A: zero-filled to 10 digits (ours)
%d    database id, in hexadecimal (ours: as      %D: zero-filled to 8 hex digits (ours)
      the brief has it; Oracle says "database
      ID" without a base)
====  =========================================  ====================================

Upper case makes a value fixed length, padded on the left with zeros (the widths of %T, %S
and %R are the Data Guard table's examples: ``log_0001``, ``log_0000000251``,
``log_1_62_0023452345``). Oracle refuses a format without %s, %t and %r at startup
(ORA-19905: log_archive_format must contain %s, %t and %r): a database that writes archives
(:mod:`engine.embedded.archiver`) is held to that; a reader (:func:`format_regex`) takes any
format with %s, and also %h (a hash part other tools' names carry: any characters but ``/``).
Unix's default is ``%t_%s_%r.dbf``. The header of a log, not its name, says what it is.
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


def _parts(fmt: str) -> list[tuple[str, str]]:
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


def format_problem(fmt: str, *, writing: bool = True) -> str | None:
    """What is wrong with ``fmt`` as a LOG_ARCHIVE_FORMAT (None: nothing). Writing, it must
    hold %s, %t and %r, as Oracle's; reading, %s is enough. Never a directory part."""
    if not fmt.strip():
        return "LOG_ARCHIVE_FORMAT is empty"
    if "/" in fmt or "\\" in fmt:
        return f"LOG_ARCHIVE_FORMAT {fmt!r} names a directory: that is LOG_ARCHIVE_DEST's part"
    letters = {text.lower() for kind, text in _parts(fmt) if kind == "var"}
    if writing:
        if "h" in letters:
            return f"LOG_ARCHIVE_FORMAT {fmt!r}: %h is not a variable Oracle writes"
        bad = re.search(r"%(?![tTsSrRaAdD])(.?)", fmt)
        if bad:
            return f"LOG_ARCHIVE_FORMAT {fmt!r}: %{bad.group(1)} is not one of its variables"
        if not all(r in letters for r in REQUIRED):
            return f"LOG_ARCHIVE_FORMAT {fmt!r} must contain %s, %t and %r (ORA-19905)"
    elif "s" not in letters:
        return f"LOG_ARCHIVE_FORMAT {fmt!r} has no %s (the log sequence number)"
    return None


def archive_name(
    fmt: str,
    *,
    thread: int,
    sequence: int,
    resetlogs_id: int,
    dbid: int = 0,
    activation: int = 0,
) -> str:
    """The archived log's name: ``fmt`` with its variables replaced."""
    values = {
        "thread": thread,
        "sequence": sequence,
        "resetlogs_id": resetlogs_id,
        "dbid": dbid,
        "activation": activation,
    }
    out = []
    for kind, text in _parts(fmt):
        if kind == "lit":
            out.append(text)
        elif text.lower() in VARIABLES:
            var = VARIABLES[text.lower()]
            out.append(var.render(values[var.names], text.isupper()))
        else:
            raise ValueError(f"%{text} cannot be written")
    return "".join(out)


def format_regex(fmt: str) -> re.Pattern[str]:
    """A pattern matching the names ``fmt`` gives (the whole name)."""
    out = []
    for kind, text in _parts(fmt):
        if kind == "lit":
            out.append(re.escape(text))
        elif text.lower() in READ_ONLY:
            out.append(READ_ONLY[text.lower()])
        else:
            out.append(VARIABLES[text.lower()].regex)
    return re.compile("".join(out) + r"\Z")
