"""A real Oracle database's redo (engine/redo) as the events the Extract's driver takes.

The seam between the redo room and the Extract for a database attached with ``ggsci db
attach``: :class:`OracleMiner` mines one byte range of a real Oracle log, as the task miner
(:mod:`engine.extract.tasks.miner`) mines one of the embedded database's, and gives the same
output (:class:`~engine.extract.tasks.miner.Mined`: events as :data:`EVENT_FIELDS` tuples and
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
one per redo thread lives in :class:`MinerStates`, with the Extract's driver (an attached
database is mined in the Extract's own process); a range that does not start where that
thread's last one ended (a batch mined again, a restart) starts from what was kept at its
start, else afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.embedded.errors import RedoCorruptError
from engine.extract.tasks.decode import (
    BEFORES_COMPACT,
    BEFORES_FULL,
    BEFORES_NONE,
    BEFORES_RECORD,
    text_of,
)
from engine.extract.tasks.miner import Event, Mined, MinePlan, TableInfo, close
from engine.extract.tasks.txngroup import KINDS
from engine.redo import capture as C
from engine.redo.dictionary import Dictionary, Table
from engine.redo.errors import RedoError
from engine.redo.framing import Rba, parse_record
from engine.redo.scan import Scan
from engine.redo.values import Value
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
    ends: dict[int, tuple[int, int]] = field(default_factory=dict)  # where its last range ended
    saved: dict[tuple[int, int, int], C.MinerState] = field(default_factory=dict)
    stop: C.CaptureStop | None = None
    stop_scn: int = 0  # the SCN of the record it stopped at
    stop_thread: int = 0  # and its thread
    # per thread, the changes Bounded Recovery restored: (transaction, ROWID, ref)
    seeds: dict[int, list[tuple[str, str, str]]] = field(default_factory=dict)

    def miner(
        self, thread: int, sequence: int, offset: int, make: Callable[[], C.Miner]
    ) -> C.Miner:
        """The miner a range of ``thread`` starting at (sequence, offset) goes on with."""
        m = self.miners.get(thread)
        if m is None:
            m = self.miners[thread] = make()
            m.seed(self.seeds.pop(thread, ()))
        elif self.ends.get(thread) != (sequence, offset):
            m.restore(self.saved.get((thread, sequence, offset)) or C.MinerState())
        self.saved[(thread, sequence, offset)] = m.state()
        mine = sorted(k for k in self.saved if k[0] == thread)
        for k in mine[:-KEPT_STARTS]:
            del self.saved[k]
        return m

    def ended(self, thread: int, sequence: int, offset: int) -> None:
        """A range of ``thread`` was read: the range that goes on from it starts at
        (sequence, offset) (its end; the next log after a log read to its end)."""
        self.ends[thread] = (sequence, offset)


@dataclass(frozen=True)
class OraclePlan:
    """What mining a batch of an attached database needs: the driver's plan (which tables,
    their keys and update images, row rules, compaction, the merge horizon), the Oracle
    dictionary the redo is decoded with, and the miners kept between batches."""

    plan: MinePlan
    dictionary: Dictionary
    states: MinerStates = field(compare=False)
    warn: Callable[[str], None] = field(compare=False, default=lambda _m: None)


class OracleMiner:
    """Mines byte ranges of real Oracle logs into the task miner's output (module docstring)."""

    def __init__(self, plan: OraclePlan) -> None:
        self.oracle = plan
        self.plan = plan.plan
        self.by_name: dict[str, TableInfo] = {i.qualified: i for i in plan.plan.tables.values()}
        self.captured = frozenset(q for q, i in self.by_name.items() if i.captured)
        self._index: dict[str, dict[str, tuple[int, str]]] = {}

    def _new(self) -> C.Miner:
        return C.Miner(
            self.oracle.dictionary, lambda t: t.full_name in self.captured, self.oracle.warn
        )

    def mine(self, path: str, start: int, end: int | None) -> Mined:
        states = self.oracle.states
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
            states.ended(h.thread, *((h.sequence, end) if end is not None else (h.sequence + 1, 0)))
        first = out[0][7] if out else 0
        latest = max(e[7] for e in out) if out else 0
        items = close(out, self.plan, scan.sequence)
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


def _cols(image: dict[int, str | None]) -> Columns:
    return tuple(sorted(image.items()))


def miner_for(plan: Any) -> Any:
    """The miner of a plan: :class:`OracleMiner` for an attached database's."""
    return OracleMiner(plan) if isinstance(plan, OraclePlan) else None
