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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.source.codecs import CODECS, Value, decode_value
from engine.source.errors import SourceError, UnknownObjectError


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


def load_dictionary(path: Path) -> Dictionary:
    """Read a dictionary JSON file (a database's ``dictionary.json`` or an import file)."""
    try:
        return Dictionary.from_json(json.loads(path.read_text(encoding="utf-8")))
    except OSError as exc:
        raise SourceError(f"cannot read dictionary {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise SourceError(f"{path}:{exc.lineno}:{exc.colno}: bad JSON: {exc.msg}") from exc


def save_dictionary(path: Path, dictionary: Dictionary) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(dictionary.to_json(), indent=1), encoding="utf-8")
    os.replace(tmp, path)
