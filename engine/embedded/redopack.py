"""The fast path's row-change kernel: one call per single-row change gives its redo records.

A :class:`Table` method takes one row change (the transaction, its SCN, block and slot, and
the row's values as SQLite holds them) and does all of its per-row work: it encodes the
column values (:func:`stored_number`, :func:`stored_date`, :func:`stored_text`), takes the
undo record addresses (advancing ``ids`` as ``TxnIds.next_rec`` does), chooses each block's
redo KTB (a transaction's first change in a block carries the cleanout of committed
transactions' ITL entries, taken from ``dirty``) and packs the change vectors of each record
in Oracle's format, as :func:`engine.redo.payloads.encode_vector` writes the change vectors
:mod:`engine.embedded.redogen` builds for the generic path (12c vector headers,
little-endian, every field at the offset the :mod:`engine.redo.vectors` tables give). It
returns the records' change vectors, one ``bytes`` a record; the caller hands each to
:meth:`LogWriter.add_vectors`, which frames it (record header, LWN, blocks): no model is
built and nothing is decoded.

The records of a row change (``[5.2] 5.1 + 11.x [5.20]``, then for an insert or a delete in
a table with an index ``5.1 (10.22) + 10.2 | 10.4``) are those the generic path writes for
the same statement; :func:`commit` packs the ``5.4`` that ends a transaction.

This module is the readable statement of that work and the fallback of its compiled twin,
``engine/_native/redopack.c`` (same classes, methods and bytes; :mod:`engine.embedded.bulk`
picks the compiled one when it is built). ``tests/source/test_source_redopack.py`` holds the
two to the same bytes for arbitrary values, and this one to the generic path's vectors; the
workload's golden hashes hold both to the generic path's logs.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, Final, NamedTuple

from engine.embedded import redogen as rg
from engine.embedded import rows as R
from engine.embedded.dictionary import TableDef
from engine.redo import framing as F
from engine.redo import layout as L
from engine.redo import payloads as P
from engine.redo import vectors as V
from engine.redo.codecs import encode_date, encode_number, encode_scaled, encode_text
from engine.redo.ids import make_dba
from engine.redo.model import OBJ_UNDO, ROLLBACK_FLAG
from engine.redo.rowid import fb_value

Stored = Callable[[object], bytes | None]  # a column's Oracle bytes from its SQLite value
Dirty = dict[int, list[tuple[int, int, int]]]  # block -> ITL entries left by commits
Uba3 = tuple[int, int, int]  # undo block address as (dba, seq, rec)

ORDER: Final[L.Order] = "<"  # the embedded database's logs (engine/embedded/logfile.py)
LAYOUT: Final = "12c"
FB: Final = fb_value("--H-FL--")  # a whole row piece: head, first and last
KDO_FLAG: Final = 0x2C  # a URP's flag byte as the generic path writes it (Kdo.flag)
ITL: Final = 2  # the ITL entry of every change (Kdo.itli, IndexOp.itl)
LB_REDO: Final = 2  # an inserted row's lock byte (its ITL)
TSN: Final = 4  # the undo tablespace number (Undo.tsn)
BEGIN_FLG: Final = 0x12  # ktudb / ktudh flags of a transaction's first undo record
FLG: Final = 0x22  # ... and of the others
COMMIT_STA: Final = 9
COMMIT_FLG: Final = 0x2
KEYDATA: Final = struct.Struct(">IH")  # an index entry's ROWID: block address, slot
OP_F, OP_C, OP_Z = 0x01, 0x02, 0x03  # KTB ops: first change in a block, later, undo's
INDEX_INSERT, INDEX_DELETE, INDEX_PURGE, INDEX_RESTORE = (
    next(c for c, t in V.INDEX_ACTIONS.items() if t == text)
    for text in (
        "insert leaf row",
        "delete leaf row",
        "purge leaf row",
        "restore leaf row (clear leaf delete flags)",
    )
)
KDO_IRP, KDO_DRP, KDO_URP, KDO_ORP, KDO_QMI, KDO_QMD = (
    next(c for c, n in V.KDO_OPS.items() if n == name)
    for name in ("IRP", "DRP", "URP", "ORP", "QMI", "QMD")
)
MAX_FIELD: Final = 0xFFFF  # a field's length is a u16 of the vector's length array


# ---------------------------------------------------------------------------- values


def stored_number(value: object) -> bytes | None:
    """Oracle bytes of a NUMBER as SQLite stores it (INTEGER or REAL); the same bytes the
    generic path gets through ``values.to_python`` and ``codecs.encode_value``."""
    if type(value) is int:
        return encode_scaled(value)
    if type(value) is float:
        if -1e12 < value < 1e12:  # at most two decimals (amounts): no repr needed
            cents = round(value * 100)  # a decimal of at most 15 digits that reads back
            if cents / 100 == value:  # as the float is what repr shows (DBL_DIG)
                return encode_scaled(cents, 1)
        text = repr(value)
        if "e" not in text and "n" not in text:
            ip, _, fp = text.partition(".")
            fp = fp.rstrip("0")
            if len(fp) % 2:
                fp += "0"
            return encode_scaled(int(ip + fp), len(fp) // 2)
        return encode_number(Decimal(text))
    if value is None or value == "":
        return None
    return encode_number(Decimal(str(value)))


def stored_date(value: object) -> bytes | None:
    if value is None or value == "":
        return None
    text = value if type(value) is str else str(value)
    raw = _DATES.get(text)
    if raw is None:
        if len(_DATES) > 4096:
            _DATES.clear()
        raw = _DATES[text] = encode_date(datetime.fromisoformat(text))
    return raw


def stored_text(value: object) -> bytes | None:
    if type(value) is str:
        return value.encode() if value else None  # as encode_text
    if value is None:
        return None
    return encode_text(str(value))


_DATES: dict[str, bytes] = {}  # workload dates repeat (one per second of redo time)
# a column's kind (N number, D date, T text: how the compiled kernel encodes it) by type
_KINDS: Final = {"NUMBER": "N", "DATE": "D"}  # any other type: T (VARCHAR2, CHAR, ...)
STORED: Final[dict[str, Stored]] = {"N": stored_number, "D": stored_date, "T": stored_text}


def codecs_of(table: TableDef) -> tuple[str, tuple[Stored, ...]]:
    """The kinds of ``table``'s columns (one letter each) and their encoders."""
    kinds = "".join(_KINDS.get(c.type, "T") for c in table.columns)
    return kinds, tuple(STORED[k] for k in kinds)


