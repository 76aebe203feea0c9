"""A reproducible workload generator for the embedded database.

``run_workload(db, spec)`` creates its tables when missing (``WL_T01`` ...: ``ID`` primary
key, ``NAME``, ``AMOUNT``, ``CREATED`` date, ``STATUS`` char) and runs transactions from
several concurrent sessions, interleaved statement by statement (so the redo interleaves
like a busy OLTP system): each transaction makes ``rows_per_txn`` row changes chosen by the
insert/update/delete ``mix`` and ends in COMMIT, or ROLLBACK with ``rollback_ratio``.
``long_txns`` transactions are opened first and committed only once they are ``long_age``
seconds old in redo time. Everything is driven by ``seed``: the same spec on the same
(fresh) database gives the same redo content. Each session updates and deletes only rows
it owns, so no two open transactions change the same row.

It parses no SQL: row changes go through the fast path (:mod:`engine.embedded.bulk`), and
the loop below, which runs once per row change, keeps its Python steps few; throughput in
``benchmarks/source_workload.py`` and ``docs/source_db.md``.

Checkpoints: at its start and end, and every ``checkpoint_every`` transactions, so that a
process killed mid-run leaves at most about that many transactions for the next open's
instance recovery to roll forward (engine/embedded/recovery.py). A checkpoint commits the
tables with every open transaction's changes in them; a transaction of the generic session
path (the long ones) is saved with its undo, and recovery rolls it back or keeps it, but a
fast-path transaction keeps no undo (only one it will roll back keeps some, in memory), so a
checkpoint while one is open would leave its changes in the tables for good if the process
died before it ended. The periodic checkpoint is therefore taken at a safe point: once the
transactions are due, the loop *drains* (picks only workers with a fast-path transaction
open, which go on to its end, opening none) and checkpoints when none is open. The draws
stay the seed's, so the redo stays reproducible.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Final

from engine.embedded import dml
from engine.embedded.bulk import BulkSession
from engine.embedded.database import Database
from engine.embedded.dictionary import ColumnDef, TableDef
from engine.embedded.errors import SourceError, UnknownObjectError
from engine.embedded.session import Session
from engine.embedded.values import format_datetime
from engine.redo.codecs import Value

OWNER: Final = "WL"
_EPOCH: Final = datetime(1970, 1, 1)
_SET_COLS: Final = (2, 4)  # an update sets AMOUNT and STATUS
_FEW_KEYS: Final = 4  # a worker with fewer rows of a table inserts into it
_BY_ID: Final = ' WHERE "ID" = ?'
#: transactions between the workload's checkpoints (WorkloadSpec.checkpoint_every)
CHECKPOINT_EVERY: Final = 5_000
_NAMES: Final = ("ALPHA", "BRAVO", "CHARLIE", "DELTA", "ECHO", "FOXTROT", "GOLF", "HOTEL")


@dataclass(frozen=True)
class WorkloadSpec:
    tables: int = 4
    tps: float = 0.0  # transactions per second of wall time; 0 = as fast as possible
    rows_per_txn: int = 10
    duration: float | None = None  # seconds of wall time
    transactions: int | None = 1000
    mix: tuple[float, float, float] = (0.5, 0.35, 0.15)  # insert, update, delete
    rollback_ratio: float = 0.05
    long_txns: int = 0
    long_age: float = 3600.0
    sessions: int = 8
    seed: int = 1
    initial_rows: int = 1000  # rows per table created before the run when tables are new
    bulk: bool = True  # committing transactions through the fast path (engine.embedded.bulk)
    array: int = 1  # rows per INSERT statement; > 1 = array inserts (11.11 QMI)
    # a checkpoint (tables committed) after this many transactions, at the first moment
    # after them with no fast-path transaction open (module docstring); 0: at the start
    # and the end only
    checkpoint_every: int = CHECKPOINT_EVERY


@dataclass
class WorkloadStats:
    transactions: int = 0
    commits: int = 0
    rollbacks: int = 0
    row_changes: int = 0
    seconds: float = 0.0
    redo_bytes: int = 0
    long_committed: int = 0
    checkpoints: int = 0  # periodic ones (WorkloadSpec.checkpoint_every)

    @property
    def row_changes_per_s(self) -> float:
        return self.row_changes / self.seconds if self.seconds else 0.0


@dataclass
class _Worker:
    session: Session
    index: int
    bulk: BulkSession | None = None
    fast: bool = False
    rollback: bool = False
    ops: int = 0
    inserted: list[tuple[int, int]] = field(default_factory=list)
    deleted: list[tuple[int, int]] = field(default_factory=list)


class _Draws:
    """The workload's random draws: ``below(n)`` is ``random.Random.randrange(n)`` and
    ``cents()`` is ``randint(1, 10_000_000)``, with the same results (CPython draws
    ``getrandbits(n.bit_length())`` until it is below ``n``) in one Python call instead of
    three: the generator makes four or five draws per row change."""

    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)
        self.bits = self.rnd.getrandbits
        self.random = self.rnd.random

    def below(self, n: int) -> int:
        k = n.bit_length()
        r = self.bits(k)
        while r >= n:
            r = self.bits(k)
        return r

    def cents(self) -> int:
        r = self.bits(24)  # 10_000_000 < 2**24
        while r >= 10_000_000:
            r = self.bits(24)
        return 1 + r


def parse_mix(text: str) -> tuple[float, float, float]:
    """``insert=60,update=30,delete=10`` -> normalised weights."""
    weights = {"insert": 0.0, "update": 0.0, "delete": 0.0}
    for part in text.split(","):
        key, _, value = part.partition("=")
        key = key.strip().lower()
        if key not in weights:
            raise SourceError(f"--mix: unknown operation {key!r} (insert, update, delete)")
        try:
            weights[key] = float(value)
        except ValueError as exc:
            raise SourceError(f"--mix: bad weight {value!r}") from exc
    total = sum(weights.values())
    if total <= 0 or any(v < 0 for v in weights.values()):
        raise SourceError("--mix: weights must be non-negative and not all zero")
    return weights["insert"] / total, weights["update"] / total, weights["delete"] / total


def _table_def_columns() -> list[ColumnDef]:
    return [
        ColumnDef("ID", "NUMBER", nullable=False),
        ColumnDef("NAME", "VARCHAR2", 40),
        ColumnDef("AMOUNT", "NUMBER"),
        ColumnDef("CREATED", "DATE"),
        ColumnDef("STATUS", "CHAR", 1),
    ]


def ensure_tables(db: Database, spec: WorkloadSpec, session: Session) -> list[TableDef]:
    tables = []
    for i in range(1, spec.tables + 1):
        name = f"WL_T{i:02d}"
        try:
            tables.append(db.table(OWNER, name))
            continue
        except UnknownObjectError:
            pass
        table = db.create_table(
            session,
            OWNER,
            name,
            _table_def_columns(),
            f"CREATE TABLE {OWNER}.{name} (ID NUMBER PRIMARY KEY, NAME VARCHAR2(40), "
            "AMOUNT NUMBER, CREATED DATE, STATUS CHAR(1))",
            key=("ID",),
        )
        now = db.now().replace(microsecond=0)
        rows = [_row(k, _Draws(k), now) for k in range(1, spec.initial_rows + 1)]
        dml.insert(session, db, table, rows, array=True)
        session.commit(db)
        tables.append(table)
    db.checkpoint()
    return tables


def _stored_cents(cents: int) -> int | float:
    return cents // 100 if cents % 100 == 0 else cents / 100


def _row_fast(key: int, rnd: _Draws, second: int, dates: dict[int, str]) -> list[object]:
    """:func:`_row` as SQLite values, without Decimal or datetime work; ``second`` is the
    redo clock's time in whole seconds since 1970."""
    d = dates.get(second)
    if d is None:
        dates.clear()
        d = dates[second] = format_datetime(_EPOCH + timedelta(seconds=second))
    return [key, f"{_NAMES[key % len(_NAMES)]}-{key}", _stored_cents(rnd.cents()), d, "N"]


