"""Checkpoints of a group: where it reads and where it writes, as JSON-able frozen dataclasses.

An Extract has one read checkpoint per source (redo thread or input trail) with three positions
(startup, recovery = start of the oldest open transaction, current = last record read) and one
write checkpoint per output trail. A Replicat has one read checkpoint (its trail). The file is
``dirchk/<GROUP>.cpe`` (Extract) or ``.cpr`` (Replicat) and is replaced atomically; a process
publishes a new checkpoint only after the trail bytes it covers are durable, with a
monotonically increasing ``batch_id``. GGSCI reads these files for INFO / SHOWCH / INFO ALL, so
they work whether the process is running, stopped or abended.

The file is sealed with a SHA-256 (:mod:`engine.home.jsonfile`): a changed digit is found when it
is read, and the group process abends naming the file (OGG-00444) instead of acting on it.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from engine.home.jsonfile import read_json, write_json
from engine.home.layout import Home

HISTORY = 10
EXTRACT_SUFFIX = ".cpe"
REPLICAT_SUFFIX = ".cpr"


@dataclass(frozen=True)
class Position:
    """A point in a redo log (thread, sequence, RBA, SCN) or a trail (sequence, RBA).

    ``timestamp`` is the source time of the record at that point (``YYYY-MM-DD HH:MM:SS.ffffff``),
    ``None`` when nothing has been read yet.
    """

    seqno: int = 0
    rba: int = 0
    scn: int | None = None
    timestamp: str | None = None
    thread: int = 1
    redo_file: str | None = None
    """An Extract's redo positions: the log file holding the sequence (SHOWCH's Redo File)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seqno": self.seqno,
            "rba": self.rba,
            "scn": self.scn,
            "timestamp": self.timestamp,
            "thread": self.thread,
        }
        if self.redo_file is not None:
            out["redo_file"] = self.redo_file
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Position:
        return cls(
            seqno=int(data.get("seqno", 0)),
            rba=int(data.get("rba", 0)),
            scn=None if data.get("scn") is None else int(data["scn"]),
            timestamp=data.get("timestamp"),
            thread=int(data.get("thread", 1)),
            redo_file=data.get("redo_file"),
        )


@dataclass(frozen=True)
class ReadCheckpoint:
    """Positions in one input: ``source`` is ``TRANLOG`` or the path of the input trail."""

    source: str
    startup: Position
    recovery: Position
    current: Position

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "startup": self.startup.to_json(),
            "recovery": self.recovery.to_json(),
            "current": self.current.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReadCheckpoint:
        return cls(
            source=str(data["source"]),
            startup=Position.from_json(data["startup"]),
            recovery=Position.from_json(data["recovery"]),
            current=Position.from_json(data["current"]),
        )

    @classmethod
    def at(cls, source: str, position: Position) -> ReadCheckpoint:
        return cls(source, position, position, position)


@dataclass(frozen=True)
class WriteCheckpoint:
    """The current write position in one output trail (``EXTTRAIL`` or ``RMTTRAIL``)."""

    trail: str
    kind: str
    position: Position
    megabytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "trail": self.trail,
            "kind": self.kind,
            "position": self.position.to_json(),
            "megabytes": self.megabytes,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WriteCheckpoint:
        return cls(
            trail=str(data["trail"]),
            kind=str(data["kind"]),
            position=Position.from_json(data["position"]),
            megabytes=int(data["megabytes"]),
        )


@dataclass(frozen=True)
class CsnState:
    """An Extract's CSN state (SHOWCH "CSN state information").

    ``latest_csn`` / ``latest_txn``: the commit SCN and id of the last transaction written
    to the trail (serial: also the latest finished one). ``logbsn`` / ``logbsn_time``: the
    restart position (LOGBSN, seeds 001 and 004): the begin SCN and redo time of the oldest
    open transaction - where the recovery checkpoint is - or, when none is open, those of the
    last record read; the same value the Extract puts on heartbeat records.
    """

    latest_csn: int | None = None
    latest_txn: str | None = None
    logbsn: int | None = None
    logbsn_time: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "latest_csn": self.latest_csn,
            "latest_txn": self.latest_txn,
            "logbsn": self.logbsn,
            "logbsn_time": self.logbsn_time,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CsnState:
        def num(key: str) -> int | None:
            return None if data.get(key) is None else int(data[key])

        return cls(
            num("latest_csn"), data.get("latest_txn"), num("logbsn"), data.get("logbsn_time")
        )

    def crc(self) -> str:
        """A CRC-32 of the state, as SHOWCH prints it (four bytes, dash-separated)."""
        value = zlib.crc32(json.dumps(self.to_json(), sort_keys=True).encode("utf-8"))
        return "-".join(f"{b:02X}" for b in value.to_bytes(4, "big"))


MOVED_READ: Final = "read"
MOVED_RECOVERY: Final = "recovery"
MOVED_WRITE: Final = "write"
MOVED_ALL: Final = (MOVED_READ, MOVED_RECOVERY, MOVED_WRITE)


def _moved(data: dict[str, Any]) -> tuple[str, ...]:
    """What ALTER moved; a file without the list (an earlier release) that says ``altered``:
    what was moved is not known, so all of it."""
    if "moved" in data:
        return tuple(str(m) for m in data["moved"])
    return MOVED_ALL if data.get("altered", True) else ()


