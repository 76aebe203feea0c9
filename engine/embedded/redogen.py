"""Change vectors for each kind of DML, shaped like seed 002's Oracle redo.

Pure functions from a transaction's identity and row images to change vectors; the session
layer decides the order and groups them into records:

- first change of a transaction: ``5.2`` slot allocation, ``5.1`` (begin) undo, row redo,
  ``5.20`` session info — then ``5.1`` + row redo for every later row change;
- index maintenance: one record per key index with ``5.1`` (10.22 index undo) + ``10.2``/``10.4``;
- commit ``5.4``; rollback = compensation records (``5.6`` + inverse row op) then ``5.4``
  with the rollback flag.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from engine.embedded.dictionary import IndexDef, TableDef
from engine.redo.ids import Uba, Xid, make_dba
from engine.redo.model import (
    ROLLBACK_FLAG,
    ChangeVector,
    Column,
    Commit,
    IndexOp,
    Kdo,
    Ktb,
    RowImage,
    SessionInfo,
    SlotAlloc,
    Undo,
)

UNDO_FILE = 3
KDO_SIZE_MAX = 0xFFFF  # a KDO's row size is 16 bits (engine/redo/vectors.py KDO_ROW_AT "size")
_UNDO_BLOCKS = make_dba(UNDO_FILE, 0x100)  # undo block of usn u, sequence s: + u * 0x100 + s % 256
Row = tuple[bytes | None, ...]


@dataclass
class TxnIds:
    """What redo needs to know about a transaction (picklable, kept with the session)."""

    xid: Xid
    undo_seq: int
    rec: int = 0
    logon_user: int = 90
    started: bool = False
    blocks: set[int] = field(default_factory=set)  # data blocks touched (KTB F vs C)
    last_uba: Uba | None = None

    @property
    def header_dba(self) -> int:
        return make_dba(UNDO_FILE, 0x70 + self.xid.usn * 0x10)

    @property
    def undo_dba(self) -> int:
        return _UNDO_BLOCKS + self.xid.usn * 0x100 + (self.undo_seq & 0xFF)

    @property
    def header_cls(self) -> int:
        return 15 + 2 * self.xid.usn

    def next_uba(self) -> Uba:
        uba = Uba(*self.next_rec())
        self.last_uba = uba
        return uba

    def next_rec(self) -> tuple[int, int, int]:
        """The next undo record's address as ``(dba, seq, rec)`` (no :class:`Uba` built;
        ``last_uba`` then reads as the current address, see :meth:`current_rec`)."""
        rec = self.rec + 1
        if rec > 0xFF:
            rec = 1
            self.undo_seq = (self.undo_seq + 1) & 0xFFFF
        self.rec = rec
        self.last_uba = None
        seq = self.undo_seq
        return _UNDO_BLOCKS + self.xid.usn * 0x100 + (seq & 0xFF), seq, rec

    def peek_rec(self) -> tuple[int, int, int]:
        """The address :meth:`next_rec` will give, not taken."""
        saved = self.rec, self.undo_seq, self.last_uba
        uba = self.next_rec()
        self.rec, self.undo_seq, self.last_uba = saved
        return uba

    def current_rec(self) -> tuple[int, int, int]:
        """The address of the transaction's last undo record (a commit points to it)."""
        u = self.last_uba
        if u is not None:
            return u.dba, u.seq, u.rec
        return self.undo_dba, self.undo_seq, self.rec

    def current_uba(self) -> Uba:
        return self.last_uba or Uba(*self.current_rec())


def columns_of(row: Row) -> tuple[Column, ...]:
    """Row columns as Oracle writes them: trailing NULLs are not stored."""
    n = len(row)
    while n and row[n - 1] is None:
        n -= 1
    return tuple(Column(i, row[i]) for i in range(n))


def columns_of_row(row: Row) -> Row:
    """``row`` without its trailing NULLs (what :func:`columns_of` stores)."""
    n = len(row)
    while n and row[n - 1] is None:
        n -= 1
    return row[:n]


