"""The lakehouse Replicat in process on Delta and Iceberg: apply mode by key (inserts,
compressed updates, deletes, key updates, truncates, reduced in one batch), history mode,
tables created from the trail's definitions, columns added, and a wrong value stopping it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lakehelp import drain, lake_home, lake_run, read_delta, read_iceberg
from replicat_helpers import dele, ins, txn_records, upd, write_trail

from engine.replicat import ReplicatError
from engine.trail.layout import IOType
from engine.trail.model import TableDef

KINDS = ("deltalake", "iceberg")
MAP_APPLY = "MAP hr.emp, TARGET hr.emp, KEYCOLS (ID);"
MAP_HIST = "MAP hr.emp, TARGET hr.emp_hist, INSERTALLRECORDS;"


def read(home, kind: str, table: str) -> list[dict[str, object]]:
    if kind == "deltalake":
        return read_delta(home.root / "lake" / "hr" / table)
    return read_iceberg(home, f"hr.{table}")


@pytest.mark.parametrize("kind", KINDS)
def test_apply_mode_mirrors_the_source(tmp_path: Path, kind: str) -> None:
    home = lake_home(tmp_path / "home")
    write_trail(
        home.root / "dirrmt" / "bb",
        [
            txn_records(100, [ins(1), ins(2), ins(3)]),
            txn_records(101, [upd(1, 50), dele(2), ins(4)]),
            txn_records(102, [upd(4, 7), upd(4, 8), ins(2, "again")]),
        ],
    )
    r, seen = lake_run(home, kind, MAP_APPLY, ops=4)
    drain(r)
    assert read(home, kind, "emp") == [
        {"ID": "1", "NAME": "n1", "SAL": "50"},
        {"ID": "2", "NAME": "again2", "SAL": "1"},
        {"ID": "3", "NAME": "n3", "SAL": "1"},
        {"ID": "4", "NAME": "n4", "SAL": "8"},
    ]
    assert any("Created" in s and "HR.EMP" in s for s in seen), seen
    assert r.applier.counts["updates"] == 3 and r.applier.counts["deletes"] == 1


@pytest.mark.parametrize("kind", KINDS)
def test_history_mode_appends_every_operation_with_its_columns(tmp_path: Path, kind: str) -> None:
    home = lake_home(tmp_path / "home")
    write_trail(
        home.root / "dirrmt" / "bb",
        [txn_records(100, [ins(1), ins(2)]), txn_records(101, [upd(1, 50), dele(2)])],
    )
    r, _ = lake_run(home, kind, MAP_HIST)
    drain(r)
    got = sorted(read(home, kind, "emp_hist"), key=lambda g: str(g["POSITION"]))
    assert [(g["OP_TYPE"], g["ID"], g["SAL"], g["CSN"]) for g in got] == [
        ("I", "1", "1", "100"), ("I", "2", "1", "100"), ("U", "1", "50", "101"),
        ("D", "2", None, "101"),
    ]  # fmt: skip
    assert all(g["TRANID"] and len(str(g["POSITION"])) == 20 for g in got)
    assert {g["OP_TS"].year for g in got} == {2023}  # the source commit time (UTC)


@pytest.mark.parametrize("kind", KINDS)
def test_a_column_added_at_the_source_is_added(tmp_path: Path, kind: str) -> None:
    home = lake_home(tmp_path / "home")
    trail = home.root / "dirrmt" / "bb"
    write_trail(trail, [txn_records(100, [ins(1)])])
    r, seen = lake_run(home, kind, MAP_APPLY)
    r.run(lambda: False, stop_at_eof=True, idle=0.01)  # the table is made with 3 columns
    wider = TableDef("HR.EMP", ("ID", "NAME", "SAL", "DEPT"))
    add = (IOType.INSERT, "HR.EMP", ((0, "2"), (1, "b"), (2, "3"), (3, "sales")))
    write_trail(trail, [txn_records(101, [add, upd(1, 9)])], tables=(wider,))
    drain(r)
    assert read(home, kind, "emp") == [
        {"ID": "1", "NAME": "n1", "SAL": "9", "DEPT": None},
        {"ID": "2", "NAME": "b", "SAL": "3", "DEPT": "sales"},
    ]
    assert any("Added column(s) DEPT" in s for s in seen), seen


def test_a_value_the_column_type_cannot_hold_stops_the_replicat(tmp_path: Path) -> None:
    import pyarrow as pa
    from deltalake import DeltaTable

    home = lake_home(tmp_path / "home")
    schema = pa.schema([("ID", pa.int64()), ("NAME", pa.string()), ("SAL", pa.int32())])
    DeltaTable.create(str(home.root / "lake" / "hr" / "emp"), schema,
                      description="ggsci key columns: ID")  # fmt: skip
    write_trail(home.root / "dirrmt" / "bb",
                [txn_records(100, [ins(1, sal=5)]), txn_records(101, [upd(1, 10**12)])])  # fmt: skip
    r, _ = lake_run(home, "deltalake", "MAP hr.emp, TARGET hr.emp;", ops=1)
    with pytest.raises(ReplicatError) as err:
        drain(r)
    assert "Column SAL of HR.EMP is of type int32, which cannot hold the value '1000000000000'" in (
        err.value.text
    )
    assert read_delta(home.root / "lake" / "hr" / "emp") == [{"ID": 1, "NAME": "n1", "SAL": 5}]


def test_apply_mode_without_a_key_is_refused_with_a_message(tmp_path: Path) -> None:
    home = lake_home(tmp_path / "home")
    write_trail(home.root / "dirrmt" / "bb", [txn_records(100, [ins(1)])])
    r, _ = lake_run(home, "deltalake", "MAP hr.emp, TARGET hr.emp;")
    with pytest.raises(Exception, match="add KEYCOLS"):
        drain(r)


@pytest.mark.parametrize("kind", KINDS)
def test_a_restart_resumes_from_the_tables_own_record(tmp_path: Path, kind: str) -> None:
    """The checkpoint file and table are lost (as if the process died after the table commit
    and before them): the table's own record keeps every transaction in it exactly once."""
    home = lake_home(tmp_path / "home")
    trail = home.root / "dirrmt" / "bb"
    write_trail(trail, [txn_records(100, [ins(1)]), txn_records(101, [ins(2)])])
    both = f"{MAP_APPLY}\n{MAP_HIST}"
    r, _ = lake_run(home, kind, both, ops=1)
    drain(r)
    for f in home.dirchk.glob("REP.cp*"):
        f.unlink()
    import sqlite3

    conn = sqlite3.connect(home.root / "dirchk" / "lake.db")
    conn.execute("DELETE FROM chkpt")
    conn.commit()
    conn.close()
    write_trail(trail, [txn_records(102, [upd(1, 7)])])
    r, seen = lake_run(home, kind, both, ops=1)
    drain(r)
    assert [g["ID"] for g in read(home, kind, "emp_hist")] == ["1", "1", "2"]
    assert read(home, kind, "emp")[0] == {"ID": "1", "NAME": "n1", "SAL": "7"}
    assert r.lake.skipped_ops == 4, seen
    assert any("records Seqno 0" in s for s in seen), seen
