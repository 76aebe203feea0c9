"""The change vectors of single-row DML, packed straight to bytes (the fast path's codec).

:mod:`redo_codec` encodes change-vector dataclasses field by field; building those objects
and walking them costs more than the rest of a row change. The workload's fast path
(:mod:`engine.embedded.bulk`) writes the same bytes from here instead: each change vector it
writes often is one ``struct.Struct`` that fuses the codec's own structs (``CV_HEAD``,
``UNDO``, ``XID``, ``KDO``, ``IDX``, ``KTB``, in the order ``docs/redo_format.md`` gives),
its constant strings are encoded once, and only the variable parts (column values, KTB
cleanout entries) are joined around it. Runs of fields that a transaction repeats in every
record (the undo CV's head, the XID) are packed once into :class:`TxHead` and go into the
structs as ``Ns`` fields: each packed field costs a Python argument. The workload's golden
test and ``tests/source/test_source_bulkpack.py`` (against the codec's encoding of the
model objects) hold the bytes equal.

:class:`TablePack` holds one table's constants; :class:`TxHead` one transaction's identity.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Final, NamedTuple

from engine.embedded import redo_codec as rc
from engine.embedded.dictionary import TableDef
from engine.redo.ids import make_dba
from engine.redo.model import OBJ_UNDO

Uba3 = tuple[int, int, int]  # undo block address as (dba, seq, rec)
Row3 = tuple[bytes, int, int]  # a column vector, its column count and row size


def fuse(*parts: struct.Struct | str) -> struct.Struct:
    """One little-endian struct made of several (no padding: every part is ``<``)."""
    return struct.Struct(
        "<" + "".join(p.format.lstrip("<") if isinstance(p, struct.Struct) else p for p in parts)
    )


_L: Final = rc.LAYOUT
_U16: Final = _L["U16"]
_U32: Final = _L["U32"]
_COL: Final = _L["COL"]


def text(value: str) -> bytes:
    """A codec ``str`` field: u32 length + UTF-8."""
    raw = value.encode("utf-8")
    return _U32.pack(len(raw)) + raw


_ENTRY: Final = struct.Struct("<HHQ")
_KEYDATA: Final = struct.Struct(">IH")
_ITL_FLG: Final = text("C---")
# KTB header + its itl_flg string; cleanout entries follow when there are any
_KTB_TEXT: Final = fuse(_L["KTB"], f"{len(_ITL_FLG)}s")
UNDO_KTB: Final = _KTB_TEXT.pack(0x03, b"Z", 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, _ITL_FLG)
# The same KTB with op, kind and XID as one run of 10 bytes: then the undo address, then
# lkc, cleanout count, itl scn, cleanout scn and itl flags (one run when there is no
# cleanout: 0, 0, 0, -1, "C---").
_KTB_C: Final = struct.pack("<BcHHI", 0x02, b"C", 0, 0, 0)
_KTB_CLEAN: Final = struct.Struct("<10sIHHBHQq8s")
_KTB_UBA: Final = struct.Struct("<10sIHH27s")
_KTB_END: Final = UNDO_KTB[_KTB_UBA.size - 27 :]
_FB: Final = text("--H-FL--")
_NO_COLS: Final = b"\0\0"
_NO_ROWS_SLOTS: Final = b"\0\0\0\0"  # kdo rows: 0, slots: 0
_NO_INTS: Final = b"\0\0"
_EMPTY: Final = b"\0\0\0\0"  # a bytes field of length 0
_KEY1: Final = b"\1\0"  # a column vector of one column
# the column heads (number, length) of short values in the first columns, packed once
_COL_HEADS: Final = tuple(tuple(_COL.pack(i, k) for k in range(64)) for i in range(8))

# undo change vector: CV_HEAD + UNDO + XID, then the undone row op's KDO or IDX. Parts
# that one transaction repeats in every undo are packed once (TxHead): the head of CV_HEAD
# (layer 5, code 1, typ 0, marker 0, cls, afn 3) and the XID; and UNDO's tsn 4, siz 0, spc 0
_UNDO: Final = "8s" + "IIQHB" + "HHIIIH" + "6s" + "HHBIB" + "8s"
_UNDO_KDO: Final = fuse(_UNDO, _L["KDO"])
_UNDO_IDX: Final = fuse(_UNDO, _L["IDX"])
_TSN_SIZ_SPC: Final = struct.pack("<HHH", 4, 0, 0)
_UNDO_HEAD: Final = struct.Struct("<BBBBHH")  # CV_HEAD's first six fields
# redo change vector: CV_HEAD + KDO (+ name and flag strings) + KTB
_REDO_KDO: Final = fuse(_L["CV_HEAD"], _L["KDO"])
_REDO_IDX: Final = fuse(_L["CV_HEAD"], _L["IDX"])
_SLOT_CV: Final = fuse(_L["CV_HEAD"], _L["SLOT"], _L["UBA"], _L["XID"])
_COMMIT_CV: Final = fuse(_L["CV_HEAD"], _L["COMMIT"], _L["UBA"])
_SESSION_CV: Final = fuse(_L["CV_HEAD"], _L["SESSION"])
_APPLIED_CV: Final = fuse(_L["CV_HEAD"], _L["XID"], _L["UBA"])

_DRP: Final = text("DRP") + _FB
_IRP: Final = text("IRP") + _FB
_URP: Final = text("URP") + _FB
_QMD: Final = text("QMD") + _FB
_QMI: Final = text("QMI") + _FB
_ROW_HEAD: Final = struct.Struct("<HBh")
_UNDO_DRP: Final = _DRP + UNDO_KTB + _NO_COLS + _NO_ROWS_SLOTS
_URP_UNDO: Final = _URP + UNDO_KTB
_IRP_UNDO: Final = _IRP + UNDO_KTB
_NO_COLS_ROWS_SLOTS: Final = _NO_COLS + _NO_ROWS_SLOTS
_PURGE: Final = text("purge leaf row") + UNDO_KTB
_RESTORE: Final = text("restore leaf row (clear leaf delete flags)") + UNDO_KTB
_INSERT_LEAF: Final = text("insert leaf row")
_DELETE_LEAF: Final = text("delete leaf row")


class TxHead(NamedTuple):
    """What every undo record of one transaction repeats: its undo header class, xid and
    logon user, and the undo header block (slot allocation and commit); :func:`tx_head`."""

    cls: int  # undo header class (15 + 2 * usn); undo blocks are cls + 1
    header_dba: int
    usn: int
    slot: int
    sqn: int
    logon_user: int
    undo_head: bytes  # the head of its undo change vectors (see _UNDO)
    xid: bytes  # its XID, packed


def tx_head(cls: int, header_dba: int, usn: int, slot: int, sqn: int, logon: int) -> TxHead:
    return TxHead(
        cls,
        header_dba,
        usn,
        slot,
        sqn,
        logon,
        _UNDO_HEAD.pack(5, 1, 0, 0, cls + 1, 3),
        _L["XID"].pack(usn, slot, sqn),
    )


def columns(values: Sequence[bytes | None]) -> tuple[bytes, int, int]:
    """A row's column vector as Oracle writes it (trailing NULLs not stored): ``(bytes,
    column count, row size)``."""
    n = len(values)
    while n and values[n - 1] is None:
        n -= 1
    out = [_U16.pack(n)]
    size = 3 + n
    for i in range(n):
        v = values[i]
        if v is None:
            out.append(_COL.pack(i, -1))
        else:
            k = len(v)
            out += (_COL_HEADS[i][k] if i < 8 and k < 64 else _COL.pack(i, k), v)
            size += k
    return b"".join(out), n, size


def some_columns(nos: Sequence[int], values: Sequence[bytes | None]) -> bytes:
    """The column vector of columns ``nos`` (an update's, or supplemental key columns)."""
    out = [_U16.pack(len(nos))]
    for no, v in zip(nos, values, strict=True):
        if v is None:
            out.append(_COL.pack(no, -1))
        else:
            k = len(v)
            out += (_COL_HEADS[no][k] if no < 8 and k < 64 else _COL.pack(no, k), v)
    return b"".join(out)


def ktb_continue(udba: int, useq: int, urec: int) -> bytes:
    """The redo KTB ``0x02 C`` of a block the transaction changed before (also that of a
    compensation record), pointing at undo record ``(udba, useq, urec)``."""
    return _KTB_UBA.pack(_KTB_C, udba, useq, urec, _KTB_END)


def ktb_first(
    x: TxHead, uba: Uba3, cleanout: Sequence[tuple[int, int, int]] = (), scn: int = 0
) -> bytes:
    """The redo KTB of a transaction's first change in a block: ``0x01 F``, or ``0x11 F``
    with the "Block cleanout record" of committed transactions' ITL entries at ``scn``."""
    udba, useq, urec = uba
    if not cleanout:
        return _KTB_UBA.pack(b"\x01F" + x.xid, udba, useq, urec, _KTB_END)
    head = _KTB_CLEAN.pack(b"\x11F" + x.xid, udba, useq, urec, 0, len(cleanout), 0, scn, _ITL_FLG)
    return b"".join([head, *[_ENTRY.pack(i, f, s) for i, f, s in cleanout]])


def slot_cv(x: TxHead, scn: int, next_uba: Uba3) -> bytes:
    """5.2: the transaction takes its undo slot (before its first change)."""
    return _SLOT_CV.pack(
        5, 2, 0, 0, x.cls, 3, x.header_dba, OBJ_UNDO, scn, 1, 3,
        x.slot, x.sqn, 0x12, 0, 0, *next_uba, 0, 0, 0,
    )  # fmt: skip


def session_cv(sid: int, serial: int, audit: int, user: str, txn_name: str) -> bytes:
    """5.20: session information, once per transaction."""
    return (
        _SESSION_CV.pack(5, 20, 0, 1, 1, 4, 0, OBJ_UNDO, 0, 1, 7, sid, serial, 186647296, audit)
        + text(user)
        + text(txn_name)
        + text("")
    )


def commit_cv(x: TxHead, scn: int, uba: Uba3, rollback: bool = False) -> bytes:
    """5.4: commit, or the end of a rollback (flag 0x04)."""
    return _COMMIT_CV.pack(
        5, 4, 0, 0, x.cls, 3, x.header_dba, OBJ_UNDO, scn, 1, 5,
        x.slot, x.sqn, 0, 9, 0x6 if rollback else 0x2, 0, 0, 0, *uba,
    )  # fmt: skip


def undo_applied_cv(x: TxHead, scn: int, uba: Uba3) -> bytes:
    """5.6: a rollback applied the undo at ``uba`` (the first change vector of each
    compensation record)."""
    return _APPLIED_CV.pack(
        5, 6, 0, 0, x.cls + 1, 3, uba[0], OBJ_UNDO, scn, 1, 6, x.usn, x.slot, x.sqn, *uba
    )


# Where a row change goes, as a plain tuple (it is made per row change):
# (transaction, first change of it?, SCN, undo record address, block address, slot,
#  redo KTB from ktb_first (CV typ 2) or ktb_continue (typ 0), that typ)
Change = tuple[TxHead, bool, int, Uba3, int, int, bytes, int]


def compensating(x: TxHead, scn: int, uba: Uba3, dba: int, slot: int) -> Change:
    """The change of a compensation record: in a block of the transaction, its ``0x02 C``
    KTB pointing at the undo applied (``uba``)."""
    return (x, False, scn, uba, dba, slot, ktb_continue(*uba), 0)


class TablePack:
    """The change vectors of one table's single-row changes (one key column, at most one
    index: the workload's shape). Each method returns the bytes of a record's change
    vectors. A :data:`Change` whose ``begin`` is set is a transaction's first (its undo
    carries the begin flag and the logon user); ``key`` is the key column's encoded value;
    rows are column vectors from :func:`columns`."""

    def __init__(self, table: TableDef) -> None:
        self.obj = table.obj
        self.dataobj = table.dataobj
        self.afn = table.file_no
        self.hdba = make_dba(table.file_no, table.header_block)
        self.ncols = len(table.columns)
        self.key_col = table.column_index(table.key_columns[0])
        self.index: tuple[int, int, int, int] | None = None  # obj, dataobj, leaf, index id
        if table.indexes:
            ix = table.indexes[0]
            leaf = make_dba(table.file_no, ix.block)
            self.index = (ix.obj, ix.dataobj, leaf, make_dba(table.file_no, ix.block - 1))

    # -- row changes -----------------------------------------------------------------------

    def insert(self, c: Change, row: Row3, key: bytes | None) -> bytes:
        """``[5.1 DRP undo, 11.2 IRP]``."""
        _, _, scn, _, dba, slot, redo_ktb, typ = c
        cols, n, size = row
        undo = self._undo(c, 0, 0, 0, 0, 0)
        redo = _REDO_KDO.pack(
            11, 2, typ, 0, 1, self.afn, dba, self.dataobj, scn, 1, 1,
            dba, self.hdba, slot, 0x2C, 2, 0, size, 2, n, 0,
        )  # fmt: skip
        return b"".join(
            (undo, _UNDO_DRP, self._key(key), redo, _IRP, redo_ktb, cols, _NO_ROWS_SLOTS)
        )

    def update(self, c: Change, nnew: int, old: bytes, new: bytes, key: bytes | None) -> bytes:
        """``[5.1 URP undo (old values), 11.5 URP (new values)]``; ``old``/``new`` from
        :func:`some_columns`."""
        _, _, scn, _, dba, slot, redo_ktb, typ = c
        ncols = self.ncols
        undo = self._undo(c, 0, 0, 0, ncols, nnew)
        redo = _REDO_KDO.pack(
            11, 5, typ, 0, 1, self.afn, dba, self.dataobj, scn, 1, 1,
            dba, self.hdba, slot, 0x2C, 2, 1, 0, 0, ncols, nnew,
        )  # fmt: skip
        key_supp = self._key(key)
        return b"".join(
            (
                undo,
                _URP_UNDO,
                old,
                _NO_ROWS_SLOTS,
                key_supp,
                redo,
                _URP,
                redo_ktb,
                new,
                _NO_ROWS_SLOTS,
            )
        )

    def delete(self, c: Change, row: Row3, key: bytes | None) -> bytes:
        """``[5.1 IRP undo (the whole row), 11.3 DRP]``."""
        _, _, scn, _, dba, slot, redo_ktb, typ = c
        cols, n, size = row
        undo = self._undo(c, 0, size, 0, n, 0)
        redo = _REDO_KDO.pack(
            11, 3, typ, 0, 1, self.afn, dba, self.dataobj, scn, 1, 1,
            dba, self.hdba, slot, 0x2C, 2, 0, 0, 0, 0, 0,
        )  # fmt: skip
        key_supp = self._key(key)
        return b"".join(
            (
                undo,
                _IRP_UNDO,
                cols,
                _NO_ROWS_SLOTS,
                key_supp,
                redo,
                _DRP,
                redo_ktb,
                _NO_COLS_ROWS_SLOTS,
            )
        )

    def array_insert(self, c: Change, rows: Sequence[tuple[int, bytes]]) -> bytes:
        """``[5.1 QMD undo (the slots), 11.11 QMI (the rows)]`` of one block of an array
        insert (the change's slot is 0); ``rows`` are (slot, column vector)."""
        slots = [slot for slot, _ in rows]
        parts = [
            self._undo(c, 0, 0, 0, 0, 0),
            _QMD,
            UNDO_KTB,
            _NO_COLS,
            _NO_INTS,
            _U16.pack(len(slots)),
            struct.pack(f"<{len(slots)}I", *slots),
            _NO_COLS,
            self._kdo(11, c, 1, 0, 0, 0, 0),
            _QMI,
            c[6],
            _NO_COLS,
            _U16.pack(len(rows)),
        ]
        for slot, cols in rows:
            parts += (_ROW_HEAD.pack(slot, 0, -1), _FB, cols)
        parts.append(_NO_INTS)
        return b"".join(parts)

    def index_change(self, c: Change, insert: bool, key: bytes) -> bytes:
        """``[5.1 10.22 undo, 10.2 insert | 10.4 delete leaf row]`` for the key of the row
        at the change's block and slot (``key`` as the index stores it: length-prefixed
        columns; the change's KTB is the leaf block's)."""
        assert self.index is not None
        iobj, idataobj, leaf, indexid = self.index
        x, _, scn, (udba, useq, urec), dba, slot, _, _ = c
        undo = _UNDO_IDX.pack(
            x.undo_head, udba, OBJ_UNDO, scn, 1, 4,
            10, 22, iobj, idataobj, x.slot, urec - 1, _TSN_SIZ_SPC, 0x22, useq, urec, 0, 4,
            x.xid,
            0, 2, 0, 0, indexid, leaf, 0x1,
        )  # fmt: skip
        return b"".join(
            (
                undo,
                _PURGE if insert else _RESTORE,
                _U32.pack(len(key)),
                key,
                _NO_INTS,
                _NO_INTS,
                _EMPTY if insert else _U32.pack(_KEYDATA.size) + _KEYDATA.pack(dba, slot),
                _NO_COLS,
                self._leaf(c, insert, key),
            )
        )

    # -- compensation (rollback): a Change from compensating() -----------------------------

    def undone_insert(self, c: Change, key: bytes) -> bytes:
        """``[5.6, 11.3 DRP, 10.4]``: an insert rolled back (``key`` as the index holds it)."""
        leaf = self._leaf(c, False, key) if self.index is not None else b""
        return b"".join((undo_applied_cv(c[0], c[2], c[3]), self._drp(c), leaf))

    def undone_delete(self, c: Change, row: Row3, key: bytes) -> bytes:
        """``[5.6, 11.2 IRP, 10.2]``: a delete rolled back."""
        leaf = self._leaf(c, True, key) if self.index is not None else b""
        return b"".join((undo_applied_cv(c[0], c[2], c[3]), self._irp(c, 0, row), leaf))

    def undone_update(self, c: Change, nnew: int, old: bytes) -> bytes:
        """``[5.6, 11.5 URP (the old values)]``: an update rolled back."""
        return undo_applied_cv(c[0], c[2], c[3]) + self._urp(c, 0, nnew, old)

    # -- parts -----------------------------------------------------------------------------

    def _undo(self, c: Change, lock: int, size: int, lb: int, cc: int, nnew: int) -> bytes:
        """The head of a 5.1 row undo, up to its KDO's fields (no ``*args``: a starred call
        costs as much as the packing)."""
        x, begin, scn, (udba, useq, urec), dba, slot, _, _ = c
        if begin:  # the transaction's first undo record: begin flag, logon user
            seq, rci, flg, logon, bits = 2, 0, 0x12, x.logon_user, 3
        else:
            seq, rci, flg, logon, bits = 1, urec - 1, 0x22, 0, 2
        return _UNDO_KDO.pack(
            x.undo_head, udba, OBJ_UNDO, scn, seq, 4,
            11, 1, self.obj, self.dataobj, x.slot, rci, _TSN_SIZ_SPC, flg, useq, urec, logon, bits,
            x.xid,
            dba, self.hdba, slot, 0x2C, 2, lock, size, lb, cc, nnew,
        )  # fmt: skip

    def _kdo(
        self, code: int, c: Change, lock: int, size: int, lb: int, cc: int, nnew: int
    ) -> bytes:
        """The head of an 11.x redo, up to its KDO's fields."""
        _, _, scn, _, dba, slot, _, typ = c
        return _REDO_KDO.pack(
            11, code, typ, 0, 1, self.afn, dba, self.dataobj, scn, 1, 1,
            dba, self.hdba, slot, 0x2C, 2, lock, size, lb, cc, nnew,
        )  # fmt: skip

    def _irp(self, c: Change, lb: int, row: Row3) -> bytes:
        cols, n, size = row
        return b"".join((self._kdo(2, c, 0, size, lb, n, 0), _IRP, c[6], cols, _NO_ROWS_SLOTS))

    def _drp(self, c: Change) -> bytes:
        return b"".join((self._kdo(3, c, 0, 0, 0, 0, 0), _DRP, c[6], _NO_COLS, _NO_ROWS_SLOTS))

    def _urp(self, c: Change, lock: int, nnew: int, cols: bytes) -> bytes:
        head = self._kdo(5, c, lock, 0, 0, self.ncols, nnew)
        return b"".join((head, _URP, c[6], cols, _NO_ROWS_SLOTS))

    def _key(self, key: bytes | None) -> bytes:
        """Supplemental data of a row undo: the key column's before image."""
        if key is None:
            return _KEY1 + _COL.pack(self.key_col, -1)
        return _KEY1 + _COL.pack(self.key_col, len(key)) + key

    def _leaf(self, c: Change, insert: bool, key: bytes) -> bytes:
        """10.2 insert leaf row (key and keydata) or 10.4 delete leaf row (sizes only)."""
        assert self.index is not None
        _, idataobj, leaf, _ = self.index
        _, _, scn, _, dba, slot, redo_ktb, _ = c
        head = _REDO_IDX.pack(
            10, 2 if insert else 4, 0, 0, 1, self.afn, leaf, idataobj, scn, 1, 2,
            0, 2, slot, len(key) + _KEYDATA.size + 4, 0, 0, 0x1,
        )  # fmt: skip
        if not insert:
            return b"".join((head, _DELETE_LEAF, redo_ktb, _EMPTY, _NO_INTS, _NO_INTS, _EMPTY))
        return b"".join(
            (
                head,
                _INSERT_LEAF,
                redo_ktb,
                _U32.pack(len(key)),
                key,
                _NO_INTS,
                _NO_INTS,
                _U32.pack(_KEYDATA.size),
                _KEYDATA.pack(dba, slot),
            )
        )
