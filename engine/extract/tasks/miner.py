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

Output (:class:`Mined`), in log order:

- *events*: plain tuples (:data:`EVENT_FIELDS`), one per logical change, for the changes
  the driver must see one by one (transactions open across the range's ends);
- *closed* transactions: a transaction that begins (5.2) and ends (5.4) inside the range
  is assembled here whole: its trail records, finished (TransInd, commit time, LOGCSN,
  TRANID) and concatenated, travel as one :class:`Closed` placed where it commits. The
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

import contextlib
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Final

from engine._native import load as load_native
from engine.changes import Fragment, Kind, Position
from engine.embedded.dictionary import Dictionary
from engine.embedded.errors import RedoCorruptError
from engine.expr.rowrule import Process, RowRule
from engine.extract.tasks import rowpieces
from engine.extract.tasks.assemble import trans_ind
from engine.extract.tasks.decode import (
    BEFORES_COMPACT,
    BEFORES_FULL,
    BEFORES_NONE,
    BEFORES_RECORD,
    FULL_DELETES,
    Selection,
)
from engine.extract.tasks.rowselect import Cond, select_rows
from engine.extract.tasks.tablerules import (
    fragment_tables,
    one_call,
    rows_in_task,
    select_fragment,
    with_columns,
)
from engine.extract.tasks.txngroup import CLOSED, FRAGMENT, Step, group, table_ops
from engine.extract.tasks.values import NUMBER_TYPES, Convert, converter, entry_converter
from engine.redo import framing
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
from engine.redo.pieces import join
from engine.redo.rowid import FB_F, FB_L, fb_value
from engine.redo.scan import Scan
from engine.redo.vectors import UNDECODED_ROW_OPS, UNDO_CLS_FIRST
from engine.trail.codec import commit_tokens, row_record
from engine.trail.errors import RecordLimitError
from engine.trail.layout import BEFORE_IMAGE, IO_TYPE_NAMES, IOType, TransInd
from engine.trail.model import Columns
from engine.trail.writer import seal

_EMPTY: dict[int, bytes | None] = {}
_UNDO_CLASS_BASE: Final = UNDO_CLS_FIRST  # undo header class of segment usn = 15 + 2 * usn
#: Opcodes whose change vectors the miner reads (the rest, index redo 10.x among them, are
#: stepped over without decoding their fields).
_READ: Final = frozenset({(5, 1), (5, 2), (5, 4), (5, 6), (5, 11), (5, 20), (19, 1), (24, 1)})
_KDO_CODES: Final = frozenset({2, 3, 4, 5, 11, 12})  # 4 (LKR): a chained row's update's piece
_WHOLE_ROW: Final = FB_F | FB_L  # a row piece that is the whole row
_INSERT, _DELETE = int(IOType.INSERT), int(IOType.DELETE)
_FIELDCOMP, _KEYFIELDCOMP = int(IOType.FIELDCOMP), int(IOType.KEYFIELDCOMP)
_BEFORE_FIELDCOMP, _UNIFIED = _FIELDCOMP | BEFORE_IMAGE, int(IOType.UNIFIED_UPDATE)
_UNIFIED_PK = int(IOType.UNIFIED_PK_UPDATE)
_TRUNCATES: Final = 32  # the C walk's table flag beside decode.BEFORES_* and FULL_DELETES
_BEGIN_IND, _MIDDLE, _END, _WHOLE = (int(t) for t in TransInd)
#: Column entries and table name that surely fit a record with every token (64 KiB).
_ROOM: Final = 65_535 - 200
Parts = tuple[bytes, bytes, bytes, bytes | None]  # table name, data, key before image, ROWID

#: An event: the fields of an :class:`~engine.changes.Lcr`, its position flattened.
EVENT_FIELDS: Final = (
    "kind", "xid", "thread", "offset", "end", "scn", "subscn", "time_us", "io_type", "table",
    "rowid", "columns", "before_columns", "ref", "user", "txn_name", "text", "record",
)  # fmt: skip
Event = tuple[Any, ...]
_ROW, _BEGIN, _COMMIT_K = int(Kind.ROW), int(Kind.BEGIN), int(Kind.COMMIT)
_ROLLBACK, _SESSION_K, _UNDO_K, _DDL = (
    int(Kind.ROLLBACK),
    int(Kind.SESSION),
    int(Kind.UNDO),
    int(Kind.DDL),
)


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What the miner needs of one table, resolved on the driver."""

    qualified: str
    name: bytes
    dataobj: int
    types: tuple[str, ...]
    key: tuple[int, ...]
    captured: bool
    truncates: bool
    hooked: bool
    befores: int = BEFORES_NONE  # decode.BEFORES_*: GETUPDATEBEFORES, UPDATERECORDFORMAT
    full_deletes: bool = False  # NOCOMPRESSDELETES: a delete carries the whole before image
    # an attached database's table: its container (the C walk then skips another
    # container's object of this number, and walks strictly: engine/extract/oracle_source.py)
    con_id: int | None = None


@dataclass(frozen=True)
class MinePlan:
    """Built on the driver once per batch and broadcast to the tasks."""

    tables: dict[int, TableInfo]  # by object number and data object number
    compact: bool = True
    fine_xids: frozenset[str] = frozenset()  # never closed in a task (BR-restored ones)
    # only a transaction that ends at or below this SCN is closed in a task (None: any); one
    # ending above may be held for a later batch by the driver's thread merge (capture.py)
    horizon: int | None = None
    # TABLE row options by table (engine.extract.tasks.tablerules): applied where a transaction
    # is closed in the task, and in its fragments for tablerules.fragment_tables; other
    # rows of these tables reach the driver with columns
    rules: Mapping[str, RowRule] = field(default_factory=dict)
    process: Process | None = None
    # a closed transaction's records are sealed here (the trail's CHECKSUM, as the writer
    # seals them): a cost per byte taken off the driver, which the tasks share
    seal: bool = False


def mine_plan(
    dictionary: Dictionary,
    selection: Selection,
    *,
    hooked: frozenset[str] = frozenset(),
    keys: Mapping[str, tuple[int, ...]] | None = None,
    rules: Mapping[str, RowRule] | None = None,
    process: Process | None = None,
    compact: bool = True,
    fine_xids: frozenset[str] = frozenset(),
    seal: bool = False,
) -> MinePlan:
    """``keys``: the key of tables whose TABLE gives KEYCOLS (column indices); ``seal``:
    closed transactions' records sealed by the miner (:attr:`MinePlan.seal`)."""
    tables: dict[int, TableInfo] = {}
    for t in dictionary.tables.values():
        ident = (t.owner.upper(), t.name.upper())
        info = TableInfo(
            t.qualified,
            t.qualified.encode("utf-8"),
            t.dataobj,
            tuple(c.type for c in t.columns),
            (keys or {}).get(t.qualified) or tuple(t.column_index(k) for k in t.key_columns),
            selection.captured(t),
            ident in selection.truncates,
            t.qualified in hooked,
            selection.befores_of(t),
            selection.deletes_full(t),
        )
        tables[t.obj] = info
        tables[t.dataobj] = info
    return MinePlan(tables, compact, fine_xids, rules=dict(rules or {}), process=process, seal=seal)


@dataclass(frozen=True, slots=True)
class Closed:
    """A transaction that began and ended inside the range, assembled, at its 5.4."""

    xid: str
    thread: int
    sequence: int
    offset: int  # of the commit (or rollback) record
    end: int
    scn: int
    subscn: int
    time_us: int
    rollback: bool
    sessions: tuple[tuple[str, str], ...]  # (user, transaction name) of its 5.20s
    records: bytes  # the finished trail records, concatenated
    count: int
    by_op: tuple[tuple[str, int], ...]
    tables: tuple[str, ...]  # tables of its records, in order of first appearance
    lcrs: int  # the logical changes it stands for
    max_time_us: int
    max_scn: int
    table_ops: tuple[tuple[str, str, int], ...] = ()  # (table, io-type name, count): STATS
    sealed: bool = False  # records carry their checksum tokens (MinePlan.seal)


@dataclass(slots=True)
class Mined:
    """The output of one range: ``items`` are events and :class:`Closed`, in log order."""

    items: list[Event | Closed | Fragment] = field(default_factory=list)
    resume: int | None = None
    records: int = 0
    sequence: int = 0
    first_time_us: int = 0  # redo time of the first change (0: none)
    max_time_us: int = 0


Raw = dict[int, bytes | None]  # column number -> Oracle bytes (None: NULL)

#: The C record walk, when built (``GGSCI_NATIVE=0``: this module's Python only).
_NATIVE: Final = load_native("redomine")
#: The C assembly of a transaction's trail records, when built.
_KIT: Final = load_native("trailkit")
_INDS: Final = (_BEGIN_IND, _MIDDLE, _END, _WHOLE)
_TIME: Final = itemgetter(7)  # an event's time_us
_WHOLE_INDS: Final = (_WHOLE, _WHOLE, _WHOLE, _WHOLE)  # templates: every record whole


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
        # pieces of a chained row being inserted, by transaction (:meth:`_piece`): (the
        # piece's columns, its ROWID, its flags), the last piece first; and how many pieces
        # of a pending row were read (the read-on past a range's end: :meth:`_read_on`)
        self._pieces: dict[str, list[tuple[Raw, str, int, int]]] = {}
        self._pieces_read = 0
        # pieces of a chained row's update or delete, by transaction (:meth:`_change_piece`)
        self._changes: dict[str, list[rowpieces.Piece]] = {}

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
        if self._pieces or self._changes:
            if end is not None:
                got, resume = self._read_on(path, resume if resume is not None else end, limit, out)
                n += got
            if self._pieces or self._changes:  # the log ends first (a current log)
                resume = self._cut(out)
        return out, n, resume, scan.sequence

    def _read_on(self, path: str, at: int, limit: int | None, out: list[Event]) -> tuple[int, int]:
        """A range that ends inside a chained row's pieces (the last piece read, the head
        not yet: Oracle logs the head last) reads on past its end, record by record, until
        the head binds the row: the row is this range's, the next range drops the pieces it
        starts with (:meth:`_piece`). The database writes a row's pieces one after another:
        a record that is not the next piece of a pending row is corrupt redo (never half a
        row); the log ending first leaves the pieces pending (:meth:`_cut`). Returns
        (records read, offset past the last)."""
        scan = Scan(path, at, None, limit)
        n = 0
        resume = at
        for offset, stop, buf, lo, size, lwn_scn, lwn_time in scan:
            read = self._pieces_read
            got: list[Event] = []
            try:
                self.record(buf, lo, size, scan, offset, stop, lwn_scn, lwn_time, got)
            except (struct.error, IndexError, ValueError) as exc:
                raise RedoCorruptError(f"{path}: record at {offset} corrupt: {exc}") from exc
            if self._pieces_read == read:
                pending = ", ".join(
                    [f"{x} ({p[-1][1]})" for x, p in self._pieces.items()]
                    + [f"{x} ({p[-1].rowid})" for x, p in self._changes.items()]
                )
                raise RedoCorruptError(
                    f"{path}: record at {offset}: not the next piece of the chained row "
                    f"pending in transaction {pending}"
                )
            out += got
            n += 1
            resume = stop
            if not self._pieces and not self._changes:
                break
        return n, resume

    def _cut(self, out: list[Event]) -> int:
        """The range ends where the first pending chained row's first record starts: its
        events from there on are dropped (a later read takes them again, with the row) and
        the pieces forgotten. Returns that offset (the range's resume)."""
        cut = min(
            [p[0][3] for p in self._pieces.values()]
            + [p[0].head[1] for p in self._changes.values()]
        )
        out[:] = [e for e in out if e[3] < cut]
        self._pieces.clear()
        self._changes.clear()
        return cut

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
        session: SessionInfo | None = None
        for v in rec.vectors:
            layer, code = v.layer, v.code
            if layer == 11:
                if code not in _KDO_CODES:
                    if v.op in UNDECODED_ROW_OPS:  # rows changed that cannot be read
                        self._undecoded(v.op, v.obj, scan.path, offset, rec.scn)
                    continue
            elif (layer, code) not in _READ:
                continue  # index redo, cleanouts, markers: capture does not need them
            try:
                body = decode_vector(v).body
            except RedoError as exc:
                raise RedoCorruptError(
                    f"{scan.path}: record at {offset}, change {v.op}: {exc.message}"
                ) from exc
            if isinstance(body, Undo):
                undo = body
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
            fb = fb_value(kdo.fb)
            if fb & _WHOLE_ROW != _WHOLE_ROW:  # a piece of a chained row
                bound = self._piece(xid, after, rowid(dataobj, bdba, slot), fb, head[1])
                if bound is None:
                    return
                emit(out, cols, xid, _INSERT, bound[1], bound[0], True, None, ref, head, seq)
                return
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
        if op in rowpieces.CODES and rowpieces.supp_flags(undo) != rowpieces.WHOLE:
            assert undo is not None  # (supp_flags of no undo is a whole row's)
            got = rowpieces.piece(kdo, undo, rowid(dataobj, bdba, slot), ref, head)
            change = self._change_piece(xid, got)
            if change is None:
                return
            first = change.first
            ref, head, rid = first.ref, first.head, first.rowid
            if change.delete:
                self._deleted(out, cols, xid, rid, change.before, ref, head, seq)
            else:
                self._updated(out, cols, xid, rid, change.before, change.after, ref, head, seq)
            return
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

    def _change_piece(self, xid: str, got: rowpieces.Piece) -> rowpieces.Bound | None:
        """A piece of a chained row's update or delete (:mod:`rowpieces`): held until the
        piece with the supplemental L flag, then the bound change. A piece without F and
        nothing pending belongs to a change whose first piece lies before this range (the
        range before reads on to its end: :meth:`_read_on`), so it is dropped here."""
        pending = self._changes.get(xid)
        if pending is None:
            if not got.flags & FB_F:
                return None
            pending = self._changes[xid] = []
        elif got.flags & FB_F:
            raise RedoCorruptError(
                f"transaction {xid}: a chained row's change starts at {got.rowid} while the "
                f"change of {pending[0].rowid} is pending"
            )
        pending.append(got)
        self._pieces_read += 1
        if not got.flags & FB_L:
            return None
        del self._changes[xid]
        return rowpieces.bind(pending)

    def _piece(
        self, xid: str, after: Raw, rid: str, fb: int, offset: int
    ) -> tuple[Raw, str] | None:
        """A piece of a row inserted in several (Oracle logs the last piece, flag L, first
        and the head, flag F, last; each piece's columns numbered from 0): held until the
        head comes, then the row's columns (the head's first) and the head's ROWID, as
        engine/redo/capture.py binds them. A piece with no L and nothing pending is the
        tail of a row whose last piece lies before this range: the range before reads on to
        its head (:meth:`_read_on`), so it is dropped here. ``offset``: the piece's record."""
        pending = self._pieces.get(xid)
        if pending is None:
            if not fb & FB_L:
                return None
            pending = self._pieces[xid] = []
        elif fb & FB_L:
            raise RedoCorruptError(
                f"transaction {xid}: a chained row's last piece ({rid}) before the head of "
                f"the row pending ({pending[-1][1]})"
            )
        pending.append((after, rid, fb, offset))
        self._pieces_read += 1
        if not fb & FB_F:
            return None
        del self._pieces[xid]
        # the head's columns first; a column cut over two pieces (N, then P) joined
        cols = join(((f, tuple(c.items())) for c, _rid, f, _at in reversed(pending)), laid=True)
        return cols, rid

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


# -- closing transactions inside the range ---------------------------------------------------
Item = Event | Closed | Fragment


def close(events: Iterable[Event], plan: MinePlan, sequence: int) -> list[Item]:
    """Replace the events of every transaction that begins and ends in ``events`` by one
    :class:`Closed` at its end, and the changes of every other transaction whose rows can
    be encoded here by one :class:`~engine.changes.Fragment` at its last change (with
    ``plan.compact``; see the module docstring); the rows left get their record templates
    (:func:`engine.trail.codec.row_record` with its defaults, which the driver finishes).
    Which events go where is :func:`engine.extract.tasks.txngroup.group`'s (in C when built)."""
    rules = plan.rules
    out: list[Item] = []
    listed = events if isinstance(events, list) else list(events)
    # rows of these tables never go in a fragment (their rule needs the driver)
    kept_out = set(rules) - fragment_tables(rules) if rules else rules
    for s in group(listed, plan.compact, plan.fine_xids, kept_out, plan.horizon):
        tag = s[0]
        if tag == CLOSED:
            try:
                out.append(_closed(s, sequence, plan))
            except RecordLimitError:  # the driver finishes them, and says what is wrong
                out.extend(_one_by_one(m, sequence, rules) for m in s[1])
                out.append(s[2])
        elif tag == FRAGMENT:
            out.extend(_fragment(s, sequence, rules))
        else:
            out.append(_one_by_one(s, sequence, rules))
    return out


def _one_by_one(e: Event, sequence: int, rules: Mapping[str, RowRule]) -> Item:
    """An event the driver takes change by change: a row with its record template, or (a
    row of a table with TABLE row options: the driver applies them) with its columns."""
    if e[0] != _ROW or not e[17]:
        return e
    return with_columns(e) if e[9] in rules else _templated(e, sequence)


def _fragment(step: Step, sequence: int, rules: Mapping[str, RowRule]) -> list[Item]:
    """One :class:`Fragment` of a transaction's changes in this range (a
    :data:`~engine.extract.tasks.txngroup.FRAGMENT` step), the rules of its rows' tables applied
    (:func:`~engine.extract.tasks.tablerules.select_fragment`: WHERE and COLS / COLSEXCEPT here,
    the tokens marked for the driver to add at commit), or (a record past a limit, a
    selection that cannot say) the events one by one for the driver."""
    _, events, rows, sessions, refs, undone, ops = step
    marks = b""
    if rules and any(t in rules for t, _, _ in ops):
        selected = select_fragment(rows, rules, table_ops)
        if selected is None:
            return [_one_by_one(e, sequence, rules) for e in events]
        rows, ops, marks = selected
        refs = tuple(r[13] for r in rows)
    try:
        records = _templates(rows, sequence)
    except RecordLimitError:
        return [_one_by_one(e, sequence, rules) for e in events]
    first, end = events[0], events[-1]
    return [
        Fragment(
            first[1], Position(first[2], sequence, first[3]), end[4], end[5], end[6], end[7],
            first[5], first[7], sessions, records, len(rows), refs, undone, ops, len(events),
            marks,
        )
    ]  # fmt: skip


def _templates(rows: list[Event], sequence: int) -> bytes:
    """The record templates of ``rows`` (row_record with its defaults), concatenated: in C
    when the kernel is built; :class:`RecordLimitError` when one passes a limit."""
    if _KIT is not None:
        done = _KIT.records(rows, b"", sequence, 0, _WHOLE_INDS, _DELETE)
        if done is not None:
            return bytes(done)
    out = []
    for r in rows:
        name, data, before, rowid = r[17]
        out.append(row_record(r[8], name, data, before, rowid, sequence, r[3]))
    return b"".join(out)


def _templated(e: Event | Closed, sequence: int) -> Event | Closed:
    if isinstance(e, Closed) or e[0] != _ROW or not e[17]:
        return e
    name, data, before, rowid = e[17]
    return (*e[:17], row_record(e[8], name, data, before, rowid, sequence, e[3]))


def _closed(step: Step, sequence: int, plan: MinePlan) -> Closed:
    """The :class:`Closed` of a :data:`~engine.extract.tasks.txngroup.CLOSED` step: its records
    finished, with the rules of TABLE row options applied to its rows here."""
    _, _, end, rows, _, _, _, ops = step
    kind, xid, scn, time_us = end[0], end[1], end[5], end[7]
    tokens: list[bytes] | None = None
    if kind == _ROLLBACK:
        rows, ops = [], ()
    elif plan.rules and any(t in plan.rules for t, _, _ in ops):
        assert plan.process is not None
        one = one_call(rows, plan.rules, plan.process, xid, scn, time_us, sequence)
        if one is not None:  # usual: selected and assembled in one call
            done_ = _SELECT_RECORDS(rows, *one, commit_tokens(str(scn), xid), sequence,
                                    time_us, _INDS, _DELETE)  # fmt: skip
            if done_ is not None:
                records, count, counts = done_
                if count != len(rows):  # WHERE left some out
                    ops = tuple((one[0], k, v) for k, v in counts)
                return _closed_of(step, sequence, records, count, ops, plan.seal)
        done = rows_in_task(rows, plan.rules, plan.process, xid, scn, time_us, sequence)
        left = len(rows) != len(done)  # WHERE or FILTER left some out: count again
        rows = [r for r, _ in done]
        tokens = [t for _, t in done]
        if left:
            ops = table_ops(rows)
    return _closed_of(
        step,
        sequence,
        _records(rows, scn, xid, sequence, time_us, tokens),
        len(rows),
        ops,
        plan.seal,
    )


def _closed_of(
    step: Step, sequence: int, records: bytes, count: int, ops: Any, sealing: bool = False
) -> Closed:
    """The :class:`Closed` of a step with its finished ``records`` (``count`` of them) and
    their (table, io type, rows); sealed with ``sealing`` (unless a record would pass the
    limit with its checksum: the driver then seals them and says which)."""
    _, events, end, _, sessions, max_time, max_scn, _ = step
    kind, xid, thread, offset, stop, scn, subscn, time_us = end[:8]
    sealed = False
    if sealing and count:
        with contextlib.suppress(RecordLimitError):
            records, sealed = seal(records), True
    by_op: dict[int, int] = {}
    for _, k, v in ops:
        by_op[k] = by_op.get(k, 0) + v
    return Closed(
        xid, thread, sequence, offset, stop, scn, subscn, time_us, kind == _ROLLBACK, sessions,
        records, count,
        tuple((_io_name(k), v) for k, v in by_op.items()),
        tuple(dict.fromkeys(t for t, _, _ in ops)), len(events) + 1, max_time, max_scn,
        tuple((t, _io_name(k), v) for t, k, v in ops), sealed,
    )  # fmt: skip


def _io_name(io: int) -> str:
    return IO_TYPE_NAMES.get(io, f"IOType{io}")


def _records(
    rows: list[Event],
    scn: int,
    xid: str,
    sequence: int,
    time_us: int,
    user: list[bytes] | None = None,
) -> bytes:
    """The trail records of a transaction's rows (their parts made by :meth:`Miner._emit`),
    finished and concatenated: in C (:mod:`engine._native.trailkit`) when it is built and
    no record passes a limit; here otherwise, where ``row_record`` says which."""
    if not rows:
        return b""
    tokens = commit_tokens(str(scn), xid)
    if _KIT is not None:
        done = _KIT.records(rows, tokens, sequence, time_us, _INDS, _DELETE, user)
        if done is not None:
            return bytes(done)
    return _records_py(rows, tokens, sequence, time_us, user)


def _records_py(
    rows: list[Event], tokens: bytes, sequence: int, time_us: int, user: list[bytes] | None
) -> bytes:
    """:func:`_records` in Python (``tokens``: the commit tokens of record 0)."""
    records = []
    n = len(rows)
    for i, r in enumerate(rows):
        name, data, before, rowid = r[17]
        records.append(
            row_record(r[8], name, data, before, rowid, sequence, r[3], trans_ind(i, n), time_us,
                       (tokens if i == 0 else b"") + (user[i] if user else b""))
        )  # fmt: skip
    return b"".join(records)


def select_records_py(
    rows: list[Event],
    table: str,
    keep: bytes | None,
    conds: tuple[Cond, ...],
    make: Callable[[int], bytes] | None,
    tokens: bytes,
    sequence: int,
    time_us: int,
    inds: tuple[int, int, int, int] = _INDS,
    delete_io: int = _DELETE,
) -> tuple[bytes, int, tuple[tuple[int, int], ...]] | None:
    """``trailkit.select_records`` in Python (its twin): :func:`select_rows` then the
    transaction's records (:func:`_records_py`, ``tokens`` on record 0): (records, rows
    kept, (io type, rows) in order of first appearance), or None where select says None,
    a record passes a limit or the rows have more than 16 operations."""
    got = select_rows(rows, table, keep, conds, make)
    if got is None:
        return None
    counts: dict[int, int] = {}
    for e, _ in got:
        counts[e[8]] = counts.get(e[8], 0) + 1
    if len(counts) > 16:
        return None
    try:
        records = _records_py([e for e, _ in got], tokens, sequence, time_us, [t for _, t in got])
    except RecordLimitError:
        return None
    return records, len(got), tuple(counts.items())


#: select_records in C when built
_SELECT_RECORDS: Final[Callable[..., tuple[bytes, int, tuple[tuple[int, int], ...]] | None]] = (
    getattr(_KIT, "select_records", None) or select_records_py
)
