"""The Extract's log miner: one byte range of redo to events for the driver, in a Spark task.

It reads Oracle's redo format (the embedded database writes it) through the window scan
:mod:`engine.redo.scan` and applies seed 002's rules exactly as
:class:`engine.extract.tasks.decode.Decoder` does (that class is the readable statement of
them, and a test holds the two to the same trail). The C walk (:mod:`engine._native.redomine`)
reads an LWN's records in place, without building a dataclass per change vector; a record
it leaves goes through :meth:`Miner.record`, which reads the vectors it needs into the redo
model (:func:`engine.redo.payloads.decode_vector`). Opcodes capture ignores (index redo 10.x,
block cleanouts 4.1, markers) are stepped over; column values go to trail text through
:mod:`engine.extract.tasks.values`. A captured row is encoded here, as a trail record template
(:func:`engine.trail.codec.row_record` with its defaults: the driver finishes it). A record's
time is its LWN's; a commit's SCN is its LWN's (docs/redo_format.md, part 3).

Output (:class:`~engine.extract.tasks.plan.Mined`, the types in :mod:`engine.extract.tasks.plan`),
in log order:

- *events*: plain tuples (:data:`~engine.extract.tasks.plan.EVENT_FIELDS`), one per logical
  change, for the changes the driver must see one by one (transactions open across the
  range's ends);
- *closed* transactions: a transaction that begins (5.2) and ends (5.4) inside the range
  is assembled here whole: its trail records, finished (TransInd, commit time, LOGCSN,
  TRANID) and concatenated, travel as one :class:`~engine.extract.tasks.plan.Closed` placed
  where it commits (:mod:`engine.extract.tasks.closing`). The
  driver only decides whether to write it (recovery, EXCLUDEUSER, SKIPTRANS) and appends
  the bytes. ``compact=False`` turns this off (the driver then sees every change; used
  when a Bounded Recovery checkpoint falls inside the batch).

Transactions with a row of a *hooked* table never close here: their rows carry columns
(no template) so that the driver's per-record hook can rewrite or drop them. So do those
with an update whose key columns the redo does not carry (seed 002's dumps: no supplemental
key in the undo): the driver fetches the key from the source by ROWID
(:mod:`engine.extract.keyfetch`, FETCHOPTIONS).
"""

from __future__ import annotations

import struct
from operator import itemgetter
from typing import Any, Final

from engine._native import load as load_native
from engine.changes import Kind
from engine.embedded.errors import RedoCorruptError
from engine.extract.tasks import rowpieces
from engine.extract.tasks.chain import Chains, Raw
from engine.extract.tasks.closing import close
from engine.extract.tasks.decode import (
    BEFORES_COMPACT,
    BEFORES_FULL,
    BEFORES_NONE,
    BEFORES_RECORD,
    FULL_DELETES,
)
from engine.extract.tasks.plan import Event, Mined, MinePlan, TableInfo
from engine.extract.tasks.values import NUMBER_TYPES, Convert, converter, entry_converter
from engine.redo import framing
from engine.redo import vectors as V
from engine.redo.codecs import CODECS, decode_text
from engine.redo.errors import RedoError, RedoUnsupportedError
from engine.redo.ids import RowId, Uba
from engine.redo.layout import VECTOR_HEADERS
from engine.redo.model import (
    Commit,
    Ddl,
    DirectLoad,
    Kdo,
    SessionInfo,
    SlotAlloc,
    Undo,
    UndoApplied,
)
from engine.redo.payloads import decode_vector
from engine.redo.pieces import record_whole
from engine.redo.scan import Scan
from engine.redo.vectors import UNDECODED_ROW_OPS, UNDO_CLS_FIRST
from engine.trail.errors import RecordLimitError
from engine.trail.layout import BEFORE_IMAGE, IOType
from engine.trail.model import Columns

