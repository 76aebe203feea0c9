"""Errors of the trail layer, one tree under :class:`TrailError`.

::

    TrailError(Exception)                  root; every error carries a stable ``code``
    ├── IncompleteRecordError(EOFError)     need more data: the buffer ends inside a record
    ├── CorruptRecordError(ValueError)      the bytes cannot be a record (bad tag, length, text)
    │   └── ChecksumError                   a record's CRC-32 token disagrees with its bytes
    ├── TrailingBytesError(ValueError)      a whole record decoded but bytes are left over
    ├── RecordLimitError(ValueError)        a value or record exceeds a named limit of layout.py
    ├── FileVersionError(ValueError)        a trail file of a newer format than this reader
    └── TrailIOError(OSError)               the file system failed under the writer/reader

"Need more data" is not corruption: a reader following a trail that is being appended to
meets it at every end of the written data and simply waits.
"""

from __future__ import annotations


class TrailError(Exception):
    """Root of the trail errors. ``code`` is stable and what tests assert on."""

    code = "TRAIL-000"

    def __init__(self, message: str, *, offset: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset

    def __str__(self) -> str:
        where = f" (offset {self.offset})" if self.offset is not None else ""
        return f"{self.code} {self.message}{where}"


class IncompleteRecordError(TrailError, EOFError):
    """The buffer ends inside a record; ``needed`` more bytes are required at least."""

    code = "TRAIL-001"

    def __init__(self, message: str, *, offset: int | None = None, needed: int = 1) -> None:
        super().__init__(message, offset=offset)
        self.needed = needed


class CorruptRecordError(TrailError, ValueError):
    code = "TRAIL-002"


class ChecksumError(CorruptRecordError):
    """A record of a file whose header promises checksums fails its check (checksum.py)."""

    code = "TRAIL-007"


class TrailingBytesError(TrailError, ValueError):
    code = "TRAIL-003"


class RecordLimitError(TrailError, ValueError):
    code = "TRAIL-004"


class FileVersionError(TrailError, ValueError):
    code = "TRAIL-005"


class TrailIOError(TrailError, OSError):
    code = "TRAIL-006"


class ReleaseError(TrailError, ValueError):
    """An unknown FORMAT RELEASE, or a record a trail format release cannot hold."""

    code = "TRAIL-008"
