"""Change vectors of captured tables, decoded into typed, frozen facts.

Layer 5 (transaction layer): 5.2 begin (ktudh), 5.1 undo (ktudb, ktubl/ktubu, the undo's
row operation, then supplemental log data: header, column numbers, lengths, values), 5.4
commit or rollback (ktucm), 5.20 session information, 5.6 / 5.11 undo applied (partial
rollback: ktub of the undone change). Layer 11 (row access, KDO): 11.2 IRP, 11.3 DRP,
11.4 LKR, 11.5 URP, 11.6 ORP, 11.8 CFA, 11.11 QMI, 11.12 QMD, 11.16 LMN, 11.17 LLB,
11.19 array update; 19.1 direct-path load (a block image, rows by their own row headers).
Anything else decodes to :class:`Other` (named by its opcode) and is never an error.

Field offsets are stated once, in the ``*_AT`` tables; every read goes through
:func:`_get`, which checks the field is long enough (``RedoCorruptError`` otherwise).
Sources: docs/redo_format.md.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.redo.errors import RedoCorruptError, RedoUnsupportedError
from engine.redo.framing import Record, Vector
from engine.redo.frozen import quick_init
from engine.redo.rowid import next_piece, rowid

# offset, struct code of every field we read, per structure
KTUDH_AT = {
    "slt": (0, "H"),
    "sqn": (4, "I"),
    "uba_dba": (8, "I"),
    "uba_seq": (12, "H"),
    "uba_rec": (14, "B"),
    "flg": (16, "H"),
    # ours (the ktudh dump line's order; no public source gives these offsets)
    "siz": (18, "H"),
    "fbi": (20, "B"),
    "pxid_usn": (24, "H"),
    "pxid_slt": (26, "H"),
    "pxid_sqn": (28, "I"),
}
KTUDH_SIZE = 32
KTUDB_AT = {
    "siz": (0, "H"),
    "spc": (2, "H"),
    "flg": (4, "H"),
    "usn": (8, "H"),
    "slt": (10, "H"),
    "sqn": (12, "I"),
    "seq": (16, "H"),
    "rec": (18, "B"),
}
KTUB_AT = {
    "objn": (0, "I"),
    "objd": (4, "I"),
    "tsn": (8, "I"),
    "opc_layer": (16, "B"),
    "opc_code": (17, "B"),
    "slt": (18, "B"),
    "rci": (19, "B"),
    # ours: the "Begin trans" mark (KTUB_BEGIN) and ktubl's logon user
    "uflg": (20, "H"),
    "logon_user": (24, "I"),
}
KTUB_SIZE = 28
KTUB_BEGIN = 0x0001
KTUDB_SIZE = 20
KTUCM_AT = {"slt": (0, "H"), "sqn": (4, "I"), "srt": (8, "H"), "sta": (12, "B"), "flg": (16, "B")}
KTUCM_SIZE = 20
# ours: the ktucf part of a 5.4 (its dump line: uba, ext, spc, fbi), a field after the ktucm
KTUCF_AT = {
    "uba_dba": (0, "I"),
    "uba_seq": (4, "H"),
    "uba_rec": (6, "B"),
    "fbi": (7, "B"),
    "ext": (8, "H"),
    "spc": (10, "H"),
}
KTUCF_SIZE = 12
KTB_AT = {
    "op": (0, "B"),
    "usn": (8, "H"),
    "slt": (10, "H"),
    "sqn": (12, "I"),
    # ours: the uba of op F / C / L, the ITL copy of op L (flags as their 4 letters)
    "uba_dba": (16, "I"),
    "uba_seq": (20, "H"),
    "uba_rec": (22, "B"),
    "itl_flg": (24, "4s"),
    "itl_lkc": (28, "H"),
    "itl_scn": (32, "Q"),
}
KTB_SIZE = 24  # op F / C / Z; op L (an ITL copy): KTB_ITL_SIZE
KTB_ITL_SIZE = 40
KTB_KINDS = {1: "F", 2: "C", 3: "Z", 4: "L", 5: "R", 6: "N"}  # op & 0x0F -> Oracle's letter
KTB_CLEANOUT = 0x10  # op bit: a "Block cleanout record" follows the KTB (ours: CLEANOUT_AT)
# ours: a block cleanout (in a KTB with op 0x1n, and the whole of a 4.1): SCN, entries
CLEANOUT_AT = {"scn": (0, "Q"), "n": (8, "H")}
CLEANOUT_SIZE = 12
CLEANOUT_ENTRY_AT = {"itli": (0, "B"), "flg": (1, "B"), "scn": (4, "Q")}
CLEANOUT_ENTRY_SIZE = 12
KDO_AT = {
    "bdba": (0, "I"),
    "hdba": (4, "I"),
    "maxfr": (8, "H"),
    "op": (10, "B"),
    "flags": (11, "B"),
    "itli": (12, "B"),
    "ispac": (13, "B"),
}
# row operation specific parts of the KDO field
KDO_ROW_AT = {  # IRP / ORP: a whole row piece
    "fb": (16, "B"),
    "lb": (17, "B"),
    "cc": (18, "B"),
    "cki": (19, "B"),
    "nrid_bdba": (20, "I"),
    "nrid_slot": (24, "H"),
    "size": (40, "H"),
    "slot": (42, "H"),
    "tabn": (44, "B"),
}
KDO_ROW_NULLS = 45
KDO_URP_AT = {
    "fb": (16, "B"),
    "lock": (17, "B"),
    "ckix": (18, "B"),
    "tabn": (19, "B"),
    "slot": (20, "H"),
    "ncol": (22, "B"),
    "nnew": (23, "B"),
    "size": (24, "h"),
}
KDO_URP_NULLS = 26
KDO_SLOT_AT = {"slot": (16, "H"), "tabn": (18, "B")}  # DRP, LKR, CFA
KDO_ARRAY_AT = {"tabn": (16, "B"), "lock": (17, "B"), "nrow": (18, "B")}  # QMI, QMD
KDO_SIZES = {2: KDO_ROW_NULLS, 6: KDO_ROW_NULLS, 5: KDO_URP_NULLS, 11: 20, 12: 20}  # + bitmap
KDO_SLOT_SIZE = 20  # DRP, LKR, CFA and ops with no row part
# 19.1 direct-path load: a whole data block image (ktbbh, ITL entries, kdbh, row directory)
KTBBH_AT = {
    "type": (0, "B"),
    "objd": (4, "I"),
    "csc": (8, "Q"),
    "itc": (16, "B"),
    "bdba": (20, "I"),
}
KTBBH_ITL_AT = {"usn": (0, "H"), "slt": (2, "H"), "sqn": (4, "I")}  # ITL entry 1: the loader's xid
KTBBH_ITL = 24  # the ITL list starts here, 24 bytes an entry
KDBH_AT = {"flag": (0, "B"), "ntab": (1, "B"), "nrow": (2, "H")}
KDBH_DIRECTORY = 14  # table directory (4 bytes a table), then the row directory (2 a row)
BLOCK_TYPE_DATA = 1
SUPP_AT = {"type": (0, "B"), "fb": (1, "B"), "cc": (2, "H"), "before": (6, "H"), "after": (8, "H")}
SUPP_ROW_AT = {"bdba": (20, "I"), "slot": (24, "H")}  # in the 28-byte form
SUPP_SIZE = 20
SUPP_TYPE = 1
# ours: 5.20 session information, fields 0, 3 and 4 (field 1 is the transaction name, 5 the
# client id, 7 the user name)
SESSION_AT = {"session": (0, "I"), "serial": (4, "I")}
SESSION_VERSION_AT = {"version": (0, "I")}
SESSION_AUDIT_AT = {"audit_sid": (0, "Q")}
SESSION_FIELDS = 8
# ours: 5.6 / 5.11 field 1 (after the ktub): the undone change's transaction and undo address
UNDO_APPLIED_AT = {
    "usn": (0, "H"),
    "slt": (2, "H"),
    "sqn": (4, "I"),
    "uba_dba": (8, "I"),
    "uba_seq": (12, "H"),
    "uba_rec": (14, "B"),
}
UNDO_APPLIED_SIZE = 16
# ours: layer 10 (index leaf) redo and 10.22 undo, the field after the KTB; then the fields
# keys, key sizes (u16 each), slots (u16 each), keydata (ROWIDs), action text (when not in
# INDEX_ACTIONS)
INDEX_AT = {
    "action": (0, "B"),
    "array": (1, "B"),
    "itl": (2, "B"),
    "kdxlkflg": (3, "B"),
    "sno": (4, "H"),
    "row_size": (6, "H"),
    "indexid": (8, "I"),
    "block": (12, "I"),
}
INDEX_SIZE = 16
INDEX_ACTIONS = {
    1: "insert leaf row",
    2: "delete leaf row",
    3: "purge leaf row",
    4: "restore leaf row (clear leaf delete flags)",
}
# ours: 24.1 DDL field 0; then owner, name, statement text, definition (JSON)
DDL_AT = {"usn": (0, "H"), "slt": (2, "H"), "sqn": (4, "I"), "obj": (8, "I")}
# Oracle's 24.1 as OpenLogReplicator's reader describes it (no 24.1 of a user table is in the
# corpus): field 1 of 18 bytes or more (the xid at 4, the DDL type at 16; types 4, 5, 6, 8, 9
# and 10 are of temporary objects), and the object in field 12 at 0 (a record with 12 fields
# or more; ours has 5, so the two are told apart by the field count).
ORACLE_DDL_AT = {"usn": (4, "H"), "slt": (6, "H"), "sqn": (8, "I"), "type": (16, "H")}
ORACLE_DDL_SIZE = 18
ORACLE_DDL_OBJ_FIELD = 11  # (field 12, from 0)
ORACLE_DDL_OBJ_AT = (0, "I")
ORACLE_DDL_TEMPORARY = frozenset({4, 5, 6, 8, 9, 10})
# 11.17 LLB (LogMiner's LOB bookkeeping: which LOB of which table a transaction writes). Field 0
# 16 bytes, field 1 its type byte, field 2 by type (oracdc's OraCdcChangeLlb read as a
# description; checked on its 19c hex records, both byte orders): type 1 a LOB write, type 3
# (the table, and from 36 bytes on the column), type 4 the base table's LOB columns (field 3:
# their numbers, 2 bytes each).
LLB_TYPE_FIELD = 1
LLB_DATA_FIELD = 2
LLB_AT = {
    1: {"usn": (4, "H"), "slt": (6, "H"), "sqn": (8, "I"), "lob_id": (12, "10s"),
        "column": (22, "H"), "fsiz": (32, "H"), "obj": (36, "I")},
    3: {"usn": (0, "H"), "slt": (2, "H"), "sqn": (4, "I"), "obj": (8, "I")},
    4: {"obj": (0, "I"), "usn": (8, "H"), "slt": (10, "H"), "sqn": (12, "I")},
}  # fmt: skip
LLB_TYPE3_COLUMN = (34, "H")  # type 3: the column, when field 2 holds it (36 bytes and more)
DDL_SIZE = 12
KDO_OP_MASK = 0x1F
KDO_FLAG_ONE_FIELD = 0x80  # the columns in one field, each with its length (KDOM2)
KDO_FLAG_COMPRESSED = 0x08  # a compressed row image in one field (basic/OLTP compression)
KTUCM_ROLLBACK = 0x04
UNDO_CLS_FIRST = 15  # undo header of segment n is class 15 + 2n, its blocks 16 + 2n

KDO_OPS = {
    1: "IUR",
    2: "IRP",
    3: "DRP",
    4: "LKR",
    5: "URP",
    6: "ORP",
    7: "MFC",
    8: "CFA",
    9: "CKI",
    10: "SKL",
    11: "QMI",
    12: "QMD",
    16: "LMN",
    17: "LLB",
    19: "21?",
    21: "CMP",
}


#: struct codes by byte order, made once (the reader's hot path)
_STRUCTS: dict[str, dict[str, struct.Struct]] = {"<": {}, ">": {}}
#: a table's fields read at once, by the table's id and byte order: (the table itself: its
#: id stays its own, names, one struct over them in offset order, the bytes it needs; no
#: struct: fields overlap or are not integers). The tables are constants: a test that
#: changes one empties this.
#: (:func:`_fields` keeps its structs here too, by the table's id, order, names and whole.)
_WHOLE: dict[tuple[object, ...], Any] = {}


def _get(buf: bytes, table: dict[str, tuple[int, str]], name: str, order: str) -> int:
    off, code = table[name]
    s = _STRUCTS[order].get(code)
    if s is None:
        s = _STRUCTS[order][code] = struct.Struct(order + code)
    if off + s.size > len(buf):
        raise RedoCorruptError(f"field of {len(buf)} bytes has no {name} at {off}", off)
    return int(s.unpack_from(buf, off)[0])


def _all(buf: bytes, table: dict[str, tuple[int, str]], order: str) -> dict[str, int]:
    """Every field of ``table``: one struct read when the buffer holds them all, else field
    by field (the first one missing is the error :func:`_get` raises)."""
    whole = _WHOLE.get((id(table), order))
    if whole is None or whole[0] is not table:
        whole = _WHOLE[(id(table), order)] = _compile(table, order)
    _t, names, st, need = whole
    if st is not None and len(buf) >= need:
        return dict(zip(names, st.unpack_from(buf, 0), strict=True))
    return {n: _get(buf, table, n, order) for n in table}


def _fields(
    buf: bytes, table: dict[str, tuple[int, str]], order: str, names: tuple[str, ...], whole: bool
) -> tuple[int, ...]:
    """The fields ``names`` (in offset order) of ``table``, read with one struct. Errors as
    the reads they stand for: ``whole``, :func:`_all`'s (every field of the table must be
    there); else :func:`_get`'s of each name in turn."""
    key = (id(table), order, names, whole)
    got = _WHOLE.get(key)
    if got is None or got[0] is not table:
        got = _WHOLE[key] = _compile_fields(table, order, names, whole)
    _t, st, need = got
    if len(buf) >= need:
        return st.unpack_from(buf, 0)
    if whole:
        d = _all(buf, table, order)
        return tuple(d[n] for n in names)
    return tuple(_get(buf, table, n, order) for n in names)


