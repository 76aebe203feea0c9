"""The pump: whole transactions copied, table selection, restart without duplicates."""

from __future__ import annotations

from pathlib import Path

import pytest
from replicat_helpers import (
    EMP,
    add_group,
    dele,
    ins,
    model,
    txn_records,
    upd,
    write_trail,
)

from engine.home.groups import GroupKind, SourceType
from engine.home.layout import Home
from engine.pump.pump import Pump
from engine.pump.sink import local_writer
from engine.runtime.events import Severity
from engine.trail.layout import IOType
from engine.trail.model import TableDef
from engine.trail.reader import TrailReader
from engine.trail.txreader import TransactionReader

DEPT = TableDef("HR.DEPT", ("ID", "DNAME"))
PRM = (
    "EXTRACT pmp\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/bb\nPASSTHRU\nTABLE hr.emp;\n"
)


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    return h


def events() -> tuple[list[tuple[str, str]], object]:
    seen: list[tuple[str, str]] = []

    def emit(code: str, _sev: Severity, text: str) -> None:
        seen.append((code, text))

    return seen, emit


def remote(home: Home) -> list[tuple[str | None, list[str]]]:
    """(LOGCSN of the first record, keys) per transaction of the remote trail."""
    out: list[tuple[str | None, list[str]]] = []
    for _, rec in TrailReader(home.root / "dirrmt" / "bb").records():
        if rec.begins_transaction:
            out.append((rec.logcsn, []))
        out[-1][1].append(f"{rec.op_name}:{dict(rec.columns)[0]}")
    return out


def make_pump(home: Home, prm: str = PRM) -> tuple[Pump, list[tuple[str, str]]]:
    group = add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    seen, emit = events()
    return Pump(home, model(home, "pmp", prm), group, emit, durable=False), seen  # type: ignore[arg-type]


def test_redo_capture_parameters_in_a_pump_are_said_not_used(home: Home) -> None:
    write_trail(home.root / "dirdat" / "aa", [txn_records(100, [ins(1)])], (EMP,))
    redo_only = (
        "TRANLOGOPTIONS EXCLUDEUSER gg\nBR BRINTERVAL 2H\nWARNLONGTRANS 2H\n"
        "CACHEMGR CACHESIZE 64MB\nFETCHOPTIONS NOFETCH\nUPDATERECORDFORMAT FULL\n"
        "GETUPDATEBEFORES\n"
    )
    pump, seen = make_pump(home, PRM.replace("TABLE hr.emp;", redo_only + "TABLE hr.emp;"))
    pump.close()
    warned = [text.split()[1] for code, text in seen if code == "OGG-10144"]
    assert warned == [
        "TRANLOGOPTIONS", "BR", "WARNLONGTRANS", "CACHEMGR", "FETCHOPTIONS",
        "GETUPDATEBEFORES", "UPDATERECORDFORMAT",
    ]  # fmt: skip
    pump, seen = make_pump(home)
    pump.close()
    assert not [code for code, _ in seen if code == "OGG-10144"]


def test_copies_whole_transactions_of_selected_tables_only(home: Home) -> None:
    dept = (IOType.INSERT, "HR.DEPT", ((0, "10"), (1, "sales")))
    write_trail(
        home.root / "dirdat" / "aa",
        [
            txn_records(100, [ins(1), ins(2)]),
            txn_records(101, [dept, upd(1, 5)]),  # first record filtered: tokens move
            txn_records(102, [dept]),  # nothing selected: not copied
            txn_records(103, [dele(2)]),
        ],
        (EMP, DEPT),
        partial=txn_records(104, [ins(3), ins(4)])[:1],
    )
    pump, _ = make_pump(home)
    pump.run(lambda: False, stop_at_eof=True)
    pump.close()
    assert remote(home) == [
        ("100", ["Insert:1", "Insert:2"]),
        ("101", ["FieldComp:1"]),
        ("103", ["Delete:2"]),
    ]
    reader = TransactionReader(home.root / "dirrmt" / "bb")
    txns = list(reader.poll())
    reader.close()
    assert [t.tranid for t in txns] == ["1.4.100", "1.5.101", "1.7.103"]
    assert reader.tables["HR.EMP"] == EMP  # the Metadata record went along


