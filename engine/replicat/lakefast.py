"""The lakehouse Replicat's columnar path: a batch of whole transactions read into Arrow
columns (:mod:`engine.replicat.lakeread`), mapped and reduced per key in Arrow
(:mod:`engine.targets.lake.columns`), one table commit per table with the position, then
the checkpoint table row: what :class:`engine.replicat.lakerun.LakeReplicatRun` does record
by record, without a Python object per record.

It takes the MAPs that map columns by name or COLMAP ``target = source`` / literal, with or
without KEYCOLS and INSERTALLRECORDS, whose errors abend (no REPERROR response other than
ABEND for them). A MAP with expressions, WHERE, FILTER, IGNORE<op>S, GETUPDATEBEFORES or a
REPERROR response, a heartbeat table, and the records :func:`lakeread.scan` leaves (key
updates, TRUNCATE, RestartAbend, Continued records) go to the classic, per-record path from
the start of their transaction (``LakeReplicatRun.poll``).

The checkpoint table's progress is :meth:`engine.replicat.progress.Progress.after` per
transaction (the restart CSN of a heartbeat record aside: heartbeat tables are not taken
here); a transaction the checkpoint table says was applied is skipped, and so is an
operation a table's own record says it holds, as on the classic path.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.heartbeat.apply import HeartbeatApplier
from engine.replicat import MappingError, ReplicatError
from engine.replicat.lakeapply import LakeApplier, LakeCatalog
from engine.replicat.lakeread import Chunk, ColumnReader, Read
from engine.replicat.mapping import Mapper, TableMap
from engine.replicat.progress import CheckpointTable, Progress
from engine.runtime.stats import StatsBook
from engine.targets import TargetError
from engine.targets.base import Target
from engine.targets.lake import LakeError
from engine.targets.lake.columns import DELETE, INSERT, UPDATE, Change, cast_table, reduce_change
from engine.targets.lake.tables import Stamp, position_version
from engine.trail.files import TrailName
from engine.trail.layout import IOType
from engine.trail.model import TableDef, TrailPosition, valid_datetime
from params.models import RepError


class Run(Protocol):
    """What the columnar path uses of :class:`engine.replicat.lakerun.LakeReplicatRun`."""

    name: str
    progress: Progress
    target: Target
    cptable: CheckpointTable | None
    catalog: LakeCatalog
    lake: LakeApplier
    mapper: Mapper
    heartbeat: HeartbeatApplier
    stats_book: StatsBook
    source_trail: TrailName
    lock: threading.Lock
    clock: Callable[[], datetime]
    before_images: int
    skipped: int
    transactions: int
    last_io_us: int
    dirty: bool

    def response(self, number: int, rules: tuple[RepError, ...] = ()) -> str: ...

    def record_written(self, done: list[str]) -> None: ...


_OPS = np.full(256, 255, np.uint8)
_OPS[IOType.INSERT], _OPS[IOType.UPDATE], _OPS[IOType.FIELDCOMP] = INSERT, UPDATE, UPDATE
_OPS[IOType.DELETE] = DELETE
_STAT_OP = {INSERT: "INSERT", UPDATE: "UPDATE", DELETE: "DELETE"}
_COUNT = {INSERT: "inserts", UPDATE: "updates", DELETE: "deletes"}
_LETTERS = pa.array(["I", "U", "D"])
_MIN_US, _MAX_US = -62135596800_000_000, 253402300799_999_999  # datetime's years 1..9999


@dataclass
class _Target:
    """What one batch gives one target table."""

    m: TableMap
    changes: list[Change] = field(default_factory=list)
    history: list[pa.Table] = field(default_factory=list)


class FastPath:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.reader = ColumnReader(run.source_trail, run.progress.position, self.eligible)
        self._eligible: dict[tuple[str, int], bool] = {}
        self.batches = 0  # committed by this path
        self.operations = 0  # trail records it read and applied (or skipped as applied)
        self.handovers = 0  # times the classic path took over

    # -- which tables ---------------------------------------------------------------------
    def eligible(self, table: str, definition: TableDef | None) -> bool:
        key = (table, id(definition))
        if key not in self._eligible:
            self._eligible[key] = self._check(table, definition)
        return self._eligible[key]

    def _check(self, table: str, definition: TableDef | None) -> bool:
        run = self.run
        if run.heartbeat.owns(table):
            return False
        try:
            maps = run.mapper.maps_for(table, definition)
        except (MappingError, TargetError):
            return False  # the classic path says why, at the record
        return all(self._plain_map(m) for m in maps)

    def _plain_map(self, m: TableMap) -> bool:
        literal_key = any(c.name in m.key_names for c, _ in m.literals)
        return (
            m.rule is None
            and not m.computed
            and not m.ignore_ops
            and not m.get_befores
            and not literal_key
            and self.run.response(0, m.reperrors) == "ABEND"
        )

    # -- a batch ----------------------------------------------------------------------------
    def apply(self, read: Read) -> None:
        """Apply ``read``'s transactions: table commits, then the checkpoint table row, in
        the checkpoint database's transaction (as ``ReplicatRun._apply``)."""
        run = self.run
        chunks = read.chunks
        ti = np.concatenate([c.trans_ind for c in chunks])
        ends = (ti == 2) | (ti == 3)
        txn_no = np.concatenate([[0], np.cumsum(ends)[:-1]]).astype(np.int64)
        firsts = np.flatnonzero(np.concatenate([[True], ends[:-1]]))
        lasts = np.flatnonzero(ends)
        seqno = np.concatenate([np.full(c.n, c.seqno, np.int64) for c in chunks])
        end = np.concatenate([c.end for c in chunks])
        io_time = np.concatenate([c.io_time for c in chunks])
        tokens: dict[int, tuple[str | None, str | None]] = {}
        base = 0
        for c in chunks:
            tokens.update((base + i, t) for i, t in c.tokens.items())
            base += c.n
        progress, skip, csns, tranids = self._progress(firsts, lasts, seqno, end, io_time, tokens)
        txn_end = (seqno[lasts] << 32) | end[lasts]  # position_version of each end
        keep = ~skip[txn_no]
        targets: dict[str, _Target] = {}
        stats: dict[tuple[str, str, str], int] = {}
        base = 0
        with run.lock:
            for c in chunks:
                sl = slice(base, base + c.n)
                self._chunk(c, keep[sl], txn_end[txn_no[sl]], txn_no[sl], csns, tranids,
                            targets, stats)  # fmt: skip
                base += c.n
            self._commit(targets, progress, stats, int(skip.sum()), len(lasts) - int(skip.sum()))
        run.last_io_us = int(io_time[-1]) or run.last_io_us
        self.batches += 1
        self.operations += len(ti)

    def _progress(
        self,
        firsts: np.ndarray,
        lasts: np.ndarray,
        seqno: np.ndarray,
        end: np.ndarray,
        io_time: np.ndarray,
        tokens: dict[int, tuple[str | None, str | None]],
    ) -> tuple[Progress, np.ndarray, list[str | None], list[str | None]]:
        """The progress after the batch, which transactions the checkpoint table says were
        applied, and each one's LOGCSN and TRANID text."""
        progress = self.run.progress
        skip = np.zeros(len(lasts), bool)
        csns: list[str | None] = []
        tranids: list[str | None] = []
        for t, (first, last) in enumerate(zip(firsts.tolist(), lasts.tolist(), strict=True)):
            text, tranid = tokens.get(first, (None, None))
            csns.append(text)
            tranids.append(tranid)
            csn = int(text) if text is not None and text.isdigit() else None
            at = TrailPosition(int(seqno[last]), int(end[last]))
            if _applied(progress, csn, tranid):
                skip[t] = True
                progress = replace(progress, position=at)
                continue
            moment = valid_datetime(int(io_time[last]))
            audit = (moment.isoformat(" ") if moment else progress.audit_ts) or ""
            if csn is None:
                progress = Progress(at, progress.csn, progress.xids, audit, progress.bsn)
            else:
                same = csn == progress.csn
                xids = (*progress.xids, tranid or "") if same else (tranid or "",)
                progress = Progress(at, csn, xids, audit, progress.bsn)
        return progress, skip, csns, tranids

    def _chunk(
        self,
        c: Chunk,
        keep: np.ndarray,
        txn_end: np.ndarray,
        txn_no: np.ndarray,
        csns: list[str | None],
        tranids: list[str | None],
        targets: dict[str, _Target],
        stats: dict[tuple[str, str, str], int],
    ) -> None:
        run = self.run
        befores = (c.before_after == ord("B")) & (
            (c.io_type == IOType.UPDATE) | (c.io_type == IOType.FIELDCOMP)
        )
        ops_all = _OPS[c.io_type]
        for tid, table in enumerate(c.names):
            mine = (c.table_id == tid) & keep
            if not mine.any():
                continue
            maps = run.mapper.maps_for(table, c.defs.get(table))
            for m in maps:
                name = m.target.sql_name
                rows = mine & ~befores
                run.before_images += int((mine & befores).sum())
                done = run.catalog.recorded.get(name)
                if done is not None:
                    held = rows & (txn_end <= position_version(done))
                    run.lake.skipped_ops += int(held.sum())
                    rows &= ~held
                idx = np.flatnonzero(rows)
                if not len(idx):
                    continue
                t = targets.get(name)
                if t is None:
                    t = targets[name] = _Target(m)
                ops = ops_all[idx]
                take = pa.array(idx)
                cols: dict[str, tuple[pa.Array, np.ndarray]] = {}
                for index, target in m.targets.items():
                    if index < len(c.columns):
                        arr, present = c.columns[index]
                        cols[target] = (arr.take(take), present[idx])
                for col, value in m.literals:
                    cols[col.name] = (pa.array([value] * len(idx), pa.string()), ops != DELETE)
                if m.insert_all:
                    t.history.append(self._history(c, idx, cols, txn_no[idx], csns, tranids))
                else:
                    t.changes.append(Change(ops, cols, m.key_names))
                for op in (INSERT, UPDATE, DELETE):
                    n = int((ops == op).sum())
                    if n:
                        k = (table, m.target.name, _STAT_OP[op])
                        stats[k] = stats.get(k, 0) + n
                        run.lake.counts["inserts" if m.insert_all else _COUNT[op]] += n

    def _history(
        self,
        c: Chunk,
        idx: np.ndarray,
        cols: dict[str, tuple[pa.Array, np.ndarray]],
        txn_no: np.ndarray,
        csns: list[str | None],
        tranids: list[str | None],
    ) -> pa.Table:
        """The rows of an INSERTALLRECORDS table: the mapped columns, then OP_TYPE, OP_TS,
        CSN, TRANID and POSITION (engine.replicat.lakeapply.LakeApplier._history)."""
        data: dict[str, pa.Array] = {name: arr for name, (arr, _) in cols.items()}
        data["OP_TYPE"] = pc.take(_LETTERS, pa.array(_OPS[c.io_type[idx]]))
        us = c.io_time[idx]
        bad = (us == 0) | (us < _MIN_US) | (us > _MAX_US)
        data["OP_TS"] = pa.array(us, pa.timestamp("us", tz="UTC"), mask=bad)
        data["CSN"] = pc.take(pa.array(csns, pa.string()), pa.array(txn_no))
        data["TRANID"] = pc.take(pa.array(tranids, pa.string()), pa.array(txn_no))
        rba = pc.utf8_lpad(pc.cast(pa.array(c.rba[idx]), pa.string()), 10, "0")
        data["POSITION"] = pc.binary_join_element_wise(f"{c.seqno:010d}", rba, "")
        return pa.table(data)

    def _commit(
        self,
        targets: dict[str, _Target],
        progress: Progress,
        stats: dict[tuple[str, str, str], int],
        skipped: int,
        applied: int,
    ) -> None:
        run = self.run
        stamp = Stamp(run.name, progress.position, progress.csn, progress.xids)
        target = run.target
        target.begin()
        try:
            done: list[str] = []
            for name, t in targets.items():
                table = run.catalog.tables[name]
                try:
                    if t.history:
                        rows = pa.concat_tables(t.history, promote_options="default")
                        table.commit_table(cast_table(rows, table.schema, table.name), stamp)
                    else:
                        reduced = reduce_change(_joined(t.changes), table.name)
                        if not reduced.upserts.num_rows and not reduced.deletes.num_rows:
                            continue
                        table.commit_reduced(reduced, t.m.key_names, stamp)
                except LakeError as exc:
                    raise ReplicatError(exc.code, exc.message) from exc
                run.catalog.recorded[name] = stamp.position
                done.append(name)
            run.record_written(done)
            if run.cptable is not None:
                run.cptable.save(progress, run.clock())
            target.commit()
        except BaseException:
            target.rollback()
            raise
        run.stats_book.add([(s, t, op, n) for (s, t, op), n in stats.items()])
        run.progress = progress
        run.transactions += applied
        run.skipped += skipped
        run.dirty = True


def _applied(progress: Progress, csn: int | None, tranid: str | None) -> bool:
    """:meth:`Progress.applied` for a transaction's CSN and id."""
    if csn is None or progress.csn is None:
        return False
    return csn < progress.csn or (csn == progress.csn and (tranid or "") in progress.xids)


def _joined(changes: list[Change]) -> Change:
    """The changes of several chunks as one, in order (a column some lack: not carried)."""
    if len(changes) == 1:
        return changes[0]
    names: dict[str, None] = {}
    for ch in changes:
        names.update(dict.fromkeys(ch.columns))
    cols: dict[str, tuple[pa.Array, np.ndarray]] = {}
    for name in names:
        arrays: list[Any] = []
        present = []
        for ch in changes:
            n = len(ch.ops)
            a, p = ch.columns.get(name, (pa.nulls(n, pa.string()), np.zeros(n, bool)))
            arrays.append(a)
            present.append(p)
        cols[name] = (pa.concat_arrays(arrays), np.concatenate(present))
    return Change(np.concatenate([ch.ops for ch in changes]), cols, changes[0].key)