def _compile_fields(
    table: dict[str, tuple[int, str]], order: str, names: tuple[str, ...], whole: bool
) -> tuple[object, struct.Struct, int]:
    fmt, pos = order, 0
    for n in names:
        off, code = table[n]
        if off < pos:
            raise ValueError(f"{names}: not in offset order")
        fmt += f"{off - pos}x{code}" if off > pos else code
        pos = off + struct.calcsize(order + code)
    if whole:
        pos = max(off + struct.calcsize(order + code) for off, code in table.values())
    return table, struct.Struct(fmt), pos


_OPC: dict[tuple[int, int], str] = {}  # "layer.code" texts of undo operations, made once


def _compile(
    table: dict[str, tuple[int, str]], order: str
) -> tuple[object, tuple[str, ...], struct.Struct | None, int]:
    fmt, pos = order, 0
    names = tuple(sorted(table, key=lambda n: table[n][0]))
    for n in names:
        off, code = table[n]
        if off < pos or code.endswith("s"):
            return table, (), None, 0
        fmt += f"{off - pos}x{code}" if off > pos else code
        pos = off + struct.calcsize(order + code)
    return table, names, struct.Struct(fmt), pos


@quick_init
@dataclass(frozen=True)
class Xid:
    usn: int
    slt: int
    sqn: int

    def text(self) -> str:
        return f"{self.usn}.{self.slt}.{self.sqn}"

    def dump(self) -> str:
        return f"0x{self.usn:04x}.{self.slt:03x}.{self.sqn:08x}"


