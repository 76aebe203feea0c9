"""Bounded Recovery (seed 000, GG_REFERENCE §2.1–2.2, §7).

Every BR interval of Extract processing time (the injected clock, seed 000: the interval
"is a multiple of the regular Extract checkpoint interval", CHECKPOINTSECS, and recovery is
bounded in "hours worth of Extract processing time"), a BR checkpoint — also on an idle
source, and never more than one per interval during a catch-up:

1. every transaction open across at least one interval (already open at the previous BR
   checkpoint's position) is persisted to its own file
   ``PO.<GROUP>.<object 7 digits>.<version 7 digits>`` (state, undone changes and all its
   cached rows, through the current read position), re-persisted only if it changed since;
2. the checkpoint file ``CP.<GROUP>.<9 digits>`` records the restart position: the start
   of the oldest non-persisted transaction per thread, or the current position when there
   is none, and the list of object files with their checksums;
3. the previous checkpoint and the files only it named are deleted once the new checkpoint
   is complete: only current files are kept (seed 000: "Extract cannot recover from old
   Bounded Recovery checkpoint files"); BRKEEPSTALEFILES keeps them, for support only.
   With BRFSOPTION MS_SYNC every file is flushed before the checkpoint is published;
   MS_ASYNC leaves flushing to the system.

Restart loads the newest checkpoint (a damaged one means normal recovery; a checkpoint
that failed while being written was never published, so the newest is the last valid one),
restores the persisted transactions and re-reads redo from the restart position: at most
about two intervals of redo, however old the oldest open transaction. Files are written
whole to a temporary name and renamed, and carry a SHA-256 of their content.

A persisted object holds data only (:mod:`engine.home.datafile` frames): a first frame with the
transaction's state as tagged values, then its rows in batches of :data:`BATCH` in the
binary layout of :mod:`engine.extract.lcrcodec`. Anything else — a truncated file, a flipped
byte, a file of the old pickle format — is a :class:`BrError`: normal recovery.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TypeVar

from engine.changes import Entry, Position
from engine.extract.cache import Txn
from engine.extract.lcrcodec import decode_lcrs, encode_lcrs
from engine.home import datafile as df
from engine.home.jsonfile import JsonRefused, loads_bounded

# 3: data-only frames (2 and before were pickles, which are refused: normal recovery)
MAGIC = b"GGSCI-BR-PO\x03"
BATCH = 4096  # rows per frame
CP_NAME = re.compile(r"^CP\.(?P<group>.+)\.(?P<seq>\d{9})$")
PO_NAME = re.compile(r"^PO\.(?P<group>.+)\.(?P<obj>\d{7})\.(?P<ver>\d{7})$")


class BrError(Exception):
    """A BR file is missing, unreadable or corrupt."""


@dataclass(frozen=True)
class PersistedObject:
    xid: str
    file: str
    sha256: str
    obj: int
    version: int
    rows: int


@dataclass(frozen=True)
class BrCheckpoint:
    seq: int
    redo_time_us: int
    restart: dict[int, Position]
    current: dict[int, Position]
    objects: tuple[PersistedObject, ...]
    selection: str
    last_commit_scn: int
    ignored: tuple[str, ...] = ()
    taken_us: int = 0  # Extract processing time (the BR clock) when it was taken

    def to_json(self) -> dict[str, object]:
        return {
            "seq": self.seq,
            "redo_time_us": self.redo_time_us,
            "restart": {str(t): p.to_json() for t, p in self.restart.items()},
            "current": {str(t): p.to_json() for t, p in self.current.items()},
            "objects": [o.__dict__ for o in self.objects],
            "selection": self.selection,
            "last_commit_scn": self.last_commit_scn,
            "ignored": list(self.ignored),
            "taken_us": self.taken_us,
        }

    @classmethod
    def from_json(cls, d: object) -> BrCheckpoint:
        """The checkpoint ``d`` describes, every field checked: :class:`BrError` (naming
        the field) for any other shape, never another exception."""
        if not isinstance(d, dict):
            raise BrError(f"not a checkpoint but a JSON {type(d).__name__}")
        objects = _field(d, "objects", list)
        return cls(
            _whole(d.get("seq"), "seq"),
            _whole(d.get("redo_time_us"), "redo_time_us"),
            _positions(d.get("restart"), "restart"),
            _positions(d.get("current"), "current"),
            tuple(_object(o) for o in objects),
            _field(d, "selection", str),
            _whole(d.get("last_commit_scn"), "last_commit_scn"),
            tuple(_text(x, "ignored") for x in _field(d, "ignored", list, [])),
            _whole(d.get("taken_us", 0), "taken_us"),
        )


T = TypeVar("T")


def _field(d: dict[str, object], key: str, kind: type[T], default: T | None = None) -> T:
    value = d.get(key, default)
    if not isinstance(value, kind):
        raise BrError(f"{key} is not a {kind.__name__}")
    return value


def _whole(value: object, what: str) -> int:
    """A non-negative integer of at most 64 bits (JSON numbers are ints or floats)."""
    if type(value) is not int or not 0 <= value < 1 << 64:
        raise BrError(f"{what} is not a whole number: {str(value)[:40]}")
    return value


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise BrError(f"{what} holds a {type(value).__name__}, not a string")
    return value


def _positions(value: object, what: str) -> dict[int, Position]:
    if not isinstance(value, dict):
        raise BrError(f"{what} is not a map of redo positions")
    out: dict[int, Position] = {}
    for t, p in value.items():
        if not (isinstance(t, str) and t.isdigit() and len(t) < 6 and isinstance(p, dict)):
            raise BrError(f"{what} holds {str(t)[:20]!r}: not a thread's redo position")
        out[int(t)] = Position(
            _whole(p.get("thread"), f"{what}.thread"),
            _whole(p.get("sequence"), f"{what}.sequence"),
            _whole(p.get("offset"), f"{what}.offset"),
        )
    return out


def _object(value: object) -> PersistedObject:
    if not isinstance(value, dict):
        raise BrError("objects holds something that is not a persisted object")
    return PersistedObject(
        _text(value.get("xid"), "objects.xid"),
        _text(value.get("file"), "objects.file"),
        _text(value.get("sha256"), "objects.sha256"),
        _whole(value.get("obj"), "objects.obj"),
        _whole(value.get("version"), "objects.version"),
        _whole(value.get("rows"), "objects.rows"),
    )


@dataclass
class Restored:
    """What a restart gets back from BR: the checkpoint and its transactions."""

    checkpoint: BrCheckpoint
    txns: list[tuple[Txn, list[Entry]]]
    path: Path
    passed: list[str] = field(default_factory=list)  # newer checkpoints found damaged


@dataclass
class BrStats:
    checkpoints: int = 0
    objects_written: int = 0
    objects_deleted: int = 0
    bytes_written: int = 0
    last_checkpoint: str | None = None


def selection_digest(table_statements: list[str]) -> str:
    """The TABLE selection a checkpoint was taken with, options included (WHERE, COLS,
    TOKENS ...: the rows of a persisted fragment were selected and cut under them): a
    change means normal recovery."""
    return hashlib.sha256(
        "\n".join(sorted(s.upper() for s in table_statements)).encode()
    ).hexdigest()[:16]


def _write_atomic(path: Path, data: bytes | Iterable[bytes], sync: bool) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        for chunk in [data] if isinstance(data, bytes) else data:
            fh.write(chunk)
        fh.flush()
        if sync:
            os.fsync(fh.fileno())
    os.replace(tmp, path)
    if sync:
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@dataclass
class BoundedRecovery:
    """The BR state of one Extract: its directory, interval, files, statistics."""

    directory: Path
    group: str
    interval_s: int
    keep_stale: bool = False
    sync: bool = True
    selection: str = ""
    stats: BrStats = field(default_factory=BrStats)
    next_due_us: int | None = None
    seq: int = 0
    _next_obj: int = 1
    _persisted: dict[str, tuple[PersistedObject, int, int]] = field(default_factory=dict)
    _files: set[str] = field(default_factory=set)
    # the previous checkpoint's read positions: a transaction that started before them has
    # been open across at least one interval (None: no checkpoint yet, nothing is old enough)
    _previous: dict[int, Position] | None = None

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        existing = [m for p in self.directory.iterdir() if (m := CP_NAME.match(p.name))]
        self.seq = max((int(m["seq"]) for m in existing), default=0)
        objs = [m for p in self.directory.iterdir() if (m := PO_NAME.match(p.name))]
        self._next_obj = max((int(m["obj"]) for m in objs), default=0) + 1

    # -- when (Extract processing time) -------------------------------------------------
    def due(self, now_us: int) -> bool:
        """True when the Extract's clock has reached the next BR checkpoint. The first call
        schedules it one interval after the last checkpoint in the directory (a restart keeps
        the rhythm), or one interval from now."""
        if self.next_due_us is None:
            last = self._last_taken_us()
            step = self.interval_s * 1_000_000
            self.next_due_us = last + step if last else now_us + step
        return now_us >= self.next_due_us

    def _last_taken_us(self) -> int:
        """When the newest valid checkpoint was taken (0: none)."""
        for path in self.checkpoints():
            with contextlib.suppress(OSError, BrError):
                return parse_checkpoint(path.read_bytes()).taken_us
        return 0

    def set_interval(self, seconds: int, now_us: int) -> None:
        self.interval_s = seconds
        self.next_due_us = now_us + seconds * 1_000_000

    def next_due_on_redo_axis(self, now_us: int, redo_now_us: int) -> int | None:
        """The next checkpoint placed on the redo-time axis (for pictures): as far after the
        last redo read as it is after the Extract's clock now."""
        if self.next_due_us is None:
            return None
        return redo_now_us + (self.next_due_us - now_us)

    # -- writing ---------------------------------------------------------------------
    def checkpoint(
        self,
        open_txns: list[Txn],
        rows_of: Callable[[Txn], list[Entry]],
        current: dict[int, Position],
        redo_now_us: int,
        last_commit_scn: int,
        ignored: tuple[str, ...],
        now_us: int = 0,
    ) -> tuple[BrCheckpoint, Path]:
        """Persist what must be, publish checkpoint n+1, delete what it supersedes.
        ``redo_now_us`` is the redo time of ``current``; ``now_us`` the Extract's clock."""
        previous = self._previous
        objects: list[PersistedObject] = []
        restart = dict(current)
        superseded: list[str] = []
        keep: dict[str, tuple[PersistedObject, int, int]] = {}
        for txn in open_txns:
            before = previous.get(txn.start.thread) if previous is not None else None
            if txn.xid in self._persisted or (before is not None and txn.start < before):
                prev = self._persisted.get(txn.xid)
                marker = (txn.row_count, len(txn.undone))
                if prev is not None and (prev[1], prev[2]) == marker:
                    objects.append(prev[0])
                    keep[txn.xid] = prev
                    continue
                obj = prev[0].obj if prev else self._take_obj()
                version = prev[0].version + 1 if prev else 0
                po = self._write_object(txn, rows_of(txn), current, obj, version)
                objects.append(po)
                keep[txn.xid] = (po, *marker)
                if prev is not None:
                    superseded.append(prev[0].file)
            else:
                t = txn.start.thread
                if txn.start < restart.get(t, txn.start) or t not in restart:
                    restart[t] = txn.start
        for xid, (po, _, _) in self._persisted.items():
            if xid not in keep:
                superseded.append(po.file)  # committed, rolled back or skipped since
        self.seq += 1
        cp = BrCheckpoint(
            self.seq, redo_now_us, restart, dict(current), tuple(objects), self.selection,
            last_commit_scn, ignored, now_us,
        )  # fmt: skip
        path = self.directory / f"CP.{self.group}.{self.seq:09d}"
        body = json.dumps(cp.to_json(), sort_keys=True).encode()
        data = body + b"\n" + hashlib.sha256(body).hexdigest().encode() + b"\n"
        _write_atomic(path, data, self.sync)
        self.stats.bytes_written += len(data)
        self._persisted = keep
        self._previous = dict(current)
        self.stats.checkpoints += 1
        self.stats.last_checkpoint = path.name
        if not self.keep_stale:
            live = {o.file for o in objects}
            # superseded files, and leftovers of a checkpoint that failed half-way
            leftovers = {p.name for p in self.directory.iterdir() if PO_NAME.match(p.name)}
            stale = set(superseded) | (leftovers - live)
            for name in sorted(stale):
                with contextlib.suppress(FileNotFoundError):
                    (self.directory / name).unlink()
                    self.stats.objects_deleted += 1
            for old in self.directory.iterdir():
                m = CP_NAME.match(old.name)
                if m and int(m["seq"]) < self.seq:  # only the current checkpoint is kept
                    old.unlink(missing_ok=True)
        self.next_due_us = now_us + self.interval_s * 1_000_000
        return cp, path

    def _take_obj(self) -> int:
        obj = self._next_obj
        self._next_obj += 1
        return obj

    def _write_object(
        self, txn: Txn, rows: list[Entry], current: dict[int, Position], obj: int, version: int
    ) -> PersistedObject:
        name = f"PO.{self.group}.{obj:07d}.{version:07d}"
        digest = hashlib.sha256()
        size = 0

        def chunks() -> Iterable[bytes]:
            nonlocal size
            for chunk in _po_frames(txn, rows, current):
                digest.update(chunk)
                size += len(chunk)
                yield chunk

        _write_atomic(self.directory / name, chunks(), self.sync)
        self.stats.objects_written += 1
        self.stats.bytes_written += size
        return PersistedObject(txn.xid, name, digest.hexdigest(), obj, version, len(rows))

    # -- reading ---------------------------------------------------------------------
    def checkpoints(self) -> list[Path]:
        found = [
            (int(m["seq"]), p) for p in self.directory.iterdir() if (m := CP_NAME.match(p.name))
        ]
        return [p for _, p in sorted(found, reverse=True)]

    def load(self) -> Restored:
        """The newest checkpoint with all its files intact; when it is damaged (its
        checksum, its body or one of its files), the one before it if that is still there
        (BRKEEPSTALEFILES, or a crash between writing the new one and deleting the old);
        :class:`BrError` (normal recovery) when none is. ``Restored.passed`` names the
        damaged newer ones."""
        found = self.checkpoints()
        if not found:
            raise BrError("no BR checkpoint file")
        passed: list[str] = []
        for path in found:
            try:
                restored = self._load(path)
            except BrError as exc:
                passed.append(str(exc))
                self._persisted.clear()
                continue
            restored.passed = passed
            return restored
        raise BrError("; ".join(passed))

    def _load(self, path: Path) -> Restored:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise BrError(f"{path.name}: {exc.strerror}") from exc
        try:
            cp = parse_checkpoint(raw)
        except BrError as exc:
            raise BrError(f"{path.name}: {exc}") from None
        txns: list[tuple[Txn, list[Entry]]] = []
        for po in cp.objects:
            if not PO_NAME.match(po.file) or "/" in po.file:
                raise BrError(f"{path.name}: invalid persisted-object name {po.file!r}")
            file = self.directory / po.file
            try:
                data = file.read_bytes()
            except OSError as exc:
                raise BrError(f"{po.file}: {exc.strerror}") from exc
            if hashlib.sha256(data).hexdigest() != po.sha256:
                raise BrError(f"{po.file}: checksum mismatch")
            try:
                txn, rows = _read_po(data)
            except df.DataError as exc:
                raise BrError(f"{po.file}: {exc}") from exc
            txns.append((txn, rows))
            self._persisted[txn.xid] = (po, len(rows) + 0, len(txn.undone))
        self.seq = max(self.seq, cp.seq)
        self._previous = dict(cp.current)
        return Restored(cp, txns, path)

    def _last_line(self) -> str:
        """The newest checkpoint, saying whose: this run's, or one a previous run left (the
        status said "0 written" beside a file it had not written)."""
        if self.stats.last_checkpoint:
            return self.stats.last_checkpoint
        try:
            found = self.checkpoints() if self.directory.is_dir() else []
        except OSError:
            found = []
        return f"{found[0].name} (written by a previous run)" if found else "none"

    def status_lines(self) -> list[str]:
        s = self.stats
        return [
            f"BR directory: {self.directory}",
            f"BR interval: {self.interval_s // 3600}H{(self.interval_s % 3600) // 60:02d}M "
            f"({self.interval_s} seconds)",
            f"BR checkpoints written by this run: {s.checkpoints}; last: {self._last_line()}",
            f"Persisted objects: {len(self._persisted)} current, {s.objects_written} written, "
            f"{s.objects_deleted} deleted; {s.bytes_written} bytes",
        ]


