"""The dictionary a DBA takes with the shipped SQL*Plus script (engine/redo/sql/
ggsci_dictionary.sql, docs/extract.md step 4) loads as the Extract needs it: the type names
the script writes are the decoders' (DBA_TAB_COLS.DATA_TYPE carries precisions), a table
without a primary key (the script's JSON_ARRAYAGG of no row is ``null``) and a schema without
tables load, and the JSON SQL*Plus breaks into lines of LINESIZE characters loads whole."""

from __future__ import annotations

import json
import re
import struct
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

import engine.redo
from engine.redo import dictionary as D
from engine.redo.values import DECODERS, UNSUPPORTED, decode_value
from ggsci.cli_db import app
from tests.redo.corpus import LOG15, need

SCRIPT = Path(engine.redo.__file__).parent / "sql" / "ggsci_dictionary.sql"

# DBA_TAB_COLS.DATA_TYPE as Oracle writes it, for the types the redo reader decodes or names
DATA_TYPES = {
    "NUMBER": "NUMBER",
    "FLOAT": "FLOAT",
    "VARCHAR2": "VARCHAR2",
    "NVARCHAR2": "NVARCHAR2",
    "CHAR": "CHAR",
    "DATE": "DATE",
    "RAW": "RAW",
    "BINARY_DOUBLE": "BINARY_DOUBLE",
    "TIMESTAMP(6)": "TIMESTAMP",
    "TIMESTAMP(3) WITH TIME ZONE": "TIMESTAMP WITH TIME ZONE",
    "TIMESTAMP(6) WITH LOCAL TIME ZONE": "TIMESTAMP WITH LOCAL TIME ZONE",
    "INTERVAL YEAR(2) TO MONTH": "INTERVAL YEAR TO MONTH",
    "INTERVAL DAY(2) TO SECOND(6)": "INTERVAL DAY TO SECOND",
    "CLOB": "CLOB",
}

TS_UTC = bytes([120, 126, 3, 7, 2, 45, 41]) + struct.pack(">I", 500_000_000)  # 2026-03-07


def test_the_scripts_type_names_are_the_readers() -> None:
    """Before: its pattern ``\\(.*\\)`` took ``(2) TO SECOND(6)`` out of an INTERVAL DAY TO
    SECOND column's type, which the Extract then left out as a type it does not capture."""
    text = SCRIPT.read_text()
    (pattern,) = re.findall(r"regexp_replace\(c\.data_type, '([^']*)', ''\)", text)
    known = set(DECODERS) | set(UNSUPPORTED.values())
    for data_type, name in DATA_TYPES.items():
        assert re.sub(pattern, "", data_type) == name, data_type
        assert name in known


def _as_sqlplus_prints_it(doc: dict[str, object], width: int) -> str:
    """The script's one line of JSON (JSON_OBJECT writes no blanks), broken as SQL*Plus
    breaks a line longer than its LINESIZE (at any character, inside a string too)."""
    line = json.dumps(doc, separators=(",", ":"))
    return "\n" + "\n".join(line[i : i + width] for i in range(0, len(line), width)) + "\n"


def _column(name: str, seg: int, data_type: str, nullable: bool = True) -> dict[str, object]:
    return {"name": name, "seg_col": seg, "type": data_type, "length": 22, "precision": None,
            "scale": None, "charset_form": 0, "nullable": nullable}  # fmt: skip


DOC = {
    "format": D.FORMAT,
    "scn": 2266634,
    "db_charset": "AL32UTF8",
    "nchar_charset": "AL16UTF16",
    "tables": [
        {"con_id": 3, "container": "FREEPDB1", "owner": "APP", "name": "EVENTS", "obj": 80001,
         "data_objs": [80001], "key": None,  # no primary key: JSON_ARRAYAGG of no row
         "columns": [_column("AT", 1, "TIMESTAMP(3) WITH TIME ZONE"),
                     _column("SPAN", 2, "INTERVAL DAY(2) TO SECOND(6)"),
                     _column("NOTE", 3, "VARCHAR2")]},
        {"con_id": 3, "container": "FREEPDB1", "owner": "APP", "name": "T", "obj": 80002,
         "data_objs": [80002], "key": ["ID"], "columns": [_column("ID", 1, "NUMBER", False)]},
    ],
}  # fmt: skip


@pytest.mark.parametrize("width", [80, 32767])
def test_what_sqlplus_prints_loads(tmp_path: Path, width: int) -> None:
    """Before: ``"key":null`` was a TypeError (the whole dictionary refused as malformed), a
    line break inside a string was "not JSON", and the types kept their precisions, so that
    a TIMESTAMP(3) WITH TIME ZONE was decoded as a TIMESTAMP."""
    path = tmp_path / "dict.json"
    path.write_text(_as_sqlplus_prints_it(DOC, width))
    dic = D.load(path)
    events, t = dic.tables
    assert (events.key, t.key) == ((), ("ID",))
    assert [c.type for c in events.columns] == [
        "TIMESTAMP WITH TIME ZONE",
        "INTERVAL DAY TO SECOND",
        "VARCHAR2",
    ]
    at, span, _ = events.columns
    tz = TS_UTC + bytes([20 + 2, 60 + 30])
    assert decode_value(at.type, tz) == datetime(
        2026, 3, 7, 1, 44, 40, 500000, tzinfo=UTC
    ).astimezone(timezone(timedelta(hours=2, minutes=30)))
    ds = (
        struct.pack(">I", (1 << 31) + 1) + bytes([62, 63, 64]) + struct.pack(">I", (1 << 31) + 5000)
    )
    assert decode_value(span.type, ds) == timedelta(
        days=1, hours=2, minutes=3, seconds=4, microseconds=5
    )
    # as the dictionary gives it, a type is decoded by its name without precisions too
    assert decode_value("TIMESTAMP(3) WITH TIME ZONE", tz) == decode_value(at.type, tz)


def test_attach_takes_it_and_a_schema_without_tables(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    arch = tmp_path / "arch"
    arch.mkdir()
    (arch / LOG15.name).write_bytes(need(LOG15).read_bytes())
    for doc, tables in ((DOC, 2), ({**DOC, "tables": None}, 0)):
        path = tmp_path / "dict.json"
        path.write_text(_as_sqlplus_prints_it(doc, 100))
        args = ["attach", "ORA", "--archive", str(arch), "--dictionary", str(path)]
        r = CliRunner().invoke(app, [*args, "--format", "arch%t_%s_%r.dbf", "--home", str(home)])
        assert r.exit_code == 0, r.output
        assert f"dictionary of {tables} table(s)" in r.output
        assert CliRunner().invoke(app, ["drop", "ORA", "--home", str(home)]).exit_code == 0


def test_a_text_that_is_not_json_says_its_first_error(tmp_path: Path) -> None:
    path = tmp_path / "dict.json"
    path.write_text('{"format":\n "ggsci-oracle-dictionary/1", "tables": [}\n')
    with pytest.raises(D.DictionaryError, match=r"not JSON \(Expecting value: line 2 column 42"):
        D.load(path)
