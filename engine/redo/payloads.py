"""Change vector payloads written in Oracle's format, and read back into the redo model.

The writer of Oracle's redo for the embedded database: each body of the model
(``engine/redo/model.py``) becomes the fields of one change vector, every field packed at
the offset :mod:`engine.redo.vectors` reads it from (its ``*_AT`` tables: a format fact is
stated there once; this module names fields, never offsets). :func:`encode_vector` /
:func:`encode_record` write, :func:`decode_vector` / :func:`decode_record` give the model
back from what :mod:`engine.redo.framing` reads, so that a model round-trips through the bytes
(tests/redo/test_payloads.py, both byte orders). Which vectors a record holds, and which
fields are ours where no public source gives Oracle's offset: docs/redo_format.md, part 2.

Opcodes: 5.2 ktudh, 5.1 undo (ktudb, ktubl/ktubu, then an 11.1 row undo: KTB, KDO, columns,
supplemental header, column numbers, lengths, values; or a 10.22 index undo), 5.4 ktucm +
ktucf, 5.6 / 5.11 undo applied, 5.20 session information, 10.x index leaf redo, 11.x KDO
row redo (IRP, ORP, DRP, LKR, URP, QMI, QMD), 19.1 a data block image, 24.1 DDL, 4.1 block
cleanout; a vector we do not model (:class:`Opaque`) carries its dump lines as its fields.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from engine.redo import framing as F
from engine.redo import layout as L
from engine.redo import vectors as V
from engine.redo.errors import RedoCorruptError
from engine.redo.ids import Uba, Xid
from engine.redo.model import (
    Body,
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
from engine.redo.rowid import fb_text, fb_value, next_piece

Table = dict[str, tuple[int, str]]
MAX_FIELD = 0xFFFF  # a field's length is a 16-bit entry of the vector's length array
MARKER_LAYERS = (24,)  # 24.x vectors, and 5.20, have the MEDIA RECOVERY MARKER header form
KDO_CODES = {name: code for code, name in V.KDO_OPS.items()}
#: the KDO operations that write a whole row piece (KDO_ROW_AT: flags, column count, next
#: piece, a field a column): 11.2 IRP, and 11.6 ORP (overwrite row piece: a piece written
#: anew in place, as a migrated or re-chained row's head is; its undo an ORP of the piece
#: as it was: oracdc's Ops_URP_IRP_ORP / Ops_IRP_ORP binding vectors)
ROW_PIECE_CODES = frozenset({KDO_CODES["IRP"], KDO_CODES["ORP"]})


# ---------------------------------------------------------------------------- helpers


def put(size: int, table: Table, order: L.Order, **values: Any) -> bytearray:
    """A ``size``-byte structure with the named fields of ``table`` packed into it."""
    buf = bytearray(size)
    for name, value in values.items():
        off, code = table[name]
        struct.pack_into(order + code, buf, off, value)
    return buf


def get(buf: bytes, table: Table, order: L.Order, *names: str) -> tuple[Any, ...]:
    """The named fields of ``table`` in ``buf`` (a short field is RedoCorruptError)."""
    out = []
    for name in names:
        off, code = table[name]
        if off + struct.calcsize(code) > len(buf):
            raise RedoCorruptError(f"field of {len(buf)} bytes has no {name} at {off}", off)
        out.append(struct.unpack_from(order + code, buf, off)[0])
    return tuple(out)


def _field(fields: Sequence[bytes], i: int, what: str) -> bytes:
    if i >= len(fields):
        raise RedoCorruptError(f"{what}: {len(fields)} fields, needs field {i + 1}")
    return fields[i]


def _u16s(order: L.Order, values: Sequence[int]) -> bytes:
    return struct.pack(f"{order}{len(values)}H", *values)


def _read_u16s(order: L.Order, buf: bytes, what: str) -> tuple[int, ...]:
    if len(buf) % 2:
        raise RedoCorruptError(f"{what}: odd length {len(buf)}")
    return struct.unpack(f"{order}{len(buf) // 2}H", buf)


def length_prefixed(values: Sequence[bytes | None]) -> bytes:
    """Columns as Oracle writes them inside a row: a length byte (0xFF NULL, 0xFE and two
    bytes for 250 and more) then the data."""
    out = bytearray()
    for v in values:
        if v is None:
            out.append(0xFF)
        elif len(v) < 0xFA:
            out.append(len(v))
            out += v
        else:
            out.append(0xFE)
            out += struct.pack(">H", len(v))
            out += v
    return bytes(out)


def _text(s: str) -> bytes:
    return s.encode("utf-8")


def _untext(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def nulls(values: Sequence[bytes | None]) -> bytes:
    """The NULL bitmap of a KDO row (bit i: value i is NULL)."""
    bitmap = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v is None:
            bitmap[i // 8] |= 1 << (i % 8)
    return bytes(bitmap)


def value_fields(values: Sequence[bytes | None]) -> list[bytes]:
    """A KDO row's value fields: each value its own field, a NULL an empty one."""
    return [b"" if v is None else v for v in values]