# -- checkpoint files ----------------------------------------------------------------------

MAX_CHECKPOINT: Final = 16 << 20  # bytes of a checkpoint file (it lists object names only)


def parse_checkpoint(raw: bytes) -> BrCheckpoint:
    """The checkpoint a ``CP`` file holds (its JSON body, a newline, the body's SHA-256);
    :class:`BrError` with the reason for anything else."""
    if len(raw) > MAX_CHECKPOINT:
        raise BrError(f"larger than {MAX_CHECKPOINT} bytes")
    body, _, rest = raw.rstrip(b"\n").rpartition(b"\n")
    if hashlib.sha256(body).hexdigest().encode() != rest.strip():
        raise BrError("checksum mismatch")
    try:
        data = loads_bounded(body, max_bytes=MAX_CHECKPOINT, max_depth=8)
    except JsonRefused as exc:
        raise BrError(f"invalid checkpoint ({exc})") from None
    try:
        return BrCheckpoint.from_json(data)
    except BrError as exc:
        raise BrError(f"invalid checkpoint ({exc})") from None


# -- persisted-object files (data only) ---------------------------------------------------


def _po_frames(txn: Txn, rows: list[Entry], current: dict[int, Position]) -> Iterable[bytes]:
    """The frames of ``txn``'s file: its state, then its rows in batches."""
    meta = {
        "xid": txn.xid,
        "start": _position(txn.start),
        "start_scn": txn.start_scn,
        "start_time_us": txn.start_time_us,
        "user": txn.user,
        "name": txn.name,
        "undone": sorted(txn.undone),
        "through": {t: _position(p) for t, p in current.items()},
        "last_time_us": txn.last_time_us,
        "rows": len(rows),
    }
    yield df.seal(MAGIC, df.pack(meta))
    for i in range(0, len(rows), BATCH):
        yield df.seal(MAGIC, encode_lcrs(rows[i : i + BATCH]))


