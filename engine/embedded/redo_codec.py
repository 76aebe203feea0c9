"""Binary encoding of one :class:`~engine.redo.model.RedoRecord` (the record payload).

Little-endian throughout. The layout, also in ``docs/redo_format.md``::

    record  := REC_HEAD [LWN] cv*            REC_HEAD = <HBBIIHIQHqH
               thread u16, vld u8, flags u8 (bit 0: LWN present), rba.sequence u32,
               rba.block u32, rba.offset u16, length u32, scn u64, subscn u16,
               timestamp i64 (microseconds since 1970-01-01, naive UTC), n_changes u16
    LWN     := count u16, nst u16, scn u64
    cv      := CV_HEAD body                   CV_HEAD = <BBBBHHIIQHB
               layer, code, typ, marker, cls u16, afn u16, dba u32, obj u32, scn u64,
               seq u16, body tag u8 (see TAGS)
    bytes   := u32 length (0xFFFFFFFF = NULL) + data;   str := bytes of UTF-8
    columns := u16 count, then per column u16 no + bytes
    xid     := usn u16, slot u16, sqn u32;   uba := dba u32, seq u16, rec u16

Each body tag has one encoder and one decoder (tables :data:`_ENCODERS`, :data:`_DECODERS`).
Decoding checks every length against the bytes left and raises
:class:`~engine.embedded.errors.RedoCorruptError` rather than reading garbage.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from engine.embedded.errors import RedoCorruptError
from engine.redo.framing import Rba
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

_REC_HEAD: Final = struct.Struct("<HBBIIHIQHqH")
_LWN: Final = struct.Struct("<HHQ")
_CV_HEAD: Final = struct.Struct("<BBBBHHIIQHB")
_U8: Final = struct.Struct("<B")
_U16: Final = struct.Struct("<H")
_U32: Final = struct.Struct("<I")
_I32: Final = struct.Struct("<i")
_U64: Final = struct.Struct("<Q")
_XID: Final = struct.Struct("<HHI")
_UBA: Final = struct.Struct("<IHH")
_COL: Final = struct.Struct("<Hi")
_KTB: Final = struct.Struct("<BcHHIIHHBHQq")
_KDO: Final = struct.Struct("<IIHHBBHBHH")
KDO_SIZE_MAX: Final = 0xFFFF
"""The largest row size a KDO op records (``size``, an unsigned 16-bit field as in Oracle)."""
_IDX: Final = struct.Struct("<BHHHIIB")
_SLOT: Final = struct.Struct("<HIHHH")
_UNDO: Final = struct.Struct("<HHIIIHHHHHHBIB")
_COMMIT: Final = struct.Struct("<HIHHHHHH")
_SESSION: Final = struct.Struct("<IIIQ")
_DIRECT: Final = struct.Struct("<IQIH")
# The fixed-size parts of the layout above by name, for writers that pack records directly
# instead of encoding dataclasses (LogWriter.add_native, engine.embedded.bulkpack).
LAYOUT: Final[dict[str, struct.Struct]] = {
    "REC_HEAD": _REC_HEAD,
    "CV_HEAD": _CV_HEAD,
    "U16": _U16,
    "U32": _U32,
    "XID": _XID,
    "UBA": _UBA,
    "COL": _COL,
    "KTB": _KTB,
    "KDO": _KDO,
    "IDX": _IDX,
    "SLOT": _SLOT,
    "UNDO": _UNDO,
    "COMMIT": _COMMIT,
    "SESSION": _SESSION,
}
_NULL_LEN: Final = 0xFFFFFFFF
_EPOCH: Final = datetime(1970, 1, 1)
MAX_FIELD: Final = 64 * 1024 * 1024  # no single field of a record may claim more

Parts = list[bytes]


class _Cursor:
    """A read position over a buffer; every read is bounds-checked."""

    __slots__ = ("buf", "end", "pos")

    def __init__(
        self, buf: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None
    ) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    def take(self, st: struct.Struct) -> tuple[Any, ...]:
        # Fixed-size reads are not bounds-checked one by one: struct raises past the buffer,
        # and decode_record checks that the record ended exactly at ``end``.
        pos = self.pos
        self.pos = pos + st.size
        return st.unpack_from(self.buf, pos)

    def u8(self) -> int:
        return int(self.take(_U8)[0])

    def u16(self) -> int:
        pos = self.pos
        self.pos = pos + 2
        return int(_U16.unpack_from(self.buf, pos)[0])

    def u32(self) -> int:
        pos = self.pos
        self.pos = pos + 4
        return int(_U32.unpack_from(self.buf, pos)[0])

    def raw(self) -> bytes | None:
        n = self.u32()
        if n == _NULL_LEN:
            return None
        if n > MAX_FIELD or self.pos + n > self.end:
            raise RedoCorruptError(f"field length {n} beyond record at {self.pos}")
        data = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return data


def _w_raw(out: Parts, data: bytes | None) -> None:
    if data is None:
        out.append(_U32.pack(_NULL_LEN))
    else:
        out.append(_U32.pack(len(data)))
        out.append(data)


def _w_str(out: Parts, text: str) -> None:
    _w_raw(out, text.encode("utf-8"))


_STRINGS: dict[bytes, str] = {}


def _r_str(cur: _Cursor) -> str:
    data = cur.raw()
    if data is None:
        return ""
    text = _STRINGS.get(data)
    if text is None:
        text = data.decode("utf-8", errors="replace")
        if len(data) <= 16 and len(_STRINGS) < 4096:  # names, flags, user names
            _STRINGS[data] = text
    return text


def _r_bytes(cur: _Cursor) -> bytes:
    data = cur.raw()
    return b"" if data is None else data


def _w_cols(out: Parts, cols: tuple[Column, ...]) -> None:
    out.append(_U16.pack(len(cols)))
    for col in cols:
        data = col.data
        if data is None:
            out.append(_COL.pack(col.no, -1))
        else:
            out.append(_COL.pack(col.no, len(data)))
            out.append(data)


def _r_cols(cur: _Cursor) -> tuple[Column, ...]:
    buf, pos, end = cur.buf, cur.pos, cur.end
    (n,) = _U16.unpack_from(buf, pos)
    pos += 2
    cols = []
    unpack = _COL.unpack_from
    for _ in range(n):
        no, ln = unpack(buf, pos)
        pos += 6
        if ln < 0:
            cols.append(Column(no, None))
            continue
        if pos + ln > end:
            raise RedoCorruptError(f"column {no} length {ln} beyond record")
        cols.append(Column(no, bytes(buf[pos : pos + ln])))
        pos += ln
    cur.pos = pos
    return tuple(cols)


def _w_ints(out: Parts, values: tuple[int, ...]) -> None:
    out.append(_U16.pack(len(values)))
    out.append(struct.pack(f"<{len(values)}I", *values))


def _r_ints(cur: _Cursor) -> tuple[int, ...]:
    n = cur.u16()
    if n == 0:
        return ()
    st = struct.Struct(f"<{n}I")
    return tuple(int(v) for v in cur.take(st))


def _w_xid(out: Parts, xid: Xid) -> None:
    out.append(_XID.pack(xid.usn, xid.slot, xid.sqn))


def _r_xid(cur: _Cursor) -> Xid:
    usn, slot, sqn = cur.take(_XID)
    return Xid(usn, slot, sqn)


def _r_uba(cur: _Cursor) -> Uba:
    dba, seq, rec = cur.take(_UBA)
    return Uba(dba, seq, rec)


def _w_ktb(out: Parts, k: Ktb) -> None:
    out.append(
        _KTB.pack(
            k.op,
            k.kind.encode("ascii")[:1] or b" ",
            k.xid.usn,
            k.xid.slot,
            k.xid.sqn,
            k.uba.dba,
            k.uba.seq,
            k.uba.rec,
            k.itl_lkc,
            len(k.cleanout),
            k.itl_scn,
            k.cleanout_scn,
        )
    )
    _w_str(out, k.itl_flg)
    for itli, flg, scn in k.cleanout:
        out.append(struct.pack("<HHQ", itli, flg, scn))


_ENTRY: Final = struct.Struct("<HHQ")


def _r_ktb(cur: _Cursor) -> Ktb:
    op, kind, usn, slot, sqn, udba, useq, urec, lkc, ncl, iscn, cscn = cur.take(_KTB)
    flg = _r_str(cur)
    entries = tuple(cur.take(_ENTRY) for _ in range(ncl)) if ncl else ()
    return Ktb(
        op=op,
        kind=kind.decode("ascii", errors="replace"),
        xid=Xid(usn, slot, sqn),
        uba=Uba(udba, useq, urec),
        itl_flg=flg,
        itl_lkc=lkc,
        itl_scn=iscn,
        cleanout_scn=cscn,
        cleanout=entries,
    )


def _w_rows(out: Parts, rows: tuple[RowImage, ...]) -> None:
    out.append(_U16.pack(len(rows)))
    for row in rows:
        out.append(struct.pack("<HBh", row.slot, row.lb, row.cc))
        _w_str(out, row.fb)
        _w_cols(out, row.columns)


def _r_rows(cur: _Cursor) -> tuple[RowImage, ...]:
    n = cur.u16()
    rows = []
    for _ in range(n):
        slot, lb, cc = cur.take(struct.Struct("<HBh"))
        fb = _r_str(cur)
        rows.append(RowImage(slot, _r_cols(cur), fb, lb, cc))
    return tuple(rows)


def _w_kdo(out: Parts, k: Kdo) -> None:
    out.append(
        _KDO.pack(k.bdba, k.hdba, k.slot, k.flag, k.itli, k.lock, k.size, k.lb, k.cc, k.nnew)
    )
    _w_str(out, k.name)
    _w_str(out, k.fb)
    _w_ktb(out, k.ktb)
    _w_cols(out, k.columns)
    _w_rows(out, k.rows)
    _w_ints(out, k.slots)


def _r_kdo(cur: _Cursor) -> Kdo:
    bdba, hdba, slot, flag, itli, lock, size, lb, cc, nnew = cur.take(_KDO)
    name = _r_str(cur)
    fb = _r_str(cur)
    ktb = _r_ktb(cur)
    return Kdo(
        name=name,
        ktb=ktb,
        bdba=bdba,
        hdba=hdba,
        itli=itli,
        slot=slot,
        flag=flag,
        lock=lock,
        size=size,
        fb=fb,
        lb=lb,
        cc=cc,
        nnew=nnew,
        columns=_r_cols(cur),
        rows=_r_rows(cur),
        slots=_r_ints(cur),
    )


def _w_index(out: Parts, x: IndexOp) -> None:
    out.append(_IDX.pack(x.array, x.itl, x.sno, x.row_size, x.indexid, x.block, x.kdxlkflg))
    _w_str(out, x.action)
    _w_ktb(out, x.ktb)
    _w_raw(out, x.keys)
    _w_ints(out, x.key_sizes)
    _w_ints(out, x.slots)
    _w_raw(out, x.keydata)


def _r_index(cur: _Cursor) -> IndexOp:
    array, itl, sno, row_size, indexid, block, flg = cur.take(_IDX)
    action = _r_str(cur)
    ktb = _r_ktb(cur)
    return IndexOp(
        action=action,
        ktb=ktb,
        array=bool(array),
        itl=itl,
        sno=sno,
        row_size=row_size,
        keys=_r_bytes(cur),
        key_sizes=_r_ints(cur),
        slots=_r_ints(cur),
        keydata=_r_bytes(cur),
        indexid=indexid,
        block=block,
        kdxlkflg=flg,
    )


def _w_slot(out: Parts, b: SlotAlloc) -> None:
    out.append(_SLOT.pack(b.slt, b.sqn, b.flg, b.siz, b.fbi))
    out.append(_UBA.pack(b.uba.dba, b.uba.seq, b.uba.rec))
    _w_xid(out, b.pxid)


def _r_slot(cur: _Cursor) -> SlotAlloc:
    slt, sqn, flg, siz, fbi = cur.take(_SLOT)
    return SlotAlloc(slt, sqn, flg, siz, fbi, _r_uba(cur), _r_xid(cur))


def _w_undo(out: Parts, u: Undo) -> None:
    out.append(
        _UNDO.pack(
            u.opc[0],
            u.opc[1],
            u.objn,
            u.objd,
            u.slt,
            u.rci,
            u.tsn,
            u.siz,
            u.spc,
            u.flg,
            u.seq,
            u.rec,
            u.logon_user,
            (1 if u.begin else 0) | (2 if u.kdo is not None else 0) | (4 if u.index else 0),
        )
    )
    _w_xid(out, u.xid)
    if u.kdo is not None:
        _w_kdo(out, u.kdo)
    if u.index is not None:
        _w_index(out, u.index)
    _w_cols(out, u.supplemental)


def _r_undo(cur: _Cursor) -> Undo:
    l1, l2, objn, objd, slt, rci, tsn, siz, spc, flg, seq, rec, user, bits = cur.take(_UNDO)
    xid = _r_xid(cur)
    kdo = _r_kdo(cur) if bits & 2 else None
    index = _r_index(cur) if bits & 4 else None
    return Undo(
        xid=xid,
        opc=(l1, l2),
        objn=objn,
        objd=objd,
        slt=slt,
        rci=rci,
        tsn=tsn,
        siz=siz,
        spc=spc,
        flg=flg,
        seq=seq,
        rec=rec,
        begin=bool(bits & 1),
        logon_user=user,
        kdo=kdo,
        index=index,
        supplemental=_r_cols(cur),
    )


def _w_commit(out: Parts, c: Commit) -> None:
    out.append(_COMMIT.pack(c.slt, c.sqn, c.srt, c.sta, c.flg, c.ext, c.spc, c.fbi))
    out.append(_UBA.pack(c.uba.dba, c.uba.seq, c.uba.rec))


def _r_commit(cur: _Cursor) -> Commit:
    slt, sqn, srt, sta, flg, ext, spc, fbi = cur.take(_COMMIT)
    uba = _r_uba(cur)
    return Commit(slt, sqn, srt, sta, flg, uba, ext, spc, fbi)


def _w_applied(out: Parts, a: UndoApplied) -> None:
    _w_xid(out, a.xid)
    out.append(_UBA.pack(a.uba.dba, a.uba.seq, a.uba.rec))


def _r_applied(cur: _Cursor) -> UndoApplied:
    return UndoApplied(_r_xid(cur), _r_uba(cur))


def _w_session(out: Parts, s: SessionInfo) -> None:
    out.append(_SESSION.pack(s.session, s.serial, s.version, s.audit_sid))
    _w_str(out, s.username)
    _w_str(out, s.txn_name)
    _w_str(out, s.client_id)


def _r_session(cur: _Cursor) -> SessionInfo:
    session, serial, version, audit = cur.take(_SESSION)
    return SessionInfo(
        session,
        serial,
        _r_str(cur),
        _r_str(cur),
        version,
        audit,
        _r_str(cur),
    )


def _w_cleanout(out: Parts, c: Cleanout) -> None:
    out.append(_U64.pack(c.scn))
    out.append(_U16.pack(len(c.entries)))
    for itli, flg, scn in c.entries:
        out.append(struct.pack("<HHQ", itli, flg, scn))


def _r_cleanout(cur: _Cursor) -> Cleanout:
    (scn,) = cur.take(_U64)
    n = cur.u16()
    entries = tuple(cur.take(struct.Struct("<HHQ")) for _ in range(n))
    return Cleanout(scn, entries)


def _w_direct(out: Parts, d: DirectLoad) -> None:
    out.append(_DIRECT.pack(d.seg_obj, d.csc, d.bdba, d.itc))
    _w_xid(out, d.xid)
    _w_rows(out, d.rows)


def _r_direct(cur: _Cursor) -> DirectLoad:
    seg, csc, bdba, itc = cur.take(_DIRECT)
    xid = _r_xid(cur)
    return DirectLoad(xid, seg, csc, bdba, _r_rows(cur), itc)


def _w_ddl(out: Parts, d: Ddl) -> None:
    _w_xid(out, d.xid)
    out.append(_U32.pack(d.obj))
    for text in (d.owner, d.name, d.text, d.definition):
        _w_str(out, text)


def _r_ddl(cur: _Cursor) -> Ddl:
    xid = _r_xid(cur)
    obj = cur.u32()
    owner, name, text, definition = (_r_str(cur) for _ in range(4))
    return Ddl(xid, owner, name, obj, text, definition)


def _w_opaque(out: Parts, o: Opaque) -> None:
    out.append(_U32.pack(len(o.lines)))
    for line in o.lines:
        _w_str(out, line)


def _r_opaque(cur: _Cursor) -> Opaque:
    n = cur.u32()
    if n > MAX_FIELD:
        raise RedoCorruptError(f"opaque line count {n} impossible")
    return Opaque(tuple(_r_str(cur) for _ in range(n)))


TAGS: Final[dict[type, int]] = {
    type(None): 0,
    Kdo: 1,
    IndexOp: 2,
    SlotAlloc: 3,
    Undo: 4,
    Commit: 5,
    UndoApplied: 6,
    SessionInfo: 7,
    Cleanout: 8,
    DirectLoad: 9,
    Ddl: 10,
    Opaque: 11,
}

_ENCODERS: Final[dict[int, Callable[[Parts, Any], None]]] = {
    0: lambda out, body: None,
    1: _w_kdo,
    2: _w_index,
    3: _w_slot,
    4: _w_undo,
    5: _w_commit,
    6: _w_applied,
    7: _w_session,
    8: _w_cleanout,
    9: _w_direct,
    10: _w_ddl,
    11: _w_opaque,
}

_DECODERS: Final[dict[int, Callable[[_Cursor], Body]]] = {
    0: lambda cur: None,
    1: _r_kdo,
    2: _r_index,
    3: _r_slot,
    4: _r_undo,
    5: _r_commit,
    6: _r_applied,
    7: _r_session,
    8: _r_cleanout,
    9: _r_direct,
    10: _r_ddl,
    11: _r_opaque,
}


def _micros(ts: datetime) -> int:
    if ts.tzinfo is not None:
        ts = ts.astimezone(UTC).replace(tzinfo=None)
    delta = ts - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def encode_record(rec: RedoRecord) -> bytes:
    """The payload of one record (framing and checksum are :mod:`logfile`'s job)."""
    out: Parts = []
    rba = rec.rba
    out.append(
        _REC_HEAD.pack(
            rec.thread,
            rec.vld,
            1 if rec.lwn else 0,
            rba.sequence,
            rba.block,
            rba.offset,
            rec.length,
            rec.scn,
            rec.subscn,
            _micros(rec.timestamp),
            len(rec.changes),
        )
    )
    if rec.lwn:
        out.append(_LWN.pack(*rec.lwn))
    for cv in rec.changes:
        tag = TAGS[type(cv.body)]
        out.append(
            _CV_HEAD.pack(
                cv.layer,
                cv.code,
                cv.typ,
                cv.marker,
                cv.cls,
                cv.afn,
                cv.dba,
                cv.obj,
                cv.scn,
                cv.seq,
                tag,
            )
        )
        _ENCODERS[tag](out, cv.body)
    return b"".join(out)


def decode_record(
    buf: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None
) -> RedoRecord:
    """Decode the payload in ``buf[pos:end]``; the whole range must be consumed."""
    cur = _Cursor(buf, pos, end)
    if end is not None and end > len(buf):
        raise RedoCorruptError(f"record range {pos}:{end} beyond a {len(buf)}-byte buffer")
    try:
        return _decode(cur)
    except RedoCorruptError:
        raise
    except (struct.error, OverflowError, ValueError) as exc:
        raise RedoCorruptError(f"record truncated or corrupt: {exc}") from exc


def _decode(cur: _Cursor) -> RedoRecord:
    thread, vld, flags, seq, block, offset, length, scn, subscn, micros, n = cur.take(_REC_HEAD)
    lwn = cur.take(_LWN) if flags & 1 else None
    changes = []
    for _ in range(n):
        layer, code, typ, marker, cls, afn, dba, obj, cscn, cseq, tag = cur.take(_CV_HEAD)
        try:
            decoder = _DECODERS[tag]
        except KeyError as exc:
            raise RedoCorruptError(f"unknown change vector body tag {tag}") from exc
        changes.append(
            ChangeVector(
                layer,
                code,
                decoder(cur),
                typ,
                cls,
                afn,
                dba,
                obj,
                cscn,
                cseq,
                bool(marker),
            )
        )
    if cur.pos != cur.end:
        raise RedoCorruptError(f"{cur.end - cur.pos} trailing bytes after record")
    return RedoRecord(
        thread=thread,
        rba=Rba(seq, block, offset),
        scn=scn,
        subscn=subscn,
        timestamp=_EPOCH + timedelta(microseconds=micros),
        changes=tuple(changes),
        length=length,
        vld=vld,
        lwn=lwn,
    )