def index_key(key: bytes | None) -> bytes:
    """A one-column key as the index stores it (as :func:`redogen.index_key`)."""
    return b"\xff" if key is None else bytes((len(key),)) + key


# ---------------------------------------------------------------------------- fields


def _put(size: int, table: dict[str, tuple[int, str]], **values: Any) -> bytes:
    """A ``size``-byte field with the named fields of a ``vectors.py`` table packed in it."""
    return _fill(bytearray(size), table, **values)


def _fill(buf: bytearray, table: dict[str, tuple[int, str]], **values: Any) -> bytes:
    """``buf`` with the named fields of ``table`` packed in it (the others kept)."""
    for name, value in values.items():
        off, code = table[name]
        struct.pack_into(ORDER + code, buf, off, value)
    return bytes(buf)


def _kdo(size: int, op: int, bdba: int, hdba: int) -> bytearray:
    """A KDO field of ``size`` bytes with its common part (``vectors.KDO_AT``)."""
    return bytearray(_put(size, V.KDO_AT, bdba=bdba, hdba=hdba, op=op, itli=ITL))


def _u16s(values: Sequence[int]) -> bytes:
    return struct.pack(f"{ORDER}{len(values)}H", *values)


def vector(
    layer: int,
    code: int,
    fields: Sequence[bytes],
    *,
    cls: int,
    afn: int,
    dba: int,
    obj: int,
    scn: int,
    seq: int = 1,
    typ: int = 0,
) -> bytes:
    """One change vector: its 12c header, length array and fields (:func:`framing.build_vector`)."""
    for f in fields:
        if len(f) > MAX_FIELD:
            raise ValueError(f"change vector {layer}.{code}: a field of {len(f)} bytes")
    return F.build_vector(LAYOUT, ORDER, fields, layer=layer, code=code, cls=cls, afn=afn,
                          dba=dba, obj=obj, scn=scn, seq=seq, typ=typ, con_id=0)  # fmt: skip


