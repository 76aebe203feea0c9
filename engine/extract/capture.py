"""The Extract's control plane: read, order, cache, write, checkpoint. Driver side.

One :meth:`Capture.poll` reads every redo record available now (decoded in Spark tasks),
merges the threads by SCN, feeds the transaction cache, writes each committed transaction
to the trail in commit order, makes the trail durable, and only then publishes the
checkpoint (current read position per thread, recovery position = start of the oldest open
transaction, trail write position). A restart re-reads from the recovery position and skips
transactions the trail already holds whole (append-mode recovery, seed 003), so every
committed transaction is in the trail exactly once.

A transaction that begins and commits inside one split reaches the driver assembled by the
miner (:class:`~engine.extract.tasks.plan.Closed`): the driver only decides whether it is
written and appends its bytes. The others come change by change through the cache. When a
Bounded Recovery checkpoint falls inside a batch, the batch is mined again change by change
so that the checkpoint sees every open transaction as it was at that point. With Spark, the
batch that follows is queued before a batch is applied (mined ahead), so that the tasks do
not wait for the driver; it is used only if reading really goes on where it was planned from.

Per-record hook: rows of the tables the heartbeat rule owns always come change by change
with their columns (the miner does not encode them), and the rule (``heartbeat.rows``)
rewrites or drops each committed one before it is encoded.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from engine.changes import Entry, Fragment, Kind, Lcr, Position
from engine.cluster.jobturn import JobOrder
from engine.embedded.catalog import RedoCatalog, RedoGapError
from engine.embedded.dictionary import Dictionary, load_dictionary
from engine.embedded.logs import LogInfo
from engine.expr.rowrule import Process, UnknownColumn
from engine.extract import containers
from engine.extract.cache import TransactionCache, Txn
from engine.extract.keyfetch import KeyFetch
from engine.extract.merge import NONE, Batch, plan_batch
from engine.extract.redo_source import (
    DEFAULT_SPLIT_BYTES,
    Mining,
    Plan,
    Split,
    SplitResult,
    continues,
    decode_splits,
    mine_batch,
    positions_after,
    read_whole,
    thread_positions_after,
)
from engine.extract.start import ExtractError
from engine.extract.tasks.assemble import finish_fragments, op_name, stream_encoded, surviving
from engine.extract.tasks.decode import Decoder, Selection
from engine.extract.tasks.plan import Closed, Event, MinePlan, mine_plan
from engine.extract.tasks.tablerules import TableRules, resolve
from engine.heartbeat.flow import ExtractRule
from engine.home.checkpoints import ReadCheckpoint
from engine.trail.model import TableDef as TrailTableDef
from engine.trail.model import TrailPosition, micros_to_datetime
from engine.trail.tail import tranids_at
from engine.trail.writer import TrailWriter
from params.models import ParamFile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class CaptureState:
    """What a checkpoint records (JSON-able): per-thread current and recovery positions,
    the last commit written, the trail's durable position."""

    current: dict[int, Position]
    recovery: dict[int, Position]
    last_commit_scn: int
    trail: TrailPosition
    last_time_us: int = 0
    last_scn: int = 0
    ignored: tuple[str, ...] = ()  # skipped or forced transactions: their later redo is ignored
    # the transactions written that commit at last_commit_scn (several threads, one SCN)
    last_commit_xids: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        """What the checkpoint records beside its positions: the read positions (current and
        recovery, per thread) are the checkpoint's read checkpoints and the trail position
        its write checkpoint, each recorded once (:meth:`from_checkpoint`)."""
        return {
            "last_commit_scn": self.last_commit_scn,
            "last_time_us": self.last_time_us,
            "last_scn": self.last_scn,
            "ignored": list(self.ignored),
            "last_commit_xids": list(self.last_commit_xids),
        }

    @classmethod
    def from_checkpoint(
        cls, d: dict[str, object], reads: Iterable[ReadCheckpoint], trail: TrailPosition
    ) -> CaptureState:
        """The state a checkpoint recorded: ``d`` (its ``extra["capture"]``), the positions
        of its TRANLOG read checkpoints and ``trail``, its write checkpoint's position."""
        current: dict[int, Position] = {}
        recovery: dict[int, Position] = {}
        for r in reads:
            if r.source == "TRANLOG":
                t = r.current.thread
                current[t] = Position(t, r.current.seqno, r.current.rba)
                recovery[t] = Position(t, r.recovery.seqno, r.recovery.rba)
        return cls(
            current,
            recovery,
            int(str(d["last_commit_scn"])),
            trail,
            int(str(d.get("last_time_us", 0))),
            int(str(d.get("last_scn", 0))),
            tuple(str(x) for x in d.get("ignored", []) or []),  # type: ignore[attr-defined]
            tuple(str(x) for x in d.get("last_commit_xids", []) or []),  # type: ignore[attr-defined]
        )


