"""A redo log printed as ``ALTER SYSTEM DUMP LOGFILE`` prints it (seed 002's layout), or as
JSON (one object per record: ``rba``, ``scn``, ``subscn``, ``changes``).

Printed per change: the header line Oracle prints, then what we decode of it (transaction,
undo and row operation, supplemental data, column bytes as ``col  n: [ len] hex``). Vectors we
do not decode print their header line only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from engine.redo import layout as L
from engine.redo import vectors as V
from engine.redo.dictionary import Dictionary
from engine.redo.errors import RedoError
from engine.redo.framing import Record, Vector
from engine.redo.ids import dump_nrid
from engine.redo.rowid import fb_text, rowid
from engine.redo.values import decode_value


def _scn(scn: int) -> str:
    return f"0x{scn >> 32:04x}.{scn & 0xFFFFFFFF:08x}"


def _time(t: int) -> str:
    y, mo, d, h, mi, s = L.redo_time(t)
    return f"{mo:02d}/{d:02d}/{y:04d} {h:02d}:{mi:02d}:{s:02d}"


def _cols(cols: Iterable[tuple[int, bytes | None]]) -> Iterator[str]:
    for n, val in cols:
        if val is None:
            yield f"col {n:2d}: *NULL*"
        else:
            yield f"col {n:2d}: [{len(val):2d}]  " + " ".join(f"{b:02x}" for b in val)


def _row_lines(row: V.RowOp) -> Iterator[str]:
    yield f"KDO Op code: {row.name} row dependencies Disabled"
    yield f"  bdba: 0x{row.bdba:08x}"
    yield f"tabn: {row.tabn} slot: {row.slot}(0x{row.slot:x})" + (
        f" nrow: {len(row.slots)}" if row.slots else ""
    )
    if row.fb is not None and row.name in ("IRP", "ORP", "URP"):
        yield (
            f"fb: {fb_text(row.fb)} cc: {len(row.columns)}"
            if row.name != "URP"
            else f"flag: 0x{row.fb:02x} ncol: {len(row.columns)}"
        )
    if row.nrid is not None:  # (a chained row's piece: the next one's address)
        yield dump_nrid(*row.nrid)
    if row.compressed:
        yield "compressed row (not decoded)"
    yield from _cols(row.columns)
    for i, r in enumerate(row.rows):
        yield f"slot[{i}]: {row.slots[i] if i < len(row.slots) else '?'}"
        yield from _cols(r)


def change_lines(i: int, v: Vector, layout: str) -> Iterator[str]:
    con = f" CON_ID:{v.con_id}" if layout == "12c" else ""
    yield (
        f"CHANGE #{i}{con} TYP:{v.typ} CLS:{v.cls} AFN:{v.afn} DBA:0x{v.dba:08x} OBJ:{v.obj} "
        f"SCN:{_scn(v.scn)} SEQ:{v.seq} OP:{v.op} ENC:0 RBL:0"
    )
    d = V.decode(v)
    if isinstance(d, V.Begin):
        yield f"ktudh redo: slt: 0x{d.xid.slt:04x} sqn: 0x{d.xid.sqn:08x}  xid: {d.xid.dump()}"
    elif isinstance(d, V.End):
        what = "rollback" if d.rollback else "commit"
        yield f"ktucm redo: slt: 0x{d.xid.slt:04x} sqn: 0x{d.xid.sqn:08x} {what}"
    elif isinstance(d, V.Session):
        yield f"transaction name = {d.transaction_name}"
        yield f"login   username = {d.user}"
    elif isinstance(d, V.Undo):
        if d.xid:
            yield f"ktudb redo: xid:  {d.xid.dump()}"
        yield f"ktubl redo: opc: {d.opc} [objn: {d.objn} objd: {d.objd}]"
        if d.row:
            yield "KDO undo record:"
            yield from _row_lines(d.row)
        if d.supp:
            yield f"supp fb: {fb_text(d.supp.fb)} cc: {d.supp.cc}"
            if d.supp.bdba is not None and d.supp.slot is not None:  # the row's head
                yield f"supp log bdba: 0x{d.supp.bdba:08x}.{d.supp.slot:x}"
            yield from _cols(d.supp.columns)
    elif isinstance(d, V.Redo):
        if d.xid:
            yield f"KTB Redo op: F  xid:  {d.xid.dump()}"
        yield from _row_lines(d.row)
    elif isinstance(d, V.Llb):
        xid = f" xid: {d.xid.dump()}" if d.xid else ""
        yield (
            f"LLB typ:{d.type}{xid} obj:{d.obj}"
            + (f" lid:{d.lob_id.hex()} fsiz: {d.fsiz}" if d.lob_id is not None else "")
            + (f" column_id: {d.column}" if d.column is not None else "")
            + (f" LOB_col_ids: {list(d.columns)}" if d.columns else "")
        )


def record_lines(rec: Record, layout: str, time: int | None) -> Iterator[str]:
    rba = rec.rba.dump()
    yield f"REDO RECORD - Thread:{rec.thread} RBA: {rba} LEN: 0x{rec.size:04x} VLD: 0x{rec.vld:02x}"
    when = _time(time) if time is not None else ""
    yield f"SCN: {_scn(rec.scn)} SUBSCN: {rec.subscn:2d} {when}".rstrip()
    if rec.lwn:
        lw = rec.lwn
        yield f"(LWN RBA: {rba} LEN: {lw.length:04d} NST: {lw.nst:04d} SCN: {_scn(lw.scn)})"
    for i, v in enumerate(rec.vectors, 1):
        yield ""
        yield from change_lines(i, v, layout)
    yield ""


def dump_lines(records: Iterable[Record], layout: str) -> Iterator[str]:
    time: int | None = None
    for rec in records:
        if rec.lwn:
            time = rec.lwn.time
        yield from record_lines(rec, layout, time)


def _hexcols(cols: Iterable[tuple[int, bytes | None]]) -> list[dict[str, Any]]:
    return [{"col": n, "hex": None if val is None else val.hex()} for n, val in cols]


def _typed(
    dic: Dictionary | None, con_id: int, obj: int, cols: Iterable[tuple[int, bytes | None]]
) -> tuple[str, dict[str, Any]] | None:
    """With a dictionary: the table's name and the columns' values by name (text, as JSON)."""
    t = dic.by_data_obj().get((con_id, obj)) if dic else None
    if t is None or dic is None:
        return None
    out: dict[str, Any] = {}
    for n, raw in cols:
        c = t.column_at(n + 1)
        if c is None:
            continue
        try:
            val = decode_value(c.type, raw, dic.charset(c))
        except RedoError as exc:
            out[c.name] = {"error": exc.message}
            continue
        out[c.name] = val.hex() if isinstance(val, bytes) else None if val is None else str(val)
    return t.full_name, out


def record_json(rec: Record, dic: Dictionary | None = None) -> dict[str, Any]:
    changes: list[dict[str, Any]] = []
    undo: V.Undo | None = None
    for v in rec.vectors:
        ch: dict[str, Any] = {
            "op": v.op,
            "cls": v.cls,
            "afn": v.afn,
            "dba": v.dba,
            "obj": v.obj,
            "con_id": v.con_id,
        }
        d = V.decode(v)
        if isinstance(d, V.Begin | V.End):
            ch["xid"] = d.xid.text()
            if isinstance(d, V.End):
                ch["rollback"] = d.rollback
        elif isinstance(d, V.Session):
            ch["user"] = d.user
        elif isinstance(d, V.Undo):
            undo = d
            if d.xid:
                ch["xid"] = d.xid.text()
            ch["objd"] = d.objd
            if d.row:
                ch["undo_op"] = d.row.name
                if d.row.fb is not None:
                    ch["fb"] = fb_text(d.row.fb)
                ch["before"] = _hexcols(d.row.columns)
            if d.supp:
                ch["supp_fb"] = fb_text(d.supp.fb)
                if d.supp.bdba is not None and d.supp.slot is not None:
                    ch["supp_rowid"] = rowid(d.objd, d.supp.bdba, d.supp.slot)  # the row's head
                ch["supplemental"] = _hexcols(d.supp.columns)
        elif isinstance(d, V.Redo):
            xid = d.xid or (undo.xid if undo else None)
            if xid:
                ch["xid"] = xid.text()
            fb = d.row.fb if d.row.fb is not None else (undo.row.fb if undo and undo.row else None)
            if fb is not None:
                ch["fb"] = fb_text(fb)
            ch["rowid"] = rowid(v.obj, v.dba, d.row.slot)
            if d.row.nrid is not None:  # a chained row's piece: the next one's
                ch["nrid"] = rowid(v.obj, *d.row.nrid)
            ch["columns"] = _hexcols(d.row.columns)
            typed = _typed(dic, v.con_id, v.obj, d.row.columns)
            if typed:
                ch["table"], ch["values"] = typed
            if d.row.compressed:
                ch["compressed"] = True
            undo = None
        elif isinstance(d, V.Llb):  # a LOB of a table written (not captured)
            if d.xid:
                ch["xid"] = d.xid.text()
            ch["llb"] = {"type": d.type, "obj": d.obj}
            if d.column is not None:
                ch["llb"]["column"] = d.column
            if d.lob_id is not None:
                ch["llb"]["lob_id"] = d.lob_id.hex()
            if d.columns:
                ch["llb"]["columns"] = list(d.columns)
        changes.append(ch)
    return {"rba": rec.rba.dump(), "scn": rec.scn, "subscn": rec.subscn, "changes": changes}