def ktb(op: int, xid: tuple[int, int, int], uba: Uba3, scn: int = 0,
        cleanout: Sequence[tuple[int, int, int]] = ()) -> bytes:  # fmt: skip
    """A KTB (op F, C or Z: 24 bytes), with the "Block cleanout record" of ``cleanout`` at
    ``scn`` when op has the cleanout bit."""
    out = _put(V.KTB_SIZE, V.KTB_AT, op=op, usn=xid[0], slt=xid[1], sqn=xid[2],
               uba_dba=uba[0], uba_seq=uba[1], uba_rec=uba[2])  # fmt: skip
    if op & V.KTB_CLEANOUT:
        out += _put(V.CLEANOUT_SIZE, V.CLEANOUT_AT, scn=scn, n=len(cleanout))
        for itli, flg, escn in cleanout:
            out += _put(V.CLEANOUT_ENTRY_SIZE, V.CLEANOUT_ENTRY_AT, itli=itli, flg=flg, scn=escn)
    return out


NO_XID: Final = (0, 0, 0)
UNDO_KTB: Final = ktb(OP_Z, NO_XID, (0, 0, 0))  # rg.UNDO_KTB


def kdo_irp(
    bdba: int,
    hdba: int,
    slot: int,
    lb: int,
    values: Sequence[bytes | None],
    fb: int = FB,
    nrid: tuple[int, int] | None = None,
    op: int = KDO_IRP,
) -> list[bytes]:
    """An IRP's KDO and its column fields: a whole row (``values``, trailing NULLs cut),
    or with ``fb`` a row piece (its columns as given; ``nrid`` the next piece's address);
    with ``op`` :data:`KDO_ORP` an ORP's (the same fields, ``vectors.KDO_ROW_AT``: a piece
    overwritten in place, a re-chained row's head: chainpack.rechain)."""
    n = len(values)
    while n and values[n - 1] is None and fb == FB:
        n -= 1
    vals = values[:n]
    size = min(rg.row_size(tuple(vals)), rg.KDO_SIZE_MAX)
    kdo = _kdo(V.KDO_ROW_NULLS, op, bdba, hdba)
    head = _fill(kdo, V.KDO_ROW_AT, fb=fb, lb=lb, cc=n, size=size, slot=slot)
    if nrid is not None:
        head = _fill(bytearray(head), V.KDO_ROW_AT, nrid_bdba=nrid[0], nrid_slot=nrid[1])
    return [head + P.nulls(vals), *P.value_fields(vals)]


def kdo_drp(bdba: int, hdba: int, slot: int, op: int = KDO_DRP) -> list[bytes]:
    """A DRP's KDO (or, ``op`` 4, an LKR's: the slot alone too)."""
    return [_fill(_kdo(V.KDO_SLOT_SIZE, op, bdba, hdba), V.KDO_SLOT_AT, slot=slot)]


def kdo_urp(bdba: int, hdba: int, slot: int, lock: int, ncol: int, nos: Sequence[int],
            values: Sequence[bytes | None], fb: int = KDO_FLAG) -> list[bytes]:  # fmt: skip
    """A URP's KDO, the numbers of the columns it sets and their values (``fb``: a chained
    row's piece's flags)."""
    kdo = _kdo(V.KDO_URP_NULLS, KDO_URP, bdba, hdba)
    head = _fill(kdo, V.KDO_URP_AT, fb=fb, lock=lock, slot=slot, ncol=ncol,
                 nnew=len(nos), size=0) + P.nulls(values)  # fmt: skip
    if not nos:
        return [head]
    return [head, _u16s(nos), *P.value_fields(values)]


def kdo_array(op: int, bdba: int, hdba: int, lock: int, slots: Sequence[int]) -> list[bytes]:
    """A QMI's or QMD's KDO and its slots (a QMI's rows follow in one field)."""
    kdo = _kdo(V.KDO_SLOT_SIZE, op, bdba, hdba)
    return [_fill(kdo, V.KDO_ARRAY_AT, lock=lock, nrow=len(slots)), _u16s(slots)]


def row_piece(values: Sequence[bytes | None]) -> bytes:
    """A whole row as a block holds it (trailing NULLs cut): flags, lock byte, column count,
    then each column length-prefixed (payloads' row image of a QMI)."""
    n = len(values)
    while n and values[n - 1] is None:
        n -= 1
    return bytes((FB, 0, n)) + P.length_prefixed(values[:n])


