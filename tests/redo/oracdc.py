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


# ------------------------------------------------------------ binding tests, read as data

_METHOD = re.compile(r"@Test\s+public\s+void\s+(\w+)\s*\(\)")
_XID = re.compile(r"new\s+Xid\(\s*\(short\)\s*(\w+)\s*,\s*\(short\)\s*(\w+)\s*,\s*(\w+)\s*\)")
_ADD = re.compile(r"raw\.add\(\s*(\w+)\s*,")
_RECORD_VAR = re.compile(r"(\w+)\s*=\s*new\s+OraCdcRedoRecord\([^;]*?,\s*(\w+)\s*\)\s*;")
_STATEMENT = re.compile(
    r"getStatement\(stmt\)\);\s*assertEquals\(stmt\.getOperation\(\),\s*(?P<op>UPDATE|DELETE|INSERT)\);"
    r"\s*assertEquals\(stmt\.getRba\(\),\s*(?P<rec>\w+)\.rba\(\)\);"
    r"\s*assertEquals\(stmt\.getRowId\(\)\.toString\(\),\s*\"(?P<rowid>[A-Za-z0-9+/]{18})\"\);"
    r"(?P<rest>.*?)(?=assertTrue\(transaction\.getStatement|assertFalse\(transaction\.getStatement|$)",
    re.S,
)
_LOGMINER = re.compile(r"final\s+String\s+(\w+)\s*=(.*?);", re.S)
_JAVA_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_COMPARED = re.compile(r"assertTrue\(compareLogMinerText\((\w+),")
_CONTAINS = re.compile(
    r'(?P<where>StringUtils\.substringAfter\(stmt\.toString\(\),\s*" where "\),\s*)?'
    r'"\\"COL (?P<col>\d+)\\" = \'(?P<hex>[0-9a-f]*)\'"'
)
_SQL_COLUMN = re.compile(r"\"COL (\d+)\" (?:= HEXTORAW\('([0-9a-f]*)'\)|= NULL|IS NULL)")

Image = tuple[tuple[int, bytes | None], ...]  # (column number from 1, value or NULL)


@dataclass(frozen=True)
class Statement:
    """One ``getStatement`` of a binding test: the operation, the record it starts at (its
    RBA), the row, and the column values its assertions state: ``set`` / ``where`` from the
    LogMiner text it is compared with (the changed columns' new values; the before image),
    or ``after`` / ``before`` from the single values it must contain."""

    op: str
    rba: str
    rowid: str
    set: Image | None = None
    where: Image | None = None
    contains: Image = ()  # values somewhere in the statement
    before: Image = ()  # values in its where clause


@dataclass(frozen=True)
class BindingCase:
    file: str
    method: str
    xid: tuple[int, int, int]  # usn, slot, sequence
    records: tuple[HexRecord, ...]  # in the order the test adds them to the transaction
    statements: tuple[Statement, ...]
    exhaustive: bool  # the test asserts that no statement follows the last


def _int(text: str) -> int:
    return int(text, 16) if text.lower().startswith("0x") else int(text)


def _sql_image(text: str) -> Image:
    return tuple(
        (int(n), bytes.fromhex(h) if h or "HEXTORAW" in m.group(0) else None)
        for m in _SQL_COLUMN.finditer(text)
        for n, h in [(m.group(1), m.group(2) or "")]
    )


def _logminer(body: str) -> dict[str, tuple[Image, Image]]:
    """The LogMiner texts a method compares with: name -> (set, where). (LogMiner wraps its
    text in lines, even inside a value: the line ends are dropped.)"""
    out = {}
    for m in _LOGMINER.finditer(body):
        sql = "".join(
            s.replace('\\"', '"').replace("\\n", "") for s in _JAVA_STRING.findall(m.group(2))
        )
        if not sql.startswith("update "):
            continue
        head, _, where = sql.partition(" where ")
        out[m.group(1)] = (_sql_image(head.partition(" set ")[2]), _sql_image(where))
    return out


def binding_cases(path: Path) -> list[BindingCase]:
    """Each test method of a ``Ops_*_BindingTest.java``: the transaction's records in the
    order added, and the statements the test asserts a reader makes of them, in order."""
    text = path.read_text(encoding="utf-8")
    heads = list(_METHOD.finditer(text))
    recs = records(path)
    by_pos = iter(recs)
    hex_pos = [m.start() for m in _TOKEN.finditer(text) if m.group("name")]
    placed = list(zip(hex_pos, by_pos, strict=True))
    out = []
    for i, h in enumerate(heads):
        start, end = h.end(), heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[start:end]
        hexes = {r.name: r for p, r in placed if start <= p < end}
        mine = {var: hexes[name] for var, name in _RECORD_VAR.findall(body)}
        x = _XID.search(body)
        assert x is not None, (path.name, h.group(1))
        lm = _logminer(body)
        stmts = []
        for s in _STATEMENT.finditer(body):
            rest = s.group("rest")
            compared = _COMPARED.search(rest)
            st_set, st_where = lm[compared.group(1)] if compared else (None, None)
            contains = tuple(
                (int(c.group("col")), bytes.fromhex(c.group("hex")))
                for c in _CONTAINS.finditer(rest)
                if not c.group("where")
            )
            before = tuple(
                (int(c.group("col")), bytes.fromhex(c.group("hex")))
                for c in _CONTAINS.finditer(rest)
                if c.group("where")
            )
            rba = mine[s.group("rec")].rba
            assert rba is not None
            stmts.append(
                Statement(s.group("op"), rba, s.group("rowid"), st_set, st_where, contains, before)
            )
        out.append(
            BindingCase(
                path.name,
                h.group(1),
                (_int(x.group(1)), _int(x.group(2)), _int(x.group(3))),
                tuple(mine[n] for n in _ADD.findall(body)),
                tuple(stmts),
                "assertFalse(transaction.getStatement" in body,
            )
        )
    return out
