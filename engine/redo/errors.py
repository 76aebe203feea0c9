"""Errors of the Oracle redo reader.

One root, :class:`RedoError` (a ``ValueError``), with a stable ``code`` and the byte
``offset`` in the file (or in the record) where the fault was found::

    RedoError(ValueError)             GGS-REDO-0000
    ├── RedoTruncatedError            GGS-REDO-0001  the bytes end inside a structure
    ├── RedoCorruptError              GGS-REDO-0002  bad magic, checksum, impossible length
    ├── RedoTrailingError             GGS-REDO-0003  bytes left over after a structure
    ├── RedoUnsupportedError          GGS-REDO-0004  a valid layout we do not decode
    └── CodecError                    GGS-SRC-0200   a value or identifier not in Oracle's encoding

The CLI prints ``str(error)`` (one line); no traceback for any input.
"""

from __future__ import annotations


class RedoError(ValueError):
    """Root of the redo package. ``code`` is stable; tests assert on it."""

    default_code = "GGS-REDO-0000"

    def __init__(self, message: str, offset: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.code = code or self.default_code

    def __str__(self) -> str:
        where = f" (offset {self.offset})" if self.offset is not None else ""
        return f"{self.code}: {self.message}{where}"


class RedoTruncatedError(RedoError):
    default_code = "GGS-REDO-0001"


class RedoCorruptError(RedoError):
    default_code = "GGS-REDO-0002"


class RedoTrailingError(RedoError):
    default_code = "GGS-REDO-0003"


class RedoUnsupportedError(RedoError):
    default_code = "GGS-REDO-0004"


class CodecError(RedoError):
    """A value or an identifier that cannot be encoded or decoded in Oracle's format (the
    embedded database's statements meet it too: they catch it beside their ``SourceError``)."""

    default_code = "GGS-SRC-0200"
