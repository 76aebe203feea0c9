"""Archived-log-only capture of a real Oracle database: the read loop an Extract runs over
an archive location (GoldenGate's ALO mode), on the Extract's own cache and trail writer.
Driver side, in process.

:meth:`ArchiveCapture.poll` reads every archived log of the thread available now, from the
current position on, in sequence order: each record's logical changes
(:mod:`engine.extract.oracle_source`) go through the Extract's transaction cache, each
committed transaction is encoded (:func:`engine.extract.tasks.assemble.stream_encoded`) and
appended to the trail, the trail is made durable, and only then the position moves on. The
next sequence not there yet: poll returns 0 (the Extract waits for it, as ALO does); a later
sequence there while the next is missing: ``OGG-00446`` naming it; a log of another
incarnation: refused by name. A restart from :attr:`state` (the recovery position: the start
of the oldest open transaction) reads again from there and skips commits already in the trail.

Run as an Extract group by :class:`engine.extract.alo.AloRun` (``SOURCEDB`` of a database
attached with ``ggsci db attach``): see docs/extract.md, "Capture from a real database's
archived logs".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine import storage
from engine.changes import Kind, Position
from engine.extract.cache import TransactionCache
from engine.extract.oracle_source import OracleLcrs, table_def
from engine.extract.tasks.assemble import stream_encoded
from engine.redo.catalog import LogFile, MissingLogError, chain, list_logs
from engine.redo.dictionary import Dictionary, Table
from engine.redo.framing import iter_records, read_header
from engine.trail.writer import TrailWriter


@dataclass(frozen=True)
class ArchiveState:
    """Where reading resumes (the recovery position) and the last commit written."""

    recovery: Position
    last_commit_scn: int = 0
    last_commit_xids: tuple[str, ...] = ()
    last_commit_time_us: int = 0  # its redo time (source-local microseconds since 1970)

    def to_json(self) -> dict[str, object]:
        return {
            "recovery": self.recovery.to_json(),
            "last_commit_scn": self.last_commit_scn,
            "last_commit_xids": list(self.last_commit_xids),
            "last_commit_time_us": self.last_commit_time_us,
        }

    @classmethod
    def from_json(cls, d: dict[str, object]) -> ArchiveState:
        rec = d["recovery"]
        assert isinstance(rec, dict)
        xids = d.get("last_commit_xids", [])
        assert isinstance(xids, list)
        return cls(
            Position.from_json(rec),
            int(str(d.get("last_commit_scn", 0))),
            tuple(map(str, xids)),
            int(str(d.get("last_commit_time_us", 0))),
        )


@dataclass
class _Progress:
    """The last commit written (SCN and the XIDs committed at it) and how many this poll."""

    last_scn: int
    xids: set[str]
    time_us: int = 0
    written: int = 0

    def written_before(self, scn: int, xid: str) -> bool:
        return scn < self.last_scn or (scn == self.last_scn and xid in self.xids)

    def add(self, scn: int, xid: str, time_us: int) -> None:
        self.time_us = time_us
        if scn > self.last_scn:
            self.last_scn = scn
            self.xids.clear()
        self.xids.add(xid)
        self.written += 1


class ArchiveCapture:
    def __init__(
        self,
        location: str,
        fmt: str | None,
        dictionary: Dictionary,
        captured: Callable[[Table], bool],
        writer: TrailWriter,
        spill_dir: Path,
        start: ArchiveState,
        warn: Callable[[str], None] = lambda _m: None,
    ) -> None:
        self.location = location
        self.fmt = fmt
        self.dictionary = dictionary
        self.captured = captured
        self.writer = writer
        self.spill_dir = spill_dir
        self.warn = warn
        self.state = start
        self.current = start.recovery  # where the next poll reads from
        self.cache = TransactionCache(spill_dir)
        self.src: OracleLcrs | None = None
        self.resetlogs_id: int | None = None
        self.transactions = 0

    def _logs(self) -> list[LogFile]:
        pos = self.current
        found = list_logs(self.location, self.fmt)
        mine = [f for f in found if f.thread == pos.thread and f.sequence >= pos.sequence]
        if not mine:
            return []  # the next archive is not there yet: wait for it
        if min(f.sequence for f in mine) != pos.sequence:
            raise MissingLogError(
                f"Could not find archived log for sequence {pos.sequence} thread {pos.thread} "
                f"under {storage.describe(self.location)}"
            )
        logs = chain(
            found, pos.thread, pos.sequence, self.resetlogs_id, storage.describe(self.location)
        )
        self.resetlogs_id = logs[0].header.resetlogs_id
        return logs

    def poll(self) -> int:
        """Read what is archived now; return the transactions written to the trail."""
        logs = self._logs()
        if not logs:
            return 0
        pos = self.current
        cache = self.cache
        was = self.state
        done = _Progress(was.last_commit_scn, set(was.last_commit_xids), was.last_commit_time_us)
        try:
            for log in logs:
                self._read_log(log, pos, done)
        finally:  # also when a log fails midway: what was appended is durable and counted
            self.writer.sync()
            # A restart resumes at the oldest transaction still open, else where reading is.
            oldest = cache.oldest()
            recovery = oldest.start if oldest else self.current
            xids = tuple(sorted(done.xids))
            self.state = ArchiveState(recovery, done.last_scn, xids, done.time_us)
            self.transactions += done.written
        return done.written

    def _read_log(self, log: LogFile, pos: Position, done: _Progress) -> None:
        """Read one archived log from ``pos`` on, counting what is written in ``done``."""
        cache = self.cache
        data = storage.read_range(log.location, 0, log.size)
        header = read_header(data)
        if self.src is None:
            self.src = OracleLcrs(
                self.dictionary, self.captured, pos.thread, header.block_size, self.warn
            )
            for t in self.src.miner.tables.values():
                self.writer.define_table(table_def(t))
        src = self.src
        src.block_size = header.block_size
        for rec in iter_records(data, header):
            for lcr in src.lcrs(rec):
                if lcr.pos < pos:
                    continue  # before where reading starts (EXTRBA, or a recovery position)
                if lcr.kind != Kind.COMMIT:
                    cache.hold(lcr)
                else:
                    txn = cache.commit(lcr.xid)
                    if txn is None or not txn[1]:
                        continue
                    if done.written_before(lcr.scn, lcr.xid):
                        continue  # in the trail already (a restart re-reads)
                    rows = txn[1]
                    out = [d for d, _io in stream_encoded(lcr.xid, lcr.scn, lcr.time_us, rows)]
                    self.writer.append_transaction(
                        b"".join(out),
                        len(out),
                        {r.table for r in rows},
                        lcr.time_us,
                        str(lcr.scn),
                    )
                    done.add(lcr.scn, lcr.xid, lcr.time_us)
        self.current = Position(pos.thread, log.sequence + 1, 0)