# ---------------------------------------------------------------------------- KTB


def _ktb(order: L.Order, k: Ktb) -> bytes:
    kind = k.op & 0x0F
    size = V.KTB_ITL_SIZE if kind == 4 else V.KTB_SIZE
    vals: dict[str, Any] = {"op": k.op, "usn": k.xid.usn, "slt": k.xid.slot, "sqn": k.xid.sqn}
    vals.update(uba_dba=k.uba.dba, uba_seq=k.uba.seq, uba_rec=k.uba.rec)
    if kind == 4:
        vals.update(itl_flg=k.itl_flg.encode("latin-1")[:4], itl_lkc=k.itl_lkc, itl_scn=k.itl_scn)
    out = bytes(put(size, V.KTB_AT, order, **vals))
    if k.op & V.KTB_CLEANOUT:
        out += _cleanout(order, max(k.cleanout_scn, 0), k.cleanout)
    return out


def _ktb_back(order: L.Order, buf: bytes) -> Ktb:
    (op,) = get(buf, V.KTB_AT, order, "op")
    kind = op & 0x0F
    usn, slt, sqn, udba, useq, urec = get(
        buf, V.KTB_AT, order, "usn", "slt", "sqn", "uba_dba", "uba_seq", "uba_rec"
    )
    vals: dict[str, Any] = {
        "op": op,
        "kind": V.KTB_KINDS.get(kind, "?"),
        "xid": Xid(usn, slt, sqn),
        "uba": Uba(udba, useq, urec),
    }
    size = V.KTB_SIZE
    if kind == 4:
        flg, lkc, scn = get(buf, V.KTB_AT, order, "itl_flg", "itl_lkc", "itl_scn")
        vals.update(itl_flg=bytes(flg).decode("latin-1"), itl_lkc=lkc, itl_scn=scn)
        size = V.KTB_ITL_SIZE
    if op & V.KTB_CLEANOUT:
        scn, entries = _cleanout_back(order, buf[size:])
        vals.update(cleanout_scn=scn, cleanout=entries)
    return Ktb(**vals)


def _cleanout(order: L.Order, scn: int, entries: Sequence[tuple[int, int, int]]) -> bytes:
    out = bytes(put(V.CLEANOUT_SIZE, V.CLEANOUT_AT, order, scn=scn, n=len(entries)))
    for itli, flg, escn in entries:
        out += put(V.CLEANOUT_ENTRY_SIZE, V.CLEANOUT_ENTRY_AT, order, itli=itli, flg=flg, scn=escn)
    return out


def _cleanout_back(order: L.Order, buf: bytes) -> tuple[int, tuple[tuple[int, int, int], ...]]:
    scn, n = get(buf, V.CLEANOUT_AT, order, "scn", "n")
    es = V.CLEANOUT_ENTRY_SIZE
    if V.CLEANOUT_SIZE + n * es > len(buf):
        raise RedoCorruptError(f"block cleanout of {n} entries runs past its field")
    entries = tuple(
        get(buf[V.CLEANOUT_SIZE + i * es :], V.CLEANOUT_ENTRY_AT, order, "itli", "flg", "scn")
        for i in range(n)
    )
    return scn, entries


# ---------------------------------------------------------------------------- KDO


