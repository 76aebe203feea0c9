"""The dictionary the redo is decoded with: tables by (container, data object), their
columns in segment order with types, lengths, character sets and keys.

Two inputs:

* OpenLogReplicator's schema checkpoint JSON (``sys-obj``, ``sys-tab``, ``sys-col``,
  ``sys-cdef``/``sys-ccol``, ``sys-user``; ``con-id``, ``nls-character-set``, ``scn``);
* ggsci's own dictionary JSON (``"format": "ggsci-oracle-dictionary/1"``), which
  ``engine/redo/sql/ggsci_dictionary.sql`` produces from a live database with SQL*Plus::

      {"format": "ggsci-oracle-dictionary/1", "scn": 2266634, "db_charset": "AL32UTF8",
       "nchar_charset": "AL16UTF16",
       "tables": [{"con_id": 3, "container": "FREEPDB1", "owner": "OLR_TEST",
                   "name": "TEST_CDC", "obj": 72726, "data_objs": [72726], "key": ["ID"],
                   "columns": [{"name": "ID", "seg_col": 1, "type": "NUMBER", "length": 22,
                                "precision": null, "scale": null, "charset_form": 0,
                                "nullable": false}, ...]}]}

``charset_form`` 1 is the database character set, 2 the national one (as COL$.CHARSETFORM).
``container`` is the name of the table's container (V$CONTAINERS.NAME: a PDB's name, CDB$ROOT),
which TABLE statements' catalog part selects (``TABLE FREEPDB1.OLR_TEST.*``); absent in a
non-CDB and in dictionaries written before it was added.
Errors: :class:`DictionaryError` with the file and what is wrong, one line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from engine.home.userfile import UserFileError, read_user_file
from engine.redo.errors import RedoError
from engine.redo.values import TYPE_CODES, UNSUPPORTED, base_type

FORMAT = "ggsci-oracle-dictionary/1"
MAX_DICTIONARY_BYTES = 1 << 30
#: V$CONTAINERS: in a container database, container 1 is the root, whatever the dictionary
#: lists (a non-CDB's redo names container 0)
ROOT_CONTAINER = (1, "CDB$ROOT")


class DictionaryError(RedoError):
    default_code = "GGS-REDO-0010"


@dataclass(frozen=True)
class Column:
    name: str
    seg_col: int  # position in the row piece, from 1
    type: str
    length: int
    charset_form: int = 0
    nullable: bool = True
    precision: int | None = None
    scale: int | None = None


@dataclass(frozen=True)
class Table:
    con_id: int
    owner: str
    name: str
    obj: int
    data_objs: tuple[int, ...]
    columns: tuple[Column, ...]  # in segment order
    key: tuple[str, ...] = ()
    container: str | None = None  # the container's name (a PDB's), None when not known

    @property
    def full_name(self) -> str:
        return f"{self.owner}.{self.name}"

    def column_at(self, seg_col: int) -> Column | None:
        for c in self.columns:
            if c.seg_col == seg_col:
                return c
        return None


@dataclass(frozen=True)
class Dictionary:
    scn: int
    db_charset: str
    nchar_charset: str
    tables: tuple[Table, ...]

    def by_data_obj(self) -> dict[tuple[int, int], Table]:
        return self._by_data_obj

    @cached_property
    def _by_data_obj(self) -> dict[tuple[int, int], Table]:
        return {(t.con_id, d): t for t in self.tables for d in t.data_objs}

    def by_obj(self) -> dict[tuple[int, int], Table]:
        return {(t.con_id, t.obj): t for t in self.tables}

    @cached_property
    def containers(self) -> dict[int, str]:
        """The names of the containers the dictionary knows, by id: the root's and those
        its tables name; empty for a non-CDB (no table in a container)."""
        if not any(t.con_id for t in self.tables):
            return {}
        names = {t.con_id: t.container for t in self.tables if t.container}
        return {ROOT_CONTAINER[0]: ROOT_CONTAINER[1], **names}

    def charset(self, col: Column) -> str:
        return self.nchar_charset if col.charset_form == 2 else self.db_charset

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "scn": self.scn,
            "db_charset": self.db_charset,
            "nchar_charset": self.nchar_charset,
            "tables": [
                {
                    "con_id": t.con_id,
                    **({"container": t.container} if t.container else {}),
                    "owner": t.owner,
                    "name": t.name,
                    "obj": t.obj,
                    "data_objs": list(t.data_objs),
                    "key": list(t.key),
                    "columns": [
                        {
                            "name": c.name,
                            "seg_col": c.seg_col,
                            "type": c.type,
                            "length": c.length,
                            "precision": c.precision,
                            "scale": c.scale,
                            "charset_form": c.charset_form,
                            "nullable": c.nullable,
                        }
                        for c in t.columns
                    ],
                }
                for t in self.tables
            ],
        }


def _type_name(code: int, scale: int | None) -> str:
    if code in TYPE_CODES:
        return TYPE_CODES[code]
    return UNSUPPORTED.get(code, f"TYPE#{code}")


def _opt(v: Any) -> int | None:
    return None if v is None or v == -1 else int(v)


def from_olr_checkpoint(doc: dict[str, Any]) -> Dictionary:
    """OpenLogReplicator's schema checkpoint (one container: its ``con-id``, ``con-name``)."""
    con = int(doc.get("con-id", 0))
    con_name = str(doc["con-name"]).upper() if doc.get("con-name") else None
    users = {u["user"]: u["name"] for u in doc.get("sys-user", [])}
    cols: dict[int, list[dict[str, Any]]] = {}
    for c in doc.get("sys-col", []):
        cols.setdefault(int(c["obj"]), []).append(c)
    pk_cons = {int(c["con"]) for c in doc.get("sys-cdef", []) if int(c.get("type", 0)) == 2}
    key_cols: dict[int, set[int]] = {}
    for cc in doc.get("sys-ccol", []):
        if int(cc["con"]) in pk_cons:
            key_cols.setdefault(int(cc["obj"]), set()).add(int(cc["int-col"]))
    tabs = {int(t["obj"]): t for t in doc.get("sys-tab", [])}
    tables = []
    for o in doc.get("sys-obj", []):
        obj = int(o["obj"])
        if int(o.get("type", 0)) != 2 or obj not in tabs:
            continue
        columns = []
        for c in sorted(cols.get(obj, []), key=lambda c: int(c["seg-col"])):
            if int(c["seg-col"]) <= 0:
                continue  # virtual or hidden without storage
            columns.append(
                Column(
                    name=c["name"],
                    seg_col=int(c["seg-col"]),
                    type=_type_name(int(c["type"]), _opt(c.get("scale"))),
                    length=int(c["length"]),
                    charset_form=int(c.get("charset-form", 0)),
                    nullable=not int(c.get("null", 0)),
                    precision=_opt(c.get("precision")),
                    scale=_opt(c.get("scale")),
                )
            )
        keys = key_cols.get(obj, set())
        key = tuple(
            c["name"]
            for c in sorted(cols.get(obj, []), key=lambda c: int(c["int-col"]))
            if int(c["int-col"]) in keys
        )
        data_obj = int(tabs[obj].get("data-obj") or o.get("data-obj") or obj)
        tables.append(
            Table(
                con,
                users.get(int(o["owner"]), str(o["owner"])),
                o["name"],
                obj,
                (data_obj,),
                tuple(columns),
                key,
                con_name,
            )
        )
    return Dictionary(
        int(doc.get("scn", 0)),
        doc.get("nls-character-set", "AL32UTF8"),
        doc.get("nls-nchar-character-set", "AL16UTF16"),
        tuple(tables),
    )