_EMPTY: dict[int, bytes | None] = {}
_UNDO_CLASS_BASE: Final = UNDO_CLS_FIRST  # undo header class of segment usn = 15 + 2 * usn
#: Opcodes whose change vectors the miner reads (the rest, index redo 10.x among them, are
#: stepped over without decoding their fields).
_READ: Final = frozenset({(5, 1), (5, 2), (5, 4), (5, 6), (5, 11), (5, 20), (19, 1), (24, 1)})
_KDO_CODES: Final = frozenset({2, 3, 4, 5, 11, 12})  # 4 (LKR): a chained row's update's piece
_INSERT, _DELETE = int(IOType.INSERT), int(IOType.DELETE)
_FIELDCOMP, _KEYFIELDCOMP = int(IOType.FIELDCOMP), int(IOType.KEYFIELDCOMP)
_BEFORE_FIELDCOMP, _UNIFIED = _FIELDCOMP | BEFORE_IMAGE, int(IOType.UNIFIED_UPDATE)
_UNIFIED_PK = int(IOType.UNIFIED_PK_UPDATE)
_TRUNCATES: Final = 32  # the C walk's table flag beside decode.BEFORES_* and FULL_DELETES
#: Column entries and table name that surely fit a record with every token (64 KiB).
_ROOM: Final = 65_535 - 200
Parts = tuple[bytes, bytes, bytes, bytes | None]  # table name, data, key before image, ROWID

_ROW, _BEGIN, _COMMIT_K = int(Kind.ROW), int(Kind.BEGIN), int(Kind.COMMIT)
_ROLLBACK, _SESSION_K, _UNDO_K, _DDL = (
    int(Kind.ROLLBACK),
    int(Kind.SESSION),
    int(Kind.UNDO),
    int(Kind.DDL),
)


#: The C record walk, when built (``GGSCI_NATIVE=0``: this module's Python only).
_NATIVE: Final = load_native("redomine")
_TIME: Final = itemgetter(7)  # an event's time_us


def _value_kind(type_name: str) -> int:
    """How the C walk converts a column's values: 0 NUMBER, 1 character data (the bytes
    are the text), 2 through the column's Python entry converter."""
    if type_name in NUMBER_TYPES:
        return 0
    codec = CODECS.get(type_name)
    return 1 if codec is not None and codec[1] is decode_text else 2


class _Columns:
    """Per-table column converters, to text and to trail entries (one set per task).

    A row image is either *full* (an insert: every column of the table, absent ones NULL)
    or *keyed* (the columns present, in column order, those past the table's end left
    out), as :class:`Decoder` builds them."""

    def __init__(self, info: TableInfo) -> None:
        self.info = info
        self.convert: tuple[Convert, ...] = tuple(converter(t) for t in info.types)
        self.entry = tuple(entry_converter(i, t) for i, t in enumerate(info.types))
        self.n = len(info.types)

    def columns(self, cols: Raw, full: bool) -> Columns:
        conv = self.convert
        if full:
            get = cols.get
            return tuple((i, c(get(i))) for i, c in enumerate(conv))
        n = self.n
        return tuple((i, conv[i](cols[i])) for i in sorted(cols) if i < n)

    def entries(self, cols: Raw, full: bool) -> bytes:
        entry = self.entry
        if full:
            get = cols.get
            return b"".join([e(get(i)) for i, e in enumerate(entry)])
        n = self.n
        return b"".join([entry[i](cols[i]) for i in sorted(cols) if i < n])


