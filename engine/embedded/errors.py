"""Errors of the embedded source database and its redo log.

One root, :class:`SourceError`, carries a stable ``code`` (Oracle-style where Oracle has
one, ``GGS-SRC-nnnn`` otherwise) and a one-line ``message``; the CLI prints
``code: message`` and never a traceback. The tree::

    SourceError(Exception)
    ├── SqlError(ValueError)            bad or unsupported SQL (ORA-00900 family)
    │   ├── UnknownObjectError(LookupError)   ORA-00942 table or view does not exist
    │   ├── ConstraintError             ORA-00001 unique constraint violated, ORA-01400
    │   └── RowLockedError              ORA-00054 resource busy (row held by another txn)
    ├── DatabaseError(OSError)          missing/existing database, busy database
    ├── RedoFormatError(ValueError)     our redo file format
    │   ├── RedoTruncatedError          need more data: a torn tail (partial record)
    │   └── RedoCorruptError            bad magic, bad checksum, impossible length
    └── DumpSyntaxError(ValueError)     Oracle dump text: line not dump syntax (with line no)

A value that cannot be encoded in Oracle's format is :class:`engine.redo.errors.CodecError`
(the redo format's), which the statements catch beside ``SourceError``.
"""

from __future__ import annotations

from typing import Final

from engine.redo.errors import CodecError


class SourceError(Exception):
    """Root of the source package. ``code`` is stable; tests assert on it."""

    default_code = "GGS-SRC-0000"

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class SqlError(SourceError, ValueError):
    default_code = "ORA-00900"


class UnknownObjectError(SqlError, LookupError):
    default_code = "ORA-00942"


class ConstraintError(SqlError):
    default_code = "ORA-00001"


class RowLockedError(SqlError):
    default_code = "ORA-00054"


class DatabaseError(SourceError, OSError):
    default_code = "GGS-SRC-0100"


class RedoFormatError(SourceError, ValueError):
    default_code = "GGS-SRC-0300"


class RedoTruncatedError(RedoFormatError):
    default_code = "GGS-SRC-0301"


class RedoCorruptError(RedoFormatError):
    default_code = "GGS-SRC-0302"


class DumpSyntaxError(SourceError, ValueError):
    default_code = "GGS-SRC-0400"

    def __init__(self, message: str, line_no: int, line: str, source: str = "<dump>") -> None:
        super().__init__(f"{source}:{line_no}: {message}: {line.strip()!r}")
        self.line_no = line_no
        self.line = line
        self.source = source


#: What a statement (or a command running statements) fails with: the database's own errors, and
#: a value not in Oracle's encoding (the redo format's error). Each prints as ``code: message``.
STATEMENT_ERRORS: Final = (SourceError, CodecError)