def test_partial_transaction_is_copied_once_complete(home: Home) -> None:
    trail = home.root / "dirdat" / "aa"
    write_trail(trail, [txn_records(100, [ins(1)])], partial=txn_records(101, [ins(2), ins(3)])[:1])
    pump, _ = make_pump(home)
    assert pump.poll() == 1
    # The source's writer restarts: append-mode recovery keeps the partial transaction and
    # writes a RestartAbend marker after it; the transaction is then written whole.
    write_trail(trail, [txn_records(101, [ins(2), ins(3)]), txn_records(102, [ins(4)])])
    assert pump.poll() == 2
    pump.checkpoint()
    pump.close()
    assert remote(home) == [
        ("100", ["Insert:1"]),
        ("101", ["Insert:2", "Insert:3"]),
        ("102", ["Insert:4"]),
    ]


def test_restart_after_a_crash_between_write_and_checkpoint_copies_nothing_twice(
    home: Home,
) -> None:
    trail = home.root / "dirdat" / "aa"
    write_trail(trail, [txn_records(100 + i, [ins(i), upd(i, i)]) for i in range(5)])
    pump, _ = make_pump(home)
    pump.poll(limit=2)
    pump.checkpoint()  # published: 2 transactions
    pump.poll(limit=2)  # 2 more reach the remote trail, no checkpoint covers them
    local_writer(pump).flush()
    pump.reader.close()
    local_writer(pump)._unlock()
    assert len(remote(home)) == 4
    write_trail(trail, [txn_records(200, [ins(50)])])
    again, seen = make_pump(home)
    assert again.skip == 2
    assert any(code == "OGG-01516" for code, _ in seen)
    again.run(lambda: False, stop_at_eof=True)
    again.close()
    assert [csn for csn, _ in remote(home)] == ["100", "101", "102", "103", "104", "200"]
    assert local_writer(pump)._file is not None
    local_writer(pump)._file.close()


def test_a_pump_run_in_the_foreground_pumps_its_source_trail(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ggsci extract paramfile dirprm/pmp.prm`` of a group added with EXTTRAILSOURCE copies
    the source trail, as START EXTRACT does under the Manager (issue 29: it captured redo and
    wrote a new trail). No Spark session is started for it."""
    from typer.testing import CliRunner

    from ggsci.cli import build_app

    write_trail(home.root / "dirdat" / "aa", [txn_records(100, [ins(1), ins(2)])], (EMP,))
    add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    # a pump whose output trail is on this host (EXTTRAIL): no Collector to reach
    model(home, "pmp", PRM.replace("RMTHOST localhost, MGRPORT 7809\nRMTTRAIL", "EXTTRAIL"))
    monkeypatch.setattr(
        "engine.cluster.spark.extract_session",
        lambda *a, **k: pytest.fail("a pump needs no Spark session"),
    )
    # the global --home sets $GGHOME for the command, in this process: restored after the test
    monkeypatch.setenv("GGHOME", str(home.root))
    result = CliRunner().invoke(
        build_app(),
        ["--home", str(home.root), "extract", "paramfile", "dirprm/pmp.prm", "--stop-at-eof"],
    )
    assert result.exit_code == 0, result.output
    assert "EXTRACT PMP (data pump): 1 transaction(s), 2 record(s) copied" in result.output
    assert remote(home) == [("100", ["Insert:1", "Insert:2"])]
    report = (home.dirrpt / "PMP.rpt").read_text()
    assert "OGG-01055" in report and "EXTRACT PMP stopped normally." in report
    assert not list((home.root / "dirdat").glob("pm*"))  # no capture trail of its own
