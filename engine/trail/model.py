"""The record model: what a trail record says, independent of its bytes.

All types are frozen dataclasses so that records can cross process boundaries (Extract
builds them on Spark executors; they must pickle) and be compared in tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from engine.trail.layout import IO_TYPE_NAMES, NON_TRANSACTIONAL_IO_TYPES, TransInd

ColumnValue = str | None
"""A column value as text; ``None`` is SQL NULL."""

Columns = tuple[tuple[int, ColumnValue], ...]
"""Column entries in ascending column-index order: ``((index, value), ...)``."""

_EPOCH = datetime(1970, 1, 1)


def micros_to_datetime(micros: int) -> datetime:
    """IO times are naive source-local microseconds since 1970-01-01."""
    return _EPOCH + timedelta(microseconds=micros)


def valid_datetime(micros: int) -> datetime | None:
    """:func:`micros_to_datetime`, or None for a time no datetime can hold (a damaged
    trail written without checksums): readers go on rather than crash."""
    try:
        return micros_to_datetime(micros)
    except (OverflowError, ValueError):
        return None


def datetime_to_micros(moment: datetime) -> int:
    """Naive datetimes are taken as they are; aware ones are converted to UTC first."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


@dataclass(frozen=True, slots=True)
class TrailRecord:
    """One trail record (row operation, table definition or recovery marker).

    ``columns`` is the data area (after image, or the only image); ``before_columns`` is
    the before image of the key of a key update (IOType 115) and empty otherwise.
    ``rowid``, ``logcsn`` and ``tranid`` are the GGS tokens ORAROWID, LOGCSN and TRANID;
    Extract sets LOGCSN and TRANID on the first record of a transaction only.
    ``extra_tokens`` keeps token entries this code does not know, so they survive a
    decode/encode round trip. A row too large for one record is read joined from its
    pieces (continued.py): ``continued`` False and ``rec_count`` 1, as if it were one.
    """

    io_type: int
    table: str
    columns: Columns = ()
    trans_ind: int = TransInd.WHOLE
    before_after: str = "A"
    io_time_us: int = 0
    audit_rba: int = 0
    audit_pos: int = 0
    format_type: str = "R"
    partition: int = 4
    rec_count: int = 1
    orig_node: int = 0
    undo_flag: int = 0
    syskey_len: int = 0
    continued: bool = False
    incomplete: int = 0
    rowid: str | None = None
    logcsn: str | None = None
    tranid: str | None = None
    before_columns: Columns = ()
    extra_tokens: tuple[tuple[bytes, int, bytes], ...] = ()
    segment: tuple[bytes, bytes] | None = None
    """One piece of a continued row as it is in the trail (continued.py), read record by
    record (Logdump): the bytes of its before-image and data areas, which may end inside a
    column entry (``columns`` is then empty). None for a whole record or a joined row."""

    @property
    def op_name(self) -> str:
        return IO_TYPE_NAMES.get(self.io_type, f"IOType{self.io_type}")

    @property
    def io_time(self) -> datetime:
        return micros_to_datetime(self.io_time_us)

    @property
    def column_map(self) -> dict[int, ColumnValue]:
        return dict(self.columns)

    @property
    def is_transactional(self) -> bool:
        return self.io_type not in NON_TRANSACTIONAL_IO_TYPES

    @property
    def begins_transaction(self) -> bool:
        return self.trans_ind in (TransInd.BEGIN, TransInd.WHOLE)

    @property
    def ends_transaction(self) -> bool:
        return self.trans_ind in (TransInd.END, TransInd.WHOLE)


@dataclass(frozen=True, slots=True)
class TableDef:
    """Column names of a table, carried in the trail by a TDR (IOType 170, metadata.py)."""

    table: str
    column_names: tuple[str, ...]

    def name_of(self, index: int) -> str:
        if 0 <= index < len(self.column_names):
            return self.column_names[index]
        return str(index)

    @classmethod
    def from_record(cls, record: TrailRecord) -> TableDef:
        names: list[str] = []
        for index, value in record.columns:
            while len(names) < index:
                names.append(str(len(names)))
            names.append(value if value is not None else str(index))
        return cls(record.table, tuple(names))


@dataclass(frozen=True, slots=True, order=True)
class TrailPosition:
    """A trail position: file sequence number and byte offset (RBA) in that file."""

    seqno: int
    rba: int

    def to_json(self) -> dict[str, int]:
        return {"seqno": self.seqno, "rba": self.rba}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrailPosition:
        return cls(int(data["seqno"]), int(data["rba"]))

    def __str__(self) -> str:
        return f"Seqno {self.seqno}, RBA {self.rba}"


@dataclass(frozen=True, slots=True)
class FileHeader:
    """The file header record at RBA 0: tokens, by name (see layout.HEADER_TOKENS).

    Values are ``str`` for text tokens and ``int`` for numbers and times. Unknown token ids
    read from a newer file are kept in ``unknown`` and otherwise ignored.
    """

    tokens: Mapping[str, str | int] = field(default_factory=dict)
    unknown: tuple[tuple[bytes, bytes], ...] = ()

    def get(self, name: str, default: str | int | None = None) -> str | int | None:
        return self.tokens.get(name, default)

    @property
    def compatibility(self) -> int:
        value = self.tokens.get("Compatibility", 0)
        return value if isinstance(value, int) else 0

    @property
    def seqno(self) -> int:
        value = self.tokens.get("Seqno", 0)
        return value if isinstance(value, int) else 0
