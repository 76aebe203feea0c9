"""Seed 002's redo dumps as test vectors: parse, decode, round-trip; dump-text strictness."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from engine.embedded.dictionary import load_dictionary
from engine.embedded.dump_parse import parse_dump
from engine.embedded.dump_write import dump_text
from engine.embedded.errors import DumpSyntaxError
from engine.redo.ids import RowId, Xid
from engine.redo.model import DirectLoad, Kdo, Undo
from tests.harness.logical import decode

VECTORS = Path(__file__).parent / "vectors"

EXAMPLES = sorted(p.name for p in VECTORS.glob("*.dump"))


def _parse(name: str):  # type: ignore[no-untyped-def]
    with open(VECTORS / name, encoding="utf-8") as fh:
        return parse_dump(fh, source=name).records


def _decoded(name: str):  # type: ignore[no-untyped-def]
    return decode(_parse(name), load_dictionary(VECTORS / "seed_dictionary.json"))


def test_seven_examples_exist() -> None:
    assert len(EXAMPLES) == 7


@pytest.mark.parametrize(
    ("name", "ops"),
    [
        (
            "01_single_row_insert.dump",
            [("5.2", "5.1", "11.2", "5.20"), ("5.1", "10.2"), ("5.1", "10.2"), ("5.4", "24.4")],
        ),
        ("02_single_row_update.dump", [("5.2", "5.1", "11.5", "5.20"), ("5.4", "24.4")]),
        (
            "03_single_row_delete.dump",
            [("5.2", "5.1", "11.3", "5.20"), ("5.1", "10.4"), ("5.1", "10.4"), ("5.4", "24.4")],
        ),
        (
            "04_multi_row_update.dump",
            [("5.2", "5.1", "11.5", "5.20"), ("5.1", "11.5"), ("5.1", "11.5"), ("5.4", "24.4")],
        ),
        (
            "05_multi_row_delete.dump",
            [("5.2", "5.1", "11.3", "5.20")]
            + [("5.1", "10.4")] * 2
            + [("5.1", "11.3"), ("5.1", "10.4"), ("5.1", "10.4")] * 2
            + [("5.4", "24.4")],
        ),
        (
            "06_array_insert.dump",
            [("5.2", "5.1", "11.11", "5.20"), ("5.1", "10.2"), ("5.1", "10.2"), ("5.4", "24.4")],
        ),
        (
            "07_direct_path_insert.dump",
            [
                ("5.2", "5.1", "5.20"),
                ("24.6", "19.1"),
                ("5.2", "5.1", "10.2"),
                ("5.1", "10.2"),
                ("5.4", "24.4"),
            ],
        ),
    ],
)
def test_record_structure(name: str, ops: list[tuple[str, ...]]) -> None:
    assert [r.ops for r in _parse(name)] == ops


def test_single_row_insert_values() -> None:
    recs = _parse("01_single_row_insert.dump")
    first = recs[0]
    assert first.thread == 1 and first.rba.dump() == "0x000044.00000005.0010"
    assert first.scn == 0x18BCDE and first.subscn == 1 and first.length == 0x228
    assert first.lwn == (3, 1, 0x18BCDE)
    undo = first.changes[1].body
    assert isinstance(undo, Undo) and undo.xid == Xid(4, 11, 854) and undo.begin
    irp = first.changes[2].body
    assert isinstance(irp, Kdo) and irp.name == "IRP"
    assert irp.columns[0].data == bytes.fromhex("c20b0c")
    (txn,) = _decoded("01_single_row_insert.dump").committed
    assert str(txn.xid) == "4.11.854" and txn.commit_scn == 1621215 and txn.username == "US03"
    (row,) = txn.changes
    assert row.op == "INSERT" and (row.owner, row.table) == ("US03", "STUDENT")
    assert row.rowid == RowId.parse("AAASrPAAEAAAAQ2AAK")
    assert row.after == {
        "STUDENT_KEY": Decimal(1011),
        "FIRST_NAME": "Jordan",
        "SURNAME": "Sherwood",
        "GENDER": "M",
        "UNIVERSITY": "Manchester",
        "SUBJECT": "Chemistry",
        "ENTRY_YEAR": Decimal(2013),
        "TUITION_FEE": Decimal(9000),
    }


@pytest.mark.parametrize(
    ("name", "xid", "commit_scn", "ops", "rowids", "keys"),
    [
        ("02_single_row_update.dump", "3.6.1012", 1622900, ["UPDATE"], ["AAASrPAAEAAAAQ2AAJ"], []),
        (
            "03_single_row_delete.dump",
            "1.33.830",
            1625893,
            ["DELETE"],
            ["AAASrPAAEAAAAQ2AAD"],
            [1004],
        ),
        (
            "04_multi_row_update.dump",
            "6.27.1204",
            1630607,
            ["UPDATE"] * 3,
            ["AAASrPAAEAAAAQ2AAG", "AAASrPAAEAAAAQ2AAH", "AAASrPAAEAAAAQ2AAI"],
            [],
        ),
        (
            "05_multi_row_delete.dump",
            "3.23.1016",
            1638367,
            ["DELETE"] * 3,
            ["AAASrPAAEAAAAQ2AAD", "AAASrPAAEAAAAQ2AAL", "AAASrPAAEAAAAQ2AAM"],
            [1007, 1008, 1009],
        ),
        (
            "06_array_insert.dump",
            "7.13.846",
            1641683,
            ["INSERT"] * 3,
            ["AAASrPAAEAAAAQ2AAG", "AAASrPAAEAAAAQ2AAH", "AAASrPAAEAAAAQ2AAI"],
            [1007, 1008, 1009],
        ),
        (
            "07_direct_path_insert.dump",
            "4.21.865",
            1652769,
            ["INSERT"] * 3,
            ["AAASrPAAEAAAARgAAA", "AAASrPAAEAAAARgAAB", "AAASrPAAEAAAARgAAC"],
            [1007, 1008, 1009],
        ),
    ],
)
def test_examples_decode_like_the_seed_trail(
    name: str, xid: str, commit_scn: int, ops: list[str], rowids: list[str], keys: list[int]
) -> None:
    """Transaction ids, commit SCNs and ROWIDs are those of the seed's trail listings."""
    d = _decoded(name)
    assert not d.open and not d.rolled_back
    (txn,) = d.committed
    assert str(txn.xid) == xid and txn.commit_scn == commit_scn
    assert [c.op for c in txn.changes] == ops
    assert [str(c.rowid) for c in txn.changes] == rowids
    if keys:
        assert [c.key["STUDENT_KEY"] for c in txn.changes] == [Decimal(k) for k in keys]