def _kdo(order: L.Order, k: Kdo) -> list[bytes]:
    """The KDO field and the fields after it (columns, slots, rows), without the KTB."""
    code = KDO_CODES.get(k.name)
    if code is None:
        raise ValueError(f"KDO op {k.name!r} is not written")
    head = {"bdba": k.bdba, "hdba": k.hdba, "op": code, "itli": k.itli}
    if code in ROW_PIECE_CODES:  # IRP, ORP: a whole row piece, a field a column
        vals = [c.data for c in k.columns]
        bitmap = nulls(vals)
        kdo = put(V.KDO_ROW_NULLS + len(bitmap), V.KDO_AT, order, **head)
        kdo[V.KDO_ROW_NULLS :] = bitmap
        _fill(kdo, V.KDO_ROW_AT, order, fb=fb_value(k.fb), lb=k.lb, cc=k.cc, size=k.size,
              slot=k.slot)  # fmt: skip
        if k.nrid is not None:  # a piece before the last names the next one
            _fill(kdo, V.KDO_ROW_AT, order, nrid_bdba=k.nrid[0], nrid_slot=k.nrid[1])
        if [c.no for c in k.columns] != list(range(len(k.columns))):
            raise ValueError(f"{k.name} columns must be numbered 0..n-1")
        return [bytes(kdo), *value_fields(vals)]
    if code == 5:  # URP: the changed columns, their numbers in a field first
        vals = [c.data for c in k.columns]
        bitmap = nulls(vals)
        kdo = put(V.KDO_URP_NULLS + len(bitmap), V.KDO_AT, order, **head)
        kdo[V.KDO_URP_NULLS :] = bitmap
        _fill(kdo, V.KDO_URP_AT, order, fb=k.flag, lock=k.lock, slot=k.slot, ncol=k.cc,
              nnew=k.nnew, size=k.size)  # fmt: skip
        nums = _u16s(order, [c.no for c in k.columns])
        return [bytes(kdo), nums, *value_fields(vals)] if k.columns else [bytes(kdo)]
    if code in (11, 12):  # QMI / QMD: the slots, and QMI's rows in one field
        slots = [r.slot for r in k.rows] if code == 11 else list(k.slots)
        kdo = put(20, V.KDO_AT, order, **head)
        _fill(kdo, V.KDO_ARRAY_AT, order, lock=k.lock, nrow=len(slots))
        out = [bytes(kdo), _u16s(order, slots)]
        if code == 11:
            out.append(b"".join(_row_bytes(r) for r in k.rows))
        return out
    kdo = put(V.KDO_SLOT_SIZE, V.KDO_AT, order, **head)  # DRP, LKR: the slot
    _fill(kdo, V.KDO_SLOT_AT, order, slot=k.slot)
    if k.columns:  # ours: columns of a DRP / LKR as a dump showed them
        vals = [c.data for c in k.columns]
        return [bytes(kdo), _u16s(order, [c.no for c in k.columns]), *value_fields(vals)]
    return [bytes(kdo)]


def _fill(buf: bytearray, table: Table, order: L.Order, **values: Any) -> None:
    for name, value in values.items():
        off, code = table[name]
        struct.pack_into(order + code, buf, off, value)


def _row_bytes(r: RowImage) -> bytes:
    """A row as a block holds it: fb, lb, cc, then cc columns (a column a row image leaves
    out, as an abridged dump does, is written NULL: a row has no absent middle column)."""
    cc = max(r.column_count, max((c.no + 1 for c in r.columns), default=0))
    vals: list[bytes | None] = [None] * cc
    for c in r.columns:
        vals[c.no] = c.data
    return bytes((fb_value(r.fb), r.lb, cc)) + length_prefixed(vals)


def _kdo_back(order: L.Order, ktb: Ktb, fields: Sequence[bytes], k: int) -> tuple[Kdo, int]:
    """The KDO at field ``k`` (and its column fields): the model, and the next field index."""
    kdo = _field(fields, k, "KDO")
    bdba, hdba, op, itli = get(kdo, V.KDO_AT, order, "bdba", "hdba", "op", "itli")
    code = op & V.KDO_OP_MASK
    name = V.KDO_OPS.get(code, f"op {code}")
    base: dict[str, Any] = {"name": name, "ktb": ktb, "bdba": bdba, "hdba": hdba, "itli": itli}
    nxt = k + 1
    if code in ROW_PIECE_CODES:
        fb, lb, cc, size, slot, nb, ns = get(
            kdo, V.KDO_ROW_AT, order, "fb", "lb", "cc", "size", "slot", "nrid_bdba", "nrid_slot"
        )
        bitmap = kdo[V.KDO_ROW_NULLS :]
        cols = []
        for i in range(cc):
            data = _field(fields, nxt + i, f"{name} column")
            null = i // 8 < len(bitmap) and bitmap[i // 8] & (1 << (i % 8))
            cols.append(Column(i, None if null else data))
        kd = Kdo(**base, fb=fb_text(fb), lb=lb, cc=cc, size=size, slot=slot, columns=tuple(cols),
                 nrid=next_piece(fb, nb, ns))  # fmt: skip
        return kd, nxt + cc
    if code == 5:
        flag, lock, slot, ncol, nnew, size = get(
            kdo, V.KDO_URP_AT, order, "fb", "lock", "slot", "ncol", "nnew", "size"
        )
        bitmap = kdo[V.KDO_URP_NULLS :]
        cols = []
        if nnew and nxt < len(fields):
            nums = _read_u16s(order, fields[nxt], "URP column numbers")
            nxt += 1
            for i, no in enumerate(nums):
                data = _field(fields, nxt + i, "URP column")
                null = i // 8 < len(bitmap) and bitmap[i // 8] & (1 << (i % 8))
                cols.append(Column(no, None if null else data))
            nxt += len(nums)
        kd = Kdo(**base, flag=flag, lock=lock, slot=slot, cc=ncol, nnew=nnew, size=size,
                 columns=tuple(cols))  # fmt: skip
        return kd, nxt
    if code in (11, 12):
        lock, nrow = get(kdo, V.KDO_ARRAY_AT, order, "lock", "nrow")
        slots = _read_u16s(order, _field(fields, nxt, "array slots"), "array slots")
        if len(slots) != nrow:
            raise RedoCorruptError(f"{name}: {nrow} rows, {len(slots)} slots")
        nxt += 1
        if code == 12:
            return Kdo(**base, lock=lock, slots=slots), nxt
        rows = _rows_back(_field(fields, nxt, "QMI rows"), slots)
        return Kdo(**base, lock=lock, rows=rows), nxt + 1
    (slot,) = get(kdo, V.KDO_SLOT_AT, order, "slot")
    return Kdo(**base, slot=slot), nxt