@dataclass(frozen=True)
class Checkpoints:
    """All checkpoints of one group.

    ``updated`` is the wall-clock time the checkpoint was written and ``lag_seconds`` the lag at
    that moment (time of checkpoint minus source time of the last record processed), ``None``
    until something was processed. ``altered`` is set by ADD/ALTER repositioning so the next
    start knows to use normal recovery (OGG-01635); ``moved`` says what ALTER moved since the
    group's last checkpoint: :data:`MOVED_READ` (a current read position: EXTSEQNO/EXTRBA,
    SCN, BEGIN, THREADS), :data:`MOVED_RECOVERY` (IOEXTSEQNO/IOEXTRBA), :data:`MOVED_WRITE`
    (ETROLLOVER). A checkpoint the group writes has neither.
    """

    group: str
    kind: str
    reads: tuple[ReadCheckpoint, ...] = ()
    writes: tuple[WriteCheckpoint, ...] = ()
    batch_id: int = 0
    updated: str | None = None
    lag_seconds: float | None = None
    altered: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    moved: tuple[str, ...] = ()
    history: tuple[Checkpoints, ...] = ()
    """Earlier checkpoints, newest first (at most :data:`HISTORY`), kept by
    :func:`save_checkpoints` for ``INFO ... SHOWCH n``; callers need not fill it."""
    csn: CsnState | None = None
    """An Extract's CSN state and restart position (None: a Replicat, or an older file)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "kind": self.kind,
            "reads": [r.to_json() for r in self.reads],
            "writes": [w.to_json() for w in self.writes],
            "batch_id": self.batch_id,
            "updated": self.updated,
            "lag_seconds": self.lag_seconds,
            "altered": self.altered,
            "moved": list(self.moved),
            "extra": self.extra,
            "history": [h.to_json() for h in self.history],
            "csn": self.csn.to_json() if self.csn else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Checkpoints:
        return cls(
            group=str(data["group"]),
            kind=str(data["kind"]),
            reads=tuple(ReadCheckpoint.from_json(r) for r in data.get("reads", [])),
            writes=tuple(WriteCheckpoint.from_json(w) for w in data.get("writes", [])),
            batch_id=int(data.get("batch_id", 0)),
            updated=data.get("updated"),
            lag_seconds=data.get("lag_seconds"),
            altered=bool(data.get("altered", True)),
            moved=_moved(data),
            extra=dict(data.get("extra", {})),
            history=tuple(Checkpoints.from_json(h) for h in data.get("history", [])),
            csn=CsnState.from_json(data["csn"]) if data.get("csn") else None,
        )

    def with_write(self, write: WriteCheckpoint) -> Checkpoints:
        """Add or replace the write checkpoint of ``write.trail``."""
        others = tuple(w for w in self.writes if w.trail != write.trail)
        return replace(self, writes=(*others, write))

    def without_write(self, trail: str) -> Checkpoints:
        return replace(self, writes=tuple(w for w in self.writes if w.trail != trail))


def checkpoint_path(home: Home, kind: str, group: str) -> Path:
    suffix = EXTRACT_SUFFIX if kind == "EXTRACT" else REPLICAT_SUFFIX
    return home.dirchk / f"{group.upper()}{suffix}"


def load_checkpoints(home: Home, kind: str, group: str) -> Checkpoints | None:
    """The group's checkpoints, or ``None`` when it has no checkpoint file. The file is
    sealed (:mod:`engine.home.jsonfile`): a changed byte or a missing checksum is
    :class:`~engine.home.jsonfile.JsonRefused` (a ``ValueError``), as is a file too large or too
    deep to parse."""
    path = checkpoint_path(home, kind, group)
    if not path.exists():
        return None
    return Checkpoints.from_json(read_json(path, sealed=True))


def save_checkpoints(home: Home, checkpoints: Checkpoints) -> None:
    """Publish ``checkpoints`` durably (call only after the data it covers is durable).

    The checkpoint being replaced goes to the front of ``history`` (kept to :data:`HISTORY`),
    without its ``extra`` (engine state that may be large; SHOWCH shows positions only).
    """
    home.dirchk.mkdir(parents=True, exist_ok=True)
    try:
        previous = load_checkpoints(home, checkpoints.kind, checkpoints.group)
    except (ValueError, KeyError, TypeError, AttributeError):
        previous = None  # a damaged file replaced on purpose (ALTER ... repositions)
    history: tuple[Checkpoints, ...] = ()
    if previous is not None:
        history = (replace(previous, history=(), extra={}), *previous.history)[:HISTORY]
    current = replace(checkpoints, history=history)
    write_json(checkpoint_path(home, current.kind, current.group), current.to_json())


def delete_checkpoints(home: Home, kind: str, group: str) -> None:
    checkpoint_path(home, kind, group).unlink(missing_ok=True)


def next_checkpoint(
    base: Checkpoints | None,
    group: str,
    kind: str,
    *,
    reads: tuple[ReadCheckpoint, ...],
    write: WriteCheckpoint | None,
    batch_id: int,
    now: datetime,
    source_time: datetime | None,
    extra: dict[str, Any] | None = None,
    csn: CsnState | None = None,
) -> Checkpoints:
    """What a group publishes next: its read positions, its write position (replacing the
    one for the same trail), the batch id, the time, the lag (``now`` minus the source time
    of the last record processed; unchanged when nothing was processed) and an Extract's CSN
    state (unchanged when not given)."""
    cps = base or Checkpoints(group, kind)
    if write is not None:
        cps = cps.with_write(write)
    return replace(
        cps,
        reads=reads,
        batch_id=batch_id,
        updated=now.isoformat(" ", "seconds"),
        lag_seconds=(now - source_time).total_seconds() if source_time else cps.lag_seconds,
        altered=False,
        moved=(),
        extra={**cps.extra, **(extra or {})},
        csn=csn or cps.csn,
    )
