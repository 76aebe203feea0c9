"""A range of an attached database's redo mined alone, and settled on the driver.

In a Spark task a range is mined from no redo-miner state (the driver's stays with the
driver: engine/extract/oracle_source.py ``OracleMiner.mine_alone``). What the range's result
depends on of the state before it is not guessed there but carried to the driver, which
resolves it against the thread's true state (``OracleMiner.settle``), in the order an
in-process batch mines the ranges, so that the result is exactly what mining the range with
that state gives:

- a savepoint rollback (a 5.6 / 5.11's level-11 partner) that finds no change of its row to
  take back in the range: its undo carries :data:`MISSED` and the ROWID instead of a
  reference (:class:`AloneMiner`); the driver takes back the newest change of the
  transaction to that row in the true state (:func:`resolved`, :func:`walked`). One of a
  transaction that began in the range is dropped in the task (no earlier range holds a
  change of it: :func:`kept_misses`);
- a row piece (a row change in one record or a piece of one, read by the redo miner) of a
  transaction whose open pieces the task cannot know (it began before the range, and
  nothing in the range so far has closed its pieces: a begin, an end, a savepoint rollback)
  is *deferred* (but a whole row change by its own flags, while none of the transaction is
  deferred yet: read as with no open pieces, which the driver checks, :attr:`Carry.assumed`):
  its record's vector is carried (:class:`Deferred`) and a placeholder event
  (:data:`DEFER`) stands at its place; such a range comes back as its events, not closed
  (:attr:`Carry.raw`), and the driver binds each deferred piece with the transaction's true
  open pieces (the leading pieces with no head in the range, bound to the head an earlier
  range left open; a head the range leaves open goes on in the state), then closes the
  transactions (:func:`walked`).

What cannot be resolved (a rollback with nothing to take back in the true state either, a
commit with pieces of a row not bound, a deferred piece whose binding stops, a reference
number a deferred piece shares with a later change of its record, a whole row change read as
with no open pieces of a transaction that had some) makes the driver mine the range again
with the true state, which is always exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final

from engine.changes import Fragment
from engine.extract.tasks.plan import Event, Item
from engine.extract.tasks.txngroup import KINDS
from engine.redo import capture as C
from engine.redo import vectors
from engine.redo.errors import RedoError
from engine.redo.framing import Record, Vector
from engine.redo.pieces import Piece, whole
from engine.redo.rowid import rowid

_ROW, _BEGIN, _COMMIT, _ROLLBACK, _SESSION, _UNDO = KINDS
_OPENS_OR_ENDS: Final = frozenset({_BEGIN, _COMMIT, _ROLLBACK})

#: The reference of a savepoint rollback a range mined alone found nothing to take back for
#: (:class:`AloneMiner`): this prefix, then the ROWID of its row; resolved by the driver.
MISSED: Final = "?"
#: The kind of the event standing for a deferred row piece (its index at ``io_type``, 8).
DEFER: Final = -100

Live = dict[tuple[vectors.Xid, str], list[str]]
Pieces = dict[vectors.Xid, list[Any]]


@dataclass(frozen=True)
class Deferred:
    """A row piece the driver binds (:func:`walked`): the redo miner's ``_row`` arguments,
    how many changes of its record were named before it (its reference's number), and
    which of its range's it is. It is also the redo miner's event standing for it."""

    vector: Vector
    undo: vectors.Undo | None
    record: Record
    xid: vectors.Xid
    made: int
    index: int


@dataclass(frozen=True)
class Carry:
    """What a range mined alone tells the driver beside its events (module docstring): its
    redo miner's state at its end (None: no log header read) and where the range that goes
    on from it starts; the transactions that ended in it, and those a savepoint rollback
    closed the pieces of, and those it read as having none open before it (a whole row
    change: ``assumed``); how many undos of :data:`MISSED` it holds; its deferred pieces
    (then its items are its events, not closed: ``raw``), and whether one shares its
    reference number with a later change of its record (``unsure``: mined again); the stop
    it met (a structure change: message, offset, code; with its SCN); how it was mined
    (the counts of ``MinerStates``); and the warnings its redo miner gave (a task has no
    report: the driver gives them, once an Extract)."""

    end: C.MinerState | None
    ends: frozenset[tuple[int, int]] | None
    ended: frozenset[str]
    missed: int
    stop: tuple[str, int | None, str] | None = None
    stop_scn: int = 0
    fast_ranges: int = 0
    redo_ranges: int = 0
    delegated: int = 0
    undone: frozenset[str] = frozenset()
    deferred: tuple[Deferred, ...] = ()
    raw: bool = False
    unsure: bool = False
    warnings: tuple[str, ...] = ()  # its redo miner's (OGG-01431), for the report
    assumed: frozenset[str] = frozenset()  # read as having no open pieces before it


def xid_of(text: str) -> vectors.Xid:
    usn, slt, sqn = (int(x) for x in text.split("."))
    return vectors.Xid(usn, slt, sqn)


class AloneMiner(C.Miner):
    """The redo miner of a range mined alone (module docstring): a savepoint rollback with
    nothing to take back in the range gives an undo of :data:`MISSED`; a row piece of a
    transaction not :attr:`known` is deferred."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fresh()

    def _fresh(self) -> None:
        #: transactions whose open pieces do not depend on the state before the range
        self.known: set[vectors.Xid] = set()
        self.deferred: list[Deferred] = []
        self.undone: set[vectors.Xid] = set()  # a savepoint rollback closed their pieces
        #: transactions read as having no open pieces before the range (:meth:`_deferred`)
        self.assumed: set[vectors.Xid] = set()
        self._deferring: set[vectors.Xid] = set()  # those with a piece deferred
        self.unsure = False
        self._events: list[Event] | None = None  # the task miner's (:meth:`saw`)
        self._scanned = 0
        self._ends: set[str] = set()  # transactions begun or ended among them

    def restore(self, state: C.MinerState) -> None:
        super().restore(state)
        self._fresh()

    def saw(self, events: list[Event]) -> None:
        """The events the task miner made of the range so far (the fast path), where a
        transaction it saw begin or end is known (looked through only when a piece of one
        not known otherwise comes: :meth:`_seen`)."""
        if events is not self._events:
            self._events, self._scanned = events, 0

    def _seen(self, xid: vectors.Xid) -> bool:
        """Whether the task miner's events so far begin or end ``xid``."""
        events = self._events
        if events is None:
            return False
        ends = self._ends
        for e in events[self._scanned :]:
            if e[0] in _OPENS_OR_ENDS:
                ends.add(e[1])
        self._scanned = len(events)
        return xid.text() in ends

    def feed(self, rec: Record) -> list[C.TxEvent]:
        before = len(self.deferred)
        got = super().feed(rec)
        for ev in got:
            if isinstance(ev, C.TxBegin | C.TxEnd):
                self.known.add(ev.xid)
        if len(self.deferred) > before and self._made > self.deferred[before].made:
            self.unsure = True  # (a change named after a deferred piece in its record)
        return got

    def _deferred(
        self, v: Vector, undo: vectors.Undo | None, rec: Record, xid: vectors.Xid,
        piece: Piece, out: list[C.TxEvent],
    ) -> bool:  # fmt: skip
        """Whether the row piece is deferred: one of a transaction not known; but a whole
        row change (by its own flags) of one with nothing deferred yet is read here, as the
        redo miner with no open pieces of it reads it, and the transaction then known, on
        the assumption (:attr:`assumed`, checked by the driver) that the state before the
        range holds none (Oracle writes a row's pieces one after another: a whole row
        change of the transaction between two of them does not happen)."""
        if xid in self.known or _begins(rec, xid) or self._seen(xid):
            return False
        if xid not in self._deferring and whole(piece):
            self.assumed.add(xid)
            self.known.add(xid)
            return False
        self._deferring.add(xid)
        d = Deferred(v, undo, rec, xid, self._made, len(self.deferred))
        self.deferred.append(d)
        out.append(d)  # type: ignore[arg-type]
        return True

    def _row(
        self, v: Vector, undo: vectors.Undo | None, rec: Record, xid: vectors.Xid | None,
        undoing: bool,
    ) -> list[C.TxEvent]:  # fmt: skip
        if not undoing:
            return super()._row(v, undo, rec, xid, undoing)
        was, self.missed = self.missed, set()
        try:
            got = super()._row(v, undo, rec, xid, undoing)
            hit = bool(self.missed)
        finally:
            was |= self.missed
            self.missed = was
        if hit:
            d = vectors.decode(v)
            assert isinstance(d, vectors.Redo)
            owner = (undo.xid if undo else None) or d.xid or xid
            assert owner is not None
            got = [C.TxUndo(owner, MISSED + rowid(v.obj, v.dba, d.row.slot))]
        for ev in got:  # (its pieces were dropped: they no longer depend on the state before)
            self.known.add(ev.xid)
            self.undone.add(ev.xid)
        return got


def _begins(rec: Record, xid: vectors.Xid) -> bool:
    """Whether ``rec`` holds the 5.2 that begins ``xid``."""
    for v in rec.vectors:
        if v.op == "5.2":
            b = vectors.decode(v)
            if isinstance(b, vectors.Begin) and b.xid == xid:
                return True
    return False


def kept_misses(events: list[Event]) -> tuple[list[Event], int]:
    """``events`` less the undos of :data:`MISSED` of a transaction that began in them (no
    earlier range holds a change of it: mined with the true state, that rollback finds
    nothing either, and gives nothing), and how many are left (for the driver)."""
    if not any(e[0] == _UNDO and e[13][:1] == MISSED for e in events):
        return events, 0
    begun: set[str] = set()
    out: list[Event] = []
    for e in events:
        if e[0] == _BEGIN:
            begun.add(e[1])
        elif e[0] == _UNDO and e[13][:1] == MISSED and e[1] in begun:
            continue
        out.append(e)
    return out, sum(1 for e in out if e[0] == _UNDO and e[13][:1] == MISSED)


def _take(live: Live, xid: str, ref: str) -> str | None:
    """The newest change of ``xid`` to the row of a :data:`MISSED` ``ref`` in ``live``,
    taken out of it (None: none)."""
    refs = live.get((xid_of(xid), ref[len(MISSED) :]))
    return refs.pop() if refs else None


def resolved(items: list[Item], live: Live) -> list[Item] | None:
    """``items`` (closed) of a range mined alone with each undo of :data:`MISSED` resolved
    against ``live`` (the thread's true state at the range's start, taken from as it goes):
    the newest change of its transaction to its row there is taken back, as the redo miner
    with that state does; None when there is none (the redo miner gives nothing, which
    moves a fragment's ends and the range's times: mined again)."""
    out: list[Item] = []
    for it in items:
        if isinstance(it, Fragment):
            if any(u[:1] == MISSED for u in it.undone):
                undone = []
                for u in it.undone:
                    got = _take(live, it.xid, u) if u[:1] == MISSED else u
                    if got is None:
                        return None
                    undone.append(got)
                it = replace(it, undone=tuple(undone))
        elif isinstance(it, tuple) and it[0] == _UNDO and it[13][:1] == MISSED:
            ref = _take(live, it[1], it[13])
            if ref is None:
                return None
            it = (*it[:13], ref, *it[14:])
        out.append(it)
    return out


def walked(
    events: list[Event],
    live: Live,
    pieces: Pieces,
    deferred: tuple[Deferred, ...],
    replayer: C.Miner,
    to_events: Callable[[list[C.TxEvent], tuple[Any, ...], list[Event]], None],
) -> tuple[list[Event], set[tuple[vectors.Xid, str]]] | None:
    """The events (not closed) of a range mined alone, resolved against the thread's true
    state at its start (``live``, ``pieces``: gone on as the range goes): each deferred
    piece bound by ``replayer`` (a redo miner of the driver's) with its transaction's open
    pieces, its row change made events by ``to_events``; each undo of :data:`MISSED` as
    :func:`resolved` says; a savepoint rollback or an end drops the transaction's pieces.
    With the keys of ``live`` a deferred piece's change went to; None where the range must
    be mined again (module docstring)."""
    out: list[Event] = []
    keys: set[tuple[vectors.Xid, str]] = set()
    for e in events:
        k = e[0]
        if k == DEFER:
            d = deferred[e[8]]
            replayer.restore(C.MinerState({}, {d.xid: pieces.pop(d.xid, [])}))
            replayer._made = d.made
            try:
                got = replayer._row(d.vector, d.undo, d.record, d.xid, False)
            except RedoError:  # (a clash, a piece that cannot be placed: a stop)
                return None
            state = replayer.state()
            if state.pieces.get(d.xid):
                pieces[d.xid] = state.pieces[d.xid]
            for key, refs in state.live.items():
                live.setdefault(key, []).extend(refs)
                keys.add(key)
            to_events(got, e[2:8], out)
            continue
        if k == _UNDO:
            pieces.pop(xid_of(e[1]), None)
            if e[13][:1] == MISSED:
                ref = _take(live, e[1], e[13])
                if ref is None:
                    return None
                e = (*e[:13], ref, *e[14:])
        elif k in (_COMMIT, _ROLLBACK):
            held = pieces.pop(xid_of(e[1]), None)
            if k == _COMMIT and held and any(p.carries for p in held):
                return None  # (a row's pieces not bound at its commit: the redo miner stops)
        out.append(e)
    return out, keys


def composed(
    before: C.MinerState, after: C.MinerState, ended: frozenset[str], undone: frozenset[str]
) -> C.MinerState:
    """A thread's redo miner state after a range mined alone: ``before`` (the true state at
    its start, gone on as :func:`resolved` / :func:`walked` took from it) less the
    transactions that ended in the range, and the pieces of those a savepoint rollback in it
    closed, then the range's own state at its end (``after``: its changes are newer than
    those before it, its pieces those of transactions it knew)."""
    live = {k: list(v) for k, v in before.live.items() if k[0].text() not in ended}
    for k, refs in after.live.items():
        live.setdefault(k, []).extend(refs)
    pieces = {
        k: list(v)
        for k, v in before.pieces.items()
        if v and k.text() not in ended and k.text() not in undone
    }
    pieces.update((k, list(v)) for k, v in after.pieces.items() if v)
    return C.MinerState(live, pieces)