def _rows_back(buf: bytes, slots: Sequence[int]) -> tuple[RowImage, ...]:
    out = []
    pos = 0
    for slot in slots:
        if pos + 3 > len(buf):
            raise RedoCorruptError("a row header runs past its field", pos)
        fb, lb, cc = buf[pos], buf[pos + 1], buf[pos + 2]
        vals = V._one_field_columns(buf[pos + 3 :], cc)
        pos += 3 + len(length_prefixed(vals))
        cols = tuple(Column(i, v) for i, v in enumerate(vals))
        out.append(RowImage(slot, cols, fb_text(fb), lb, -1))
    if pos != len(buf):
        raise RedoCorruptError(f"{len(buf) - pos} bytes after the rows", pos)
    return tuple(out)


def _kdo_rest(order: L.Order, kd: Kdo, fields: Sequence[bytes], nxt: int, limit: int) -> Kdo:
    """DRP / LKR columns (ours, as a dump showed them): numbers, then values."""
    if nxt >= limit:
        return kd
    nums = _read_u16s(order, fields[nxt], "row columns")
    if nxt + 1 + len(nums) > limit:
        raise RedoCorruptError(f"{kd.name}: {len(nums)} columns, fewer fields")
    cols = tuple(Column(no, fields[nxt + 1 + i] or None) for i, no in enumerate(nums))
    return Kdo(**{s: getattr(kd, s) for s in Kdo.__slots__ if s != "columns"}, columns=cols)


# ---------------------------------------------------------------------------- index


def _index(order: L.Order, x: IndexOp) -> list[bytes]:
    codes = {t: c for c, t in V.INDEX_ACTIONS.items()}
    code = codes.get(x.action, 0)
    head = put(V.INDEX_SIZE, V.INDEX_AT, order, action=code, array=int(x.array), itl=x.itl,
               kdxlkflg=x.kdxlkflg, sno=x.sno, row_size=x.row_size, indexid=x.indexid,
               block=x.block)  # fmt: skip
    out = [
        _ktb(order, x.ktb),
        bytes(head),
        x.keys,
        _u16s(order, x.key_sizes),
        _u16s(order, x.slots),
        x.keydata,
    ]
    if not code:
        out.append(_text(x.action))
    return out


def _index_back(order: L.Order, fields: Sequence[bytes], k: int) -> IndexOp:
    ktb = _ktb_back(order, _field(fields, k, "index KTB"))
    head = _field(fields, k + 1, "index header")
    code, array, itl, flg, sno, size, indexid, block = get(head, V.INDEX_AT, order, *V.INDEX_AT)
    action = V.INDEX_ACTIONS.get(code) or _untext(_field(fields, k + 6, "index action"))
    return IndexOp(
        action=action,
        ktb=ktb,
        array=bool(array),
        itl=itl,
        sno=sno,
        row_size=size,
        keys=_field(fields, k + 2, "index keys"),
        key_sizes=_read_u16s(order, _field(fields, k + 3, "key sizes"), "key sizes"),
        slots=_read_u16s(order, _field(fields, k + 4, "index slots"), "index slots"),
        keydata=_field(fields, k + 5, "keydata"),
        indexid=indexid,
        block=block,
        kdxlkflg=flg,
    )


# ---------------------------------------------------------------------------- bodies


def _slot_alloc(order: L.Order, b: SlotAlloc) -> list[bytes]:
    f = put(V.KTUDH_SIZE, V.KTUDH_AT, order, slt=b.slt, sqn=b.sqn, uba_dba=b.uba.dba,
            uba_seq=b.uba.seq, uba_rec=b.uba.rec, flg=b.flg, siz=b.siz, fbi=b.fbi,
            pxid_usn=b.pxid.usn, pxid_slt=b.pxid.slot, pxid_sqn=b.pxid.sqn)  # fmt: skip
    return [bytes(f), bytes(4)]