#: The flags of a chained row's piece by (head, last): Oracle's, as the oracdc 19c vectors
#: show them (docs/redo_format.md); a row in one piece is ``--H-FL--``.
PIECE_FB = {
    (True, True): "--H-FL--",
    (True, False): "--H-F---",
    (False, False): "--------",
    (False, True): "-----L--",
}


#: The supplemental flags of a row piece's 5.1 by (first record of the row, last record),
#: as Oracle 19c writes a chained insert (oracdc Op11_2_Test.java): F on the first record
#: (the last piece, logged first), L on the last (the head), nothing between; one record,
#: both. The redo miner binds by them (engine/redo/pieces.py: docs/redo_format.md).
SUPP_FB = {
    (True, True): "--H-FL--",
    (True, False): "----F---",
    (False, False): "--------",
    (False, True): "-----L--",
}


def row_size(row: Row) -> int:
    return 3 + sum(1 + (len(v) if v else 0) for v in row)


def index_key(index_cols: tuple[int, ...], row: Row) -> bytes:
    out = bytearray()
    for i in index_cols:
        v = row[i]
        if v is None:
            out.append(0xFF)
        else:
            out.append(len(v))
            out += v
    return bytes(out)


def keydata(dba: int, slot: int) -> bytes:
    return struct.pack(">IH", dba, slot)


def slot_alloc(t: TxnIds, scn: int) -> ChangeVector:
    uba = Uba(t.undo_dba, t.undo_seq, t.rec + 1)
    body = SlotAlloc(slt=t.xid.slot, sqn=t.xid.sqn, flg=0x12, siz=0, fbi=0, uba=uba)
    return ChangeVector(
        5, 2, body, typ=0, cls=t.header_cls, afn=UNDO_FILE, dba=t.header_dba, scn=scn
    )


def session_info(sid: int, serial: int, user: str, txn_name: str, audit: int) -> ChangeVector:
    body = SessionInfo(
        session=sid, serial=serial, username=user, txn_name=txn_name, audit_sid=audit
    )
    return ChangeVector(5, 20, body, marker=True)


def _undo_cv(t: TxnIds, scn: int, body: Undo, seq: int = 1) -> ChangeVector:
    return ChangeVector(
        5, 1, body, typ=0, cls=t.header_cls + 1, afn=UNDO_FILE, dba=t.undo_dba, scn=scn, seq=seq
    )


def _ktb_redo(t: TxnIds, block: int, uba: Uba) -> tuple[Ktb, int]:
    if block in t.blocks:
        return Ktb(op=0x02, kind="C", uba=uba), 0
    t.blocks.add(block)
    return Ktb(op=0x01, kind="F", xid=t.xid, uba=uba), 2


def row_undo(
    t: TxnIds,
    table: TableDef,
    scn: int,
    undo_kdo: Kdo,
    supplemental: tuple[Column, ...],
) -> tuple[ChangeVector, Uba]:
    """The 5.1 undo record for a row operation (begin flag on the transaction's first)."""
    begin = not t.started
    uba = t.next_uba()
    body = Undo(
        xid=t.xid,
        opc=(11, 1),
        objn=table.obj,
        objd=table.dataobj,
        slt=t.xid.slot,
        rci=0 if begin else uba.rec - 1,
        siz=0,
        spc=0,
        flg=0x12 if begin else 0x22,
        seq=uba.seq,
        rec=uba.rec,
        begin=begin,
        logon_user=t.logon_user if begin else 0,
        kdo=undo_kdo,
        supplemental=supplemental,
    )
    return _undo_cv(t, scn, body, seq=2 if begin else 1), uba


def row_redo(t: TxnIds, table: TableDef, scn: int, dba: int, op: int, kdo: Kdo) -> ChangeVector:
    return ChangeVector(
        11,
        op,
        kdo,
        typ=2 if kdo.ktb.kind == "F" else 0,
        cls=1,
        afn=table.file_no,
        dba=dba,
        obj=table.dataobj,
        scn=scn,
    )


def kdo(name: str, ktb: Ktb, table: TableDef, dba: int, **fields: object) -> Kdo:
    size = fields.get("size")
    if isinstance(size, int) and size > KDO_SIZE_MAX:
        # (issue 29) a row larger than the KDO's 16-bit size: the size saturates, each column
        # is a field with its own length (Oracle would chain the row over blocks in pieces)
        fields["size"] = KDO_SIZE_MAX
    hdba = make_dba(table.file_no, table.header_block)
    return Kdo(name=name, ktb=ktb, bdba=dba, hdba=hdba, **fields)  # type: ignore[arg-type]


