"""The data dictionary: tables, their columns, keys and object numbers.

Stored as JSON (``dictionary.json`` in the database directory, written atomically) and in
the same shape ``db import-dump --dictionary`` reads::

    {"tables": [{"owner": "US03", "name": "STUDENT", "obj": 76490, "dataobj": 76495,
                 "columns": [{"name": "STUDENT_KEY", "type": "NUMBER"}, ...],
                 "key": ["STUDENT_KEY"]}]}

Optional per table: ``unique`` (list of column lists), ``indexes`` (``name``, ``obj``,
``dataobj``, ``columns``, ``unique``), ``file``, ``header_block``; per column ``length``,
``nullable``, ``scale``/``precision``. The Extract reads it with :func:`load_dictionary`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.embedded.errors import SourceError, UnknownObjectError
from engine.home.userfile import UserFileError, read_user_file
from engine.redo.codecs import CODECS, Value, decode_value


@dataclass(frozen=True, slots=True)
class ColumnDef:
    name: str
    type: str
    length: int = 0
    nullable: bool = True
    precision: int | None = None
    scale: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.length:
            out["length"] = self.length
        if not self.nullable:
            out["nullable"] = False
        if self.precision is not None:
            out["precision"] = self.precision
        if self.scale is not None:
            out["scale"] = self.scale
        return out


@dataclass(frozen=True, slots=True)
class IndexDef:
    name: str
    obj: int
    dataobj: int
    columns: tuple[str, ...]
    unique: bool = True
    primary: bool = False
    block: int = 0  # leaf block number (file of the table)


@dataclass(frozen=True, slots=True)
class TableDef:
    owner: str
    name: str
    obj: int
    dataobj: int
    columns: tuple[ColumnDef, ...]
    key: tuple[str, ...] = ()
    unique: tuple[tuple[str, ...], ...] = ()
    indexes: tuple[IndexDef, ...] = ()
    file_no: int = 4
    header_block: int = 0x432
    foreign: tuple[dict[str, Any], ...] = field(default=())
    # an attached container database's table: its container's name, what a TABLE statement's
    # catalog part is matched with (engine/extract/containers.py); not kept on disk
    catalog: str | None = None

    @property
    def qualified(self) -> str:
        return f"{self.owner}.{self.name}"

    @property
    def sqlite_name(self) -> str:
        return f"{self.owner}${self.name}"

    def column_index(self, name: str) -> int:
        for i, col in enumerate(self.columns):
            if col.name == name:
                return i
        raise UnknownObjectError(f'"{name}": invalid identifier in {self.qualified}', "ORA-00904")

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The columns that identify a row for capture: PK, else first UK, else all."""
        if self.key:
            return self.key
        if self.unique:
            return self.unique[0]
        return tuple(c.name for c in self.columns)

    def decode(self, no: int, raw: bytes | None) -> Value:
        return decode_value(self.columns[no].type, raw)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "owner": self.owner,
            "name": self.name,
            "obj": self.obj,
            "dataobj": self.dataobj,
            "columns": [c.to_json() for c in self.columns],
            "key": list(self.key),
        }
        if self.unique:
            out["unique"] = [list(u) for u in self.unique]
        if self.indexes:
            out["indexes"] = [
                {
                    "name": i.name,
                    "obj": i.obj,
                    "dataobj": i.dataobj,
                    "columns": list(i.columns),
                    "unique": i.unique,
                    "primary": i.primary,
                    "block": i.block,
                }
                for i in self.indexes
            ]
        if self.foreign:
            out["foreign"] = list(self.foreign)
        out["file"] = self.file_no
        out["header_block"] = self.header_block
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TableDef:
        try:
            cols = tuple(
                ColumnDef(
                    name=str(c["name"]).upper(),
                    type=str(c["type"]).upper(),
                    length=int(c.get("length", 0)),
                    nullable=bool(c.get("nullable", True)),
                    precision=c.get("precision"),
                    scale=c.get("scale"),
                )
                for c in d["columns"]
            )
            for c in cols:
                if c.type not in CODECS:
                    raise SourceError(f"{d['name']}.{c.name}: unsupported type {c.type}")
            indexes = tuple(
                IndexDef(
                    name=str(i["name"]).upper(),
                    obj=int(i["obj"]),
                    dataobj=int(i.get("dataobj", i["obj"])),
                    columns=tuple(str(x).upper() for x in i["columns"]),
                    unique=bool(i.get("unique", True)),
                    primary=bool(i.get("primary", False)),
                    block=int(i.get("block", 0)),
                )
                for i in d.get("indexes", ())
            )
            return cls(
                owner=str(d["owner"]).upper(),
                name=str(d["name"]).upper(),
                obj=int(d["obj"]),
                dataobj=int(d.get("dataobj", d["obj"])),
                columns=cols,
                key=tuple(str(k).upper() for k in d.get("key", ())),
                unique=tuple(tuple(str(x).upper() for x in u) for u in d.get("unique", ())),
                indexes=indexes,
                file_no=int(d.get("file", 4)),
                header_block=int(d.get("header_block", 0x432)),
                foreign=tuple(d.get("foreign", ())),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SourceError(f"bad dictionary entry {d.get('name', '?')!r}: {exc}") from exc


@dataclass
class Dictionary:
    """All tables of a database, by qualified name and by (data) object number."""

    tables: dict[str, TableDef] = field(default_factory=dict)

    def add(self, table: TableDef) -> None:
        self.tables[table.qualified] = table

    def remove(self, qualified: str) -> None:
        self.tables.pop(qualified, None)

    def get(self, owner: str, name: str) -> TableDef:
        try:
            return self.tables[f"{owner}.{name}"]
        except KeyError:
            raise UnknownObjectError(f"table or view does not exist: {owner}.{name}") from None

    def by_obj(self, obj: int) -> TableDef | None:
        """Lookup by object number or data object number (redo carries the latter)."""
        for t in self.tables.values():
            if obj in (t.dataobj, t.obj):
                return t
        return None

    def max_obj(self) -> int:
        nums = [0]
        for t in self.tables.values():
            nums += [t.obj, t.dataobj, *(i.obj for i in t.indexes), *(i.dataobj for i in t.indexes)]
        return max(nums)

    def to_json(self) -> dict[str, Any]:
        return {"tables": [t.to_json() for t in self.tables.values()]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Dictionary:
        d = cls()
        try:
            entries = data["tables"]
        except (KeyError, TypeError) as exc:
            raise SourceError('dictionary JSON needs a "tables" list') from exc
        for entry in entries:
            d.add(TableDef.from_json(entry))
        return d

    def replace_table(self, table: TableDef, **changes: Any) -> TableDef:
        new = replace(table, **changes)
        self.add(new)
        return new


DICTIONARY_ERROR = "GGS-SRC-0500"

JsonPath = tuple[str | int, ...]
Problem = tuple[JsonPath, str] | None
_TABLE_FIELDS: dict[str, str] = {
    "owner": "name",
    "name": "name",
    "obj": "int",
    "dataobj": "int",
    "columns": "columns",
    "key": "names",
    "unique": "name lists",
    "indexes": "indexes",
    "file": "int",
    "header_block": "int",
    "foreign": "objects",
}
_COLUMN_FIELDS = {
    "name": "name",
    "type": "name",
    "length": "int",
    "nullable": "bool",
    "precision": "int or null",
    "scale": "int or null",
}
_INDEX_FIELDS = {
    "name": "name",
    "obj": "int",
    "dataobj": "int",
    "columns": "names",
    "unique": "bool",
    "primary": "bool",
    "block": "int",
}
_REQUIRED = {
    "table": ("owner", "name", "obj", "columns"),
    "column": ("name", "type"),
    "index": ("name", "obj", "columns"),
}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return json.dumps(value)[:40]


def _check_object(value: Any, path: JsonPath, what: str, fields: dict[str, str]) -> Problem:
    if not isinstance(value, dict):
        return path, f"expected a {what} object, found {_kind(value)}"
    for name in _REQUIRED[what]:
        if name not in value:
            return path, f'{what} has no "{name}"'
    for name, expected in fields.items():
        if name in value and (problem := _check_value(value[name], (*path, name), expected)):
            return problem
    return None


def _is_name(v: Any) -> bool:
    return isinstance(v, str) and v.strip() != ""


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_SCALARS: dict[str, Callable[[Any], bool]] = {
    "name": _is_name,
    "int": lambda v: _is_int(v) and v >= 0,
    "int or null": lambda v: v is None or _is_int(v),
    "bool": lambda v: isinstance(v, bool),
}
_LISTS: dict[str, Callable[[Any, JsonPath], Problem]] = {
    "columns": lambda v, p: _check_object(v, p, "column", _COLUMN_FIELDS),
    "indexes": lambda v, p: _check_object(v, p, "index", _INDEX_FIELDS),
    "names": lambda v, p: _check_value(v, p, "name"),
    "name lists": lambda v, p: _check_value(v, p, "names"),
    "objects": lambda v, p: None if isinstance(v, dict) else (p, f"found {_kind(v)}"),
}


def _check_value(value: Any, path: JsonPath, expected: str) -> Problem:
    """The first place where ``value`` is not what ``expected`` names, with why."""
    if expected in _SCALARS:
        ok = _SCALARS[expected](value)
        return None if ok else (path, f"expected {expected}, found {_kind(value)}")
    if not isinstance(value, list):
        return path, f"expected a list of {expected}, found {_kind(value)}"
    for i, item in enumerate(value):
        if problem := _LISTS[expected](item, (*path, i)):
            return problem
    return None


def dictionary_problem(doc: Any) -> Problem:
    """Where the parsed dictionary JSON ``doc`` breaks the documented shape, and why."""
    if not isinstance(doc, dict) or "tables" not in doc:
        return (), 'expected an object with a "tables" list'
    tables = doc["tables"]
    if not isinstance(tables, list):
        return ("tables",), f"expected a list of tables, found {_kind(tables)}"
    for i, table in enumerate(tables):
        if problem := _check_object(table, ("tables", i), "table", _TABLE_FIELDS):
            return problem
        if not table["columns"]:
            return ("tables", i, "columns"), "a table needs at least one column"
        for j, column in enumerate(table["columns"]):
            if column["type"].upper() not in CODECS:
                return ("tables", i, "columns", j, "type"), f"unsupported type {column['type']}"
    return None


_WS = re.compile(r"[ \t\n\r]*")


def json_offset(text: str, path: JsonPath) -> int:
    """Where the value at ``path`` starts in ``text``, a JSON document that parses."""
    decoder = json.JSONDecoder()

    def skip(pos: int) -> int:
        return _WS.match(text, pos).end()  # type: ignore[union-attr]  # always matches

    pos = skip(0)
    for step in path:
        pos = skip(pos + 1)  # past "[" or "{"
        if isinstance(step, int):
            for _ in range(step):
                pos = skip(skip(decoder.raw_decode(text, pos)[1]) + 1)  # a value and ","
            continue
        while True:
            key, pos = decoder.raw_decode(text, pos)
            pos = skip(skip(pos) + 1)  # ":"
            if key == step:
                break
            pos = skip(skip(decoder.raw_decode(text, pos)[1]) + 1)  # the value and ","
    return pos


def _where(path: JsonPath) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out or "the document"


#: The largest dictionary file read.
MAX_DICTIONARY_BYTES = 1 << 30


def load_dictionary(path: Path) -> Dictionary:
    """Read a dictionary JSON file (a database's ``dictionary.json`` or an import file).

    Every problem is one :class:`SourceError` (code ``GGS-SRC-0500``) naming the file and the
    line: unreadable, not UTF-8, not JSON, or not the shape in the module docstring.
    """

    def fail(where: str | None, message: str) -> SourceError:
        at = f"{path}:{where}" if where else str(path)
        return SourceError(f"{at}: {message}", DICTIONARY_ERROR)

    try:  # a FIFO, a device, a huge file: one line, never a wait
        data = read_user_file(path, MAX_DICTIONARY_BYTES)
    except UserFileError as exc:
        raise fail(None, f"cannot read: {exc.reason}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise fail(str(line), f"not UTF-8 (byte {data[exc.start]:#04x})") from exc
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"{exc.lineno}:{exc.colno}", f"bad JSON: {exc.msg}") from exc
    except RecursionError as exc:
        raise fail("1", "bad JSON: nested too deeply") from exc
    if problem := dictionary_problem(doc):
        where, message = problem
        line = text.count("\n", 0, json_offset(text, where)) + 1
        raise fail(str(line), f"{_where(where)}: {message}")
    try:
        return Dictionary.from_json(doc)
    except SourceError as exc:  # a rule dictionary_problem does not know (yet)
        raise fail(None, exc.message) from exc


def save_dictionary(path: Path, dictionary: Dictionary) -> None:
    """Replace ``path`` (mode 0600 whatever the umask; a link at the temporary name is
    never written through)."""
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        os.fchmod(fd, 0o600)
        fh.write(json.dumps(dictionary.to_json(), indent=1))
    os.replace(tmp, path)