def _slot_alloc_back(order: L.Order, fields: Sequence[bytes]) -> SlotAlloc:
    f = _field(fields, 0, "5.2")
    slt, sqn, udba, useq, urec, flg, siz, fbi, pu, ps, pq = get(f, V.KTUDH_AT, order, *V.KTUDH_AT)
    return SlotAlloc(slt, sqn, flg, siz, fbi, Uba(udba, useq, urec), Xid(pu, ps, pq))


def _ktub(order: L.Order, u: Undo | None, opc: tuple[int, int], objn: int, objd: int) -> bytes:
    vals: dict[str, Any] = {"objn": objn, "objd": objd, "opc_layer": opc[0], "opc_code": opc[1]}
    if u is not None:
        vals.update(tsn=u.tsn, slt=u.slt, rci=u.rci, logon_user=u.logon_user)
        vals["uflg"] = V.KTUB_BEGIN if u.begin else 0
    return bytes(put(V.KTUB_SIZE, V.KTUB_AT, order, **vals))


def _undo(order: L.Order, u: Undo) -> list[bytes]:
    ktudb = put(V.KTUDB_SIZE, V.KTUDB_AT, order, siz=u.siz, spc=u.spc, flg=u.flg, usn=u.xid.usn,
                slt=u.xid.slot, sqn=u.xid.sqn, seq=u.seq, rec=u.rec)  # fmt: skip
    out = [bytes(ktudb), _ktub(order, u, u.opc, u.objn, u.objd)]
    if u.kdo is not None:
        out.append(_ktb(order, u.kdo.ktb))
        out += _kdo(order, u.kdo)
        out += _supplemental(order, u)
    elif u.index is not None:
        out += _index(order, u.index)
    return out


def _supplemental(order: L.Order, u: Undo) -> list[bytes]:
    cols = u.supplemental
    if u.supp_fb is not None:
        fb = fb_value(u.supp_fb)
    else:
        fb = fb_value(u.kdo.fb) if u.kdo is not None else 0x2C
    head = put(V.SUPP_SIZE, V.SUPP_AT, order, type=V.SUPP_TYPE, fb=fb, cc=len(cols),
               before=u.supp_before, after=u.supp_after)  # fmt: skip
    if not cols:
        return [bytes(head)]
    vals = [c.data for c in cols]
    lens = _u16s(order, [0 if v is None else len(v) for v in vals])
    return [bytes(head), _u16s(order, [c.no + 1 for c in cols]), lens, *value_fields(vals)]


def _undo_back(order: L.Order, fields: Sequence[bytes]) -> Undo:
    d = _field(fields, 0, "5.1")
    siz, spc, flg, usn, slt, sqn, seq, rec = get(d, V.KTUDB_AT, order, *V.KTUDB_AT)
    b = _field(fields, 1, "5.1 ktub")
    objn, objd, tsn, ol, oc, uslt, rci, uflg, logon = get(b, V.KTUB_AT, order, *V.KTUB_AT)
    base: dict[str, Any] = dict(
        xid=Xid(usn, slt, sqn), opc=(ol, oc), objn=objn, objd=objd, slt=uslt, rci=rci,
        tsn=tsn, siz=siz, spc=spc, flg=flg, seq=seq, rec=rec,
        begin=bool(uflg & V.KTUB_BEGIN), logon_user=logon,
    )  # fmt: skip
    if (ol, oc) == (11, 1) and len(fields) > 3:
        ktb = _ktb_back(order, fields[2])
        kd, nxt = _kdo_back(order, ktb, fields, 3)
        at = _supp_after(order, fields, nxt)
        kd = _kdo_rest(order, kd, fields, nxt, at)
        sfb, before, after = get(fields[at], V.SUPP_AT, order, "fb", "before", "after")
        supp_fb = None if fb_value(kd.fb) == sfb else fb_text(sfb)  # a piece's own flags
        return Undo(**base, kdo=kd, supplemental=_supp_back(order, fields, at),
                    supp_fb=supp_fb, supp_before=before, supp_after=after)  # fmt: skip
    if (ol, oc) == (10, 22) and len(fields) > 3:
        return Undo(**base, index=_index_back(order, fields, 2))
    return Undo(**base)


def _supp_after(order: L.Order, fields: Sequence[bytes], nxt: int) -> int:
    """The supplemental header: the field that, with its numbers, lengths and values, ends
    the vector (at or after ``nxt``, where the undo's own row fields end)."""
    for s in range(nxt, len(fields)):
        f = fields[s]
        if len(f) == V.SUPP_SIZE and f[0] == V.SUPP_TYPE:
            (cc,) = get(f, V.SUPP_AT, order, "cc")
            if (s + 3 + cc if cc else s + 1) == len(fields):
                return s
    raise RedoCorruptError("5.1 row undo without its supplemental data header")


