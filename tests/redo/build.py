"""Change vectors built from the vector tables of engine/redo/vectors.py (each field packed
at the offset the reader reads it from): test records in Oracle's format, either byte order."""

from __future__ import annotations

import struct

from engine.redo import framing as F
from engine.redo import layout as L
from engine.redo import vectors as V


def _pack(buf: bytearray, table: dict[str, tuple[int, str]], order: L.Order, **values: int) -> None:
    for name, value in values.items():
        off, code = table[name]
        struct.pack_into(order + code, buf, off, value)


def begin(order: L.Order, xid: V.Xid, con: int = 0, layout: str = "12c") -> bytes:
    ktudh = bytearray(32)
    _pack(ktudh, V.KTUDH_AT, order, slt=xid.slt, sqn=xid.sqn)
    hdr = {"con_id": con} if layout == "12c" else {}
    return F.build_vector(layout, order, [bytes(ktudh), b"\0\0\0\0"], layer=5, code=2,
                          cls=V.UNDO_CLS_FIRST + 2 * xid.usn, afn=3, obj=0xFFFFFFFF, seq=1, **hdr)  # fmt: skip


def insert_undo(
    order: L.Order, xid: V.Xid, objd: int, bdba: int, slot: int, con: int = 0, layout: str = "12c"
) -> bytes:
    """A 5.1 whose undo is a DRP of the row an IRP inserts, with an empty supplemental header."""
    ktudb = bytearray(20)
    _pack(ktudb, V.KTUDB_AT, order, usn=xid.usn, slt=xid.slt, sqn=xid.sqn)
    ktubl = bytearray(24)
    _pack(ktubl, V.KTUB_AT, order, objn=objd, objd=objd, opc_layer=11, opc_code=1, slt=xid.slt)
    ktb = bytearray(8)
    ktb[0] = 0x03  # op Z
    kdo = bytearray(20)
    _pack(kdo, V.KDO_AT, order, bdba=bdba, op=3)
    _pack(kdo, V.KDO_SLOT_AT, order, slot=slot)
    supp = bytearray(20)
    _pack(supp, V.SUPP_AT, order, type=2, fb=0x1C)
    hdr = {"con_id": con} if layout == "12c" else {}
    return F.build_vector(layout, order, [bytes(ktudb), bytes(ktubl), bytes(ktb), bytes(kdo), bytes(supp)],
                          layer=5, code=1, cls=V.UNDO_CLS_FIRST + 2 * xid.usn + 1, afn=3, obj=0xFFFFFFFF, seq=2, **hdr)  # fmt: skip


def irp(
    order: L.Order,
    xid: V.Xid,
    objd: int,
    dba: int,
    slot: int,
    cols: list[bytes],
    con: int = 0,
    layout: str = "12c",
) -> bytes:
    ktb = bytearray(24)
    _pack(ktb, V.KTB_AT, order, op=0x01, usn=xid.usn, slt=xid.slt, sqn=xid.sqn)
    kdo = bytearray(48)
    _pack(kdo, V.KDO_AT, order, bdba=dba, op=2)
    _pack(kdo, V.KDO_ROW_AT, order, fb=0x2C, lb=2, cc=len(cols), slot=slot)
    hdr = {"con_id": con} if layout == "12c" else {}
    return F.build_vector(layout, order, [bytes(ktb), bytes(kdo), *cols], layer=11, code=2, cls=1, afn=4,
                          dba=dba, obj=objd, seq=1, typ=2, **hdr)  # fmt: skip


def session(order: L.Order, user: str, con: int = 0, layout: str = "12c") -> bytes:
    fields = [b"\0" * 8, b"", b"\0" * 6, b"\0" * 4, b"\0" * 8, b"", b"", user.encode()]
    hdr = {"con_id": con} if layout == "12c" else {}
    return F.build_vector(layout, order, fields, layer=5, code=20, typ=6, **hdr)


def commit(
    order: L.Order, xid: V.Xid, rollback: bool = False, con: int = 0, layout: str = "12c"
) -> bytes:
    ktucm = bytearray(20)
    _pack(
        ktucm,
        V.KTUCM_AT,
        order,
        slt=xid.slt,
        sqn=xid.sqn,
        sta=9,
        flg=0x02 | (V.KTUCM_ROLLBACK if rollback else 0),
    )
    hdr = {"con_id": con} if layout == "12c" else {}
    return F.build_vector(layout, order, [bytes(ktucm)], layer=5, code=4, cls=V.UNDO_CLS_FIRST + 2 * xid.usn,
                          afn=3, obj=0xFFFFFFFF, seq=1, **hdr)  # fmt: skip