def row_pieces(rows: Sequence[Sequence[bytes | None]]) -> bytes:
    """A QMI's rows field: :func:`row_piece` of each row."""
    return b"".join([row_piece(values) for values in rows])


def supplemental(nos: Sequence[int], values: Sequence[bytes | None], fb: int = FB,
                 before: int = 0, after: int = 0) -> list[bytes]:  # fmt: skip
    """Supplemental log data of a row undo: header, column numbers (from 1), lengths, values
    (``fb``: its flags, a chained row's records' F and L: redogen.SUPP_FB; ``before`` /
    ``after``: a piece's first column in the table, engine/embedded/chained.py)."""
    head = _put(V.SUPP_SIZE, V.SUPP_AT, type=V.SUPP_TYPE, fb=fb, cc=len(nos), before=before,
                after=after)  # fmt: skip
    if not nos:
        return [head]
    lens = _u16s([0 if v is None else len(v) for v in values])
    return [head, _u16s([n + 1 for n in nos]), lens, *P.value_fields(values)]


def index_head(action: int, sno: int, row_size: int, indexid: int, block: int) -> bytes:
    return _put(V.INDEX_SIZE, V.INDEX_AT, action=action, array=0, itl=ITL, kdxlkflg=0x1,
                sno=sno, row_size=row_size, indexid=indexid, block=block)  # fmt: skip


class TxHead(NamedTuple):
    """What every vector of one transaction repeats (made once, when it begins)."""

    cls: int  # undo header class (15 + 2 * usn); undo blocks are cls + 1
    header_dba: int
    usn: int
    slot: int
    sqn: int
    logon_user: int


def tx_head(ids: rg.TxnIds) -> TxHead:
    x = ids.xid
    return TxHead(ids.header_cls, ids.header_dba, x.usn, x.slot, x.sqn, ids.logon_user)


class Txn(NamedTuple):
    """A fast-path transaction as the kernel sees it (made once, when it begins)."""

    head: TxHead
    ids: rg.TxnIds  # its undo record address and the blocks it changed: advanced here
    dirty: Dirty  # the database's ITL entries left by commits (``Database.dirty_blocks``)
    session: bytes  # its 5.20 session information vector, written with its first change


def slot_cv(x: TxHead, scn: int, next_uba: Uba3) -> bytes:
    """5.2: the transaction takes its undo slot (before its first change)."""
    f = _put(V.KTUDH_SIZE, V.KTUDH_AT, slt=x.slot, sqn=x.sqn, uba_dba=next_uba[0],
             uba_seq=next_uba[1], uba_rec=next_uba[2], flg=BEGIN_FLG)  # fmt: skip
    return vector(5, 2, [f, bytes(4)], cls=x.cls, afn=rg.UNDO_FILE, dba=x.header_dba,
                  obj=OBJ_UNDO, scn=scn)  # fmt: skip


def undo_cv(x: TxHead, scn: int, uba: Uba3, begin: bool, opc: tuple[int, int], objn: int,
            objd: int, body: Sequence[bytes]) -> bytes:  # fmt: skip
    """5.1: ktudb, ktub (the transaction's first carries the begin flag and logon user),
    then ``body`` (the undone operation's fields)."""
    ktudb = _put(V.KTUDB_SIZE, V.KTUDB_AT, flg=BEGIN_FLG if begin else FLG, usn=x.usn,
                 slt=x.slot, sqn=x.sqn, seq=uba[1], rec=uba[2])  # fmt: skip
    ktub = _put(V.KTUB_SIZE, V.KTUB_AT, objn=objn, objd=objd, tsn=TSN, opc_layer=opc[0],
                opc_code=opc[1], slt=x.slot, rci=0 if begin else uba[2] - 1,
                uflg=V.KTUB_BEGIN if begin else 0,
                logon_user=x.logon_user if begin else 0)  # fmt: skip
    return vector(5, 1, [ktudb, ktub, *body], cls=x.cls + 1, afn=rg.UNDO_FILE, dba=uba[0],
                  obj=OBJ_UNDO, scn=scn, seq=2 if begin else 1)  # fmt: skip