def test_update_values_and_missing_supplemental_key() -> None:
    """The seed's update dumps carry no supplemental key columns: the key is unknown."""
    (txn,) = _decoded("02_single_row_update.dump").committed
    (row,) = txn.changes
    assert row.after == {"TUITION_FEE": Decimal(6000)}
    assert row.before == {"TUITION_FEE": Decimal(9000)}
    assert row.key == {}
    multi = _decoded("04_multi_row_update.dump").committed[0]
    assert all(c.after == {"TUITION_FEE": Decimal(7500)} for c in multi.changes)
    assert all(c.before == {"TUITION_FEE": Decimal(8000)} for c in multi.changes)


def test_direct_load_rows_and_the_seed_copy_defect() -> None:
    recs = _parse("07_direct_path_insert.dump")
    load = recs[1].changes[1].body
    assert isinstance(load, DirectLoad) and load.xid == Xid(4, 0x15, 0x361)
    assert [r.column_count for r in load.rows] == [8, 8, 8]
    # Seed 002 prints row 2 without its "col 4" line (UNIVERSITY = Manchester in the trail):
    assert [c.no for c in load.rows[2].columns] == [0, 1, 2, 3, 5, 6, 7]
    (txn,) = _decoded("07_direct_path_insert.dump").committed
    assert "UNIVERSITY" not in txn.changes[2].after
    assert txn.changes[2].after["SUBJECT"] == "Media Studies"
    assert all(c.direct for c in txn.changes)


@pytest.mark.parametrize("name", EXAMPLES)
def test_dump_text_round_trips(name: str) -> None:
    """(Their round trip through Oracle's bytes: tests/redo/test_payloads.py.)"""
    recs = _parse(name)
    again = parse_dump(list(dump_text(recs)), source="again").records
    assert again == recs


def test_prose_between_records_is_an_error_with_its_line() -> None:
    lines = (VECTORS / "01_single_row_insert.dump").read_text().splitlines()
    lines.insert(40, "The above redo record consists of the following components:")
    with pytest.raises(DumpSyntaxError) as err:
        parse_dump(lines, source="x.dump")
    assert err.value.line_no == 41
    assert err.value.code == "GGS-SRC-0400"
    assert "x.dump:41" in str(err.value)
    lenient = parse_dump(lines, source="x.dump", lenient=True)
    assert len(lenient.records) == 4 and len(lenient.warnings) == 1


def test_text_before_the_first_record_is_an_error() -> None:
    with pytest.raises(DumpSyntaxError) as err:
        parse_dump(
            ["hello", "REDO RECORD - Thread:1 RBA: 0x000001.00000001.0010 LEN: 0x0010 VLD: 0x01"]
        )
    assert err.value.line_no == 1
    with pytest.raises(DumpSyntaxError):
        parse_dump(["REDO RECORD - Thread:1 RBA: 0x000001.00000001.0010 LEN: 0x0010 VLD: 0x01"])