@quick_init
@dataclass(frozen=True)
class RowOp:
    """A KDO row operation: what the undo (in a 5.1) or the redo (an 11.x) does to a row."""

    op: int  # KDO op code (2 IRP, 3 DRP, 5 URP ...)
    bdba: int
    slot: int
    tabn: int
    fb: int | None  # row flags where the operation carries them
    columns: tuple[tuple[int, bytes | None], ...] = ()  # (column number from 0, value or NULL)
    nrid: tuple[int, int] | None = None  # next piece of a chained row
    slots: tuple[int, ...] = ()  # QMI / QMD: every row's slot
    rows: tuple[tuple[tuple[int, bytes | None], ...], ...] = ()  # QMI: every row's columns
    compressed: bool = False  # a compressed segment's row: its columns are not decoded

    @property
    def name(self) -> str:
        return KDO_OPS.get(self.op, f"op {self.op}")


@quick_init
@dataclass(frozen=True)
class Supplemental:
    fb: int
    cc: int
    columns: tuple[tuple[int, bytes | None], ...]  # (column number from 0, value)
    bdba: int | None = None
    slot: int | None = None
    before: int = 0  # table column (from 1) of the undo image's first column (0: not given)
    after: int = 0  # the same for the redo image (docs/redo_format.md "Rows in pieces")


