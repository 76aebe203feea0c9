"""The oracdc 19c unit tests read as data: each ``hexToRaw("...")`` record, the redo log
flavour its test method sets up, its RBA (from ``new OraCdcRedoRecord(orl, scn, "rba", var)``)
and the notes the comments state for that RBA in Oracle's dump notation
(``RBA:0x0044ba.0028ab59.0010, OP:5.1 fb:--------, supp fb:----F---, OP:11.2 fb:-----L--``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_ORL = {"getLinux19c": ("<", "12c"), "getAix19c": (">", "12c"), "getLinux11g": ("<", "11g")}
_TOKEN = re.compile(
    r'OraCdcRedoLog\.(?P<orl>\w+)\(\)|var\s+(?P<name>\w+)\s*=\s*hexToRaw\("(?P<hex>[0-9A-Fa-f]*)"\)',
)
_RECORD = re.compile(
    r'new\s+OraCdcRedoRecord\(\s*\w+\s*,\s*\w+\s*,\s*"(?P<rba>0x[0-9a-f.]+)"\s*,\s*(?P<name>\w+)\s*\)'
)
_COMMENT = re.compile(r"/\*(.*?)\*/", re.S)
_LINE_RBA = re.compile(r"RBA[: ]\s*(0x[0-9a-f]{6}\.[0-9a-f]{8}\.[0-9a-f]{4})")
_NOTE = re.compile(r"OP:(\d+\.\d+)\s+fb:([-A-Z]{8})(?:,\s*supp fb:([-A-Z]{8}))?")
_ROWID = re.compile(r'getRowId\(\)\.toString\(\),\s*"([A-Za-z0-9+/]{18})"')

Note = tuple[str, str, str | None]  # (op, fb, supp fb)


@dataclass(frozen=True)
class HexRecord:
    file: str
    name: str
    raw: bytes
    order: str
    layout: str
    rba: str | None
    notes: tuple[Note, ...]  # what the comments state for this RBA, in their order


def _notes_by_rba(text: str) -> dict[str, tuple[Note, ...]]:
    out: dict[str, tuple[Note, ...]] = {}
    for c in _COMMENT.finditer(text):
        for line in c.group(1).splitlines():
            m = _LINE_RBA.search(line)
            if m:
                out[m.group(1)] = tuple(
                    (n.group(1), n.group(2), n.group(3)) for n in _NOTE.finditer(line)
                )
    return out


def records(path: Path) -> list[HexRecord]:
    text = path.read_text(encoding="utf-8")
    notes = _notes_by_rba(text)
    rbas: dict[str, str] = {}
    order, layout = "<", "12c"
    out: list[HexRecord] = []
    pending: list[tuple[str, bytes, str, str]] = []
    for m in _TOKEN.finditer(text):
        if m.group("orl"):
            order, layout = _ORL[m.group("orl")]
        else:
            pending.append((m.group("name"), bytes.fromhex(m.group("hex")), order, layout))
    # a variable name is reused across test methods: pair each with the next record made of it
    pos_of = [(m.start(), m.group("name"), m.group("rba")) for m in _RECORD.finditer(text)]
    hex_pos = [m.start() for m in _TOKEN.finditer(text) if m.group("name")]
    for (name, raw, o, lay), start in zip(pending, hex_pos, strict=True):
        rba = next((r for p, n, r in pos_of if p > start and n == name), None)
        rbas[name] = rba or ""
        out.append(HexRecord(path.name, name, raw, o, lay, rba, notes.get(rba or "", ())))
    return out


def asserted_rowids(path: Path) -> set[str]:
    return set(_ROWID.findall(path.read_text(encoding="utf-8")))
