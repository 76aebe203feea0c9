"""Read Oracle logfile dump text (``ALTER SYSTEM DUMP LOGFILE``) into redo records.

The reader is a line grammar: every line of a record must match one of the patterns in
:data:`_LINES` (each pattern has a handler that fills the change vector being built), lines
that carry nothing we model are listed in :data:`_IGNORED`, and change vectors of opcodes we
do not model keep their lines verbatim (:class:`~engine.redo.model.Opaque`). A line that is
not dump syntax — prose between records, say — is a :class:`DumpSyntaxError` with its line
number, unless ``lenient`` (then it is skipped and reported in ``warnings``).
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from engine.embedded.errors import DumpSyntaxError
from engine.redo.framing import Rba
from engine.redo.ids import SCN_MAX, Uba, Xid, parse_scn
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
from engine.redo.payloads import encode_record

MODELED: Final = frozenset(
    {
        (4, 1),
        (5, 1),
        (5, 2),
        (5, 4),
        (5, 6),
        (5, 20),
        (10, 2),
        (10, 4),
        (11, 2),
        (11, 3),
        (11, 4),
        (11, 5),
        (11, 6),
        (11, 11),
        (11, 12),
        (19, 1),
        (24, 1),
    }
)
_HEXB = r"[0-9a-fA-F]{2}"
_HEXSEQ = rf"(?:{_HEXB}(?:\s+{_HEXB})*)"


def _hex(text: str | None) -> bytes:
    return bytes.fromhex(text.replace(" ", "")) if text else b""


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(t) for t in text.split())


def _within(what: str, value: int, limit: int) -> int:
    """``value`` if the redo format can hold it, else a ``ValueError`` naming the field."""
    if not 0 <= value <= limit:
        raise ValueError(f"{what} {value:#x} is out of range (at most {limit:#x})")
    return value


def _scn(text: str) -> int:
    return _within("SCN", parse_scn(text), SCN_MAX)


def _rba(text: str) -> Rba:
    rba = Rba.parse(text)
    _within("RBA log sequence", rba.sequence, 0xFFFF_FFFF)
    _within("RBA block", rba.block, 0xFFFF_FFFF)
    _within("RBA offset", rba.offset, 0xFFFF)
    return rba


_MISSING: Final = re.compile(r"missing \d+ required (?:positional |keyword-only )?arguments?: (.*)")


def _incomplete(what: str, exc: TypeError) -> str:
    """``TypeError`` of a dataclass built without a field → which lines were missing."""
    m = _MISSING.search(str(exc))
    if m is None:
        return f"{what}: {exc}"
    fields = ", ".join(re.findall(r"'(\w+)'", m.group(1)))
    return f"{what} is incomplete: it has no {fields}"


@dataclass
class _Cv:
    """A change vector under construction."""

    head: dict[str, Any]
    lines: list[str] = field(default_factory=list)
    f: dict[str, Any] = field(default_factory=dict)
    ktb: dict[str, Any] = field(default_factory=dict)
    kdo: dict[str, Any] = field(default_factory=dict)
    index: dict[str, Any] = field(default_factory=dict)
    cols: list[Column] = field(default_factory=list)
    supp: list[Column] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)
    cleanout: list[tuple[int, int, int]] = field(default_factory=list)
    in_supp: bool = False
    pending: tuple[str, str, int] | None = None  # (target, kind, expected length)

    @property
    def op(self) -> tuple[int, int]:
        return int(self.head["layer"]), int(self.head["code"])


Handler = Callable[[_Cv, "re.Match[str]"], None]


def _set(target: str, **conv: Callable[[str], Any]) -> Handler:
    def handler(cv: _Cv, m: re.Match[str]) -> None:
        d = getattr(cv, target)
        for name, fn in conv.items():
            value = m.group(name)
            if value is not None:
                d[name] = fn(value)

    return handler


def _h16(s: str) -> int:
    return int(s, 16)


def _col(cv: _Cv, m: re.Match[str]) -> None:
    data = None if m.group("null") else _hex(m.group("hex"))
    col = Column(int(m.group("no")), data)
    if data is not None and len(data) != int(m.group("len")):
        raise ValueError(f"column {col.no} declares {m.group('len')} bytes, has {len(data)}")
    if cv.in_supp:
        cv.supp.append(col)
    elif cv.rows:
        cv.rows[-1]["cols"].append(col)
    else:
        cv.cols.append(col)


def _supp_col(cv: _Cv, m: re.Match[str]) -> None:
    cv.in_supp = True
    _col(cv, m)


def _ktb_kind(cv: _Cv, m: re.Match[str]) -> None:
    cv.ktb["kind"] = m.group("kind")
    if m.group("xid"):
        cv.ktb["xid"] = Xid.parse(m.group("xid"))
    if m.group("uba"):
        cv.ktb["uba"] = Uba.parse(m.group("uba"))


def _itl_line(cv: _Cv, m: re.Match[str]) -> None:
    cv.ktb.update(itl_flg=m.group(1), itl_lkc=int(m.group(2)), itl_scn=_scn(m.group(3)))


def _cleanout_head(cv: _Cv, m: re.Match[str]) -> None:
    if cv.op == (4, 1):
        cv.f["scn"] = _scn(m.group(1))
    else:
        cv.ktb["cleanout_scn"] = _scn(m.group(1))


def _cleanout_entry(cv: _Cv, m: re.Match[str]) -> None:
    cv.cleanout.append((int(m.group(1)), int(m.group(2)), _scn(m.group(3))))


def _slot_entry(cv: _Cv, m: re.Match[str]) -> None:
    cv.slots.append(int(m.group(2)))


def _nrid(cv: _Cv, m: re.Match[str]) -> None:
    """A row piece's next piece (a chained or re-chained row's): block address and slot."""
    cv.kdo["nrid"] = (_h16(m.group(1)), _h16(m.group(2)))


def _row_tl(cv: _Cv, m: re.Match[str]) -> None:
    if cv.op == (19, 1):
        slot = cv.f.pop("next_row", len(cv.rows))
    else:
        slot = cv.slots[-1] if cv.slots else len(cv.rows)
    cv.rows.append(
        {"slot": slot, "fb": m.group(2), "lb": _h16(m.group(3)), "cc": int(m.group(4)), "cols": []}
    )


def _tab_row(cv: _Cv, m: re.Match[str]) -> None:
    cv.f["next_row"] = int(m.group(1))


def _hexfield(target: str, key: str) -> Handler:
    def handler(cv: _Cv, m: re.Match[str]) -> None:
        n = int(m.group("n"))
        data = _hex(m.group("hex"))
        getattr(cv, target)[key] = data
        if len(data) < n:
            cv.pending = (f"{target}.{key}", "hex", n)

    return handler


def _intsfield(key: str) -> Handler:
    def handler(cv: _Cv, m: re.Match[str]) -> None:
        cv.pending = (f"index.{key}", "ints", 0)

    return handler


def _direct_itl(cv: _Cv, m: re.Match[str]) -> None:
    cv.f["xid"] = Xid.parse(m.group(1))


def _ddl_text(key: str) -> Handler:
    def handler(cv: _Cv, m: re.Match[str]) -> None:
        cv.f[key] = json.loads(m.group(1))

    return handler


def _begin(cv: _Cv, m: re.Match[str]) -> None:
    cv.f["begin"] = bool(m.group(1))


def _supp_head(cv: _Cv, m: re.Match[str]) -> None:
    cv.in_supp = True


def _flag_h(cv: _Cv, m: re.Match[str]) -> None:
    cv.kdo["flag"] = _h16(m.group("flag"))


def _nothing(cv: _Cv, m: re.Match[str]) -> None:
    return None


_LINES: Final[list[tuple[re.Pattern[str], Handler]]] = [
    (re.compile(p), h)
    for p, h in [
        (
            r"^col\s+(?P<no>\d+): (?:(?P<null>\*NULL\*)|\[\s*(?P<len>\d+)\]\s*(?P<hex>"
            + _HEXSEQ
            + r")?)\s*$",
            _col,
        ),
        (
            r"^supp col\s+(?P<no>\d+): (?:(?P<null>\*NULL\*)|\[\s*(?P<len>\d+)\]\s*(?P<hex>"
            + _HEXSEQ
            + r")?)\s*$",
            _supp_col,
        ),
        (r"^supplemental key columns: \d+$", _supp_head),
        (
            r"^ktudh redo: slt: 0x(?P<slt>[0-9a-f]+) sqn: 0x(?P<sqn>[0-9a-f]+) "
            r"flg: 0x(?P<flg>[0-9a-f]+) siz: (?P<siz>\d+) fbi: (?P<fbi>\d+)$",
            _set("f", slt=_h16, sqn=_h16, flg=_h16, siz=int, fbi=int),
        ),
        (
            r"^\s*uba: (?P<uba>0x\S+)\s+pxid:\s+(?P<pxid>0x\S+)$",
            _set("f", uba=Uba.parse, pxid=Xid.parse),
        ),
        (
            r"^ktudb redo: siz: (?P<siz>\d+) spc: (?P<spc>\d+) flg: 0x(?P<flg>[0-9a-f]+) "
            r"seq: 0x(?P<seq>[0-9a-f]+) rec: 0x(?P<rec>[0-9a-f]+)$",
            _set("f", siz=int, spc=int, flg=_h16, seq=_h16, rec=_h16),
        ),
        (r"^\s+xid:\s+(?P<xid>0x\S+)$", _set("f", xid=Xid.parse)),
        (
            r"^ktub[lu] redo: slt: (?P<slt>\d+) rci: (?P<rci>\d+) opc: (?P<opc>\d+\.\d+) "
            r"\[?objn: (?P<objn>\d+) objd: (?P<objd>\d+) tsn: (?P<tsn>\d+)\]?$",
            _set(
                "f",
                slt=int,
                rci=int,
                objn=int,
                objd=int,
                tsn=int,
                opc=lambda s: tuple(int(x) for x in s.split(".")),
            ),
        ),
        (r"^Undo type:\s+Regular undo\s+(Begin trans)?.*$", _begin),
        (r"^txn start scn: .* logon user: (?P<logon_user>\d+) .*$", _set("f", logon_user=int)),
        (
            r"^ktucm redo: slt: 0x(?P<slt>[0-9a-f]+) sqn: 0x(?P<sqn>[0-9a-f]+) srt: (?P<srt>\d+) "
            r"sta: (?P<sta>\d+) flg: 0x(?P<flg>[0-9a-f]+) ktucf redo: uba: (?P<uba>\S+) "
            r"ext: (?P<ext>\d+) spc: (?P<spc>\d+) fbi: (?P<fbi>\d+)$",
            _set(
                "f",
                slt=_h16,
                sqn=_h16,
                srt=int,
                sta=int,
                flg=_h16,
                uba=Uba.parse,
                ext=int,
                spc=int,
                fbi=int,
            ),
        ),
        (r"^session number\s+= (?P<session>\d+)$", _set("f", session=int)),
        (r"^serial\s+number\s+= (?P<serial>\d+)$", _set("f", serial=int)),
        (r"^transaction name =\s?(?P<txn_name>.*)$", _set("f", txn_name=str.rstrip)),
        (r"^version (?P<version>\d+)$", _set("f", version=int)),
        (r"^audit sessionid (?P<audit_sid>\d+)$", _set("f", audit_sid=int)),
        (r"^Client Id =\s?(?P<client_id>.*)$", _set("f", client_id=str.rstrip)),
        (r"^login\s+username =\s?(?P<username>.*)$", _set("f", username=str.rstrip)),
        (r"^KTB Redo$", _nothing),
        (r"^op: 0x(?P<op>[0-9a-f]+)\s+ver: 0x[0-9a-f]+$", _set("ktb", op=_h16)),
        (
            r"^op: (?P<kind>[FCL])\s+(?:itl: )?(?:xid:\s+(?P<xid>0x\S+)\s+)?uba: (?P<uba>0x\S+)$",
            _ktb_kind,
        ),
        (r"^op: (?P<kind>[A-Z])(?P<xid>)(?P<uba>)$", _ktb_kind),
        (r"^\s+flg: (\S+)\s+lkc:\s+(\d+)\s+scn: (\S+)$", _itl_line),
        (r"^Block cleanout record, scn:\s+(\S+) ver: .*entries follow\.\.\.$", _cleanout_head),
        (r"^\s*itli: (\d+)\s+flg: (\d+)\s+scn: (\S+)$", _cleanout_entry),
        (r"^KDO Op code: (?P<name>\w+) row dependencies \w+$", _set("kdo", name=str)),
        (
            r"^\s*xtype: \S+ flags: 0x[0-9a-f]+\s+bdba: 0x(?P<bdba>[0-9a-f]+)\s+"
            r"hdba: 0x(?P<hdba>[0-9a-f]+)$",
            _set("kdo", bdba=_h16, hdba=_h16),
        ),
        (r"^itli: (?P<itli>\d+)\s+ispac: \d+\s+maxfr: \d+$", _set("kdo", itli=int)),
        (
            r"^tabn: \d+ slot: (?P<slot>\d+)\(0x[0-9a-f]+\)(?: size/delt: (?P<size>\d+))?"
            r"(?: flag: 0x(?P<flag>[0-9a-f]+) lock: (?P<lock>\d+) ckix: \d+)?$",
            _set("kdo", slot=int, size=int, flag=_h16, lock=int),
        ),
        (r"^tabn: \d+ lock: (?P<lock>\d+) nrow: \d+$", _set("kdo", lock=int)),
        (
            r"^fb: (?P<fb>\S+) lb: 0x(?P<lb>[0-9a-f]+)\s+cc: (?P<cc>\d+)$",
            _set("kdo", fb=str, lb=_h16, cc=int),
        ),
        (r"^nrid:\s+0x([0-9a-f]+)\.([0-9a-f]+)$", _nrid),
        (
            r"^ncol: (?P<cc>\d+) nnew: (?P<nnew>\d+) size: (?P<size>-?\d+)$",
            _set("kdo", cc=int, nnew=int, size=int),
        ),
        (r"^slot\[(\d+)\]: (\d+)$", _slot_entry),
        (r"^tl: (\d+) fb: (\S+) lb: 0x([0-9a-f]+)\s+cc: (\d+)$", _row_tl),
        (
            r"^Dump kdilk : itl=(?P<itl>\d+), kdxlkflg=0x(?P<kdxlkflg>[0-9a-f]+) sdc=-?\d+ "
            r"indexid=0x(?P<indexid>[0-9a-f]+) block=0x(?P<block>[0-9a-f]+)$",
            _set("index", itl=int, kdxlkflg=_h16, indexid=_h16, block=_h16),
        ),
        (r"^\((?:kdxl\w+)\): (?P<action>.+)$", _set("index", action=str.rstrip)),
        (r"^index redo \(kdxl\w+\):\s+(?P<action>.+)$", _set("index", action=str.rstrip)),
        (r"^REDO: (?P<array>SINGLE|ARRAY) / -- / --$", _set("index", array=lambda s: s == "ARRAY")),
        (
            r"^itl: (?P<itl>\d+), sno: (?P<sno>\d+), row size (?P<row_size>\d+)$",
            _set("index", itl=int, sno=int, row_size=int),
        ),
        (r"^number of keys: \d+$", _nothing),
        (r"^key sizes:$", _intsfield("key_sizes")),
        (r"^each key size is:$", _intsfield("key_sizes")),
        (r"^slots:$", _intsfield("slots")),
        (rf"^key :\((?P<n>\d+)\):\s*(?P<hex>{_HEXSEQ})?\s*$", _hexfield("index", "keys")),
        (rf"^insert key: \((?P<n>\d+)\):\s*(?P<hex>{_HEXSEQ})?\s*$", _hexfield("index", "keys")),
        (
            rf"^keydata/bitmap: \((?P<n>\d+)\):\s*(?P<hex>{_HEXSEQ})?\s*$",
            _hexfield("index", "keydata"),
        ),
        (rf"^keydata: \((?P<n>\d+)\):\s*(?P<hex>{_HEXSEQ})?\s*$", _hexfield("index", "keydata")),
        (
            r"^ seg/obj: 0x(?P<seg_obj>[0-9a-f]+)\s+csc: 0x(?P<csc>[0-9a-f]+\.[0-9a-f]+)\s+"
            r"itc: (?P<itc>\d+).*$",
            _set(
                "f",
                seg_obj=_h16,
                itc=int,
                csc=lambda s: (int(s.split(".")[0], 16) << 32) | int(s.split(".")[1], 16),
            ),
        ),
        (r"^\s+brn: \d+\s+bdba: 0x(?P<bdba>[0-9a-f]+) .*$", _set("f", bdba=_h16)),
        (r"^0x01\s+(0x[0-9a-f]{4}\.[0-9a-f]{3}\.[0-9a-f]{8})\s+.*$", _direct_itl),
        (r"^tab \d+, row (\d+), @0x[0-9a-f]+$", _tab_row),
        (
            r"^undo applied: xid:\s+(?P<xid>\S+)\s+uba: (?P<uba>\S+)"
            r"(?: objn: (?P<objn>\d+) objd: (?P<objd>\d+))?$",
            _set("f", xid=Xid.parse, uba=Uba.parse, objn=int, objd=int),
        ),
        (
            r"^DDL: xid:\s+(?P<xid>\S+) obj: (?P<obj>\d+) owner: (?P<owner>\S*) "
            r"name: (?P<name>\S*)$",
            _set("f", xid=Xid.parse, obj=int, owner=str, name=str),
        ),
        (r"^ddl text: (.*)$", _ddl_text("text")),
        (r"^ddl definition: (.*)$", _ddl_text("definition")),
    ]
]

_IGNORED: Final = re.compile(
    "|".join(
        [
            r"^Temp Object:\s+\w+$",
            r"^Tablespace Undo:\s+\w+$",
            r"^\s*0x[0-9a-f]{8}(?:\s+prev ctl uba: \S+)?$",
            r"^prev ctl max cmt scn: .*$",
            r"^KDO undo record:$",
            r"^compat bit: .*$",
            r"^index undo for leaf key operations$",
            r"^null: [-N]*$",
            r"^Direct Loader block redo entry$",
            r"^Block header dump:\s+0x[0-9a-f]+$",
            r"^ Object id on Block\? \w$",
            r"^\s+inc: \d+\s+exflg: \d+$",
            r"^ Itl\s+Xid\s+Uba\s+Flag\s+Lck\s+Scn/Fsc$",
            r"^0x[0-9a-f]{2}\s+0x[0-9a-f]{4}\.[0-9a-f]{3}\.[0-9a-f]{8}\s+.*$",
            r"^bdba: 0x[0-9a-f]+$",
            r"^data_block_dump,data header at 0x[0-9a-f]+$",
            r"^=+$",
            r"^(?:tsiz|hsiz|fsbo|fseo|avsp|tosp): 0x[0-9a-f]+$",
            r"^(?:tsiz|hsiz|fsbo|fseo|avsp|tosp)=0x[0-9a-f]+$",
            r"^pbl: 0x[0-9a-f]+$",
            r"^\s+76543210$",
            r"^flag=[-A-Z]+$",
            r"^(?:ntab|nrow|frre)=-?\d+$",
            r"^0x[0-9a-f]+:p[tr]i\[\d+\]\s+.*$",
            r"^block_row_dump:$",
            r"^end_of_block_dump$",
            r"^Dump of memory from 0x[0-9A-Fa-f]+ to 0x[0-9A-Fa-f]+$",
            r"^[0-9A-F]{8,16}\s+[0-9A-F ]+\s+\[.*\]$",
        ]
    )
)

_REC: Final = re.compile(
    r"^REDO RECORD - Thread:(\d+) RBA: (0x[0-9a-f]+\.[0-9a-f]+\.[0-9a-f]+) "
    r"LEN: 0x([0-9a-f]+) VLD: 0x([0-9a-f]+)\s*$"
)
_SCN: Final = re.compile(
    r"^SCN: (0x[0-9a-f]+\.[0-9a-f]+) SUBSCN:\s*(\d+) "
    r"(\d\d/\d\d/\d{4} \d\d:\d\d:\d\d)(?:\.(\d{6}))?\s*$"
)
#: Oracle's trace ends a logfile dump with this line, then its read statistics, which are
#: skipped to the next record (several dumps concatenated: each one's records are read).
_END: Final = re.compile(r"^END OF REDO DUMP\b")
_LWN: Final = re.compile(
    r"^\(LWN RBA: \S+ LEN: (\d+) NST: (\d+) SCN: (0x[0-9a-f]+\.[0-9a-f]+)\)\s*$"
)
_CHANGE: Final = re.compile(
    r"^CHANGE #\d+ (?:TYP:(?P<typ>\d+) CLS:(?P<cls>\d+) AFN:(?P<afn>\d+) DBA:0x(?P<dba>[0-9a-f]+) "
    r"OBJ:(?P<obj>\d+) |(?P<marker>MEDIA RECOVERY MARKER ))SCN:(?P<scn>0x[0-9a-f]+\.[0-9a-f]+) "
    r"SEQ:(?P<seq>\d+) OP:(?P<layer>\d+)\.(?P<code>\d+)(?: ENC:\d+)?(?: RBL:\d+)?\s*$"
)
_HEXLINE: Final = re.compile(rf"^\s*({_HEXSEQ})\s*$")
_INTLINE: Final = re.compile(r"^\s*(\d+(?:\s+\d+)*)\s*$")


def _ktb_of(cv: _Cv) -> Ktb:
    k = dict(cv.ktb)
    k["cleanout"] = tuple(cv.cleanout)
    return Ktb(**k)


def _rows(cv: _Cv) -> tuple[RowImage, ...]:
    out = []
    for r in cv.rows:
        cols = tuple(r["cols"])
        cc = -1 if r["cc"] == len(cols) else r["cc"]
        out.append(RowImage(r["slot"], cols, r["fb"], r["lb"], cc))
    return tuple(out)


def _kdo_of(cv: _Cv) -> Kdo:
    rows = _rows(cv)
    slots = () if rows else tuple(cv.slots)
    return Kdo(ktb=_ktb_of(cv), columns=tuple(cv.cols), rows=rows, slots=slots, **cv.kdo)


def _index_of(cv: _Cv) -> IndexOp:
    return IndexOp(ktb=_ktb_of(cv), **cv.index)


def _build_body(cv: _Cv) -> Body:
    op = cv.op
    f = cv.f
    if op not in MODELED:
        return Opaque(tuple(cv.lines)) if cv.lines else None
    layer = op[0]
    if layer == 11:
        return _kdo_of(cv)
    if layer == 10:
        return _index_of(cv)
    if op == (5, 1):
        f.pop("next_row", None)
        return Undo(
            kdo=_kdo_of(cv) if cv.kdo else None,
            index=_index_of(cv) if cv.index else None,
            supplemental=tuple(cv.supp),
            **f,
        )
    if op == (5, 2):
        return SlotAlloc(**f)
    if op == (5, 4):
        return Commit(**f)
    if op == (5, 6):
        return UndoApplied(**f)
    if op == (5, 20):
        return SessionInfo(**f)
    if op == (4, 1):
        return Cleanout(entries=tuple(cv.cleanout), **f)
    if op == (19, 1):
        f.pop("next_row", None)
        return DirectLoad(rows=_rows(cv), **f)
    return Ddl(**f)


@dataclass
class DumpReadResult:
    records: list[RedoRecord]
    warnings: list[str]


def parse_dump(
    lines: Iterable[str], *, source: str = "<dump>", lenient: bool = False
) -> DumpReadResult:
    """Parse dump text into records; see the module docstring for strictness.

    Every problem is a :class:`DumpSyntaxError` naming ``source`` and a line number: a line
    that is not dump syntax; a value the redo format cannot hold (an SCN beyond 48 bits, an
    RBA field beyond its width), reported at its line; a change vector or record that lacks
    a line it needs (``ktubl redo:``, ``xid:``, the SCN line), reported at its first line.
    Records are checked against the binary redo format here, so an importer that writes
    nothing until parsing succeeded writes nothing for a bad dump.
    """
    records: list[RedoRecord] = []
    warnings: list[str] = []
    rec: dict[str, Any] | None = None
    rec_at: tuple[int, str] = (0, "")
    cv: _Cv | None = None
    cv_at: tuple[int, str] = (0, "")
    cvs: list[ChangeVector] = []
    expect_scn = False
    line_no, line = 0, ""

    def finish_cv() -> None:
        nonlocal cv
        if cv is None:
            return
        if cv.pending is not None and cv.pending[1] == "hex":
            raise DumpSyntaxError("hex bytes missing", line_no, line, source)
        h = cv.head
        what = f"change vector OP:{h['layer']}.{h['code']}"
        try:
            body = _build_body(cv)
        except TypeError as exc:
            raise DumpSyntaxError(_incomplete(what, exc), *cv_at, source) from exc
        except (ValueError, KeyError) as exc:
            raise DumpSyntaxError(f"{what}: {exc}", *cv_at, source) from exc
        extra = {k: v for k, v in h.items() if k not in ("layer", "code")}
        cvs.append(ChangeVector(h["layer"], h["code"], body, **extra))
        cv = None

    def finish_record() -> None:
        nonlocal rec, cvs
        finish_cv()
        if rec is not None:
            try:
                record = RedoRecord(changes=tuple(cvs), **rec)
            except TypeError as exc:
                raise DumpSyntaxError(_incomplete("redo record", exc), *rec_at, source) from exc
            try:
                encode_record(record)
            except (struct.error, OverflowError, ValueError, TypeError) as exc:
                raise DumpSyntaxError(
                    f"redo record does not fit the redo format ({exc})", *rec_at, source
                ) from exc
            records.append(record)
        rec, cvs = None, []

    def take() -> None:
        nonlocal rec, rec_at, cv, cv_at, expect_scn
        if m := _REC.match(line):
            if expect_scn:
                raise ValueError("expected the SCN line of a redo record, found another header")
            finish_record()
            rec = {
                "thread": _within("thread", int(m.group(1)), 0xFFFF),
                "rba": _rba(m.group(2)),
                "length": _within("LEN", int(m.group(3), 16), 0xFFFF_FFFF),
                "vld": _within("VLD", int(m.group(4), 16), 0xFF),
            }
            rec_at = (line_no, line)
            expect_scn = True
            return
        if not line.strip():
            return
        if expect_scn:
            if not (m := _SCN.match(line)):
                raise ValueError("expected the SCN line of a redo record")
            assert rec is not None
            ts = datetime.strptime(m.group(3), "%m/%d/%Y %H:%M:%S")
            if m.group(4):
                ts = ts.replace(microsecond=int(m.group(4)))
            subscn = _within("SUBSCN", int(m.group(2)), 0xFFFF)
            rec.update(scn=_scn(m.group(1)), subscn=subscn, timestamp=ts)
            expect_scn = False
            return
        if rec is not None and cv is None and not cvs and (m := _LWN.match(line)):
            rec["lwn"] = (int(m.group(1)), int(m.group(2)), _scn(m.group(3)))
            return
        if rec is not None and (m := _CHANGE.match(line)):
            finish_cv()
            g = m.groupdict()
            head: dict[str, Any] = {
                "layer": int(g["layer"]),
                "code": int(g["code"]),
                "scn": _scn(g["scn"]),
                "seq": int(g["seq"]),
                "marker": bool(g["marker"]),
            }
            if not g["marker"]:
                head.update(
                    typ=int(g["typ"]),
                    cls=int(g["cls"]),
                    afn=int(g["afn"]),
                    dba=int(g["dba"], 16),
                    obj=int(g["obj"]),
                )
            cv = _Cv(head)
            cv_at = (line_no, line)
            return
        if cv is not None:
            if cv.op not in MODELED:
                cv.lines.append(line)
                return
            if _continuation(cv, line) or _dispatch(cv, line):
                return
        if lenient:
            warnings.append(f"{source}:{line_no}: skipped non-dump text: {line.strip()[:60]}")
            return
        raise ValueError("not redo dump syntax")

    trailer = False  # after END OF REDO DUMP: the trace's statistics, to the next record
    for line_no, raw_line in enumerate(lines, 1):
        line = raw_line.rstrip("\r\n")
        if _END.match(line) and not expect_scn:
            finish_record()
            trailer = True
            continue
        if trailer:
            if not _REC.match(line):
                continue
            trailer = False  # (another dump after it: dumps concatenated)
        try:
            take()
        except DumpSyntaxError:
            raise
        except (ValueError, KeyError, TypeError, OverflowError) as exc:
            raise DumpSyntaxError(str(exc), line_no, line, source) from exc
    if expect_scn:
        raise DumpSyntaxError("record ends before its SCN line", *rec_at, source)
    finish_record()
    return DumpReadResult(records, warnings)


def _continuation(cv: _Cv, line: str) -> bool:
    if cv.pending is None:
        return False
    target, kind, n = cv.pending
    obj_name, key = target.split(".")
    d = getattr(cv, obj_name)
    if kind == "hex" and (m := _HEXLINE.match(line)):
        d[key] = d.get(key, b"") + _hex(m.group(1))
        if len(d[key]) >= n:
            cv.pending = None
        return True
    if kind == "ints" and (m := _INTLINE.match(line)):
        d[key] = _ints(m.group(1))
        cv.pending = None
        return True
    if kind == "hex":
        raise ValueError(f"expected {n} hex bytes")
    cv.pending = None
    return False


def _dispatch(cv: _Cv, line: str) -> bool:
    for pattern, handler in _LINES:
        if m := pattern.match(line):
            handler(cv, m)
            return True
    return bool(_IGNORED.match(line))
