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

from params.archformat import (
    DEFAULT_FORMAT,
    READ_ONLY,
    REQUIRED,
    VARIABLES,
    Variable,
    format_problem,
    parts,
)

__all__ = [
    "DEFAULT_FORMAT",
    "READ_ONLY",
    "REQUIRED",
    "VARIABLES",
    "Variable",
    "archive_name",
    "format_problem",
    "format_regex",
    "parts",
]


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
    for kind, text in parts(fmt):
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
    for kind, text in parts(fmt):
        if kind == "lit":
            out.append(re.escape(text))
        elif text.lower() in READ_ONLY:
            out.append(READ_ONLY[text.lower()])
        else:
            out.append(VARIABLES[text.lower()].regex)
    return re.compile("".join(out) + r"\Z")