@dataclass
class Stats:
    lcrs: int = 0
    records_read: int = 0
    transactions: int = 0
    rollbacks: int = 0
    excluded: int = 0
    skipped_recovered: int = 0
    skipped: int = 0
    forced: int = 0
    trail_records: int = 0
    fragments: int = 0  # transactions' changes that came assembled in fragments
    by_op: dict[str, int] = field(default_factory=dict)


#: Encoded records held before they are handed to the trail writer.
APPEND_CHUNK = 10_000
#: A batch with more items than this (changes that come one by one) is not mined ahead of.
AHEAD_MAX_ITEMS = 50_000


#: A thread holding more items than this (read, above the watermark) is not read further.
HOLD_MAX_ITEMS = 50_000


@dataclass(frozen=True)
class _Ahead:
    """A batch being mined ahead: planned from ``after`` with the dictionary of ``mtime``;
    ``whole``: the threads the batch before it reads whole up to ``after`` (redo_source)."""

    after: dict[int, Position]
    mtime: float
    batch: Batch
    mined: Mining
    whole: frozenset[int] = frozenset()


Item = Lcr | Closed | Fragment


def _draining(queue: deque[Event | Closed | Fragment], sequence: int) -> Iterator[Item]:
    """Yield and forget (an LCR paged out of the cache must not stay alive in the batch);
    events become LCRs as they are consumed."""
    while queue:
        e = queue.popleft()
        if isinstance(e, (Closed, Fragment)):
            yield e
        else:
            yield Lcr(Kind(e[0]), e[1], Position(e[2], sequence, e[3]), *e[4:])


def _order_key(item: Item) -> tuple[int, int, int, int, int]:
    """The place in the thread merge: a fragment's is its last change's SCN."""
    if isinstance(item, Closed):
        return (item.scn, item.subscn, item.thread, item.sequence, item.offset)
    return item.order_key


def _upto(items: Iterable[Item], low: int, held: deque[Item]) -> Iterator[Item]:
    """The items of one thread (in log order, so in SCN order) at or below the watermark
    ``low``; the first above it and all that follow go to ``held``."""
    it = iter(items)
    for item in it:
        if item.scn > low:
            held.append(item)
            held.extend(it)
            return
        yield item


def selection_for(
    model: ParamFile, dictionary: Dictionary, also: Callable[[str, str], bool] | None = None
) -> Selection:
    """Resolve TABLE / TABLEEXCLUDE wildcards against the dictionary once, on the driver;
    ``also`` adds tables captured without a TABLE line (the heartbeat tables)."""
    chosen: set[tuple[str, str]] = set()
    truncates: set[tuple[str, str]] = set()
    befores: set[tuple[str, str]] = set()
    full_deletes: set[tuple[str, str]] = set()
    for t in dictionary.tables.values():
        spec = model.captured(t.owner, t.name, t.catalog)
        if spec is not None or (also is not None and also(t.owner, t.name)):
            chosen.add((t.owner.upper(), t.name.upper()))
            if spec is not None and spec.get_truncates:
                truncates.add((t.owner.upper(), t.name.upper()))
            heartbeat = also is not None and also(t.owner, t.name)
            if spec is not None and spec.get_update_befores and not heartbeat:
                befores.add((t.owner.upper(), t.name.upper()))
            if spec is not None and spec.full_deletes and not heartbeat:
                full_deletes.add((t.owner.upper(), t.name.upper()))
    return Selection(frozenset(chosen), frozenset(truncates), False, frozenset(befores),
                     model.update_record_format, frozenset(full_deletes))  # fmt: skip


class LogCatalog(Protocol):
    """Where the logs are and whether they are whole (:class:`RedoCatalog`; an attached
    database's archive location: engine/extract/alo.py)."""

    def logs(self, thread: int | None = None) -> list[LogInfo]: ...

    def for_reading(self, positions: Mapping[int, Position]) -> list[LogInfo]: ...


class RedoOrigin(Protocol):
    """A source database other than the embedded one (an attached Oracle database's archived
    logs, engine/extract/alo.py): its dictionary as the driver's rules take it, the plan its
    miner takes, and the stop its miner met: the SCN a batch is applied below, and the
    error raised once that is done."""

    def dictionary(self) -> Dictionary: ...

    def containers(self) -> Mapping[int, str]: ...

    def plan(self, plan: MinePlan) -> Plan: ...

    def bound(self) -> int | None: ...

    def check(self) -> None: ...