def _supp_back(order: L.Order, fields: Sequence[bytes], at: int) -> tuple[Column, ...]:
    (cc,) = get(fields[at], V.SUPP_AT, order, "cc")
    if not cc:
        return ()
    nums = _read_u16s(order, fields[at + 1], "supplemental column numbers")
    lens = _read_u16s(order, fields[at + 2], "supplemental lengths")
    if len(nums) != cc or len(lens) != cc:
        raise RedoCorruptError(f"supplemental data: {cc} columns, {len(nums)} numbers")
    out = []
    for i, no in enumerate(nums):
        val = fields[at + 3 + i]
        out.append(Column(no - 1, val if val or lens[i] else None))
    return tuple(out)


def _commit(order: L.Order, c: Commit) -> list[bytes]:
    cm = put(V.KTUCM_SIZE, V.KTUCM_AT, order, slt=c.slt, sqn=c.sqn, srt=c.srt, sta=c.sta,
             flg=c.flg)  # fmt: skip
    cf = put(V.KTUCF_SIZE, V.KTUCF_AT, order, uba_dba=c.uba.dba, uba_seq=c.uba.seq,
             uba_rec=c.uba.rec, ext=c.ext, spc=c.spc, fbi=c.fbi)  # fmt: skip
    return [bytes(cm), bytes(cf)]


def _commit_back(order: L.Order, fields: Sequence[bytes]) -> Commit:
    slt, sqn, srt, sta, flg = get(_field(fields, 0, "5.4"), V.KTUCM_AT, order, *V.KTUCM_AT)
    dba, seq, rec, fbi, ext, spc = get(_field(fields, 1, "5.4 ktucf"), V.KTUCF_AT, order,
                                       *V.KTUCF_AT)  # fmt: skip
    return Commit(slt, sqn, srt, sta, flg, Uba(dba, seq, rec), ext, spc, fbi)


def _applied(order: L.Order, a: UndoApplied) -> list[bytes]:
    f1 = put(V.UNDO_APPLIED_SIZE, V.UNDO_APPLIED_AT, order, usn=a.xid.usn, slt=a.xid.slot,
             sqn=a.xid.sqn, uba_dba=a.uba.dba, uba_seq=a.uba.seq, uba_rec=a.uba.rec)  # fmt: skip
    return [_ktub(order, None, (11, 1), a.objn, a.objd), bytes(f1)]


def _applied_back(order: L.Order, fields: Sequence[bytes]) -> UndoApplied:
    objn, objd = get(_field(fields, 0, "undo applied ktubu"), V.KTUB_AT, order, "objn", "objd")
    f1 = _field(fields, 1, "undo applied")
    usn, slt, sqn, dba, seq, rec = get(f1, V.UNDO_APPLIED_AT, order, *V.UNDO_APPLIED_AT)
    return UndoApplied(Xid(usn, slt, sqn), Uba(dba, seq, rec), objn, objd)


def _session(order: L.Order, s: SessionInfo) -> list[bytes]:
    return [
        bytes(put(8, V.SESSION_AT, order, session=s.session, serial=s.serial)),
        _text(s.txn_name),
        bytes(6),
        bytes(put(4, V.SESSION_VERSION_AT, order, version=s.version)),
        bytes(put(8, V.SESSION_AUDIT_AT, order, audit_sid=s.audit_sid)),
        _text(s.client_id),
        b"",
        _text(s.username),
    ]


def _session_back(order: L.Order, fields: Sequence[bytes]) -> SessionInfo:
    if len(fields) < V.SESSION_FIELDS:
        raise RedoCorruptError(f"5.20: {len(fields)} fields, needs {V.SESSION_FIELDS}")
    session, serial = get(fields[0], V.SESSION_AT, order, "session", "serial")
    (version,) = get(fields[3], V.SESSION_VERSION_AT, order, "version")
    (audit,) = get(fields[4], V.SESSION_AUDIT_AT, order, "audit_sid")
    return SessionInfo(
        session, serial, _untext(fields[7]), _untext(fields[1]), version, audit, _untext(fields[5])
    )


def _cleanout_body(order: L.Order, c: Cleanout) -> list[bytes]:
    return [_cleanout(order, c.scn, c.entries)]


def _cleanout_body_back(order: L.Order, fields: Sequence[bytes]) -> Cleanout:
    scn, entries = _cleanout_back(order, _field(fields, 0, "4.1"))
    return Cleanout(scn, entries)