def commit(head: TxHead, scn: int, uba: Uba3, rollback: bool) -> bytes:
    """The 5.4 that ends a transaction (a commit, or with ``rollback`` the end of a
    rollback); ``uba``: its last undo record."""
    flg = COMMIT_FLG | (ROLLBACK_FLAG if rollback else 0)
    cm = _put(V.KTUCM_SIZE, V.KTUCM_AT, slt=head.slot, sqn=head.sqn, sta=COMMIT_STA, flg=flg)
    cf = _put(V.KTUCF_SIZE, V.KTUCF_AT, uba_dba=uba[0], uba_seq=uba[1], uba_rec=uba[2])
    return vector(5, 4, [cm, cf], cls=head.cls, afn=rg.UNDO_FILE, dba=head.header_dba,
                  obj=OBJ_UNDO, scn=scn)  # fmt: skip


def redo_ktb(tx: Txn, dba: int, uba: Uba3, scn: int = 0) -> tuple[bytes, int]:
    """The redo KTB of a change in block ``dba`` and its vector's typ (:func:`redogen.ktb_for`;
    index leaves pass no SCN: no cleanout): ``C`` in a block the transaction changed before,
    else ``F`` (typ 2), with the cleanout of the ITL entries commits left in the block."""
    ids = tx.ids
    if dba in ids.blocks:
        return ktb(OP_C, NO_XID, uba), 0
    ids.blocks.add(dba)
    x = tx.head
    entries = tx.dirty.pop(dba, None) if scn else None
    if entries:
        return ktb(OP_F | V.KTB_CLEANOUT, (x.usn, x.slot, x.sqn), uba, scn, entries), 2
    return ktb(OP_F, (x.usn, x.slot, x.sqn), uba), 2


# ---------------------------------------------------------------------------- tables


class Shape(NamedTuple):
    """What a table's change vectors say about it (one key column, at most one index: the
    workload's shape)."""

    obj: int
    dataobj: int
    afn: int
    hdba: int
    ncols: int
    key_col: int
    key_index: tuple[int, int, int, int] | None  # its index: obj, dataobj, leaf, index id


def shape_of(table: TableDef) -> Shape:
    index = None
    if table.indexes:
        ix = table.indexes[0]
        leaf = make_dba(table.file_no, ix.block)
        index = (ix.obj, ix.dataobj, leaf, make_dba(table.file_no, ix.block - 1))
    return Shape(
        table.obj,
        table.dataobj,
        table.file_no,
        make_dba(table.file_no, table.header_block),
        len(table.columns),
        table.column_index(table.key_columns[0]),
        index,
    )