def _row(key: int, rnd: _Draws, now: datetime) -> tuple[Value, ...]:
    return (
        Decimal(key),
        f"{_NAMES[key % len(_NAMES)]}-{key}",
        Decimal(rnd.cents()) / 100,
        now,
        "N",
    )


def run_workload(
    db: Database,
    spec: WorkloadSpec,
    progress: Callable[[WorkloadStats], None] | None = None,
    *,
    wall: Callable[[], float] = time.perf_counter,
    sleep: Callable[[float], None] = time.sleep,
) -> WorkloadStats:
    rnd = _Draws(spec.seed)
    setup = db.session("WL_SETUP", username=OWNER)
    tables = ensure_tables(db, spec, setup)
    nsess = max(1, spec.sessions)
    # keys[t][w]: the rows of table t that worker w updates and deletes. Workers own
    # disjoint rows (a row inserted goes to its inserter at commit), so no two open
    # transactions change the same row: Oracle would make the second one wait.
    keys: list[list[list[int]]] = []
    next_key: list[int] = []
    for t in tables:
        rows = db.conn.execute(f'SELECT "ID" FROM "{t.sqlite_name}" ORDER BY "ID"').fetchall()
        ids = [int(r[0]) for r in rows]
        keys.append([ids[i::nsess] for i in range(nsess)])
        next_key.append(max(ids, default=0) + 1)
    workers = [_Worker(db.session(f"WL_S{i:02d}", username=OWNER), i) for i in range(nsess)]
    foreign_locks = {obj for (obj, _), holder in db.locks.items() if not holder.startswith("WL_")}
    # the fast path knows the workload's table shape: one key column, one (primary) index
    fast_tables = [
        spec.bulk and t.obj not in foreign_locks and len(t.indexes) <= 1 and len(t.key) == 1
        for t in tables
    ]
    for w in workers:
        w.bulk = BulkSession(db, w.session)
        if w.session.txn is not None:  # left open by an earlier, interrupted run
            w.session.commit(db)
    stats = WorkloadStats()
    start = wall()
    redo_before = sum(i.size for i in db.list_logs())
    long_sessions: list[tuple[Session, object]] = []
    for i in range(spec.long_txns):
        s = db.session(f"WL_LONG{i:03d}", username=OWNER)
        t = tables[i % len(tables)]
        k = next_key[i % len(tables)]
        next_key[i % len(tables)] += 1
        dml.insert(s, db, t, [_row(k, rnd, db.now().replace(microsecond=0))], array=False)
        stats.row_changes += 1
        assert s.txn is not None
        long_sessions.append((s, s.txn.start_time))
    p_ins, p_upd, _ = spec.mix
    p_change = p_ins + p_upd
    dates: dict[int, str] = {}
    last_report = start
    interrupted: BaseException | None = None
    # the loop runs once per row change: what it reads often is in locals
    below, chance = rnd.below, rnd.random
    ntables, array = len(tables), spec.array
    fast_all = spec.bulk and all(fast_tables)
    limit = spec.transactions
    now_us = db.now_us
    every = spec.checkpoint_every
    due = every if every > 0 else None  # transactions after which the next checkpoint is due
    draining = False
    try:
        while limit is None or stats.transactions < limit:
            if spec.duration is not None and wall() - start >= spec.duration:
                break
            if draining:  # (a checkpoint is due: the open fast-path transactions end first)
                busy = open_fast(workers)
                if busy:
                    w = busy[below(len(busy))]
                else:
                    db.checkpoint()
                    stats.checkpoints += 1
                    draining = False
                    due = stats.transactions + every
                    w = workers[below(nsess)]
            else:
                w = workers[below(nsess)]
            bulk = w.bulk
            assert bulk is not None
            if w.ops == 0:
                w.rollback = chance() < spec.rollback_ratio
                w.fast = fast_all
                bulk.record_undo = w.rollback
            ti = below(ntables)
            table = tables[ti]
            mine = keys[ti][w.index]
            fast = w.fast
            r = chance()
            if array > 1 and (r < p_ins or len(mine) < _FEW_KEYS):
                first = next_key[ti]
                next_key[ti] += array
                if fast:
                    us = now_us()  # the statement's time: its rows' DATE, its records'
                    second = us // 1_000_000
                    made = [_row_fast(k, rnd, second, dates) for k in range(first, first + array)]
                    bulk.insert_array(table, made, us)
                else:
                    stamp = db.now().replace(microsecond=0)
                    rows = [_row(k, rnd, stamp) for k in range(first, first + array)]
                    dml.insert(w.session, db, table, rows, array=True)
                w.inserted.extend((ti, k) for k in range(first, first + array))
                stats.row_changes += array - 1
                w.ops += array - 1
            elif r < p_ins or len(mine) < _FEW_KEYS:
                k = next_key[ti]
                next_key[ti] = k + 1
                if fast:
                    us = now_us()
                    bulk.insert(table, _row_fast(k, rnd, us // 1_000_000, dates), us)
                else:
                    row = _row(k, rnd, db.now().replace(microsecond=0))
                    dml.insert(w.session, db, table, [row], array=False)
                w.inserted.append((ti, k))
            else:
                pos = below(len(mine))
                k = mine[pos]
                if r < p_change:
                    cents = rnd.cents()
                    if fast:
                        bulk.update(table, k, _SET_COLS, (_stored_cents(cents), "U"))
                    else:
                        amount = str(Decimal(cents) / 100)
                        dml.update(w.session, db, table, [2, 4], [amount, "'U'"], _BY_ID, (k,))
                else:
                    mine[pos] = mine[-1]
                    mine.pop()
                    if fast:
                        bulk.delete(table, k)
                    else:
                        dml.delete(w.session, db, table, _BY_ID, (k,))
                    w.deleted.append((ti, k))
            stats.row_changes += 1
            w.ops += 1
            if w.ops < spec.rows_per_txn:
                continue
            _end_transaction(db, w, keys, stats)
            if due is not None and stats.transactions >= due:
                draining = True
            if spec.tps > 0:
                ahead = stats.transactions / spec.tps - (wall() - start)
                if ahead > 0:
                    db.logs.flush(everything=False)  # committed work is visible while we wait
                    sleep(ahead)
            _finish_long(db, long_sessions, spec, stats)
            if progress is not None:
                now = wall()
                if now - last_report >= 0.25:
                    last_report = now
                    stats.seconds = now - start
                    progress(stats)
    except BaseException as exc:  # Ctrl-C or an error: end the fast-path transactions
        interrupted = exc  # cleanly (they keep no undo), then re-raise below
    for w in workers:
        if w.bulk is not None and w.bulk.ids is not None:
            w.bulk.commit()
            stats.commits += 1
            stats.transactions += 1
        if w.session.txn is not None:
            w.session.commit(db)
            stats.commits += 1
            stats.transactions += 1
    if interrupted is not None:
        db.checkpoint()
        raise interrupted
    _finish_long(db, long_sessions, spec, stats, force=spec.duration is None)
    db.checkpoint()
    stats.seconds = wall() - start
    stats.redo_bytes = sum(i.size for i in db.list_logs()) - redo_before
    if progress is not None:
        progress(stats)
    return stats


def open_fast(workers: list[_Worker]) -> list[_Worker]:
    """The workers with a fast-path transaction open (it keeps no undo: no checkpoint may
    commit its changes before it ends)."""
    return [w for w in workers if w.bulk is not None and w.bulk.ids is not None]


def _end_transaction(
    db: Database, w: _Worker, keys: list[list[list[int]]], stats: WorkloadStats
) -> None:
    """Commit or roll back ``w``'s transaction (fast path or session) and hand the keys
    it inserted (commit) or deleted (rollback) back to the key lists."""
    bulk = w.bulk
    assert bulk is not None
    if bulk.ids is not None:
        if w.rollback:
            bulk.rollback()
        else:
            bulk.commit()
    elif w.rollback:
        w.session.rollback(db)
    else:
        w.session.commit(db)
    if w.rollback:
        stats.rollbacks += 1
        for ti, k in w.deleted:
            keys[ti][w.index].append(k)
    else:
        stats.commits += 1
        for ti, k in w.inserted:
            keys[ti][w.index].append(k)
    w.inserted.clear()
    w.deleted.clear()
    w.ops = 0
    stats.transactions += 1


def _finish_long(
    db: Database,
    long_sessions: list[tuple[Session, object]],
    spec: WorkloadSpec,
    stats: WorkloadStats,
    force: bool = False,
) -> None:
    if not long_sessions:
        return
    now = db.now()
    for s, started in list(long_sessions):
        assert hasattr(started, "year")
        if force or now - started >= timedelta(seconds=spec.long_age):  # type: ignore[operator]
            if force and now - started < timedelta(seconds=spec.long_age):  # type: ignore[operator]
                db.clock.advance((started + timedelta(seconds=spec.long_age) - now).total_seconds())  # type: ignore[operator]
            s.commit(db)
            stats.commits += 1
            stats.transactions += 1
            stats.long_committed += 1
            long_sessions.remove((s, started))