def from_ggsci(doc: dict[str, Any]) -> Dictionary:
    tables = []
    for t in doc.get("tables") or []:  # null: the schema has no table
        columns = tuple(
            Column(
                name=c["name"],
                seg_col=int(c["seg_col"]),
                type=base_type(str(c["type"])),
                length=int(c.get("length") or 0),
                charset_form=int(c.get("charset_form") or 0),
                nullable=bool(c.get("nullable", True)),
                precision=_opt(c.get("precision")),
                scale=_opt(c.get("scale")),
            )
            for c in sorted(t.get("columns") or [], key=lambda c: int(c["seg_col"]))
        )
        tables.append(
            Table(
                int(t.get("con_id", 0)),
                t["owner"],
                t["name"],
                int(t["obj"]),
                tuple(int(d) for d in t.get("data_objs") or [t["obj"]]),
                columns,
                tuple(t.get("key") or []),  # null: no primary key (JSON_ARRAYAGG of no row)
                str(t["container"]).upper() if t.get("container") else None,
            )
        )
    return Dictionary(
        int(doc.get("scn", 0)),
        doc.get("db_charset", "AL32UTF8"),
        doc.get("nchar_charset", "AL16UTF16"),
        tuple(tables),
    )


def _parsed(text: str) -> Any:
    """The JSON of ``text``. SQL*Plus prints the script's one line of JSON broken into lines of
    at most LINESIZE (32,767) characters, a break anywhere, inside a string too; valid JSON
    holds a raw line break only between tokens, where it may go: a text that does not parse
    is parsed again without its line breaks (the first error is the one said)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if "\n" not in text and "\r" not in text:
            raise
        first = exc
    try:
        return json.loads(text.replace("\r", "").replace("\n", ""))
    except json.JSONDecodeError:
        raise first from None


def load(path: Path, text: str | None = None) -> Dictionary:
    """Either format, told apart by content; ``text`` instead of reading ``path`` (storage)."""
    try:
        if text is None:  # a FIFO, a device, a file too large: one line, never a wait
            text = read_user_file(path, MAX_DICTIONARY_BYTES).decode("utf-8")
        doc = _parsed(text)
    except UserFileError as exc:
        raise DictionaryError(str(exc)) from None
    except OSError as exc:
        raise DictionaryError(f"{path}: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DictionaryError(f"{path}: not JSON ({exc})") from None
    except RecursionError:
        raise DictionaryError(f"{path}: not a dictionary: JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise DictionaryError(f"{path}: not a dictionary JSON object")
    try:
        if doc.get("format") == FORMAT:
            return from_ggsci(doc)
        if "sys-obj" in doc and "sys-col" in doc:
            return from_olr_checkpoint(doc)
    except (KeyError, TypeError, ValueError) as exc:
        raise DictionaryError(f"{path}: malformed dictionary ({exc!r})") from None
    raise DictionaryError(f"{path}: neither {FORMAT} nor an OpenLogReplicator schema checkpoint")