class Table:
    """One table's row changes. Values are SQLite's (the Oracle bytes are what the generic
    path encodes from them) and are encoded before anything else is done: ``kinds`` gives
    each column's kind (:func:`codecs_of`), the compiled kernel encodes the values it knows
    by kind and hands the others to ``encoders``; this one always uses ``encoders``. Each
    method takes the transaction, the change's SCN, block address and slot, then the row,
    and returns the change vectors of its records (one ``bytes`` a record)."""

    def __init__(self, shape: Shape, kinds: str, encoders: Sequence[Stored]) -> None:
        if len(kinds) != shape.ncols or len(encoders) != shape.ncols:
            raise ValueError(f"{shape.ncols} columns, {len(kinds)} kinds, {len(encoders)} encoders")
        self.shape = shape
        self.encoders = tuple(encoders)

    def encode(self, values: Sequence[object]) -> tuple[bytes | None, ...]:
        """A row's SQLite values (all columns) as Oracle bytes."""
        return tuple([f(v) for f, v in zip(self.encoders, values, strict=True)])

    def insert(
        self, tx: Txn, scn: int, dba: int, slot: int, row: Sequence[object]
    ) -> tuple[bytes, ...]:
        """An inserted row: ``row`` is what SQLite is given, ``(_rid, values...)``:
        ``[5.1 (DRP undo), 11.2 IRP]``, then the index record."""
        s = self.shape
        enc = self.encode(row[1:])
        key = enc[s.key_col]
        _check(enc, key, s.key_index is not None)
        if R.piece_bytes(rg.columns_of_row(enc)) > R.PIECE_ROOM:
            return ()  # a row larger than a block: insert_pieces writes it
        undo = [UNDO_KTB, *kdo_drp(dba, s.hdba, slot)]
        undo += supplemental((s.key_col,), (key,))

        def redo(k: bytes) -> list[bytes]:
            return [k, *kdo_irp(dba, s.hdba, slot, LB_REDO, enc)]

        first = self._row(tx, scn, dba, KDO_IRP, undo, redo)
        return (
            first if s.key_index is None else (*first, self._index(tx, scn, dba, slot, key, True))
        )

    def pieces(self, row: Sequence[object]) -> int:
        """How many row pieces an inserted ``row`` (SQLite's ``(_rid, values...)``) takes
        (:func:`engine.embedded.rows.row_pieces`)."""
        return len(R.row_pieces(rg.columns_of_row(self.encode(row[1:]))))

    def insert_pieces(
        self, tx: Txn, scn: int, addrs: Sequence[tuple[int, int]], row: Sequence[object]
    ) -> tuple[tuple[bytes, ...], Uba3]:
        """A row larger than a block (:meth:`insert` gave no record) as ``dml._redo_insert``
        chains it: a record ``[5.1 (DRP undo), 11.2 IRP]`` per piece at ``addrs`` (each
        piece's block address and slot, head first, :meth:`pieces` of them), the last piece
        first and the head last, then the index record. Returns the records and the head
        record's undo address (what a rollback of the insert names)."""
        s = self.shape
        enc = self.encode(row[1:])
        key = enc[s.key_col]
        _check(enc, key, s.key_index is not None)
        vals = rg.columns_of_row(enc)
        parts = R.row_pieces(vals)
        if len(parts) != len(addrs):
            raise ValueError(f"{len(parts)} row pieces, {len(addrs)} addresses")
        last = len(parts) - 1
        out: list[bytes] = []
        uba: Uba3 = (0, 0, 0)
        for n in range(last, -1, -1):  # the last piece first, the head last
            part = parts[n]
            dba, slot = addrs[n]
            supp_fb = fb_value(rg.SUPP_FB[(n == last, n == 0)])
            undo = [UNDO_KTB, *kdo_drp(dba, s.hdba, slot)]
            if n == last:  # the key columns in the first record
                undo += supplemental((s.key_col,), (key,), supp_fb)
            else:
                undo += supplemental((), (), supp_fb)
            fb = fb_value(R.piece_fb(n == 0, n == last, part))
            nrid = addrs[n + 1] if n < last else None
            piece = kdo_irp(dba, s.hdba, slot, LB_REDO, R.piece_values(vals, part), fb, nrid)

            def redo(k: bytes, piece: list[bytes] = piece) -> list[bytes]:
                return [k, *piece]

            uba = tx.ids.peek_rec()
            out += self._row(tx, scn, dba, KDO_IRP, undo, redo)
        if s.key_index is not None:
            out.append(self._index(tx, scn, *addrs[0], key, True))
        return tuple(out), uba

    def update(
        self,
        tx: Txn,
        scn: int,
        dba: int,
        slot: int,
        set_cols: Sequence[int],
        row: Sequence[object],
        new: Sequence[object],
    ) -> tuple[bytes, ...]:
        """An updated row: ``row`` is SQLite's ``(_rid, key, old values of set_cols...)``,
        ``new`` the values set: ``[5.1 (URP undo: the old values), 11.5 URP]``."""
        s = self.shape
        enc = self.encoders
        nos = tuple(set_cols)
        old = [enc[i](v) for i, v in zip(nos, row[2:], strict=True)]
        values = [enc[i](v) for i, v in zip(nos, new, strict=True)]
        key = enc[s.key_col](row[1])
        _check([*old, *values, key], key, False)
        undo = [UNDO_KTB, *kdo_urp(dba, s.hdba, slot, 0, s.ncols, nos, old)]
        undo += supplemental((s.key_col,), (key,))

        def redo(k: bytes) -> list[bytes]:
            return [k, *kdo_urp(dba, s.hdba, slot, 1, s.ncols, nos, values)]

        return self._row(tx, scn, dba, KDO_URP, undo, redo)

    def delete(
        self, tx: Txn, scn: int, dba: int, slot: int, row: Sequence[object]
    ) -> tuple[bytes, ...]:
        """A deleted row: ``row`` is SQLite's ``(_rid, values...)``: ``[5.1 (IRP undo: the
        whole row), 11.3 DRP]``, then the index record."""
        s = self.shape
        enc = self.encode(row[1:])
        key = enc[s.key_col]
        _check(enc, key, s.key_index is not None)
        undo = [UNDO_KTB, *kdo_irp(dba, s.hdba, slot, 0, enc)]
        undo += supplemental((s.key_col,), (key,))

        def redo(k: bytes) -> list[bytes]:
            return [k, *kdo_drp(dba, s.hdba, slot)]

        first = self._row(tx, scn, dba, KDO_DRP, undo, redo)
        return (
            first if s.key_index is None else (*first, self._index(tx, scn, dba, slot, key, False))
        )

    def undone(
        self,
        x: TxHead,
        scn: int,
        uba: Uba3,
        dba: int,
        slot: int,
        kind: str,
        values: Sequence[bytes | None],
        key: bytes | None,
        nos: Sequence[int],
    ) -> bytes:
        """The compensation record of one of this table's changes rolled back: :func:`undone`."""
        return undone(self.shape, x, scn, uba, dba, slot, kind, values, key, nos)

    def _row(
        self,
        tx: Txn,
        scn: int,
        dba: int,
        op: int,
        undo: list[bytes],
        redo: Callable[[bytes], list[bytes]],
    ) -> tuple[bytes]:
        """The row's record: ``[5.2] 5.1 11.op [5.20]`` (a transaction's first change between
        its slot allocation and its session information)."""
        s = self.shape
        ids = tx.ids
        x = tx.head
        begin = not ids.started
        pre = b""
        if begin:  # the 5.2 points at the undo record to come
            pre = slot_cv(x, scn, (ids.undo_dba, ids.undo_seq, ids.rec + 1))
            ids.started = True
        uba = ids.next_rec()
        u = undo_cv(x, scn, uba, begin, (11, 1), s.obj, s.dataobj, undo)
        k, typ = redo_ktb(tx, dba, uba, scn)
        r = vector(11, op, redo(k), cls=1, afn=s.afn, dba=dba, obj=s.dataobj, scn=scn, typ=typ)
        return (b"".join((pre, u, r, tx.session)) if begin else u + r,)

    def _index(
        self, tx: Txn, scn: int, dba: int, slot: int, key: bytes | None, insert: bool
    ) -> bytes:
        """The index record of the row's key: ``[5.1 (10.22 undo: purge or restore the leaf
        row), 10.2 insert leaf row | 10.4 delete leaf row]``."""
        s = self.shape
        assert s.key_index is not None
        iobj, idataobj, leaf, indexid = s.key_index
        ids = tx.ids
        ikey = index_key(key)
        uba = ids.next_rec()
        action = INDEX_PURGE if insert else INDEX_RESTORE
        body = [UNDO_KTB, index_head(action, 0, 0, indexid, leaf), ikey, b"", b"",
                b"" if insert else KEYDATA.pack(dba, slot)]  # fmt: skip
        u = undo_cv(tx.head, scn, uba, False, (10, 22), iobj, idataobj, body)
        k, _ = redo_ktb(tx, leaf, uba)
        return u + leaf_cv(s, k, insert, dba, slot, key, scn)


