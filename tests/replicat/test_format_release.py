"""FORMAT RELEASE across the pipeline: the pump writes its input's release (seed 003) or,
with RMTTRAIL ..., FORMAT RELEASE, converts (an older release drops the DDR/TDR records);
pump TABLE selection and Replicat MAP never take a metadata record for data; the
Replicat names columns from the TDRs, and without them (12.1) needs ASSUMETARGETDEFS."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from replicat_helpers import EMP, add_group, ins, model, txn_records, upd

from engine.home.groups import GroupKind, SourceType
from engine.home.layout import Home
from engine.pump.pump import Pump, PumpError
from engine.replicat import MappingError
from engine.replicat import checkpoint_table as ct
from engine.replicat.engine import ReplicatRun
from engine.runtime.events import Severity
from engine.trail.codec import encode_record
from engine.trail.fileheader import decode_file_header
from engine.trail.layout import IOType
from engine.trail.metadata import metadata_kind
from engine.trail.model import TableDef, TrailRecord
from engine.trail.reader import TrailReader
from engine.trail.releases import RELEASES, parse_release
from engine.trail.writer import TrailWriter

DEPT = TableDef("HR.DEPT", ("ID", "DNAME"))
PUMP = "EXTRACT pmp\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/bb{options}\nPASSTHRU\n"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    return h


def _source(home: Home, release: str | None, tables: tuple[TableDef, ...] = (EMP, DEPT)) -> None:
    dept = (IOType.INSERT, "HR.DEPT", ((0, "10"), (1, "sales")))
    with TrailWriter.open(
        home.root / "dirdat" / "aa",
        durable=False,
        release=parse_release(release) if release else None,
    ) as w:
        for t in tables:
            w.define_table(t)
        for records in (
            txn_records(100, [ins(1), ins(2)]),
            txn_records(101, [dept, upd(1, 5)]),
            txn_records(102, [dept]),
        ):
            w.append_many(encode_record(r) for r in records)


def _pump(home: Home, options: str = "", tables: str = "TABLE hr.emp;\n") -> Pump:
    group = add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")

    def emit(_code: str, _sev: Severity, _text: str) -> None:
        pass

    prm = PUMP.format(options=options) + tables
    return Pump(home, model(home, "pmp", prm), group, emit, durable=False)  # type: ignore[arg-type]


def _output(home: Home) -> tuple[list[int], list[str]]:
    levels: list[int] = []
    kinds: list[str] = []
    for e in TrailReader(home.root / "dirrmt" / "bb"):
        if isinstance(e.record, TrailRecord):
            kinds.append(metadata_kind(e.record) or f"{e.record.op_name}:{e.record.table}")
        else:
            levels.append(e.record.compatibility)
    return levels, kinds


def test_pump_converts_to_an_older_format_release(home: Home) -> None:
    _source(home, "21.1")
    pump = _pump(home, ", FORMAT RELEASE 12.1")
    pump.run(lambda: False, stop_at_eof=True)
    pump.close()
    levels, kinds = _output(home)
    assert levels == [RELEASES["12.1"].level]
    # no DDR/TDR in 12.1; the TABLE selection kept HR.EMP's records only
    assert kinds == ["Insert:HR.EMP", "Insert:HR.EMP", "FieldComp:HR.EMP"]
    source = decode_file_header((home.root / "dirdat" / "aa000000000").read_bytes())[0]
    assert source.compatibility == RELEASES["21.1"].level


@pytest.mark.parametrize(("release", "metadata"), [("12.2", True), ("12.1", False)])
def test_pump_output_is_its_input_s_release(home: Home, release: str, metadata: bool) -> None:
    _source(home, release)
    pump = _pump(home)
    pump.run(lambda: False, stop_at_eof=True)
    pump.close()
    levels, kinds = _output(home)
    assert levels == [RELEASES[release].level]
    data = ["Insert:HR.EMP", "Insert:HR.EMP", "FieldComp:HR.EMP"]
    # Only the selected table's TDR goes along: HR.DEPT's is no data and is not copied.
    assert kinds == (["DDR", "TDR", *data] if metadata else data)


def test_pump_refuses_what_its_release_cannot_hold_in_one_line(home: Home) -> None:
    cdb = TableDef("CDB1.HR.EMP", EMP.column_names)
    with TrailWriter.open(home.root / "dirdat" / "aa", durable=False) as w:
        w.define_table(cdb)
        w.append(encode_record(TrailRecord(IOType.INSERT, cdb.table, ((0, "1"),))))
    pump = _pump(home, ", FORMAT RELEASE 11.2", tables="")  # no TABLE: every table
    with pytest.raises(PumpError) as caught:
        pump.poll()
    pump.close()
    assert caught.value.code == "OGG-01031"
    assert "three-part name, which trail format release 11.2 cannot hold" in str(caught.value)


# -- Replicat --------------------------------------------------------------------------------
def _target(home: Home) -> None:
    conn = sqlite3.connect(home.root / "tgt.db")
    conn.execute("CREATE TABLE emp (id NUMERIC PRIMARY KEY, name TEXT, sal NUMERIC)")
    ct.create(conn, ct.TableName.parse("gg.chkpt"), "sqlite")
    conn.close()


def _replicat(home: Home, params: str) -> ReplicatRun:
    group = add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, "./dirdat/aa")

    def emit(_code: str, _sev: Severity, _text: str) -> None:
        pass

    text = "REPLICAT rep\nTARGETDB ./tgt.db\n" + params
    return ReplicatRun(home, model(home, "rep", text), group, emit)


def _rows(home: Home) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(home.root / "tgt.db")
    try:
        return conn.execute("SELECT * FROM emp ORDER BY 1").fetchall()
    finally:
        conn.close()


def test_replicat_names_columns_from_the_tdr(home: Home) -> None:
    """The source table's columns are in another order than the target's: the TDR says
    which is which; the DDR, and HR.DEPT's TDR, are not applied as rows."""
    _target(home)
    shuffled = TableDef("HR.EMP", ("SAL", "ID", "NAME"))
    with TrailWriter.open(home.root / "dirdat" / "aa", durable=False) as w:
        w.define_table(shuffled)
        w.define_table(DEPT)
        records = txn_records(100, [(IOType.INSERT, "HR.EMP", ((0, "7"), (1, "1"), (2, "ann")))])
        w.append_many(encode_record(r) for r in records)
    r = _replicat(home, "MAP hr.emp, TARGET hr.emp;\n")
    r.run(lambda: False, stop_at_eof=True)
    r.close()
    assert _rows(home) == [(1, "ann", 7)]


def test_replicat_without_tdrs_needs_assumetargetdefs(home: Home) -> None:
    _target(home)
    _source(home, "12.1", tables=(TableDef("HR.EMP", ("SAL", "ID", "NAME")),))
    r = _replicat(home, "MAP hr.emp, TARGET hr.emp;\n")
    with pytest.raises(MappingError) as caught:
        r.run(lambda: False, stop_at_eof=True)
    r.close()
    assert caught.value.code == "OGG-01296" and "ASSUMETARGETDEFS" in str(caught.value)
    # ASSUMETARGETDEFS: the trail's columns are the target's, by position
    r = _replicat(home, "ASSUMETARGETDEFS\nMAP hr.emp, TARGET hr.emp;\n")
    r.run(lambda: False, stop_at_eof=True)
    r.close()
    assert _rows(home) == [(1, "n1", 5), (2, "n2", 1)]