def _direct(order: L.Order, d: DirectLoad) -> list[bytes]:
    """A data block image as vectors.py reads a 19.1: ktbbh, ITLs, kdbh, directories, rows."""
    itl = V.KTBBH_ITL
    kdbh_at = itl + itl * d.itc
    head = put(kdbh_at, V.KTBBH_AT, order, type=V.BLOCK_TYPE_DATA, objd=d.seg_obj, csc=d.csc,
               itc=d.itc, bdba=d.bdba)  # fmt: skip
    if d.itc:
        _fill(head, {k: (itl + o, c) for k, (o, c) in V.KTBBH_ITL_AT.items()}, order,
              usn=d.xid.usn, slt=d.xid.slot, sqn=d.xid.sqn)  # fmt: skip
    nslots = max((r.slot for r in d.rows), default=-1) + 1
    rd = V.KDBH_DIRECTORY + 4
    offsets = [0xFFFF] * nslots
    body = bytearray()
    pos = rd + 2 * nslots
    for r in d.rows:
        if offsets[r.slot] != 0xFFFF:
            raise ValueError(f"19.1: two rows in slot {r.slot}")
        offsets[r.slot] = pos + len(body)
        body += _row_bytes(r)
    kdbh = put(V.KDBH_DIRECTORY + 4, V.KDBH_AT, order, ntab=1, nrow=nslots)
    return [bytes(head) + bytes(kdbh) + _u16s(order, offsets) + bytes(body)]


def _direct_back(order: L.Order, dba: int, fields: Sequence[bytes]) -> DirectLoad:
    blk = _field(fields, 0, "19.1")
    _t, objd, csc, itc, bdba = get(blk, V.KTBBH_AT, order, "type", "objd", "csc", "itc", "bdba")
    itl = V.KTBBH_ITL
    kdbh = itl + itl * itc
    xid = Xid(0, 0, 0)
    if itc:
        usn, slt, sqn = get(blk[itl:], V.KTBBH_ITL_AT, order, "usn", "slt", "sqn")
        xid = Xid(usn, slt, sqn)
    (nrow,) = get(blk[kdbh:], V.KDBH_AT, order, "nrow")
    rd = kdbh + V.KDBH_DIRECTORY + 4
    if rd + 2 * nrow > len(blk):
        raise RedoCorruptError(f"19.1: a row directory of {nrow} rows runs past the block")
    rows: list[RowImage] = []
    for slot, off in enumerate(struct.unpack_from(f"{order}{nrow}H", blk, rd)):
        if off == 0xFFFF:
            continue
        p = kdbh + off
        rows.extend(_rows_back(_one_row(blk, p), (slot,)))
    return DirectLoad(xid, objd, csc, bdba, tuple(rows), itc)


def _one_row(blk: bytes, p: int) -> bytes:
    if p + 3 > len(blk):
        raise RedoCorruptError("a row header runs past its block", p)
    vals = V._one_field_columns(blk[p + 3 :], blk[p + 2])
    return blk[p : p + 3 + len(length_prefixed(vals))]


def _ddl(order: L.Order, d: Ddl) -> list[bytes]:
    head = put(V.DDL_SIZE, V.DDL_AT, order, usn=d.xid.usn, slt=d.xid.slot, sqn=d.xid.sqn,
               obj=d.obj)  # fmt: skip
    return [bytes(head), _text(d.owner), _text(d.name), _text(d.text), _text(d.definition)]


def _ddl_back(order: L.Order, fields: Sequence[bytes]) -> Ddl:
    usn, slt, sqn, obj = get(_field(fields, 0, "24.1"), V.DDL_AT, order, *V.DDL_AT)
    owner, name, text, definition = (_untext(_field(fields, i, "24.1")) for i in range(1, 5))
    return Ddl(Xid(usn, slt, sqn), owner, name, obj, text, definition)


def _opaque(order: L.Order, o: Opaque) -> list[bytes]:
    return [_text(line) for line in o.lines]


Writer = Callable[[L.Order, Any], list[bytes]]
WRITERS: dict[type, Writer] = {
    SlotAlloc: _slot_alloc,
    Undo: _undo,
    Commit: _commit,
    UndoApplied: _applied,
    SessionInfo: _session,
    Cleanout: _cleanout_body,
    DirectLoad: _direct,
    Ddl: _ddl,
    Opaque: _opaque,
}


def body_fields(order: L.Order, cv: ChangeVector) -> list[bytes]:
    """The fields of a change vector's body, in Oracle's order."""
    b = cv.body
    if b is None:
        return []
    if isinstance(b, Kdo):
        return [_ktb(order, b.ktb), *_kdo(order, b)]
    if isinstance(b, IndexOp):
        return _index(order, b)
    return WRITERS[type(b)](order, b)