def leaf_cv(s: Shape, k: bytes, insert: bool, dba: int, slot: int, key: bytes | None,
            scn: int) -> bytes:  # fmt: skip
    """10.2 insert leaf row (the key and its ROWID) or 10.4 delete leaf row, KTB ``k``."""
    assert s.key_index is not None
    _, idataobj, leaf, _ = s.key_index
    ikey = index_key(key)
    head = index_head(INDEX_INSERT if insert else INDEX_DELETE, slot,
                      len(ikey) + KEYDATA.size + 4, 0, 0)  # fmt: skip
    if insert:
        fields = [k, head, ikey, b"", b"", KEYDATA.pack(dba, slot)]
    else:
        fields = [k, head, b"", b"", b"", b""]
    return vector(10, 2 if insert else 4, fields, cls=1, afn=s.afn, dba=leaf, obj=idataobj,
                  scn=scn)  # fmt: skip


def applied_cv(x: TxHead, scn: int, uba: Uba3, objn: int, objd: int) -> bytes:
    """5.6: a rollback applied the undo record at ``uba`` (a compensation record's first
    vector): the ktub of the undone row change (its table's object and data object), then its
    transaction and undo address."""
    ktub = _put(V.KTUB_SIZE, V.KTUB_AT, objn=objn, objd=objd, opc_layer=11, opc_code=1)
    f1 = _put(V.UNDO_APPLIED_SIZE, V.UNDO_APPLIED_AT, usn=x.usn, slt=x.slot, sqn=x.sqn,
              uba_dba=uba[0], uba_seq=uba[1], uba_rec=uba[2])  # fmt: skip
    return vector(5, 6, [ktub, f1], cls=x.cls + 1, afn=rg.UNDO_FILE, dba=uba[0], obj=OBJ_UNDO,
                  scn=scn)  # fmt: skip


