"""Render redo records as Oracle ``ALTER SYSTEM DUMP LOGFILE`` text.

The output follows the layout of the real dumps in seed 002 line for line, so that
:mod:`engine.embedded.dump_parse` reads it back to equal records (``db dump`` then
``db import-dump`` round-trips). Fields we do not model are printed with the constant
values Oracle shows in the seed (``maxfr: 4858``, ``xtype: XA``...). Our own extensions are
documented in ``docs/source_db.md``: supplemental key columns on 5.1 (``supp col`` lines),
5.6 undo-applied and 24.1 DDL bodies, and sub-second record timestamps.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Final

from engine.redo.ids import dump_nrid, dump_scn
from engine.redo.model import (
    ChangeVector,
    Cleanout,
    Column,
    Commit,
    Ddl,
    DirectLoad,
    IndexOp,
    Kdo,
    Ktb,
    Opaque,
    RedoRecord,
    RowImage,
    SessionInfo,
    SlotAlloc,
    Undo,
    UndoApplied,
)

INDEX_ACTION_CODES: Final[dict[str, str]] = {
    "insert leaf row": "kdxlin",
    "delete leaf row": "kdxlde",
    "purge leaf row": "kdxlpu",
    "restore leaf row (clear leaf delete flags)": "kdxlre",
}


def hexbytes(data: bytes) -> str:
    return " ".join(f"{b:02x}" for b in data)


def _ts(ts: datetime) -> str:
    text = ts.strftime("%m/%d/%Y %H:%M:%S")
    return f"{text}.{ts.microsecond:06d}" if ts.microsecond else text


def _col_lines(cols: Iterable[Column], prefix: str = "col") -> list[str]:
    out = []
    for col in cols:
        if col.data is None:
            out.append(f"{prefix} {col.no:2d}: *NULL*")
        else:
            out.append(f"{prefix} {col.no:2d}: [{len(col.data):2d}]  {hexbytes(col.data)}")
    return out


def _ktb(k: Ktb) -> list[str]:
    out = ["KTB Redo", f"op: 0x{k.op:02x}  ver: 0x01", "compat bit: 4 (post-11) padding: 1"]
    if k.kind == "F":
        out.append(f"op: F  xid:  {k.xid.dump()}    uba: {k.uba.dump()}")
    elif k.kind == "C":
        out.append(f"op: C  uba: {k.uba.dump()}")
    elif k.kind == "L":
        out.append(f"op: L  itl: xid:  {k.xid.dump()} uba: {k.uba.dump()}")
        out.append(
            f"                      flg: {k.itl_flg}    lkc:  {k.itl_lkc}     "
            f"scn: {dump_scn(k.itl_scn)}"
        )
    else:
        out.append(f"op: {k.kind}")
    if k.cleanout_scn >= 0:
        out.append(
            f"Block cleanout record, scn:  {dump_scn(k.cleanout_scn)} ver: 0x01 opt: 0x02, "
            "entries follow..."
        )
        out.extend(f"  itli: {i}  flg: {f}  scn: {dump_scn(s)}" for i, f, s in k.cleanout)
    return out


def _row_len(cols: tuple[Column, ...]) -> int:
    return 3 + sum(1 + (len(c.data) if c.data else 0) for c in cols)


def _kdo(k: Kdo) -> list[str]:
    out = _ktb(k.ktb)
    out.append(f"KDO Op code: {k.name} row dependencies Disabled")
    out.append(f"  xtype: XA flags: 0x00000000  bdba: 0x{k.bdba:08x}  hdba: 0x{k.hdba:08x}")
    out.append(f"itli: {k.itli}  ispac: 0  maxfr: 4858")
    if k.name in ("QMI", "QMD"):
        out.append(f"tabn: 0 lock: {k.lock} nrow: {max(len(k.rows), len(k.slots))}")
        if k.rows:
            for i, row in enumerate(k.rows):
                out.append(f"slot[{i}]: {row.slot}")
                out.extend(_row_head(row))
        else:
            out.extend(f"slot[{i}]: {s}" for i, s in enumerate(k.slots))
    elif k.name in ("IRP", "ORP"):  # (an ORP: a whole row piece written over one)
        out.append(f"tabn: 0 slot: {k.slot}(0x{k.slot:x}) size/delt: {k.size}")
        out.append(f"fb: {k.fb} lb: 0x{k.lb:x}  cc: {k.cc}")
        if k.nrid is not None:  # (a chained row's piece: the next one's address)
            out.append(dump_nrid(*k.nrid))
        out.append("null: " + "-" * k.cc)
        out.extend(_col_lines(k.columns))
    elif k.name == "URP":
        out.append(
            f"tabn: 0 slot: {k.slot}(0x{k.slot:x}) flag: 0x{k.flag:02x} lock: {k.lock} ckix: 0"
        )
        out.append(f"ncol: {k.cc} nnew: {k.nnew} size: {k.size}")
        out.extend(_col_lines(k.columns))
    else:
        out.append(f"tabn: 0 slot: {k.slot}(0x{k.slot:x})")
        out.extend(_col_lines(k.columns))
    return out


def _row_head(row: RowImage) -> list[str]:
    return [
        f"tl: {_row_len(row.columns)} fb: {row.fb} lb: 0x{row.lb:x}  cc: {row.column_count}",
        *_col_lines(row.columns),
    ]


def _hex_field(label: str, data: bytes) -> list[str]:
    text = hexbytes(data)
    if len(data) <= 20:
        return [f"{label}({len(data)}):  {text}".rstrip()]
    lines = [f"{label}({len(data)}):"]
    for i in range(0, len(data), 25):
        lines.append(" " + hexbytes(data[i : i + 25]))
    return lines


def _ints(values: tuple[int, ...]) -> str:
    return " " + " ".join(str(v) for v in values)


def _index(x: IndexOp, undo: bool) -> list[str]:
    code = INDEX_ACTION_CODES.get(x.action, "kdxl??")
    if undo:
        out = ["index undo for leaf key operations", *_ktb(x.ktb)]
        out.append(
            f"Dump kdilk : itl={x.itl}, kdxlkflg=0x{x.kdxlkflg:x} sdc=0 "
            f"indexid=0x{x.indexid:x} block=0x{x.block:08x}"
        )
        out.append(f"({code}): {x.action}")
        if x.key_sizes:
            out += [f"number of keys: {len(x.key_sizes)}", "key sizes:", _ints(x.key_sizes)]
        out += _hex_field("key :", x.keys)
        if x.keydata:
            out += _hex_field("keydata/bitmap: ", x.keydata)
        return out
    out = [f"index redo ({code}):  {x.action}", *_ktb(x.ktb)]
    out.append(f"REDO: {'ARRAY' if x.array else 'SINGLE'} / -- / --")
    out.append(f"itl: {x.itl}, sno: {x.sno}, row size {x.row_size}")
    if x.slots:
        out += [f"number of keys: {len(x.slots)}", "slots:", _ints(x.slots)]
    if x.keys:
        out += _hex_field("insert key: ", x.keys)
    if x.key_sizes:
        out += ["each key size is:", _ints(x.key_sizes)]
    if x.keydata:
        out += _hex_field("keydata: ", x.keydata)
    return out


def _undo(u: Undo) -> list[str]:
    out = [
        f"ktudb redo: siz: {u.siz} spc: {u.spc} flg: 0x{u.flg:04x} seq: 0x{u.seq:04x} "
        f"rec: 0x{u.rec:02x}",
        f"            xid:  {u.xid.dump()}",
    ]
    opc = f"{u.opc[0]}.{u.opc[1]}"
    if u.begin:
        out.append(
            f"ktubl redo: slt: {u.slt} rci: {u.rci} opc: {opc} [objn: {u.objn} objd: {u.objd} "
            f"tsn: {u.tsn}]"
        )
        out += [
            "Undo type:  Regular undo        Begin trans    Last buffer split:  No",
            "Temp Object:  No",
            "Tablespace Undo:  No",
            "             0x00000000  prev ctl uba: 0x00000000.0000.00",
            "prev ctl max cmt scn:  0x0000.00000000  prev tx cmt scn:  0x0000.00000000",
            f"txn start scn:  0xffff.ffffffff  logon user: {u.logon_user}  prev brb: 0  "
            "prev bcl: 0 BuExt idx: 0 flg2: 0",
        ]
    else:
        out.append(
            f"ktubu redo: slt: {u.slt} rci: {u.rci} opc: {opc} objn: {u.objn} objd: {u.objd} "
            f"tsn: {u.tsn}"
        )
        out += [
            "Undo type:  Regular undo       Undo type:  Last buffer split:  No",
            "Tablespace Undo:  No",
            "             0x00000000",
        ]
    if u.kdo is not None:
        out += ["KDO undo record:", *_kdo(u.kdo)]
    if u.index is not None:
        out += _index(u.index, undo=True)
    if u.supplemental:
        out.append(f"supplemental key columns: {len(u.supplemental)}")
        out += _col_lines(u.supplemental, "supp col")
    return out


def _slot(b: SlotAlloc) -> list[str]:
    return [
        f"ktudh redo: slt: 0x{b.slt:04x} sqn: 0x{b.sqn:08x} flg: 0x{b.flg:04x} siz: {b.siz} "
        f"fbi: {b.fbi}",
        f"            uba: {b.uba.dump()}    pxid:  {b.pxid.dump()}",
    ]


def _commit(c: Commit) -> list[str]:
    return [
        f"ktucm redo: slt: 0x{c.slt:04x} sqn: 0x{c.sqn:08x} srt: {c.srt} sta: {c.sta} "
        f"flg: 0x{c.flg:x} ktucf redo: uba: {c.uba.dump()} ext: {c.ext} spc: {c.spc} "
        f"fbi: {c.fbi}"
    ]


def _session(s: SessionInfo) -> list[str]:
    return [
        f"session number   = {s.session}",
        f"serial  number   = {s.serial}",
        f"transaction name = {s.txn_name}".rstrip(),
        f"version {s.version}",
        f"audit sessionid {s.audit_sid}",
        f"Client Id = {s.client_id}".rstrip(),
        f"login   username = {s.username}".rstrip(),
    ]


def _cleanout(c: Cleanout) -> list[str]:
    return [
        f"Block cleanout record, scn:  {dump_scn(c.scn)} ver: 0x01 opt: 0x02, entries follow...",
        *(f"  itli: {i}  flg: {f}  scn: {dump_scn(s)}" for i, f, s in c.entries),
    ]


def _direct(d: DirectLoad) -> list[str]:
    out = [
        "Direct Loader block redo entry",
        f"Block header dump:  0x{d.bdba:08x}",
        " Object id on Block? Y",
        f" seg/obj: 0x{d.seg_obj:x}  csc: 0x{d.csc >> 32:02x}.{d.csc & 0xFFFFFFFF:x}  "
        f"itc: {d.itc}  flg: E  typ: 1 - DATA",
        f"     brn: 1  bdba: 0x{d.bdba:x} ver: 0x01 opc: 0",
        "     inc: 0  exflg: 0",
        "",
        " Itl           Xid                  Uba         Flag  Lck        Scn/Fsc",
        f"0x01   {d.xid.dump()}  0x00000000.0000.00  ----    0  fsc 0x0000.00000000",
        "block_row_dump:",
    ]
    for i, row in enumerate(d.rows):
        out.append(f"tab 0, row {row.slot}, @0x{0x1F80 - 0x30 * (i + 1):x}")
        out += _row_head(row)
    out.append("end_of_block_dump")
    return out


def _applied(a: UndoApplied) -> list[str]:
    """Our line (Oracle prints a ktubu for a 5.6); the undone change's object, as its ktubu
    names it, when known."""
    obj = f" objn: {a.objn} objd: {a.objd}" if a.objn or a.objd else ""
    return [f"undo applied: xid:  {a.xid.dump()}  uba: {a.uba.dump()}{obj}"]


def _ddl(d: Ddl) -> list[str]:
    return [
        f"DDL: xid:  {d.xid.dump()} obj: {d.obj} owner: {d.owner} name: {d.name}",
        "ddl text: " + json.dumps(d.text),
        "ddl definition: " + json.dumps(d.definition),
    ]


def _opaque(o: Opaque) -> list[str]:
    return list(o.lines)


def _body(cv: ChangeVector) -> list[str]:
    body = cv.body
    if body is None:
        return []
    if isinstance(body, Kdo):
        return _kdo(body)
    if isinstance(body, IndexOp):
        return _index(body, undo=False)
    writer = _WRITERS[type(body)]
    return writer(body)


_WRITERS: Final[dict[type, Callable[..., list[str]]]] = {
    Undo: _undo,
    SlotAlloc: _slot,
    Commit: _commit,
    SessionInfo: _session,
    Cleanout: _cleanout,
    DirectLoad: _direct,
    UndoApplied: _applied,
    Ddl: _ddl,
    Opaque: _opaque,
}


def dump_change(n: int, cv: ChangeVector) -> list[str]:
    if cv.marker:
        head = (
            f"CHANGE #{n} MEDIA RECOVERY MARKER SCN:{dump_scn(cv.scn)} SEQ:{cv.seq} "
            f"OP:{cv.op} ENC:0"
        )
    else:
        head = (
            f"CHANGE #{n} TYP:{cv.typ} CLS:{cv.cls} AFN:{cv.afn} DBA:0x{cv.dba:08x} "
            f"OBJ:{cv.obj} SCN:{dump_scn(cv.scn)} SEQ:{cv.seq} OP:{cv.op} ENC:0 RBL:0"
        )
    return [head, *_body(cv)]


def dump_record(rec: RedoRecord, length: int | None = None) -> list[str]:
    """The lines of one record; ``length`` overrides LEN when the record declares none."""
    ln = rec.length or length or 0
    out = [
        f"REDO RECORD - Thread:{rec.thread} RBA: {rec.rba.dump()} LEN: 0x{ln:04x} "
        f"VLD: 0x{rec.vld:02x}",
        f"SCN: {dump_scn(rec.scn)} SUBSCN: {rec.subscn:2d} {_ts(rec.timestamp)}",
    ]
    if rec.lwn:
        count, nst, scn = rec.lwn
        out.append(
            f"(LWN RBA: {rec.rba.dump()} LEN: {count:04d} NST: {nst:04d} SCN: {dump_scn(scn)})"
        )
    for n, cv in enumerate(rec.changes, 1):
        out.append("")
        out += dump_change(n, cv)
    out.append("")
    return out


def dump_text(records: Iterable[RedoRecord | tuple[RedoRecord, int]]) -> Iterable[str]:
    """Lines (without newlines) of a dump of ``records``."""
    for item in records:
        if isinstance(item, tuple):
            yield from dump_record(item[0], item[1])
        else:
            yield from dump_record(item)
