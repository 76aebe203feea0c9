"""Bad dump text and bad dictionaries (issue 12): one line with the file and the line number
and a ``GGS-SRC`` code, exit status 1, and nothing written to the database."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.embedded.dictionary import load_dictionary
from engine.embedded.dump_parse import parse_dump
from engine.embedded.errors import DumpSyntaxError, SourceError
from ggsci.cli_db import app

VECTORS = Path(__file__).parent / "vectors"
DUMP = (VECTORS / "01_single_row_insert.dump").read_text()
DICTIONARY = VECTORS / "seed_dictionary.json"
runner = CliRunner()


def _without(prefix: str) -> str:
    return "".join(ln for ln in DUMP.splitlines(True) if not ln.lstrip().startswith(prefix))


BAD_DUMPS = {
    "scn_beyond_48_bits": (
        DUMP.replace("SCN: 0x0000.0018bcde SUBSCN", "SCN: 0xffffffffffff.ffffffffffff SUBSCN", 1),
        2,
        "SCN 0xffffffffffffffffffff is out of range (at most 0xffffffffffff)",
    ),
    "rba_sequence_beyond_32_bits": (
        DUMP.replace("RBA: 0x000044.00000005", "RBA: 0xffffffffffffffffff.00000005", 1),
        1,
        "RBA log sequence 0xffffffffffffffffff is out of range (at most 0xffffffff)",
    ),
    "thread_beyond_16_bits": (
        DUMP.replace("Thread:1 ", "Thread:70000 ", 1),
        1,
        "thread 0x11170 is out of range (at most 0xffff)",
    ),
    "no_ktubl_line": (
        _without("ktubl redo:"),
        9,
        "change vector OP:5.1 is incomplete: it has no opc, objn, objd",
    ),
    "no_xid_line": (_without("xid:"), 9, "change vector OP:5.1 is incomplete: it has no xid"),
    "extra_record_header": (
        DUMP.splitlines(True)[0] + DUMP,
        2,
        "expected the SCN line of a redo record, found another header",
    ),
    "bad_date": (DUMP.replace("03/31/2013", "13/45/2013", 1), 2, "does not match format"),
    "header_at_the_end": (DUMP + DUMP.splitlines(True)[0], 125, "record ends before its SCN"),
}


@pytest.mark.parametrize("case", sorted(BAD_DUMPS))
def test_bad_dump_is_one_error_at_its_line(case: str) -> None:
    text, line_no, message = BAD_DUMPS[case]
    with pytest.raises(DumpSyntaxError) as info:
        parse_dump(text.splitlines(True), source="x.dump")
    assert info.value.code == "GGS-SRC-0400"
    assert info.value.line_no == line_no, str(info.value)
    assert str(info.value).startswith(f"GGS-SRC-0400: x.dump:{line_no}: ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def _tree(root: Path) -> dict[str, int]:
    """Every file of a database and its size, but the lock file opening it creates."""
    files = (p for p in root.rglob("*") if p.is_file() and p.name != "lock")
    return {str(p.relative_to(root)): p.stat().st_size for p in files}


def _import(tmp_path: Path, dump: Path, dictionary: Path = DICTIONARY) -> tuple[int, str]:
    args = ["import-dump", "SRC", str(dump), "--dictionary", str(dictionary)]
    result = runner.invoke(app, [*args, "--home", str(tmp_path)])
    return result.exit_code, result.output


@pytest.fixture
def src(tmp_path: Path) -> Path:
    assert runner.invoke(app, ["create", "src", "--home", str(tmp_path)]).exit_code == 0
    return tmp_path / "dirdb" / "SRC"


@pytest.mark.parametrize("case", sorted(BAD_DUMPS))
def test_import_dump_refuses_a_bad_dump_and_writes_nothing(
    case: str, tmp_path: Path, src: Path
) -> None:
    text, line_no, message = BAD_DUMPS[case]
    dump = tmp_path / "bad.dump"
    dump.write_text(text)
    before = _tree(src)
    code, out = _import(tmp_path, dump)
    assert code == 1
    assert out.startswith(f"GGS-SRC-0400: {dump}:{line_no}: ") and message in out
    assert out.count("\n") == 1 and "Traceback" not in out
    assert _tree(src) == before  # no 0-byte log with a 25-digit name, nothing else either


def test_import_dump_refuses_a_thread_the_database_lacks(tmp_path: Path, src: Path) -> None:
    dump = tmp_path / "t2.dump"
    dump.write_text(DUMP.replace("Thread:1 ", "Thread:2 "))
    before = _tree(src)
    code, out = _import(tmp_path, dump)
    assert code == 1
    assert out.startswith(f"GGS-SRC-0106: {dump}: a record of redo thread 2 (RBA 0x000044.")
    assert _tree(src) == before


def test_import_dump_reads_stray_bytes_as_replacement(tmp_path: Path, src: Path) -> None:
    dump = tmp_path / "latin1.dump"
    dump.write_bytes(
        DUMP.encode().replace(b"login   username = US03", b"login   username = US\xe9")
    )
    code, out = _import(tmp_path, dump)
    assert code == 0, out
    assert out == "4 redo record(s) imported from 1 file(s).\n"


BAD_DICTIONARIES = {
    "tables_of_numbers": (
        b'{"tables": [\n  1, 2, 3]}',
        2,
        "tables[0]: expected a table object, found 1",
    ),
    "a_list": (b"[1]", 1, 'the document: expected an object with a "tables" list'),
    "tables_an_object": (
        b'{"tables": {}}',
        1,
        "tables: expected a list of tables, found an object",
    ),
    "no_name": (b'{"tables": [{"owner": "A", "obj": 1, "columns": []}]}', 1, 'table has no "name"'),
    "no_columns": (
        b'{"tables": [\n{"owner": "A", "name": "T", "obj": 1,\n "columns": []}]}',
        3,
        "tables[0].columns: a table needs at least one column",
    ),
    "column_a_string": (
        b'{"tables": [{"owner": "A", "name": "T", "obj": 1,\n"columns": [\n"ID"]}]}',
        3,
        'tables[0].columns[0]: expected a column object, found "ID"',
    ),
    "length_not_int": (
        b'{"tables": [{"owner": "A", "name": "T", "obj": 1, "columns": [\n'
        b'{"name": "ID", "type": "NUMBER"},\n{"name": "X", "type": "VARCHAR2",\n"length": "30"}]}]}',
        4,
        'tables[0].columns[1].length: expected int, found "30"',
    ),
    "negative_obj": (
        b'{"tables": [{"owner": "A", "name": "T",\n"obj": -1, "columns": []}]}',
        2,
        "tables[0].obj: expected int, found -1",
    ),
    "unknown_type": (
        b'{"tables": [{"owner": "A", "name": "T", "obj": 1, "columns": [\n'
        b'{"name": "ID", "type": "BLOBBY"}]}]}',
        2,
        "tables[0].columns[0].type: unsupported type BLOBBY",
    ),
    "key_not_names": (
        b'{"tables": [{"owner": "A", "name": "T", "obj": 1, "columns": [\n'
        b'{"name": "ID", "type": "NUMBER"}],\n"key": [\n7]}]}',
        4,
        "tables[0].key[0]: expected name, found 7",
    ),
    "not_utf8": (b'{"tables": [\n{"owner": "\xe9"}]}', 2, "not UTF-8 (byte 0xe9)"),
    "not_json": (b'{"tables": [\n,]}', 2, "2:1: bad JSON: Expecting value"),
    "nested_too_deep": (b"[" * 100_000, 1, "bad JSON: nested too deeply"),
}


@pytest.mark.parametrize("case", sorted(BAD_DICTIONARIES))
def test_bad_dictionary_is_one_error_at_its_line(case: str, tmp_path: Path) -> None:
    data, line_no, message = BAD_DICTIONARIES[case]
    path = tmp_path / "d.json"
    path.write_bytes(data)
    with pytest.raises(SourceError) as info:
        load_dictionary(path)
    assert info.value.code == "GGS-SRC-0500"
    assert str(info.value).startswith(f"GGS-SRC-0500: {path}:{line_no}:"), str(info.value)
    assert message in str(info.value)


def test_import_dump_refuses_a_bad_dictionary_in_one_line(tmp_path: Path, src: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(b'{"tables":[1,2,3]}')
    before = _tree(src)
    code, out = _import(tmp_path, VECTORS / "01_single_row_insert.dump", path)
    assert code == 1
    assert out == f"GGS-SRC-0500: {path}:1: tables[0]: expected a table object, found 1\n"
    assert _tree(src) == before
    code, out = _import(tmp_path, VECTORS / "01_single_row_insert.dump", tmp_path / "none.json")
    assert (code, out) == (
        1,
        f"GGS-SRC-0500: {tmp_path / 'none.json'}: cannot read: No such file or directory\n",
    )


def test_the_seed_dictionary_still_loads() -> None:
    assert list(load_dictionary(DICTIONARY).tables) == ["US03.STUDENT"]


def test_sql_that_is_not_utf8_is_refused_at_its_line(tmp_path: Path, src: Path) -> None:
    """Not replaced: a replaced byte would change the data the statement writes."""
    script = tmp_path / "latin1.sql"
    script.write_bytes(b"select 1 from dual;\nselect '\xe9' from dual;\n")
    result = runner.invoke(app, ["run", "SRC", str(script), "--home", str(tmp_path)])
    assert (result.exit_code, result.output) == (
        1,
        f"GGS-SRC-0107: {script}:2: not UTF-8 (byte 0xe9)\n",
    )
    result = runner.invoke(app, ["sql", "SRC", "--home", str(tmp_path)], input=script.read_bytes())
    assert (result.exit_code, result.output) == (
        1,
        "GGS-SRC-0107: standard input:2: not UTF-8 (byte 0xe9)\n",
    )