def undone(
    s: Shape,
    x: TxHead,
    scn: int,
    uba: Uba3,
    dba: int,
    slot: int,
    kind: str,
    values: Sequence[bytes | None],
    key: bytes | None = None,
    nos: Sequence[int] = (),
) -> bytes:
    """The compensation record of a row change rolled back, as ``undo.compensate`` builds
    it: ``[5.6, the inverse row operation, the inverse index operation]``, each in the block
    the change was in (KTB ``C`` pointing at the undo record applied, ``uba``). ``kind``:
    ``ins`` (an insert undone: 11.3 DRP, 10.4 for ``key``), ``del`` (a delete undone: 11.2
    IRP of ``values``, the row's columns, and 10.2), ``upd`` (an update undone: 11.5 URP
    setting columns ``nos`` back to ``values``)."""
    k = ktb(OP_C, NO_XID, uba)
    out = [applied_cv(x, scn, uba, s.obj, s.dataobj)]
    at: dict[str, int] = {"cls": 1, "afn": s.afn, "dba": dba, "obj": s.dataobj, "scn": scn}
    if kind == "upd":
        out.append(vector(11, KDO_URP, [k, *kdo_urp(dba, s.hdba, slot, 0, s.ncols, nos, values)],
                          **at))  # fmt: skip
        return b"".join(out)
    if kind == "ins":
        out.append(vector(11, KDO_DRP, [k, *kdo_drp(dba, s.hdba, slot)], **at))
    else:
        out.append(vector(11, KDO_IRP, [k, *kdo_irp(dba, s.hdba, slot, 0, values)], **at))
    if s.key_index is not None:
        out.append(leaf_cv(s, k, kind == "del", dba, slot, key, scn))
    return b"".join(out)


def array_insert(
    s: Shape, tx: Txn, scn: int, dba: int, slots: Sequence[int], rows: bytes
) -> tuple[bytes, Uba3]:
    """The record of one block's rows of an array insert (their ``slots``; ``rows``: the
    QMI's rows field, :func:`row_pieces`), as ``dml``'s array insert writes it: ``[5.2] 5.1
    (QMD undo: the slots) 11.11 QMI (the rows) [5.20]``; and the address of its undo
    record. (Python only: one call per block of rows.)"""
    ids = tx.ids
    x = tx.head
    begin = not ids.started
    pre = b""
    if begin:
        pre = slot_cv(x, scn, (ids.undo_dba, ids.undo_seq, ids.rec + 1))
        ids.started = True
    uba = ids.next_rec()
    undo = [UNDO_KTB, *kdo_array(KDO_QMD, dba, s.hdba, 0, slots), *supplemental((), ())]
    u = undo_cv(x, scn, uba, begin, (11, 1), s.obj, s.dataobj, undo)
    k, typ = redo_ktb(tx, dba, uba, scn)
    fields = [k, *kdo_array(KDO_QMI, dba, s.hdba, 1, slots), rows]
    r = vector(11, KDO_QMI, fields, cls=1, afn=s.afn, dba=dba, obj=s.dataobj, scn=scn, typ=typ)
    return (b"".join((pre, u, r, tx.session)) if begin else u + r), uba


def _check(values: Sequence[bytes | None], key: bytes | None, index: bool) -> None:
    """A value is one field (16-bit length); an indexed key is length-prefixed in a byte:
    refused before anything changes."""
    for v in values:
        if v is not None and len(v) > MAX_FIELD:
            raise ValueError(f"a value of {len(v)} bytes is more than a field holds")
    if index and key is not None and len(key) > 0xFF:
        raise ValueError("bytes must be in range(0, 256)")