def encode_vector(
    cv: ChangeVector, order: L.Order = "<", layout: str = "12c", con_id: int = 0
) -> bytes:
    fields = body_fields(order, cv)
    for f in fields:
        if len(f) > MAX_FIELD:
            raise ValueError(
                f"change vector {cv.op}: a field of {len(f)} bytes (at most {MAX_FIELD})"
            )
    hdr: dict[str, int] = {}
    if layout == "12c":
        hdr["con_id"] = con_id
    return F.build_vector(layout, order, fields, layer=cv.layer, code=cv.code, cls=cv.cls,
                          afn=cv.afn, dba=cv.dba, obj=cv.obj, scn=cv.scn, seq=cv.seq, typ=cv.typ,
                          **hdr)  # fmt: skip


def _is_marker(layer: int, code: int) -> bool:
    return layer in MARKER_LAYERS or (layer, code) == (5, 20)


# Opcodes whose body is the model's; any other vector is Opaque (its fields = dump lines).
Reader = Callable[[L.Order, Sequence[bytes]], Body]
READERS: dict[tuple[int, int], Reader] = {
    (5, 2): _slot_alloc_back,
    (5, 1): _undo_back,
    (5, 4): _commit_back,
    (5, 6): _applied_back,
    (5, 11): _applied_back,
    (5, 20): _session_back,
    (4, 1): _cleanout_body_back,
    (24, 1): _ddl_back,
}


def decode_body(v: F.Vector) -> Body:
    key = (v.layer, v.code)
    o, fields = v.order, v.fields
    if v.layer == 11 and v.code in KDO_CODES.values():
        ktb = _ktb_back(o, _field(fields, 0, "KTB"))
        kd, nxt = _kdo_back(o, ktb, fields, 1)
        return _kdo_rest(o, kd, fields, nxt, len(fields))
    if v.layer == 10 and v.code in (2, 4):
        return _index_back(o, fields, 0)
    if key == (19, 1):
        return _direct_back(o, v.dba, fields)
    reader = READERS.get(key)
    if reader is not None:
        return reader(o, fields)
    if not fields:
        return None
    return Opaque(tuple(_untext(f) for f in fields))


def decode_vector(v: F.Vector) -> ChangeVector:
    """The model of a change vector read by :mod:`engine.redo.framing`."""
    try:
        body = decode_body(v)
    except (ValueError, struct.error, IndexError) as exc:
        if isinstance(exc, RedoCorruptError):
            raise
        raise RedoCorruptError(f"change vector {v.op}: {exc}") from exc
    return ChangeVector(
        v.layer,
        v.code,
        body,
        typ=v.typ,
        cls=v.cls,
        afn=v.afn,
        dba=v.dba,
        obj=v.obj,
        scn=v.scn,
        seq=v.seq,
        marker=_is_marker(v.layer, v.code),
    )


# ---------------------------------------------------------------------------- records


def encode_record(
    rec: RedoRecord,
    order: L.Order = "<",
    layout: str = "12c",
    lwn: F.Lwn | None = None,
    con_id: int = 0,
) -> bytes:
    """One record: its header (the LWN header when ``lwn`` is given) and its vectors."""
    vectors = [encode_vector(cv, order, layout, con_id) for cv in rec.changes]
    vld = rec.vld & ~L.VLD_LWN
    return F.build_record(order, rec.scn, rec.subscn, vectors, lwn, vld=vld)


def redo_time_of(ts: datetime) -> int:
    """Oracle's redo time of ``ts`` (before 1988, or after its 4-byte range: the nearest)."""
    t = L.to_redo_time(ts.year, ts.month, ts.day, ts.hour, ts.minute, ts.second)
    return min(max(t, 0), 0xFFFFFFFF)


def datetime_of(value: int) -> datetime:
    y, mo, d, h, mi, s = L.redo_time(value)
    try:
        return datetime(y, mo, d, h, mi, s)
    except ValueError:  # a 31-day-month calendar date that does not exist (Feb 30)
        return datetime(y, mo, 1, h, mi, s)


def decode_record(r: F.Record, timestamp: datetime, thread: int | None = None) -> RedoRecord:
    """The model of a record read by :mod:`engine.redo.framing`; ``timestamp`` is its LWN's."""
    lwn = (r.lwn.length, r.lwn.nst, r.lwn.scn) if r.lwn else None
    return RedoRecord(
        thread=r.thread if thread is None else thread,
        rba=r.rba,
        scn=r.scn,
        subscn=r.subscn,
        timestamp=timestamp,
        changes=tuple(decode_vector(v) for v in r.vectors),
        length=r.size,
        vld=r.vld,
        lwn=lwn,
    )