@quick_init
@dataclass(frozen=True)
class Begin:  # 5.2
    xid: Xid


@quick_init
@dataclass(frozen=True)
class Undo:  # 5.1, and the ktub of 5.6 / 5.11
    xid: Xid | None
    objn: int
    objd: int
    opc: str  # "11.1" for table rows, "10.22" index ...
    row: RowOp | None
    supp: Supplemental | None


@quick_init
@dataclass(frozen=True)
class End:  # 5.4
    xid: Xid
    rollback: bool


@quick_init
@dataclass(frozen=True)
class Session:  # 5.20
    user: str
    transaction_name: str


@quick_init
@dataclass(frozen=True)
class Redo:  # 11.x
    xid: Xid | None
    row: RowOp


@quick_init
@dataclass(frozen=True)
class DirectLoad:  # 19.1
    objd: int
    block_type: int
    rows: tuple[tuple[int, int, tuple[tuple[int, bytes | None], ...]], ...]  # (slot, fb, columns)
    xid: Xid | None = None  # the loader's, from the block's first ITL entry (None: none)


@dataclass(frozen=True)
class Llb:  # 11.17: a LOB of a table written (LOBs are not captured: docs/redo_format.md)
    type: int  # 1 a LOB write, 3 the table (and column), 4 the table's LOB columns
    xid: Xid | None
    obj: int  # the table's object number
    column: int | None  # the LOB column's number (from 1), where the type says it
    lob_id: bytes | None = None  # type 1: the LOB locator's id (10 bytes)
    fsiz: int | None = None  # type 1
    columns: tuple[int, ...] = ()  # type 4: the table's LOB columns


