"""What the PostgreSQL Extract's capture keeps between polls and checkpoints: its checkpoint
state, its counters, its error, and the two facts of test_decoding's text it reads back (the
commit time, the LSN as a trail position)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engine.changes import Position
from engine.errors import GGError
from engine.postgres.lsn import format_lsn, parse_lsn
from engine.trail.model import datetime_to_micros


class PgCaptureError(GGError):
    """The capture cannot go on (slot dropped, WAL gone, a gap): the Extract abends."""


@dataclass(frozen=True)
class PgState:
    """What a checkpoint records: the end LSN of the last transaction read (written or
    skipped), of the last one written, its time, and the trail's durable position."""

    read_lsn: int
    last_commit_lsn: int
    last_time_us: int
    last_xid: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "read_lsn": format_lsn(self.read_lsn),
            "last_commit_lsn": format_lsn(self.last_commit_lsn),
            "last_time_us": self.last_time_us,
            "last_xid": self.last_xid,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PgState:
        return cls(
            parse_lsn(str(d["read_lsn"])),
            parse_lsn(str(d["last_commit_lsn"])),
            int(d.get("last_time_us", 0)),
            None if d.get("last_xid") is None else str(d["last_xid"]),
        )


@dataclass
class PgStats:
    transactions: int = 0
    skipped_recovered: int = 0
    skipped_before_begin: int = 0
    replicated: int = 0  # a Replicat's transactions left out (FILTERTABLE, IGNOREREPLICATES)
    trail_records: int = 0
    changes: int = 0
    by_op: dict[str, int] = field(default_factory=dict)


def commit_micros(text: str) -> int:
    """The commit timestamp test_decoding prints (session zone UTC) as trail micros."""
    t = text.strip()
    if t.endswith("+00"):
        t = t[:-3]
    return datetime_to_micros(datetime.fromisoformat(t))


def position_of(lsn: int) -> Position:
    """An LSN as a change's position (the trail's AuditRBA and AuditPos: its halves)."""
    return Position(1, lsn >> 32, lsn & 0xFFFFFFFF)