class Miner:
    """Decodes records into events; keeps per-table helpers across records."""

    def __init__(self, plan: MinePlan) -> None:
        self.plan = plan
        self.tables = plan.tables
        self._cols: dict[str, _Columns] = {}
        self._rowid_head: dict[tuple[int, int], str] = {}
        self._xids: dict[tuple[int, int, int], str] = {}
        self._slots: dict[int, str] = {}
        self._walker = self._native_walker()
        #: the pieces of chained rows pending in the range (engine/extract/tasks/chain.py)
        self.chains = Chains()

    def helper(self, info: TableInfo) -> _Columns:
        h = self._cols.get(info.qualified)
        if h is None:
            h = self._cols[info.qualified] = _Columns(info)
        return h

    def rowid(self, dataobj: int, dba: int, slot: int) -> str:
        head = self._rowid_head.get((dataobj, dba))
        if head is None:
            head = self._rowid_head[(dataobj, dba)] = str(RowId.from_dba(dataobj, dba, 0))[:15]
        tail = self._slots.get(slot)
        if tail is None:
            tail = self._slots[slot] = str(RowId(0, 0, 0, slot))[15:]
        return head + tail

    # -- one range ------------------------------------------------------------------
    def mine(self, path: str, start: int, end: int | None) -> Mined:
        out, n, resume, sequence = self.walk(path, start, end)
        first = out[0][7] if out else 0
        latest = max(map(_TIME, out)) if out else 0
        items = close(out, self.plan, sequence)
        return Mined(items, resume, n, sequence, first, latest)

    def walk(
        self, path: str, start: int, end: int | None, limit: int | None = None
    ) -> tuple[list[Event], int, int | None, int]:
        """The events of a range, before :func:`close`: (events, records read, offset
        past the last, log sequence). ``limit``: the recorded end of a current log."""
        out: list[Event] = []
        scan = Scan(path, start, end, limit)
        record = self.record
        n = 0
        walker = self._walker
        micros = scan.micros

        def each(
            offset: int, stop: int, buf: bytes, lo: int, size: int, lwn_scn: int, lwn_time: int
        ) -> None:
            try:
                record(buf, lo, size, scan, offset, stop, lwn_scn, lwn_time, out)
            except RedoCorruptError:
                raise
            except (struct.error, IndexError, ValueError) as exc:  # a value's bytes among them
                raise RedoCorruptError(f"{path}: record at {offset} corrupt: {exc}") from exc

        def step(
            buf: bytes, pos: int, hi: int, base: int, first_block: int, bs: int, start: int,
            end: int, lwn_scn: int, lwn_time: int,
        ) -> tuple[int, int, int, int]:  # fmt: skip
            h = scan.header
            assert h is not None
            hs = VECTOR_HEADERS[h.layout].size
            got: tuple[int, int, int, int] = walker.walk(
                buf, pos, hi, base, first_block, bs, start, end, lwn_scn, micros(lwn_time),
                h.thread, hs, h.order == ">", out,
            )  # fmt: skip
            return got

        try:
            if walker is not None:
                n = scan.walk(step, each)
            else:
                for item in scan:
                    each(*item)
                    n += 1
        except RedoError as exc:
            raise RedoCorruptError(str(exc)) from exc
        resume = scan.resume
        chains = self.chains
        if chains.pending():
            if end is not None:
                at = resume if resume is not None else end
                got, resume = chains.read_on(path, at, limit, out, self.record)
                n += got
            if chains.pending():  # the log ends first (a current log)
                resume = chains.cut(out)
        return out, n, resume, scan.sequence

    def _native_walker(self) -> Any:
        """The C record walk (:mod:`engine._native.redomine`) set up for this plan's
        tables, or None when the kernel is not there."""
        if _NATIVE is None:
            return None
        spec = {
            obj: (
                info.qualified,
                info.name,
                info.dataobj,
                bytes(_value_kind(t) for t in info.types),
                info.key,
                info.captured,
                info.hooked,
                self.helper(info).entry,
                info.befores
                | (FULL_DELETES if info.full_deletes else 0)
                | (_TRUNCATES if info.truncates else 0),
                *(() if info.con_id is None else (info.con_id,)),
            )
            for obj, info in self.tables.items()
        }
        kinds = (_ROW, _BEGIN, _COMMIT_K, _ROLLBACK, _SESSION_K, _UNDO_K, _DDL)
        io = (_INSERT, _DELETE, _FIELDCOMP, _KEYFIELDCOMP, _BEFORE_FIELDCOMP, _UNIFIED, _UNIFIED_PK,
              int(IOType.PURGEDATA))  # fmt: skip
        return _NATIVE.Walker(spec, kinds, io)

    # -- one record -----------------------------------------------------------------
    def record(
        self,
        buf: bytes,
        lo: int,
        size: int,
        scan: Scan,
        offset: int,
        stop: int,
        lwn_scn: int,
        lwn_time: int,
        out: list[Event],
    ) -> None:
        """The events of the Oracle record at ``buf[lo:lo + size]`` (:mod:`engine.redo.scan`
        found it): its change vectors read into the redo model
        (:func:`engine.redo.payloads.decode_vector`) where the miner needs them, and the
        rules of :class:`~engine.extract.tasks.decode.Decoder` applied to them. A commit's
        or rollback's SCN is its LWN's (``lwn_scn``)."""
        header = scan.header
        assert header is not None
        try:
            rec = framing.parse_record(bytes(buf[lo : lo + size]), header.order, header.layout)
        except RedoError as exc:
            raise RedoCorruptError(
                f"{scan.path}: record at {offset} corrupt: {exc.message}"
            ) from exc
        seq = header.sequence
        micros = scan.micros(lwn_time)
        head = (header.thread, offset, stop, rec.scn, rec.subscn, micros)
        xid: str | None = None
        undo: Undo | None = None
        undo_v: framing.Vector | None = None  # the 5.1 the next level-11 redo is bound to
        undo_err: RedoCorruptError | None = None  # that 5.1 not read by the redo model
        session: SessionInfo | None = None
        for v in rec.vectors:
            layer, code = v.layer, v.code
            if layer == 11:
                if code in rowpieces.PIECE_CODES and self._in_pieces(v, undo_v, undo, xid):
                    xid = self._piece(v, undo_v, undo, rec, xid, head, seq, out)
                    undo_v = None
                    continue
                if undo_err is not None:
                    raise undo_err
                if code not in _KDO_CODES:
                    if v.op in UNDECODED_ROW_OPS:  # rows changed that cannot be read
                        self._undecoded(v.op, v.obj, scan.path, offset, rec.scn)
                    continue
            elif (layer, code) not in _READ:
                continue  # index redo, cleanouts, markers: capture does not need them
            try:
                body = decode_vector(v).body
            except RedoError as exc:
                err = RedoCorruptError(
                    f"{scan.path}: record at {offset}, change {v.op}: {exc.message}"
                )
                if (layer, code) != (5, 1):
                    raise err from exc
                # a 5.1 in a form of Oracle's the redo model does not read (a 28-byte
                # supplemental header...): its redo may be a piece, which vectors.py reads
                undo, undo_v, undo_err = None, v, err
                u = V.decode(v)
                if isinstance(u, V.Undo) and u.xid is not None:
                    xid = self._xid(u.xid.usn, u.xid.slt, u.xid.sqn)
                continue
            if isinstance(body, Undo):
                undo, undo_v, undo_err = body, v, None
                xid = self._xid(body.xid.usn, body.xid.slot, body.xid.sqn)
            elif isinstance(body, Kdo):
                kx = body.ktb.xid
                if body.ktb.kind == "F" and not kx.is_null:
                    xid = self._xid(kx.usn, kx.slot, kx.sqn)
                elif xid is None:
                    continue
                self._rows(v.obj, v.seq, body, undo, xid, head, seq, out)
            elif isinstance(body, SlotAlloc):
                xid = self._xid((v.cls - _UNDO_CLASS_BASE) // 2, body.slt, body.sqn)
                out.append((_BEGIN, xid, *head, 0, "", None, (), (), "", "", "", "", b""))
            elif isinstance(body, Commit):
                cx = self._xid((v.cls - _UNDO_CLASS_BASE) // 2, body.slt, body.sqn)
                kind_c = _ROLLBACK if body.rollback else _COMMIT_K
                at = (*head[:3], lwn_scn, *head[4:])
                out.append((kind_c, cx, *at, 0, "", None, (), (), "", "", "", "", b""))
            elif isinstance(body, UndoApplied):
                ux = self._xid(body.xid.usn, body.xid.slot, body.xid.sqn)
                out.append((_UNDO_K, ux, *head, 0, "", None, (), (), _ref(body.uba), "", "",
                            "", b""))  # fmt: skip
            elif isinstance(body, SessionInfo):
                session = body
            elif isinstance(body, DirectLoad):
                xid = self._xid(body.xid.usn, body.xid.slot, body.xid.sqn)
                self._direct(body, v.dba or body.bdba, xid, head, seq, out)
            elif isinstance(body, Ddl):
                xid = self._xid(body.xid.usn, body.xid.slot, body.xid.sqn)
                out.append(self._ddl(xid, body.obj, body.owner, body.name, body.text, head, seq))
        if xid is not None and session is not None:
            out.append((_SESSION_K, xid, *head, 0, "", None, (), (), "", session.username,
                        session.txn_name, "", b""))  # fmt: skip

    # -- rows -----------------------------------------------------------------------
    def _undecoded(self, op: str, obj: int, path: object, offset: int, scn: int) -> None:
        """A level-11 vector that changes rows this reader does not decode: of a captured
        table it stops the Extract rather than lose them (docs/redo_format.md)."""
        info = self.tables.get(obj)
        if info is not None and info.captured:
            raise RedoUnsupportedError(
                f"{path}: record at {offset}: {info.qualified}: {UNDECODED_ROW_OPS[op]} ({op}) "
                f"at SCN {scn}: not supported"
            )

    def _xid(self, usn: int, slot: int, sqn: int) -> str:
        """The text of a transaction id, remembered."""
        key = (usn, slot, sqn)
        text = self._xids.get(key)
        if text is None:
            if len(self._xids) >= 65_536:
                self._xids.clear()
            text = self._xids[key] = f"{usn}.{slot}.{sqn}"
        return text

    def _rows(
        self,
        obj: int,
        cseq: int,
        kdo: Kdo,
        undo: Undo | None,
        xid: str,
        head: tuple[int, int, int, int, int, int],
        seq: int,
        out: list[Event],
    ) -> None:
        """The row events of a KDO redo (11.x) of object ``obj`` (its vector header's),
        bound to the undo before it in the record."""
        tables = self.tables
        info = tables.get(undo.objn if undo is not None else obj) or tables.get(obj)
        if info is None or not info.captured:
            return
        ref = _ref(kdo.ktb.uba) if kdo.ktb.uba.dba else f"{head[1]}:{cseq}"
        bdba, slot, op = kdo.bdba, kdo.slot, kdo.name
        after: Raw = {c.no: c.data for c in kdo.columns}
        cols = self.helper(info)
        rowid = self.rowid
        dataobj = info.dataobj
        emit = self._emit
        if op == "IRP":
            emit(out, cols, xid, _INSERT, rowid(dataobj, bdba, slot), after, True, None, ref,
                 head, seq)  # fmt: skip
            return
        if op == "QMI":
            for r in kdo.rows:
                rcols = {c.no: c.data for c in r.columns}
                emit(out, cols, xid, _INSERT, rowid(dataobj, bdba, r.slot), rcols, True, None,
                     ref, head, seq)  # fmt: skip
            return
        key = info.key
        full = info.full_deletes  # NOCOMPRESSDELETES: the whole row, as an insert's
        if op == "DRP":
            self._deleted(out, cols, xid, rowid(dataobj, bdba, slot), _undo_row(undo), ref,
                          head, seq)  # fmt: skip
            return
        if op == "QMD":
            urows = list(undo.kdo.rows) if undo is not None and undo.kdo is not None else []
            for i, s in enumerate(kdo.slots):
                before = {c.no: c.data for c in urows[i].columns} if i < len(urows) else _EMPTY
                bkey = dict(before) if full else {k: before[k] for k in key if k in before}
                emit(out, cols, xid, _DELETE, rowid(dataobj, bdba, s), bkey, full, None, ref,
                     head, seq)  # fmt: skip
            return
        if op == "URP":
            rid = rowid(dataobj, bdba, slot)
            self._updated(out, cols, xid, rid, _undo_row(undo), after, ref, head, seq)

    def _in_pieces(
        self, v: framing.Vector, undo_v: framing.Vector | None, undo: Undo | None, xid: str | None
    ) -> bool:
        """Whether level-11 ``v`` of a captured table is a piece of a row change in pieces
        (:mod:`rowpieces`): an operation only ever a piece (LKR, ORP, CFA, LMN), a record
        whose flags do not say both ends (:func:`engine.redo.pieces.record_whole`), or any
        while its transaction has a change open."""
        tables = self.tables
        info = (tables.get(undo.objn) if undo is not None else None) or tables.get(v.obj)
        if info is None or not info.captured:
            return False
        if v.code in rowpieces.ONLY_PIECES or (xid is not None and xid in self.chains.changes):
            return True
        return not record_whole(v, undo_v)

    def _piece(
        self,
        v: framing.Vector,
        undo_v: framing.Vector | None,
        undo: Undo | None,
        rec: framing.Record,
        xid: str | None,
        head: tuple[int, int, int, int, int, int],
        seq: int,
        out: list[Event],
    ) -> str | None:
        """A piece of a row change in pieces, bound by the redo miner's rules
        (:meth:`Chains.piece`); at its last, the change's events. Returns the record's
        transaction."""
        tables = self.tables
        info = (tables.get(undo.objn) if undo is not None else None) or tables.get(v.obj)
        assert info is not None
        got = rowpieces.piece(v, undo_v, rec, head[1], head)
        if got is None:
            raise RedoUnsupportedError(
                f"record at {head[1]}: {info.qualified}: a compressed row ({v.op}) at SCN "
                f"{rec.scn}: compressed segments are not supported"
            )
        p, x = got
        if x is not None:
            xid = self._xid(x.usn, x.slt, x.sqn)
        if xid is None:
            return None
        b = self.chains.piece(xid, p)
        if b is None:
            return xid
        cols = self.helper(info)
        first = b.first
        rid = b.rowid
        if b.op == "INSERT":
            self._emit(out, cols, xid, _INSERT, rid, b.after, True, None, first.ref, first.head,
                       seq)  # fmt: skip
        elif b.op == "DELETE":
            self._deleted(out, cols, xid, rid, b.before, first.ref, first.head, seq)
        else:
            self._updated(out, cols, xid, rid, b.before, b.after, first.ref, first.head, seq)
        return xid

    def _deleted(
        self,
        out: list[Event],
        cols: _Columns,
        xid: str,
        rid: str,
        before: Raw,
        ref: str,
        head: tuple[int, int, int, int, int, int],
        seq: int,
    ) -> None:
        """The event of a row deleted, ``before`` its undo's columns (and supplemental)."""
        info = cols.info
        full = info.full_deletes  # NOCOMPRESSDELETES: the whole row, as an insert's
        bkey = before if full else {i: before[i] for i in info.key if i in before}
        self._emit(out, cols, xid, _DELETE, rid, bkey, full, None, ref, head, seq)

    def _updated(
        self,
        out: list[Event],
        cols: _Columns,
        xid: str,
        rid: str,
        before: Raw,
        after: Raw,
        ref: str,
        head: tuple[int, int, int, int, int, int],
        seq: int,
    ) -> None:
        """The events of a row updated: ``before`` its undo's columns (and supplemental),
        ``after`` the columns set."""
        info = cols.info
        key = info.key
        emit = self._emit
        key_changed = any(
            i in after and before.get(i, after[i]) != after[i] for i in key if i in before
        )
        merged: Raw = {i: before[i] for i in key if i in before}
        merged.update(after)
        mode = info.befores
        if any(i not in merged for i in key):  # no key in the redo: the driver fetches it
            emit(out, cols, xid, _FIELDCOMP, rid, merged, False, None, ref, head, seq, True)
        elif key_changed:  # decode.Decoder._update says which images go where
            bkey = before if mode else {i: before[i] for i in key if i in before}
            io = _UNIFIED_PK if mode in (BEFORES_FULL, BEFORES_COMPACT) else _KEYFIELDCOMP
            emit(out, cols, xid, io, rid, merged, False, bkey, ref, head, seq)
        elif mode == BEFORES_NONE:
            emit(out, cols, xid, _FIELDCOMP, rid, merged, False, None, ref, head, seq)
        elif mode == BEFORES_RECORD:
            emit(out, cols, xid, _BEFORE_FIELDCOMP, rid, before, False, None, ref, head, seq)
            emit(out, cols, xid, _FIELDCOMP, rid, merged, False, None, ref, head, seq)
        else:
            image = merged if mode == BEFORES_FULL else after
            emit(out, cols, xid, _UNIFIED, rid, image, False, before, ref, head, seq)

    def _emit(
        self,
        out: list[Event],
        cols: _Columns,
        xid: str,
        io_type: int,
        rowid: str,
        image: Raw,
        full: bool,
        before: Raw | None,
        ref: str,
        head: tuple[int, int, int, int, int, int],
        seq: int,
        keyless: bool = False,
    ) -> None:
        """One row event: with the parts of its trail record (:data:`Parts`, made into a
        record by :func:`close`), or (a hooked table, a record too large, an update whose
        key the redo lacks: ``keyless``, fetched on the driver by
        :mod:`engine.extract.keyfetch`) with its columns as text for the driver to handle."""
        info = cols.info
        parts: Parts | None = None
        if not info.hooked and not keyless:
            try:
                data = cols.entries(image, full)
                bkey = cols.entries(before, False) if before else b""
                if len(data) + len(bkey) + len(info.name) <= _ROOM:
                    parts = (info.name, data, bkey, rowid.encode("ascii"))
            except RecordLimitError:
                pass  # the driver encodes it from the columns, and says what is wrong
        if parts is not None:
            columns: Columns = ()
            bcols: Columns = ()
        else:
            columns = cols.columns(image, full)
            bcols = cols.columns(before, False) if before else ()
        out.append(
            (_ROW, xid, *head, io_type, info.qualified, rowid, columns, bcols, ref, "", "", "",
             parts or b"")
        )  # fmt: skip

    def _direct(
        self,
        dl: DirectLoad,
        block_dba: int,
        xid: str,
        head: tuple[int, int, int, int, int, int],
        seq: int,
        out: list[Event],
    ) -> None:
        """19.1: the change header's DBA is the formatted block; ``bdba`` the range header."""
        info = self.tables.get(dl.seg_obj)
        if info is None or not info.captured:
            return
        cols = self.helper(info)
        ref = f"dl:{head[1]}"
        for r in dl.rows:
            rcols = {c.no: c.data for c in r.columns}
            self._emit(out, cols, xid, _INSERT, self.rowid(info.dataobj, block_dba, r.slot),
                       rcols, True, None, ref, head, seq)  # fmt: skip

    def _ddl(
        self,
        xid: str,
        obj: int,
        owner: str,
        name: str,
        text: str,
        head: tuple[int, int, int, int, int, int],
        seq: int,
    ) -> Event:
        info = self.tables.get(obj)
        words = text.split()
        truncate = len(words) >= 2 and words[0].upper() == "TRUNCATE"
        if truncate and info is not None and info.truncates:
            parts = b"" if info.hooked else (info.name, b"", b"", None)
            return (_ROW, xid, *head, int(IOType.PURGEDATA), info.qualified, None, (), (),
                    f"ddl:{head[1]}", "", "", "", parts)  # fmt: skip
        return (_DDL, xid, *head, 0, f"{owner}.{name}", None, (), (), "", "", "", text, b"")


# -- the model's parts the rows need ---------------------------------------------------------
def _ref(uba: Uba) -> str:
    """A change's reference: its undo address (as decode.uba_key writes it)."""
    return f"{uba.dba:x}.{uba.seq:x}.{uba.rec:x}"


def _undo_row(undo: Undo | None) -> dict[int, bytes | None]:
    """The before image an undo record carries: its row columns, then the supplemental
    key columns (which win: they are the row's identity)."""
    before: dict[int, bytes | None] = {}
    if undo is None:
        return before
    if undo.kdo is not None:
        before.update({c.no: c.data for c in undo.kdo.columns})
    before.update({c.no: c.data for c in undo.supplemental})
    return before