@dataclass(frozen=True)
class Other:
    op: str


Decoded = Begin | Undo | End | Session | Redo | DirectLoad | Llb | Other


def undo_xid_of(cls: int, slt: int, sqn: int) -> Xid:
    return Xid((cls - UNDO_CLS_FIRST) // 2, slt, sqn)


def _begin(v: Vector) -> Decoded:
    f = _field(v, 0)
    return Begin(
        undo_xid_of(v.cls, _get(f, KTUDH_AT, "slt", v.order), _get(f, KTUDH_AT, "sqn", v.order))
    )


def _end(v: Vector) -> Decoded:
    f = _field(v, 0)
    o = v.order
    flg = _get(f, KTUCM_AT, "flg", o) if len(f) > KTUCM_AT["flg"][0] else 0
    return End(
        undo_xid_of(v.cls, _get(f, KTUCM_AT, "slt", o), _get(f, KTUCM_AT, "sqn", o)),
        bool(flg & KTUCM_ROLLBACK),
    )


def _session(v: Vector) -> Decoded:
    def text(i: int) -> str:
        return v.fields[i].rstrip(b"\0").decode("utf-8", "replace") if len(v.fields) > i else ""

    return Session(user=text(7), transaction_name=text(1))


def _field(v: Vector, i: int) -> bytes:
    if i >= len(v.fields):
        raise RedoCorruptError(
            f"change vector {v.op} has {len(v.fields)} fields, needs field {i + 1}"
        )
    return v.fields[i]


def _nulls(bitmap: bytes, i: int) -> bool:
    return i // 8 < len(bitmap) and bool(bitmap[i // 8] & (1 << (i % 8)))


def _one_field_columns(buf: bytes, n: int) -> list[bytes | None]:
    """Columns in one field: each an Oracle length byte (0xFF NULL, 0xFE then 2 bytes) and data."""
    out: list[bytes | None] = []
    pos = 0
    for _ in range(n):
        if pos >= len(buf):
            raise RedoCorruptError("packed columns end early", pos)
        ln = buf[pos]
        pos += 1
        if ln == 0xFF:
            out.append(None)
            continue
        if ln == 0xFE:
            if pos + 2 > len(buf):
                raise RedoCorruptError("packed column length cut", pos)
            ln = struct.unpack_from(">H", buf, pos)[0]
            pos += 2
        if pos + ln > len(buf):
            raise RedoCorruptError("packed column runs past its field", pos)
        out.append(buf[pos : pos + ln])
        pos += ln
    return out


def _columns(
    v: Vector, k: int, n: int, bitmap: bytes, limit: int
) -> tuple[list[bytes | None], int]:
    """``n`` column values from field ``k`` on, fields up to ``limit`` available. Oracle writes
    a field for every column (empty or bitmap-marked: NULL), or (seen in 19c URP undo) fields
    only for the columns the bitmap does not mark NULL."""
    avail = limit - k
    if avail >= n:
        vals = [
            None if _nulls(bitmap, i) or not v.fields[k + i] else v.fields[k + i] for i in range(n)
        ]
        return vals, k + n
    present = [i for i in range(n) if not _nulls(bitmap, i)]
    if avail >= 1 and avail < len(present):  # the row's columns packed in one field
        try:
            return _one_field_columns(v.fields[k], n), k + 1
        except RedoCorruptError as exc:  # a compressed row image: tokens, not columns
            raise RedoUnsupportedError(f"change vector {v.op}: a compressed row") from exc
    if avail < len(present):
        raise RedoCorruptError(f"change vector {v.op}: {n} columns, {avail} fields")
    out: list[bytes | None] = [None] * n
    for j, i in enumerate(present):
        out[i] = v.fields[k + j] or None
    return out, k + len(present)


def _supp_at(v: Vector, k: int) -> int:
    """Where a 5.1's supplemental data starts, found from its shape: a header (type 1 or 2,
    20 or 28 bytes) followed by its column numbers, lengths and ``cc`` values, ending the
    vector (preferred) or followed by further fields (seen after a DRP undo in 19c)."""
    nf = len(v.fields)
    loose = nf
    for s in range(k, nf):
        f = v.fields[s]
        if len(f) in (20, 28) and f[0] in (1, 2):
            cc = _get(f, SUPP_AT, "cc", v.order)
            end = s + 3 + cc if cc else s + 1
            if end == nf:
                return s
            if end < nf and loose == nf:
                loose = s
    return loose


def _row_op(v: Vector, k: int, limit: int | None = None) -> tuple[RowOp, int]:
    """The KDO at field ``k`` and the column fields after it (before ``limit``); returns the
    next field index."""
    o = v.order
    limit = len(v.fields) if limit is None else limit
    kdo = _field(v, k)
    bdba, kop, flags = _fields(kdo, KDO_AT, o, ("bdba", "op", "flags"), True)
    op = kop & KDO_OP_MASK
    nxt = k + 1
    if op in (2, 6):  # IRP, ORP
        fb, cc, nrid_bdba, nrid_slot, slot, tabn = _fields(
            kdo, KDO_ROW_AT, o, ("fb", "cc", "nrid_bdba", "nrid_slot", "slot", "tabn"), True
        )
        bitmap = kdo[KDO_ROW_NULLS : KDO_ROW_NULLS + (cc + 7) // 8]
        if flags & KDO_FLAG_COMPRESSED:
            _field(v, nxt)
            row = RowOp(op, bdba, slot, tabn, fb, (), None, compressed=True)
            return row, nxt + 1
        if flags & KDO_FLAG_ONE_FIELD and cc:
            vals = _one_field_columns(_field(v, nxt), cc)
            nxt += 1
        else:
            try:
                vals, nxt = _columns(v, nxt, cc, bitmap, limit)
            except RedoUnsupportedError:
                return RowOp(op, bdba, slot, tabn, fb, (), None, compressed=True), nxt + 1
        nrid = next_piece(fb, nrid_bdba, nrid_slot)
        row = RowOp(op, bdba, slot, tabn, fb, tuple(enumerate(vals)), nrid)
        return row, nxt
    if op == 5:  # URP
        fb, tabn, slot, n = _fields(kdo, KDO_URP_AT, o, ("fb", "tabn", "slot", "nnew"), True)
        bitmap = kdo[KDO_URP_NULLS : KDO_URP_NULLS + (n + 7) // 8]
        nums_f = _field(v, nxt) if n else b""
        if len(nums_f) < 2 * n:
            raise RedoCorruptError(f"URP: {n} column numbers in {len(nums_f)} bytes")
        nums = struct.unpack_from(f"{o}{n}H", nums_f, 0)
        nxt += 1 if n else 0
        if flags & KDO_FLAG_ONE_FIELD and n:
            uvals = _one_field_columns(_field(v, nxt), n)
            nxt += 1
        else:
            uvals, nxt = _columns(v, nxt, n, bitmap, limit)
        cols = tuple(zip(nums, uvals, strict=True))
        return RowOp(op, bdba, slot, tabn, fb, cols), nxt
    if op in (11, 12):  # QMI, QMD
        tabn, n = _fields(kdo, KDO_ARRAY_AT, o, ("tabn", "nrow"), True)
        sl = _field(v, nxt)
        if len(sl) < 2 * n:
            raise RedoCorruptError(f"{KDO_OPS[op]}: {n} slots in {len(sl)} bytes")
        slots = struct.unpack_from(f"{o}{n}H", sl, 0)
        nxt += 1
        rows: list[tuple[tuple[int, bytes | None], ...]] = []
        if op == 11 and nxt < len(v.fields):
            rows = _array_rows(v.fields[nxt], n)
            nxt += 1
        return RowOp(
            op,
            bdba,
            slots[0] if slots else 0,
            tabn,
            None,
            slots=tuple(slots),
            rows=tuple(rows),
        ), nxt
    if op in (3, 4, 8):  # DRP, LKR, CFA
        slot, tabn = _fields(kdo, KDO_SLOT_AT, o, ("slot", "tabn"), True)
        return RowOp(op, bdba, slot, tabn, 0 if op == 3 else None), nxt
    return RowOp(op, bdba, 0, 0, None), nxt  # LMN and others: no row in the KDO itself


def _array_rows(buf: bytes, n: int) -> list[tuple[tuple[int, bytes | None], ...]]:
    """QMI rows: each a row header (fb, lb, cc) then cc columns with Oracle length bytes."""
    rows: list[tuple[tuple[int, bytes | None], ...]] = []
    pos = 0
    for _ in range(n):
        if pos + 3 > len(buf):
            raise RedoCorruptError("QMI row header cut", pos)
        cc = buf[pos + 2]
        pos += 3
        vals: list[bytes | None] = []
        for _c in range(cc):
            if pos >= len(buf):
                raise RedoCorruptError("QMI row cut", pos)
            ln = buf[pos]
            pos += 1
            if ln == 0xFF:
                vals.append(None)
                continue
            if ln == 0xFE:
                if pos + 2 > len(buf):
                    raise RedoCorruptError("QMI column length cut", pos)
                ln = struct.unpack_from(">H", buf, pos)[0]
                pos += 2
            if pos + ln > len(buf):
                raise RedoCorruptError("QMI column runs past its field", pos)
            vals.append(buf[pos : pos + ln])
            pos += ln
        rows.append(tuple(enumerate(vals)))
    return rows


def _supplemental(v: Vector, k: int) -> Supplemental | None:
    if k >= len(v.fields):
        return None
    o = v.order
    f = v.fields[k]
    if len(f) < 20:
        return None
    fb, cc, before, after = _fields(f, SUPP_AT, o, ("fb", "cc", "before", "after"), True)
    bdba = slot = None
    if len(f) >= 26:
        bdba, slot = _fields(f, SUPP_ROW_AT, o, ("bdba", "slot"), False)
    cols: list[tuple[int, bytes | None]] = []
    if cc:
        nums_f, lens_f = _field(v, k + 1), _field(v, k + 2)
        if len(nums_f) < 2 * cc or len(lens_f) < 2 * cc:
            raise RedoCorruptError(f"supplemental data: {cc} columns, short number/length fields")
        nums = struct.unpack_from(f"{o}{cc}H", nums_f, 0)
        for i in range(cc):
            val = _field(v, k + 3 + i)
            cols.append((nums[i] - 1, val if val else None))
    return Supplemental(fb, cc, tuple(cols), bdba, slot, before, after)


def _ktub(v: Vector, k: int) -> tuple[int, int, str]:
    f = _field(v, k)
    objn, objd, layer, code = _fields(
        f, KTUB_AT, v.order, ("objn", "objd", "opc_layer", "opc_code"), False
    )
    opc = _OPC.get((layer, code))
    if opc is None:
        opc = _OPC[(layer, code)] = f"{layer}.{code}"
    return objn, objd, opc


def _undo(v: Vector) -> Decoded:
    o = v.order
    d = _field(v, 0)
    xid = Xid(*_fields(d, KTUDB_AT, o, ("usn", "slt", "sqn"), False))
    objn, objd, opc = _ktub(v, 1)
    row = supp = None
    if opc == "11.1" and len(v.fields) > 3:
        at = _supp_at(v, 4)
        row, _ = _row_op(v, 3, at)
        supp = _supplemental(v, at)
    return Undo(xid, objn, objd, opc, row, supp)


def _undo_applied(v: Vector) -> Decoded:
    objn, objd, opc = _ktub(v, 0)
    return Undo(None, objn, objd, opc, None, None)


def _redo(v: Vector) -> Decoded:
    o = v.order
    ktb = _field(v, 0)
    xid = None
    if _get(ktb, KTB_AT, "op", o) & 0x0F == 0x01 and len(ktb) >= 16:  # op F: carries the xid
        xid = Xid(*_fields(ktb, KTB_AT, o, ("usn", "slt", "sqn"), False))
    row, _ = _row_op(v, 1)
    return Redo(xid, row)


def _row_at(block: bytes, pos: int) -> tuple[int, tuple[tuple[int, bytes | None], ...]]:
    """A row in a block: flag byte, lock byte, column count, then length-prefixed columns."""
    if pos + 3 > len(block):
        raise RedoCorruptError("a row header runs past its block", pos)
    fb, cc = block[pos], block[pos + 2]
    vals = _one_field_columns(block[pos + 3 :], cc)
    return fb, tuple(enumerate(vals))


def _direct_load(v: Vector) -> Decoded:
    o = v.order
    blk = _field(v, 0)
    typ = _get(blk, KTBBH_AT, "type", o)
    objd = _get(blk, KTBBH_AT, "objd", o)
    if typ != BLOCK_TYPE_DATA:
        return DirectLoad(objd, typ, ())
    itc = _get(blk, KTBBH_AT, "itc", o)
    kdbh = KTBBH_ITL + KTBBH_ITL * itc
    xid = None
    if itc:
        itl = blk[KTBBH_ITL:]
        got = Xid(*(_get(itl, KTBBH_ITL_AT, k, o) for k in ("usn", "slt", "sqn")))
        # Oracle's own direct-load blocks name no transaction there (0xffff.000.00000000,
        # as their block dumps show it: oracdc's 19c block); the embedded database's writer
        # names the loader's
        xid = got if got.usn != 0xFFFF and (got.usn, got.slt, got.sqn) != (0, 0, 0) else None
    head = blk[kdbh:]
    ntab, nrow = _get(head, KDBH_AT, "ntab", o), _get(head, KDBH_AT, "nrow", o)
    rd = KDBH_DIRECTORY + 4 * ntab
    if rd + 2 * nrow > len(head):
        raise RedoCorruptError(f"19.1: a row directory of {nrow} rows runs past the block")
    rows = []
    for slot, off in enumerate(struct.unpack_from(f"{o}{nrow}H", head, rd)):
        if off == 0xFFFF or kdbh + off >= len(blk):
            continue  # a free slot
        fb, cols = _row_at(blk, kdbh + off)
        rows.append((slot, fb, cols))
    return DirectLoad(objd, typ, tuple(rows), xid)


def _llb(v: Vector) -> Decoded:
    """11.17: a type this reader does not know is Other (never an error)."""
    o = v.order
    kind = _field(v, LLB_TYPE_FIELD)
    typ = kind[0] if kind else 0
    table = LLB_AT.get(typ)
    if table is None:
        return Other(v.op)
    f = _field(v, LLB_DATA_FIELD)
    xid = Xid(_get(f, table, "usn", o), _get(f, table, "slt", o), _get(f, table, "sqn", o))
    obj = _get(f, table, "obj", o)
    if typ == 1:
        off = LLB_AT[1]["lob_id"][0]
        if off + 10 > len(f):
            raise RedoCorruptError(f"11.17: field of {len(f)} bytes has no LOB id at {off}", off)
        return Llb(1, xid, obj, _get(f, table, "column", o), bytes(f[off : off + 10]),
                   _get(f, table, "fsiz", o))  # fmt: skip
    if typ == 3:
        col = _get(f, {"column": LLB_TYPE3_COLUMN}, "column", o) if len(f) >= 36 else None
        return Llb(3, xid, obj, col)
    nums = v.fields[3] if len(v.fields) > 3 else b""
    cols = struct.unpack_from(f"{o}{len(nums) // 2}H", nums, 0)
    return Llb(4, xid, obj, None, columns=tuple(cols))


DECODERS: dict[str, Callable[[Vector], Decoded]] = {
    "11.17": _llb,
    "19.1": _direct_load,
    "5.1": _undo,
    "5.2": _begin,
    "5.4": _end,
    "5.6": _undo_applied,
    "5.11": _undo_applied,
    "5.20": _session,
    **{f"11.{c}": _redo for c in (2, 3, 4, 5, 6, 8, 11, 12, 16)},
}


#: Level-11 opcodes that change rows of a table but that this reader does not decode (no
#: public source states their layout: docs/redo_format.md): met in a captured table, capture
#: stops rather than lose the rows.
UNDECODED_ROW_OPS = {"11.19": "an array update (Update Row Array)"}


def decode(v: Vector) -> Decoded:
    fn = DECODERS.get(v.op)
    return fn(v) if fn else Other(v.op)


@dataclass(frozen=True)
class RowChange:
    """A level-11 change bound to its undo in the same record: what a row change is made of."""

    op: str  # "11.5"
    obj: int  # data object id (vector header)
    con_id: int
    xid: Xid | None
    fb: int | None
    supp_fb: int | None
    rowid: str
    after: tuple[tuple[int, bytes | None], ...]
    before: tuple[tuple[int, bytes | None], ...]
    supplemental: tuple[tuple[int, bytes | None], ...]
    undo_op: str | None = None


def row_changes(rec: Record) -> list[RowChange]:
    """Each 11.x of a record with the 5.1 (or 5.6 / 5.11) before it: one row change each.
    Row flags not carried by the redo operation (URP, LMN) are the undo's, as Oracle's dumps
    of the pair show them."""
    out: list[RowChange] = []
    undo: Undo | None = None
    for v in rec.vectors:
        d = decode(v)
        if isinstance(d, Undo):
            undo = d
            continue
        if not isinstance(d, Redo):
            continue
        r = d.row
        fb = r.fb
        if fb is None and undo and undo.row:
            fb = undo.row.fb
        xid = d.xid or (undo.xid if undo else None)
        out.append(
            RowChange(
                op=v.op,
                obj=v.obj,
                con_id=v.con_id,
                xid=xid,
                fb=fb,
                supp_fb=undo.supp.fb if undo and undo.supp else None,
                rowid=rowid(v.obj, v.dba, r.slot),
                after=r.columns,
                before=undo.row.columns if undo and undo.row else (),
                supplemental=undo.supp.columns if undo and undo.supp else (),
                undo_op=undo.row.name if undo and undo.row else None,
            )
        )
        undo = None
    return out


def undo_ids(v: Vector) -> tuple[Xid | None, int, int, str]:
    """A 5.1's (or 5.6 / 5.11's) transaction and object, without decoding its row."""
    if v.op == "5.1":
        o = v.order
        d = _field(v, 0)
        xid = Xid(*_fields(d, KTUDB_AT, o, ("usn", "slt", "sqn"), False))
        return (xid, *_ktub(v, 1))
    return (None, *_ktub(v, 0))