@dataclass(frozen=True)
class CaptureHooks:
    """What the Extract's run does at the capture's events, given at construction (driver
    side; nothing here pickles). ``on_commit(xid, commit SCN, records)`` after a transaction
    is in the trail; ``on_counts([(table, io-type name, count)])`` for STATS; ``br_due(redo
    time)`` and ``br_take(current positions, now)`` for Bounded Recovery checkpoints."""

    on_commit: Callable[[str, int, int], None] | None = None
    on_counts: Callable[[list[tuple[str, str, int]]], None] | None = None
    br_due: Callable[[int], bool] | None = None
    br_take: Callable[[dict[int, Position], int], None] | None = None


class Capture:
    """One Extract's capture loop (the group process or ``ggsci extract`` runs it)."""

    def __init__(
        self,
        model: ParamFile,
        source_root: Path,
        writer: TrailWriter,
        spill_dir: Path,
        *,
        start: dict[int, Position],
        spark: SparkSession | None = None,
        state: CaptureState | None = None,
        cache_budget: int | None = None,
        split_bytes: int = DEFAULT_SPLIT_BYTES,
        on_commit: Callable[[str, int, int], None] | None = None,
        heartbeat: ExtractRule | None = None,
        hooks: CaptureHooks | None = None,
        catalog: LogCatalog | None = None,
        fetch: KeyFetch | None = None,
        max_poll_splits: int | None = 8,
        origin: RedoOrigin | None = None,
    ) -> None:
        hooks = hooks or CaptureHooks(on_commit=on_commit)
        self.model = model
        self.heartbeat = heartbeat
        self.fetch = fetch  # FETCHOPTIONS: keys the redo lacks (keyfetch.py)
        self.source_root = source_root
        self.redo_dir = source_root / "redo"
        self.origin = origin  # None: the embedded database of source_root
        # where the logs are read (online, archive destinations) and checked whole
        self.catalog: LogCatalog = catalog or RedoCatalog.for_extract(source_root, model.tranlog)
        self.writer = writer
        self.spark = spark
        self.split_bytes = split_bytes
        self.cache = TransactionCache(
            spill_dir, cache_budget or model.cachemgr.cache_size or (256 << 20)
        )
        self.stats = Stats()
        self.on_commit = hooks.on_commit
        self.on_counts = hooks.on_counts
        self.max_poll_splits = max_poll_splits
        self.compact = True  # transactions seen whole in a split are assembled there
        # with Spark: the next batch is queued before this one is applied (an attached
        # database's is settled when it is taken: redo_source.mine_batch)
        self.mine_ahead = True
        self._ahead: _Ahead | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._order = JobOrder(f"ggsci-{model.group or 'extract'}-mine")
        self._fine_heavy = False
        # Wall time waiting for the miner tasks and applying their output (benchmarks).
        self.timing: dict[str, float] = {
            "mine_s": 0.0, "apply_s": 0.0, "batches": 0, "ahead_taken": 0, "ahead_dropped": 0,
        }  # fmt: skip
        self.br_due = hooks.br_due
        self.br_take = hooks.br_take
        self.through: dict[str, dict[int, Position]] = {}
        # the thread merge: per thread, the SCN it is known complete to, and the items read
        # above the watermark, applied by a later batch (docs/extract.md)
        self.complete: dict[int, int] = {}
        self.held: dict[int, deque[Item]] = {}
        self._dictionary_mtime = 0.0
        self.decoder = self._decoder()
        tl = model.tranlog
        # pdb.user: that container's user, in a container database (containers.py)
        self.exclude_users = containers.excluded_users(
            tl.exclude_users, origin.containers() if origin is not None else {}
        )
        self.exclude_trans = {t.upper() for t in tl.exclude_trans}
        self.excluded: set[str] = set()
        last = writer.recovery.last_transaction if writer.recovery else None
        trail_scn = (
            int(last.logcsn) if last is not None and last.logcsn and last.logcsn.isdigit() else 0
        )
        # the transactions the trail holds that commit at its last SCN (tail.py)
        self.last_commit_xids: set[str] = (
            tranids_at(writer.trail.file(last.end.seqno), last.end.rba, str(trail_scn))
            if last is not None and trail_scn
            else set()
        )
        if state is not None:
            # Re-read from the recovery position: open transactions are rebuilt from redo.
            self.positions = dict(state.current)
            for t, p in state.recovery.items():
                self.positions[t] = p
            self.last_commit_scn = max(state.last_commit_scn, trail_scn)
            if state.last_commit_scn == self.last_commit_scn:
                self.last_commit_xids.update(state.last_commit_xids)
            self.last_time_us = state.last_time_us
            self.last_scn = state.last_scn
            self.ignored: set[str] = set(state.ignored)
        else:
            self.positions = dict(start)
            self.last_commit_scn = trail_scn
            self.last_time_us = 0
            self.last_scn = 0
            self.ignored = set()

    # -- set-up ---------------------------------------------------------------------
    def _decoder(self) -> Decoder:
        path = self.source_root / "dictionary.json"
        self._dictionary_mtime = path.stat().st_mtime if path.exists() else 0.0
        dictionary = self.origin.dictionary() if self.origin else load_dictionary(path)
        also = self.heartbeat.owns if self.heartbeat is not None else None
        selection = selection_for(self.model, dictionary, also)
        rules = resolve(
            self.model,
            ((t.owner, t.name, t.qualified, tuple(c.name for c in t.columns), t.key_columns)
             for t in dictionary.tables.values() if selection.captured(t)),
            catalogs={q: t.catalog for q, t in dictionary.tables.items() if t.catalog is not None},
        )  # fmt: skip
        if isinstance(rules, UnknownColumn):
            raise ExtractError("OGG-00366", rules.text)
        self.rules = TableRules(rules[0], Process(self.model.group or ""), datetime.now)
        self.keycols = rules[1]  # KEYCOLS: the miner's key of those tables
        for t in dictionary.tables.values():
            if selection.captured(t):
                self.writer.define_table(
                    TrailTableDef(t.qualified, tuple(c.name for c in t.columns))
                )
        return Decoder(dictionary, selection)

    def _columns_of(self, table: str) -> tuple[str, ...] | None:
        t = self.decoder.dictionary.tables.get(table)
        return tuple(c.name for c in t.columns) if t is not None else None

    def mine_plan(self, *, compact: bool | None = None) -> MinePlan:
        """What the miner tasks of the next batch need (broadcast once per batch): the
        heartbeat rule's tables are hooked (their rows reach the driver with columns)."""
        d = self.decoder
        owns = self.heartbeat.owns if self.heartbeat is not None else None
        hooked = frozenset(
            t.qualified for t in d.dictionary.tables.values() if owns and owns(t.owner, t.name)
        )
        return mine_plan(
            d.dictionary,
            d.selection,
            hooked=hooked,
            keys=self.keycols,
            rules=self.rules.rules,
            process=self.rules.process,
            compact=self.compact if compact is None else compact,
            fine_xids=frozenset(self.through),
            seal=self.writer.seals_records,  # the tasks seal what they close
        )

    def _mined(self, plan: MinePlan) -> Plan:
        """What the miner of this source takes for ``plan``."""
        return self.origin.plan(plan) if self.origin is not None else plan

    def _refresh_dictionary(self) -> None:
        path = self.source_root / "dictionary.json"
        if self.origin is None and path.exists() and path.stat().st_mtime != self._dictionary_mtime:
            self.decoder = self._decoder()

    # -- the loop -------------------------------------------------------------------
    def poll(self) -> int:
        """Process the redo available now; return how many LCRs were consumed. With several
        redo threads, only up to the low watermark (:mod:`engine.extract.merge`): what is
        read above it is held for a later batch."""
        self._refresh_dictionary()
        began = time.perf_counter()
        taken = self._take_ahead()
        if taken is None:
            batch = self._plan(self.positions)
            if not batch.splits and not any(self.held.values()):
                return 0
            mined = self._submit(batch)
        else:
            batch, mined = taken
        splits = batch.splits
        self._ahead_after(splits)
        results = mined.result()
        self._fine_heavy = sum(len(r.items) for r in results) > AHEAD_MAX_ITEMS
        if self._br_inside(results):  # a BR checkpoint must see this batch change by change
            results = decode_splits(self._mined(self.mine_plan(compact=False)), splits, self.spark)
        done_mining = time.perf_counter()
        self.timing["mine_s"] += done_mining - began
        self.timing["batches"] += 1
        self.stats.records_read += sum(r.records for r in results)
        low = self._low(batch, results)
        bound = self.origin.bound() if self.origin is not None else None
        if bound is not None:  # a stop: nothing at or above its SCN, on any thread
            low = bound if low is None else min(low, bound)
        base = self.applied_positions()
        held, self.held = self.held, {}
        by_thread: dict[int, list[Iterable[Item]]] = {t: [q] for t, q in sorted(held.items()) if q}
        for r in results:
            queue: deque[Event | Closed | Fragment] = deque(r.items)
            r.items.clear()  # the queue holds them now, and lets each go once consumed
            by_thread.setdefault(r.split.thread, []).append(_draining(queue, r.sequence))
        streams: list[Iterable[Item]] = []
        for t, parts in by_thread.items():
            stream: Iterable[Item] = itertools.chain.from_iterable(parts)
            if low is not None:
                stream = _upto(stream, low, self.held.setdefault(t, deque()))
            streams.append(stream)
        if not streams:
            return 0
        merged = streams[0] if len(streams) == 1 else heapq.merge(*streams, key=_order_key)
        fragments = any(isinstance(i, Fragment) for r in results for i in r.items)
        n = self._apply(merged, base, mid_batch_br=not fragments)
        if self.origin is not None:  # a stop met in the batch: after what came before it
            self.origin.check()
        self.timing["apply_s"] += time.perf_counter() - done_mining
        self.positions = thread_positions_after(results, self.positions)
        self.stats.lcrs += n
        return n

    def _apply(
        self, merged: Iterable[Item], base: dict[int, Position], *, mid_batch_br: bool = True
    ) -> int:
        """Apply the merged items. A Bounded Recovery checkpoint may fall between two
        changes only when the batch holds no fragment: a fragment stands at its last change,
        so redo before it may not be in the cache yet (the Extract then takes the checkpoint
        after the batch)."""
        n = 0
        pending: list[bytes] = []
        consumed: dict[int, Position] = {}
        prev: Position | None = None
        br_due = self.br_due if mid_batch_br else None
        for lcr in merged:
            if isinstance(lcr, Closed):
                n += lcr.lcrs
                self._close(lcr, pending)
                consumed[lcr.thread] = Position(lcr.thread, lcr.sequence, lcr.end)
                continue
            if isinstance(lcr, Fragment):
                n += lcr.lcrs
                self._fragment(lcr)
                consumed[lcr.pos.thread] = Position(lcr.pos.thread, lcr.pos.sequence, lcr.end)
                continue
            if lcr.pos != prev and br_due is not None and br_due(lcr.time_us):
                # A BR checkpoint between two redo records: the trail first, then the files.
                if pending:
                    self.writer.append_many(pending)
                    pending.clear()
                self.writer.sync()
                assert self.br_take is not None
                self.br_take({**base, **consumed}, lcr.time_us)
            prev = lcr.pos
            n += 1
            self._consume(lcr, pending)
            consumed[lcr.pos.thread] = Position(lcr.pos.thread, lcr.pos.sequence, lcr.end)
        if pending:
            self.writer.append_many(pending)
        return n

    # -- the thread merge ---------------------------------------------------------------
    def _plan(self, positions: dict[int, Position]) -> Batch:
        ahead = frozenset(t for t, q in self.held.items() if len(q) > HOLD_MAX_ITEMS)
        return plan_batch(
            self.redo_dir,
            positions,
            self.split_bytes,
            self.max_poll_splits,
            hold=ahead,
            listing=lambda: self.catalog.for_reading(positions),
            archived_only=self.origin is not None,
        )

    def _low(self, batch: Batch, results: list[SplitResult]) -> int | None:
        """The watermark for applying ``batch`` (None: no thread to wait for). What the
        batch read makes known is kept: the thread of a record read has nothing more below
        that record's SCN."""
        horizon = batch.horizon
        if horizon is None:
            return None
        complete = self.complete
        for t, k in horizon.known.items():
            complete[t] = max(complete.get(t, NONE), k)
        for r in results:
            if r.items:
                last = r.items[-1]
                scn = last.scn if isinstance(last, (Closed, Fragment)) else int(last[5])
                t = r.split.thread
                complete[t] = max(complete.get(t, NONE), scn - 1)
        return horizon.low(complete)

    def applied_positions(self) -> dict[int, Position]:
        """Per thread, the position before which everything read has been applied: the
        read position, or the first item held above the watermark."""
        out = dict(self.positions)
        for t, q in self.held.items():
            if q:
                first = q[0]
                out[t] = (
                    Position(first.thread, first.sequence, first.offset)
                    if isinstance(first, Closed)
                    else first.pos
                )
        return out

    def use_spark(self, spark: SparkSession, max_poll_splits: int | None) -> None:
        """From the next batch on, mine in ``spark``'s tasks (the session came up after the
        run had started capturing in this process: engine/cluster/starting.py)."""
        self.spark = spark
        self.max_poll_splits = max_poll_splits

    # -- mining ahead -----------------------------------------------------------------
    def _submit(self, batch: Batch) -> Mining:
        """Mine ``batch``: in the background with Spark (so that the next batch can be
        queued behind it), here without. A transaction that ends above what the batch can
        apply is not closed in the tasks (the driver may hold its end)."""
        mine = self.mine_plan()
        if batch.horizon is not None:
            mine = dataclasses.replace(mine, horizon=batch.horizon.low(self.complete))
        plan_ = self._mined(mine)
        splits = batch.splits
        if self.spark is None:
            done: Future[list[SplitResult]] = Future()
            done.set_result(decode_splits(plan_, splits, None))
            return Mining(done)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(2, thread_name_prefix="extract-mine")
        turn = self._order.next()  # the batch asked for first runs first (engine.cluster.jobturn)
        try:
            return mine_batch(self._pool, plan_, splits, self.spark, turn)
        except BaseException:  # (never queued: the next batch must not wait for it)
            turn.ended.set()
            raise

    def _ahead_after(self, splits: list[Split]) -> None:
        """Queue the batch that follows ``splits`` now, so that the tasks never wait for the
        driver between two batches (not when the last batch came change by change: its
        events are held in memory until consumed, and one such batch at a time is enough)."""
        self._ahead = None
        if self.spark is None or not self.mine_ahead or self._fine_heavy or not splits:
            return
        after = positions_after(splits, self.positions)
        try:
            following = self._plan(after)
        except RedoGapError:  # (a log refused past this batch: refused when reading is there,
            return  # after this batch is applied and its trail made durable)
        if following.splits:
            self._ahead = _Ahead(
                after, self._dictionary_mtime, following, self._submit(following),
                read_whole(splits),
            )  # fmt: skip

    def _take_ahead(self) -> tuple[Batch, Mining] | None:
        """The batch mined ahead, if it follows what was read and the dictionary is the
        one it was planned with; otherwise it is waited for and dropped."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        if ahead.mtime == self._dictionary_mtime and continues(
            ahead.after, self.positions, ahead.whole
        ):
            self.timing["ahead_taken"] += 1
            return ahead.batch, ahead.mined
        self.timing["ahead_dropped"] += 1
        ahead.mined.wait()
        return None

    def close(self) -> None:
        """Wait for a batch still being mined ahead (its result is not needed)."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.mined.wait()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _br_inside(self, results: list[SplitResult]) -> bool:
        """Whether a BR checkpoint falls due inside this batch (by redo time)."""
        if self.br_due is None:
            return False
        first = [r.first_time_us for r in results if r.first_time_us]
        if not first:
            return False
        # The first call sets the next due time when there is none, as the loop's would.
        return self.br_due(min(first)) or self.br_due(max(r.max_time_us for r in results))

    def _close(self, c: Closed, out: list[bytes]) -> None:
        """A transaction the miner saw begin and end (see the module docstring): what the
        change-by-change path does at its commit or rollback, on the assembled records."""
        self.last_time_us = max(self.last_time_us, c.max_time_us)
        self.last_scn = max(self.last_scn, c.max_scn)
        if c.xid in self.ignored:
            self.ignored.discard(c.xid)
            return
        if c.rollback:
            self.stats.rollbacks += 1
            return
        if any(self._excludes(user, name) for user, name in c.sessions):
            self.stats.excluded += 1
            return
        if self._written(c.scn, c.xid):
            self.stats.skipped_recovered += 1
            return
        self._committed(c.scn, c.xid)
        self.stats.transactions += 1
        if c.count:
            if out:
                self.writer.append_many(out)
                out.clear()
            self.writer.append_transaction(
                c.records, c.count, c.tables, c.time_us, str(c.scn), sealed=c.sealed
            )
        self._wrote(c.xid, c.scn, c.table_ops if c.count else (), c.count)

    def _fragment(self, f: Fragment) -> None:
        """A fragment of an open transaction: cached as one item (its changes in order)."""
        self.last_time_us = max(self.last_time_us, f.time_us)
        self.last_scn = max(self.last_scn, f.scn)
        if f.xid in self.ignored:
            return
        self.stats.fragments += 1
        self.cache.add_fragment(f)
        if any(self._excludes(user, name) for user, name in f.sessions):
            self.excluded.add(f.xid)

    def _commit_fragments(
        self, lcr: Lcr, txn: Txn, entries: Iterator[Entry], out: list[bytes]
    ) -> None:
        """A transaction held in fragments only (no change by change row, none undone):
        its records finished from the fragments' templates in one pass per chunk
        (:func:`~engine.extract.tasks.assemble.finish_fragments`), not row by row."""
        if out:
            self.writer.append_many(out)
            out.clear()
        total = txn.row_count
        csn = str(lcr.scn)
        per_table: Counter[tuple[str, int]] = Counter()
        blobs: list[bytes] = []
        tables: dict[str, None] = {}
        first = held = 0
        # the user tokens of records of tables with TOKENS (Fragment.marks), made once
        # per table and operation: one per record of the chunk when one has any
        user: list[bytes] | None = None
        made: dict[tuple[str, int], bytes] = {}
        for f in entries:
            assert isinstance(f, Fragment)
            blobs.append(f.records)
            if f.marks:
                if user is None:
                    user = [b""] * held
                by_mark = [b""]
                for table, io_type, _ in f.table_ops:
                    got = made.get((table, io_type))
                    if got is None:
                        got = made[(table, io_type)] = self.rules.op_token_bytes(
                            table, io_type, lcr.xid, lcr.scn, lcr.time_us
                        )
                    by_mark.append(got)
                user.extend([by_mark[m] for m in f.marks])
            elif user is not None:
                user.extend([b""] * f.count)
            held += f.count
            for table, io_type, k in f.table_ops:
                per_table[(table, io_type)] += k
                tables[table] = None
            if held >= APPEND_CHUNK:  # a huge transaction goes out as it is read back
                data = finish_fragments(blobs, lcr.xid, lcr.scn, lcr.time_us, first, total, user)
                self.writer.append_transaction(data, held, tables, lcr.time_us, csn)
                first += held
                held = 0
                blobs.clear()
                user = None
        if held:
            data = finish_fragments(blobs, lcr.xid, lcr.scn, lcr.time_us, first, total, user)
            self.writer.append_transaction(data, held, tables, lcr.time_us, csn)
        counts = [(table, op_name(io_type), k) for (table, io_type), k in per_table.items()]
        self._wrote(lcr.xid, lcr.scn, counts, total)

    def _encode(
        self, xid: str, scn: int, time_us: int, rows: Iterable[Lcr], out: list[bytes]
    ) -> tuple[list[tuple[str, str, int]], int]:
        """Encode a transaction's rows into ``out`` (appended as it grows: a huge transaction
        goes out as it is read back); its (table, io-type name, count) and its record count."""
        n = 0
        tables: list[str] = []
        per_table: Counter[tuple[str, str]] = Counter()
        for data, io_type in stream_encoded(xid, scn, time_us, _noting_tables(rows, tables)):
            out.append(data)
            per_table[(tables[n], op_name(io_type))] += 1
            n += 1
            if len(out) >= APPEND_CHUNK:
                self.writer.append_many(out)
                out.clear()
        return [(t, op, k) for (t, op), k in per_table.items()], n

    def _wrote(
        self, xid: str, scn: int, counts: Sequence[tuple[str, str, int]], records: int
    ) -> None:
        """The one bookkeeping of a transaction now in the trail, whichever route it took
        (closed in a split, assembled from fragments, from the cache, or FORCETRANS):
        the run's STATS by operation and per table, the record count, and ``on_commit``
        (the latest transaction a checkpoint names)."""
        by_op = self.stats.by_op
        for _table, name, k in counts:
            by_op[name] = by_op.get(name, 0) + k
        if counts and self.on_counts is not None:
            self.on_counts(list(counts))
        self.stats.trail_records += records
        if self.on_commit is not None:
            self.on_commit(xid, scn, records)

    def _written(self, scn: int, xid: str) -> bool:
        """Whether the trail holds this committed transaction already (a restart reads
        again from the recovery position): it commits below the last commit written, or
        at its SCN and was written there (two threads may commit at one SCN)."""
        last = self.last_commit_scn
        return scn < last or (scn == last and xid in self.last_commit_xids)

    def _committed(self, scn: int, xid: str) -> None:
        if scn > self.last_commit_scn:
            self.last_commit_scn = scn
            self.last_commit_xids = {xid}
        else:
            self.last_commit_xids.add(xid)

    def _excludes(self, user: str, txn_name: str) -> bool:
        """TRANLOGOPTIONS EXCLUDEUSER / EXCLUDETRANS."""
        return containers.excludes(self.exclude_users, user) or bool(
            txn_name and txn_name.upper() in self.exclude_trans
        )

    def _consume(self, lcr: Lcr, out: list[bytes]) -> None:
        self.last_time_us = max(self.last_time_us, lcr.time_us)
        self.last_scn = max(self.last_scn, lcr.scn)
        k = lcr.kind
        through = self.through.get(lcr.xid)
        if through is not None:
            upto = through.get(lcr.pos.thread)
            if upto is not None and lcr.pos < upto:
                return  # restored from its BR file, which holds this change already
            del self.through[lcr.xid]
        if lcr.xid in self.ignored:
            if k in (Kind.COMMIT, Kind.ROLLBACK):
                self.ignored.discard(lcr.xid)
            return
        if k is Kind.ROW:
            self.cache.add(lcr)
        elif k is Kind.BEGIN:
            self.cache.begin(lcr)
        elif k is Kind.SESSION:
            self.cache.session(lcr)
            if self._excludes(lcr.user, lcr.txn_name):
                self.excluded.add(lcr.xid)
        elif k is Kind.UNDO:
            self.cache.undo(lcr)
        elif k is Kind.COMMIT:
            done = self.cache.commit_entries(lcr.xid)
            excluded = lcr.xid in self.excluded
            self.excluded.discard(lcr.xid)
            if done is None:
                return
            txn, entries = done
            if excluded or self._written(lcr.scn, lcr.xid):
                for _ in entries:  # drain: releases the transaction's page file
                    pass
                if excluded:
                    self.stats.excluded += 1
                else:
                    self.stats.skipped_recovered += 1
                return
            self._committed(lcr.scn, lcr.xid)
            self.stats.transactions += 1
            if txn.changes == 0 and not txn.undone and txn.row_count:
                self._commit_fragments(lcr, txn, entries, out)
                return
            rows = surviving(entries, txn.undone)
            if self.fetch is not None:  # seed 002: an update's key the redo lacks
                rows = self.fetch.rows(rows)
            if self.heartbeat is not None:  # seed 001's OUTGOING_EXTRACT rule
                rows = self.heartbeat.rows(rows, self._columns_of)
            rows = self.rules.rows(rows, lcr.xid, lcr.scn, lcr.time_us)
            counts, n = self._encode(lcr.xid, lcr.scn, lcr.time_us, rows, out)
            self._wrote(lcr.xid, lcr.scn, counts, n)
        elif k is Kind.ROLLBACK:
            self.cache.rollback(lcr.xid)
            self.excluded.discard(lcr.xid)
            self.stats.rollbacks += 1

    def restore(self, txns: list[tuple[Txn, list[Entry]]], through: dict[int, Position]) -> None:
        """Bounded Recovery: put persisted transactions back in the cache; their redo
        before ``through`` (the BR checkpoint's read position) is not applied again."""
        for txn, rows in txns:
            self.cache.restore(txn, rows)
            self.through[txn.xid] = dict(through)

    # -- managing open transactions (SKIPTRANS / FORCETRANS) ------------------------
    def skip(self, xid: str) -> None:
        """Drop ``xid`` from the cache; its later records are ignored (also after restart)."""
        self.cache.rollback(xid)
        self.ignored.add(xid)
        self.stats.skipped += 1

    def force(self, xid: str) -> list[bytes]:
        """Write what ``xid`` has to the trail as if it committed now; ignore the rest."""
        done = self.cache.commit(xid)
        self.ignored.add(xid)
        self.stats.forced += 1
        if done is None:
            return []
        _, rows = done
        if self.fetch is not None:  # seed 002: an update's key the redo lacks
            rows = list(self.fetch.rows(rows))
        selected = self.rules.rows(rows, xid, self.last_scn, self.last_time_us)
        out: list[bytes] = []
        counts, n = self._encode(xid, self.last_scn, self.last_time_us, selected, out)
        if out:
            self.writer.append_many(out)
        self._wrote(xid, self.last_scn, counts, n)  # as if it committed now: STATS, latest
        return out

    # -- checkpoints ----------------------------------------------------------------
    def durable_state(self) -> CaptureState:
        """Make the trail durable, then describe the state a checkpoint may publish."""
        trail = self.writer.sync()
        current = self.applied_positions()  # never past an item held above the watermark
        recovery = dict(current)
        for txn in self.cache.open_transactions():
            t = txn.start.thread
            if txn.start < recovery.get(t, txn.start) or t not in recovery:
                recovery[t] = txn.start
        return CaptureState(
            current,
            recovery,
            self.last_commit_scn,
            trail,
            self.last_time_us,
            self.last_scn,
            tuple(sorted(self.ignored)),
            tuple(sorted(self.last_commit_xids)),
        )

    @property
    def last_time(self) -> datetime | None:
        return micros_to_datetime(self.last_time_us) if self.last_time_us else None


def _noting_tables(rows: Iterable[Lcr], tables: list[str]) -> Iterator[Lcr]:
    """``rows``, appending each row's table to ``tables`` as it passes (STATS counts)."""
    for row in rows:
        tables.append(row.table)
        yield row