Dirty = dict[int, list[tuple[int, int, int]]]


def ktb_for(t: TxnIds, dba: int, uba: Uba, dirty: Dirty, scn: int) -> tuple[Ktb, int]:
    """KTB of a data-block change; the first change of a transaction in a block that still
    carries committed transactions' ITL entries cleans them out (op 0x11 with a "Block
    cleanout record", as seed 002's update and delete examples show)."""
    if dba in t.blocks:
        return Ktb(op=0x02, kind="C", uba=uba), 0
    t.blocks.add(dba)
    entries = dirty.pop(dba, None)
    if entries:
        return Ktb(
            op=0x11, kind="F", xid=t.xid, uba=uba, cleanout_scn=scn, cleanout=tuple(entries)
        ), 2
    return Ktb(op=0x01, kind="F", xid=t.xid, uba=uba), 2


UNDO_KTB = Ktb(op=0x03, kind="Z")


def index_change(
    t: TxnIds,
    table: TableDef,
    index: IndexDef,
    scn: int,
    insert: bool,
    keys: list[tuple[bytes, bytes, int]],
) -> list[ChangeVector]:
    """``[5.1 index undo, 10.2|10.4]`` for one index; ``keys`` = (key, keydata, slot)."""
    uba = t.next_uba()
    leaf = make_dba(table.file_no, index.block)
    array = len(keys) > 1
    all_keys = b"".join(k for k, _, _ in keys)
    all_data = b"".join(d for _, d, _ in keys)
    sizes = tuple(len(k) + len(d) for k, d, _ in keys) if array else ()
    slots = tuple(s for _, _, s in keys) if array else ()
    undo_index = IndexOp(
        action="purge leaf row" if insert else "restore leaf row (clear leaf delete flags)",
        ktb=UNDO_KTB,
        itl=2,
        keys=all_keys,
        key_sizes=sizes,
        keydata=(b"\xff" if array else b"") if insert else all_data,
        indexid=make_dba(table.file_no, index.block - 1),
        block=leaf,
        kdxlkflg=0x21 if array else 0x1,
    )
    undo = Undo(
        xid=t.xid,
        opc=(10, 22),
        objn=index.obj,
        objd=index.dataobj,
        slt=t.xid.slot,
        rci=uba.rec - 1,
        flg=0x22,
        seq=uba.seq,
        rec=uba.rec,
        index=undo_index,
    )
    ktb, _typ = _ktb_redo(t, leaf, uba)
    first_slot = keys[0][2]
    redo_index = IndexOp(
        action="insert leaf row" if insert else "delete leaf row",
        ktb=ktb,
        array=array,
        itl=2,
        sno=first_slot,
        row_size=sum(len(k) + len(d) + 4 for k, d, _ in keys),
        keys=all_keys if insert else b"",
        key_sizes=sizes if insert else (),
        slots=slots,
        keydata=all_data if insert else b"",
    )
    return [
        _undo_cv(t, scn, undo),
        ChangeVector(
            10,
            2 if insert else 4,
            redo_index,
            typ=0,
            cls=1,
            afn=table.file_no,
            dba=leaf,
            obj=index.dataobj,
            scn=scn,
        ),
    ]


def commit_cv(t: TxnIds, scn: int, rollback: bool) -> ChangeVector:
    uba = t.current_uba()
    flg = 0x2 | (ROLLBACK_FLAG if rollback else 0)
    body = Commit(slt=t.xid.slot, sqn=t.xid.sqn, srt=0, sta=9, flg=flg, uba=uba)
    return ChangeVector(
        5, 4, body, typ=0, cls=t.header_cls, afn=UNDO_FILE, dba=t.header_dba, scn=scn
    )


def rows_image(rows: list[tuple[int, Row]]) -> tuple[RowImage, ...]:
    return tuple(RowImage(slot, columns_of(row)) for slot, row in rows)