def _position(p: Position) -> tuple[int, int, int]:
    return (p.thread, p.sequence, p.offset)


def _position_of(value: object, what: str) -> Position:
    t = df.expect(value, tuple, what)
    if len(t) != 3 or any(type(x) is not int for x in t):
        raise df.DataError(f"{what}: not a redo position")
    return Position(*t)


def _read_po(data: bytes) -> tuple[Txn, list[Entry]]:
    """A persisted object's transaction and rows; :class:`DataError` if it is not intact."""
    payloads = df.frames(MAGIC, data)
    if not payloads:
        raise df.DataError("empty file")
    meta = df.record(df.unpack(payloads[0]), "transaction state")
    undone = df.field_of(meta, "undone", list)
    if any(type(u) is not str for u in undone):
        raise df.DataError("undone: expected undo references")
    txn = Txn(
        df.field_of(meta, "xid", str),
        _position_of(meta.get("start"), "start"),
        df.field_of(meta, "start_scn", int),
        df.field_of(meta, "start_time_us", int),
        df.field_of(meta, "user", str),
        df.field_of(meta, "name", str),
        last_time_us=df.field_of(meta, "last_time_us", int),
    )
    txn.undone = set(undone)
    rows: list[Entry] = []
    for payload in payloads[1:]:
        rows.extend(decode_lcrs(payload))
    if len(rows) != df.field_of(meta, "rows", int):
        raise df.DataError(f"{len(rows)} rows where the file says {meta['rows']}")
    return txn, rows
