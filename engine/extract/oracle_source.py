"""A real Oracle database's redo (engine/redo) as the events the Extract's driver takes.

The seam between the redo room and the Extract for a database attached with ``ggsci db
attach``: :class:`OracleMiner` mines one byte range of a real Oracle log, as the task miner
(:mod:`engine.extract.tasks.miner`) mines one of the embedded database's, and gives the same
output (:class:`~engine.extract.tasks.plan.Mined`: events as :data:`EVENT_FIELDS` tuples and
transactions closed inside the range), so that one driver (:mod:`engine.extract.capture`:
cache, Bounded Recovery, long transactions, SHOWTRANS/SKIPTRANS/FORCETRANS, the thread merge,
checkpoints) captures from both.

The records are decoded by :class:`engine.redo.capture.Miner`, the reader of real Oracle
redo: container ids honoured, rows in several pieces bound, 19.1 direct loads, savepoint
rollbacks, a structure change of a captured table (dictionary rows, a 24.1 DDL marker) or a
compressed row stops it with the table and SCN (:class:`~engine.redo.capture.CaptureStop`).
Its row changes are shaped here into the trail's images by the rules the task miner states
(:class:`~engine.extract.tasks.decode.Decoder`): an insert carries every column, a delete its
key (every column with NOCOMPRESSDELETES), an update its key and the changed columns
(GETUPDATEBEFORES / UPDATERECORDFORMAT: the before images), a changed key a key update. The
rows carry their columns as the trail's text (no record template): the driver encodes them at
commit, and applies the TABLE row options there.

The redo miner is stateful (a row's pieces, the changes a savepoint rollback may take back):
one per redo thread lives in :class:`MinerStates`, with the Extract's driver; a range that
does not start where that thread's last one ended (a batch mined again, a restart) starts
from what was kept at its start, else afresh. In a Spark task a range is mined alone, from no
state (:meth:`OracleMiner.mine_alone`, its :class:`Carry`), and the driver settles it
(:meth:`OracleMiner.settle`): what its result depends on of the state before it (a
savepoint rollback of a change in an earlier range, the pieces of a row an earlier range
left open) is carried and resolved there against the thread's true state
(:mod:`engine.extract.alone`), and the thread's state goes on from it; only what cannot be
resolved is mined again on the driver.

The fast path (:mod:`engine.extract.oracle_fast`): a range is mined by the task miner
and its C walk, strict, over the attached dictionary's tables (by real object number, with
their container); a record it would not read as the redo miner does is read by the redo
miner in place, which is kept in step (:func:`_sync`); a range the redo miner stops in goes
to it whole. docs/extract.md "The fast path" says exactly what takes which path.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from engine import storage
from engine.embedded.errors import RedoCorruptError
from engine.extract.alone import (
    DEFER,
    AloneMiner,
    Carry,
    Deferred,
    composed,
    kept_misses,
    resolved,
    walked,
)
from engine.extract.oracle_fast import Fallback, FastMiner, fast_miner, parsed
from engine.extract.tasks.closing import close
from engine.extract.tasks.decode import (
    BEFORES_COMPACT,
    BEFORES_FULL,
    BEFORES_NONE,
    BEFORES_RECORD,
    text_of,
)
from engine.extract.tasks.plan import Event, Item, Mined, MinePlan, TableInfo
from engine.extract.tasks.txngroup import KINDS
from engine.redo import capture as C
from engine.redo.dictionary import Dictionary, Table
from engine.redo.errors import RedoError
from engine.redo.framing import Rba, Record, parse_record, read_header
from engine.redo.scan import Scan
from engine.redo.values import Value
from engine.storage import StorageError
from engine.trail.layout import BEFORE_IMAGE, IOType
from engine.trail.model import Columns

_ROW, _BEGIN, _COMMIT, _ROLLBACK, _SESSION, _UNDO = KINDS  # the kinds of an event
_INSERT, _DELETE, _FIELDCOMP = int(IOType.INSERT), int(IOType.DELETE), int(IOType.FIELDCOMP)
_KEYFIELDCOMP, _UNIFIED = int(IOType.KEYFIELDCOMP), int(IOType.UNIFIED_UPDATE)
_UNIFIED_PK = int(IOType.UNIFIED_PK_UPDATE)


#: Range starts per thread whose miner state is kept (a batch mined again starts at one).
KEPT_STARTS = 64


@dataclass
class MinerStates:
    """The redo miners of one Extract, one per thread, kept between ranges (see the module
    docstring), and what stopped mining (a structure change: the driver abends with it
    once what was read before it is applied)."""

    miners: dict[int, C.Miner] = field(default_factory=dict)
    # where the range that goes on from its last range may start: that range's end, or past
    # the record that crossed it (where the next batch is planned from: redo_source.py)
    ends: dict[int, frozenset[tuple[int, int]]] = field(default_factory=dict)
    saved: dict[tuple[int, int, int], C.MinerState] = field(default_factory=dict)
    stop: C.CaptureStop | None = None
    stop_scn: int = 0  # the SCN of the record it stopped at
    stop_thread: int = 0  # and its thread
    # per thread, the changes Bounded Recovery restored: (transaction, ROWID, ref)
    seeds: dict[int, list[tuple[str, str, str]]] = field(default_factory=dict)
    # ranges mined by the task miner, by the redo miner whole, and records of the first the
    # redo miner read in place (the fast path's reach: docs/extract.md)
    fast_ranges: int = 0
    redo_ranges: int = 0
    delegated: int = 0
    # the warnings given (OGG-01431: a column of a type not captured), each once, whether a
    # thread's redo miner here gave it or a Spark task's (relayed: OracleMiner.settle)
    warned: set[str] = field(default_factory=set)
    tasks: int = 0  # ranges mined in Spark tasks whose result stood (OracleMiner.settle)
    remined: int = 0  # ranges mined in tasks whose result did not stand: mined again here
    _settling: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def miner(
        self, thread: int, sequence: int, offset: int, make: Callable[[], C.Miner]
    ) -> C.Miner:
        """The miner a range of ``thread`` starting at (sequence, offset) goes on with."""
        m = self.miners.get(thread)
        if m is None:
            m = self.miners[thread] = make()
            m.seed(self.seeds.pop(thread, ()))
        elif (sequence, offset) not in self.ends.get(thread, ()):
            m.restore(self.saved.get((thread, sequence, offset)) or C.MinerState())
        self.saved[(thread, sequence, offset)] = m.state()
        mine = sorted(k for k in self.saved if k[0] == thread)
        for k in mine[:-KEPT_STARTS]:
            del self.saved[k]
        return m

    def ended(self, thread: int, sequence: int, end: int | None, resume: int | None) -> None:
        """A range of ``thread`` in log ``sequence`` up to ``end`` (None: the log's end) was
        read, its last record ending at ``resume``: the range that goes on from it starts at
        its end or at ``resume`` (no record starts between them: where the next batch is
        planned from, its end when it was planned ahead, else ``resume``), or at the next
        log after a log read to its end."""
        if end is None:
            self.went_on(thread, frozenset({(sequence + 1, 0)}))
        else:
            self.went_on(thread, frozenset({(sequence, end), (sequence, resume or end)}))

    def went_on(self, thread: int, starts: frozenset[tuple[int, int]]) -> None:
        """The range of ``thread`` that goes on from the last one read starts at one of
        ``starts`` (sequence, offset); the thread's miner state there is kept for a range
        that starts there later (the batch after a batch mined again: capture.py mines a
        batch again change by change when a Bounded Recovery checkpoint falls inside it)."""
        self.ends[thread] = starts
        m = self.miners.get(thread)
        if m is None:
            return
        state = m.state()
        for sequence, offset in starts:
            self.saved[(thread, sequence, offset)] = state
        mine = sorted(k for k in self.saved if k[0] == thread)
        for k in mine[:-KEPT_STARTS]:
            del self.saved[k]

    @contextlib.contextmanager
    def settling(self) -> Iterator[None]:
        """Around settling a batch's task results (:meth:`OracleMiner.settle`): one batch at
        a time, in the order the batches are applied (the caller's: a range goes on from the
        state the range before it left; redo_source.mine_batch)."""
        with self._settling:
            yield


@dataclass(frozen=True)
class OraclePlan:
    """What mining a batch of an attached database needs: the driver's plan (which tables,
    their keys and update images, row rules, compaction, the merge horizon), the Oracle
    dictionary the redo is decoded with, and the miners kept between batches."""

    plan: MinePlan
    dictionary: Dictionary
    states: MinerStates = field(compare=False)
    warn: Callable[[str], None] = field(compare=False, default=lambda _m: None)

    def __reduce__(self) -> tuple[Any, ...]:
        """As it goes to Spark tasks (a broadcast): without the driver's miners and warning
        callback; a task mines each range alone (:meth:`OracleMiner.mine_alone`)."""
        return (_shipped, (self.plan, self.dictionary))


def _shipped(plan: MinePlan, dictionary: Dictionary) -> OraclePlan:
    return OraclePlan(plan, dictionary, MinerStates())


class OracleMiner:
    """Mines byte ranges of real Oracle logs into the task miner's output (module docstring)."""

    def __init__(self, plan: OraclePlan) -> None:
        self.oracle = plan
        self.plan = plan.plan
        self.by_name: dict[str, TableInfo] = {i.qualified: i for i in plan.plan.tables.values()}
        self.captured = frozenset(q for q, i in self.by_name.items() if i.captured)
        self._index: dict[str, dict[str, tuple[int, str]]] = {}
        self.fast = fast_miner(plan.plan, plan.dictionary)
        #: the miners' states this miner mines with: the driver's (a fresh one a range in a
        #: Spark task: :meth:`mine_alone`)
        self.states = plan.states
        self._ended: frozenset[str] = frozenset()  # transactions ended in the last range mined
        self._misses = 0  # its savepoint rollbacks left to the driver (Carry.missed)
        self._relayed: list[str] = []  # warnings of the range mined alone (Carry.warnings)

    def _new(self) -> C.Miner:
        make = AloneMiner if self.states is not self.oracle.states else C.Miner
        return make(self.oracle.dictionary, lambda t: t.full_name in self.captured, self._warn)

    def _warn(self, text: str) -> None:
        """A warning of a redo miner: given once an Extract (:attr:`MinerStates.warned`),
        or, mining alone (a Spark task, which has no report), kept for the driver
        (:attr:`Carry.warnings`), which gives it (:meth:`settle`)."""
        if self.states is not self.oracle.states:
            if text not in self._relayed:
                self._relayed.append(text)
        elif text not in self.states.warned:
            self.states.warned.add(text)
            self.oracle.warn(text)

    def mine_alone(self, path: str, start: int, end: int | None) -> tuple[Mined, Carry]:
        """Mine a range from no miner state (in a Spark task: the driver's state stays with
        the driver), and say what the driver needs to know whether that was right and to go
        on from it (:class:`Carry`, :meth:`settle`)."""
        self.states = alone = MinerStates()
        self._relayed = []
        try:
            got = self.mine(path, start, end)
        finally:
            self.states = self.oracle.states
        miners = list(alone.miners.values())
        m = miners[0] if miners else None
        stop = alone.stop
        deferred = tuple(m.deferred) if isinstance(m, AloneMiner) else ()
        carry = Carry(
            m.state() if m is not None else None,
            next(iter(alone.ends.values()), None),
            self._ended,
            self._misses,
            (stop.message, stop.offset, stop.code) if stop is not None else None,
            alone.stop_scn,
            alone.fast_ranges,
            alone.redo_ranges,
            alone.delegated,
            frozenset(x.text() for x in m.undone) if isinstance(m, AloneMiner) else frozenset(),
            deferred,
            bool(deferred),
            isinstance(m, AloneMiner) and m.unsure,
            tuple(self._relayed),
            frozenset(x.text() for x in m.assumed) if isinstance(m, AloneMiner) else frozenset(),
        )
        return got, carry

    def settle(
        self, thread: int, sequence: int, start: int, carry: Carry, mined: Mined
    ) -> Mined | None:
        """The result (``mined``) of the range of ``thread`` starting at (sequence, start),
        mined alone (``carry``), made what mining it with the thread's true miner state
        gives (engine/extract/alone.py: its savepoint rollbacks of changes in earlier ranges
        resolved, its deferred row pieces bound with the true open pieces, then its
        transactions closed), and the driver's state gone on from it (the state before it,
        as resolving went on from it, less the transactions that ended in the range, with
        the range's own state after it); None when it cannot be (the range is then mined
        again here, with the true state): alone.py says when, and after a stop (what
        follows a stop is cut by it: :meth:`_mine_redo`). Called on the driver for each
        range in the order an in-process batch mines them."""
        for text in carry.warnings:  # (the task's, given here once)
            self._warn(text)
        states = self.states
        if states.stop is not None:
            return None
        miner = states.miner(thread, sequence, start, self._new)
        now = miner.state()
        if carry.assumed and any(v for k, v in now.pieces.items() if k.text() in carry.assumed):
            return None  # (a whole row change read while a row of its transaction was open)
        if carry.raw:
            if carry.unsure or carry.stop is not None:
                return None
            events_: list[Event] = mined.items  # type: ignore[assignment]  # (raw: not closed)
            walk = walked(events_, now.live, now.pieces, carry.deferred, self._new(), self._events)
            if walk is None or (carry.end is not None and walk[1] & carry.end.live.keys()):
                return None  # (one row's changes from both: their order is not known here)
            events = walk[0]
            first = events[0][7] if events else 0
            latest = max(e[7] for e in events) if events else 0
            items = close(events, self.plan, mined.sequence)
            mined = Mined(items, mined.resume, mined.records, mined.sequence, first, latest)
        elif carry.missed:
            got = resolved(mined.items, now.live)
            if got is None:
                return None
            mined = replace(mined, items=got)
        if any(any(p.carries for p in v) for k, v in now.pieces.items() if k.text() in carry.ended):
            return None  # (an end with a row's pieces not bound: a stop, or not, by its path)
        states.tasks += 1
        states.fast_ranges += carry.fast_ranges
        states.redo_ranges += carry.redo_ranges
        states.delegated += carry.delegated
        if carry.stop is not None:
            message, offset, code = carry.stop
            states.stop = C.CaptureStop(message, offset, code)
            states.stop_scn, states.stop_thread = carry.stop_scn, thread
            return mined
        if carry.end is not None:
            miner.restore(composed(now, carry.end, carry.ended, carry.undone))
        if carry.ends is not None:
            states.went_on(thread, carry.ends)
        return mined

    def mine(self, path: str, start: int, end: int | None) -> Mined:
        if self.fast is not None and self.states.stop is None:
            got = self._mine_fast(self.fast, path, start, end)
            if got is not None:
                self.states.fast_ranges += 1
                return got
        self.states.redo_ranges += 1
        return self._mine_redo(path, start, end)

    def _mine_fast(self, fast: FastMiner, path: str, start: int, end: int | None) -> Mined | None:
        """The range mined by the task miner and its C walk (:class:`FastMiner`), with the
        records it would not read as the redo miner does read by the redo miner (in place,
        :meth:`_delegated`); None where the redo miner stops in it or cannot read it (the
        range then goes to :meth:`_mine_redo`, which says so). The thread's redo miner is
        kept up to date: it is told the changes of transactions still open (a savepoint
        rollback it reads later takes them back), those that ended, and where it ended."""
        states = self.states
        try:
            with storage.open_input(path) as src:
                header = read_header(src.read_at(0, 2 * 4096))
        except (RedoError, StorageError):  # (the redo miner says what is wrong)
            return None
        thread, seq = header.thread, header.sequence
        miner = states.miner(thread, seq, start, self._new)
        synced = [0]  # events the redo miner has been told of
        fast.delegate = lambda *rec: self._delegated(miner, synced, *rec)
        try:
            events, n, resume, sequence = fast.walk(path, start, end)
        except (Fallback, RedoError, StorageError):
            miner.restore(states.saved.get((thread, seq, start)) or C.MinerState())
            return None
        finally:
            fast.delegate = None
        _sync(miner, events, synced[0])
        self._ended = _ended_in(events)
        events, self._misses = kept_misses(events) if _missed(miner) else (events, 0)
        states.ended(thread, sequence, end, resume)
        first = events[0][7] if events else 0
        latest = max(e[7] for e in events) if events else 0
        items: list[Item] = list(events) if _defers(miner) else close(events, self.plan, sequence)
        return Mined(items, resume, n, sequence, first, latest)

    def _delegated(
        self, miner: C.Miner, synced: list[int], scan: Scan, offset: int, stop: int,
        buf: bytes, lo: int, size: int, lwn_scn: int, lwn_time: int, out: list[Event],
        rec: Record | None = None,
    ) -> None:  # fmt: skip
        """One record of a fast range (``rec``: parsed already, None: not) read by the redo
        miner, told first of the changes before it; :class:`Fallback` where it stops (the
        range goes to it whole)."""
        _sync(miner, out, synced[0])
        self.states.delegated += 1
        h = scan.header
        assert h is not None
        if rec is None:
            rec = parsed(buf, lo, size, scan, offset)
        miner.lwn_scn, miner.lwn_time = lwn_scn, lwn_time
        try:
            events = miner.feed(rec)
        except C.CaptureStop as exc:
            raise Fallback(exc.message) from exc
        self._events(events, (h.thread, offset, stop, rec.scn, rec.subscn, scan.micros(lwn_time)),
                     out)  # fmt: skip
        synced[0] = len(out)

    def _mine_redo(self, path: str, start: int, end: int | None) -> Mined:
        states = self.states
        scan = Scan(path, start, end)
        out: list[Event] = []
        n = 0
        miner: C.Miner | None = None
        try:
            for offset, stop, buf, lo, size, lwn_scn, lwn_time in scan:
                h = scan.header
                assert h is not None
                if states.stop is not None and (
                    h.thread == states.stop_thread or lwn_scn >= states.stop_scn
                ):  # a stop met before: this thread's redo after it is not read
                    scan.resume = offset
                    break
                if miner is None:
                    miner = states.miner(h.thread, h.sequence, start, self._new)
                bs = h.block_size
                rec = parse_record(
                    bytes(buf[lo : lo + size]), h.order, h.layout,
                    Rba(h.sequence, offset // bs, offset % bs), h.thread,
                )  # fmt: skip
                miner.lwn_scn, miner.lwn_time = lwn_scn, lwn_time
                head = (h.thread, offset, stop, rec.scn, rec.subscn, scan.micros(lwn_time))
                try:
                    events = miner.feed(rec)
                except C.CaptureStop as exc:
                    # what came before it is applied (engine/extract/alo.py, bound)
                    states.stop, states.stop_scn, states.stop_thread = exc, rec.scn, h.thread
                    scan.resume = offset
                    break
                self._events(events, head, out)
                n += 1
        except C.CaptureStop:
            raise
        except RedoError as exc:
            raise RedoCorruptError(f"{path}: {exc.message}") from exc
        h = scan.header
        if h is not None and states.stop is None:  # where the range that goes on from it starts
            if miner is None:  # (no record starts in this range: the state passes through it)
                miner = states.miner(h.thread, h.sequence, start, self._new)
            states.ended(h.thread, h.sequence, end, scan.resume)
        first = out[0][7] if out else 0
        latest = max(e[7] for e in out) if out else 0
        self._ended = _ended_in(out)
        out, self._misses = kept_misses(out) if _missed(miner) else (out, 0)
        items: list[Item] = list(out) if _defers(miner) else close(out, self.plan, scan.sequence)
        return Mined(items, scan.resume, n, scan.sequence, first, latest)

    # -- events -----------------------------------------------------------------------
    def _events(
        self,
        events: Iterable[C.TxEvent],
        head: tuple[int, int, int, int, int, int],
        out: list[Event],
    ) -> None:
        for ev in events:
            xid = ev.xid.text()
            if isinstance(ev, C.TxBegin):
                out.append((_BEGIN, xid, *head, 0, "", None, (), (), "", "", "", "", b""))
            elif isinstance(ev, C.TxSession):
                out.append((_SESSION, xid, *head, 0, "", None, (), (), "", ev.user, ev.name,
                            "", b""))  # fmt: skip
            elif isinstance(ev, C.TxUndo):
                out.append((_UNDO, xid, *head, 0, "", None, (), (), ev.ref, "", "", "", b""))
            elif isinstance(ev, C.TxRow):
                self._row(ev, xid, head, out)
            elif isinstance(ev, Deferred):  # (a row piece the driver binds: alone.py)
                out.append((DEFER, xid, *head, ev.index, "", None, (), (), "", "", "", "", b""))
            else:
                kind = _ROLLBACK if ev.rollback else _COMMIT
                at = (*head[:3], ev.commit_scn, *head[4:])  # the LWN's SCN and time
                out.append((kind, xid, *at, 0, "", None, (), (), "", "", "", "", b""))

    def _texts(self, t: Table, values: tuple[tuple[str, Value], ...]) -> dict[int, str | None]:
        idx = self._index.get(t.full_name)
        if idx is None:  # by name: the column's index (in segment order) and type
            idx = self._index[t.full_name] = {c.name: (i, c.type) for i, c in enumerate(t.columns)}
        out: dict[int, str | None] = {}
        for n, v in values:
            got = idx.get(n)
            if got is not None:
                out[got[0]] = text_of(got[1], v)
        return out

    def _row(
        self, ev: C.TxRow, xid: str, head: tuple[int, int, int, int, int, int], out: list[Event]
    ) -> None:
        r = ev.row
        t = r.table
        info = self.by_name.get(t.full_name)
        if info is None:
            return
        width = len(t.columns)
        before = self._texts(t, r.before)
        after = self._texts(t, r.after)
        key = info.key

        def row(io: int, image: dict[int, str | None], bimage: Columns = ()) -> Event:
            return (_ROW, xid, *head, io, info.qualified, r.rowid, _cols(image), bimage, ev.ref,
                    "", "", "", b"")  # fmt: skip

        if r.op == "INSERT":
            out.append(row(_INSERT, {i: after.get(i) for i in range(width)}))
            return
        if r.op == "DELETE":
            if info.full_deletes:
                out.append(row(_DELETE, {i: before.get(i) for i in range(width)}))
            else:
                out.append(row(_DELETE, {i: before[i] for i in key if i in before}))
            return
        # an update: decode.Decoder._update's rules; COMPACT: the columns it changed
        changed = {i: v for i, v in after.items() if i not in before or before[i] != v}
        key_changed = any(i in after and i in before and before[i] != after[i] for i in key)
        merged = {i: before[i] for i in key if i in before}
        merged.update(after)
        mode = info.befores
        if any(i not in merged for i in key):  # no key in the redo (no supplemental logging)
            out.append(row(_FIELDCOMP, merged))
        elif key_changed:
            bimg = before if mode else {i: before[i] for i in key if i in before}
            io = _UNIFIED_PK if mode in (BEFORES_FULL, BEFORES_COMPACT) else _KEYFIELDCOMP
            out.append(row(io, merged, _cols(bimg)))
        elif mode == BEFORES_NONE:
            out.append(row(_FIELDCOMP, merged))
        elif mode == BEFORES_RECORD:
            out.append(row(_FIELDCOMP | BEFORE_IMAGE, before))
            out.append(row(_FIELDCOMP, merged))
        else:
            image = merged if mode == BEFORES_FULL else changed
            out.append(row(_UNIFIED, image, _cols(before)))


def _sync(miner: C.Miner, events: list[Event], since: int) -> None:
    """Tell the redo ``miner`` of ``events[since:]`` the task miner mined: the changes of
    transactions still open (a savepoint rollback it reads takes them back), those ended."""
    ended = {e[1] for e in events[since:] if e[0] == _COMMIT or e[0] == _ROLLBACK}
    miner.seed(
        (e[1], e[10], e[13])
        for e in events[since:]
        if e[0] == _ROW and e[1] not in ended and e[10] and e[13]
    )
    miner.forget(ended)
    if isinstance(miner, AloneMiner):
        miner.saw(events)


def _missed(miner: C.Miner | None) -> bool:
    """Whether a range mined alone holds undos of MISSED (its savepoint rollbacks that found
    nothing to take back in it)."""
    return isinstance(miner, AloneMiner) and bool(miner.missed)


def _defers(miner: C.Miner | None) -> bool:
    """Whether a range mined alone left row pieces to the driver (its events go unclosed)."""
    return isinstance(miner, AloneMiner) and bool(miner.deferred)


def _ended_in(events: list[Event]) -> frozenset[str]:
    """The transactions that ended (commit or rollback) among ``events``."""
    return frozenset(e[1] for e in events if e[0] == _COMMIT or e[0] == _ROLLBACK)


def _cols(image: dict[int, str | None]) -> Columns:
    return tuple(sorted(image.items()))


def miner_for(plan: Any) -> Any:
    """The miner of a plan: :class:`OracleMiner` for an attached database's."""
    return OracleMiner(plan) if isinstance(plan, OraclePlan) else None
