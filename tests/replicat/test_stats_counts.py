"""STATS counts kept by the Replicat (committed work only, discards) and by the pump."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from replicat_helpers import add_group, dele, ins, model, txn_records, upd, write_trail

from engine.home.groups import GroupKind, SourceType
from engine.home.layout import Home
from engine.pump.pump import Pump
from engine.replicat.engine import ReplicatRun
from engine.runtime.stats import StatsRequest


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    conn = sqlite3.connect(h.root / "tgt.db")
    conn.execute("CREATE TABLE emp (id NUMERIC PRIMARY KEY, name TEXT, sal NUMERIC)")
    conn.close()
    return h


def figures(screen: list[str]) -> dict[str, str]:
    return {
        line.split("\t")[1].strip(): line.split("\t")[-1].strip()
        for line in screen
        if line.startswith("\t")
    }


def test_replicat_counts_applied_and_discarded_operations(home: Home) -> None:
    write_trail(
        home.root / "dirrmt" / "bb",
        [txn_records(100, [ins(1), ins(2), upd(7, 1)]), txn_records(101, [dele(2), upd(1, 9)])],
    )
    group = add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, "./dirrmt/bb")
    prm = (
        "REPLICAT rep\nTARGETDB ./tgt.db\nASSUMETARGETDEFS\n"
        "REPERROR (1403, DISCARD)\nDISCARDFILE ./dirrpt/rep.dsc, PURGE\n"
        "MAP hr.emp, TARGET hr.emp;\n"
    )
    r = ReplicatRun(home, model(home, "rep", prm), group, lambda *a: None)
    r.run(lambda: False, stop_at_eof=True)
    r.close()
    assert r.at_eof  # LAG: 'At EOF, no more records to process.'
    screen = r.stats_book.screen(StatsRequest(("TOTAL",)))
    assert any(line.startswith("Replicating from HR.EMP to ") for line in screen), screen
    assert figures(screen) == {
        "Total inserts": "2.00",
        "Total updates": "1.00",
        "Total deletes": "1.00",
        "Total upserts": "0.00",
        "Total discards": "1.00",  # the update of a missing row (1403)
        "Total operations": "4.00",
    }


def test_pump_counts_what_it_copies(home: Home) -> None:
    write_trail(
        home.root / "dirdat" / "aa",
        [txn_records(100, [ins(1), ins(2)]), txn_records(101, [dele(1)])],
    )
    group = add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    prm = "EXTRACT pmp\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/bb\nPASSTHRU\nTABLE hr.emp;\n"
    pump = Pump(home, model(home, "pmp", prm), group, lambda *a: None, durable=False)
    pump.run(lambda: False, stop_at_eof=True)
    pump.close()
    assert pump.at_eof
    screen = pump.stats_book.screen(StatsRequest(("TOTAL",)))
    assert "Output to ./dirrmt/bb:" in screen
    assert "Extracting from HR.EMP to HR.EMP:" in screen
    f = figures(screen)
    assert (f["Total inserts"], f["Total deletes"], f["Total operations"]) == (
        "2.00",
        "1.00",
        "3.00",
    )


def test_getlag_says_at_eof_when_the_process_found_nothing_more(home: Home) -> None:
    from datetime import datetime

    from engine.runtime.ipc import Request
    from engine.runtime.process import GroupContext, GroupRunner, default_handlers
    from engine.runtime.report import ReportWriter

    class Idle(GroupRunner):
        eof = False

        def run(self, ctx: GroupContext) -> None:
            pass

        def at_eof(self, ctx: GroupContext) -> bool:
            return self.eof

    group = add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, "./dirrmt/bb")
    now = datetime(2026, 3, 14, 9, 0, 0)
    ctx = GroupContext(home, group, lambda: now, ReportWriter(home.dirrpt / "REP.rpt", lambda: now))
    runner = Idle()
    getlag = default_handlers(ctx, runner)
    assert getlag.dispatch(Request.parse("GETLAG")).lines == ("No records yet processed.",)
    runner.eof = True
    assert getlag.dispatch(Request.parse("GETLAG")).lines == (
        "No records yet processed.",
        "At EOF, no more records to process.",
    )


def test_run_time_statistics_in_the_report_on_send_report_and_at_stop(home: Home) -> None:
    """Issue 29: SEND ... REPORT wrote one line and a stop nothing; GoldenGate writes the run's
    statistics per table and operation. A real pump copies a trail; SEND PMP, REPORT (and the
    stop, which calls the same) writes the block from its STATS book."""
    from datetime import datetime, timedelta

    from engine.runtime.ipc import Request
    from engine.runtime.process import GroupContext, GroupRunner, default_handlers
    from engine.runtime.report import ReportWriter

    write_trail(home.root / "dirdat" / "aa", [txn_records(100, [ins(1), ins(2), upd(2, 5)])])
    write_trail(home.root / "dirdat" / "aa", [txn_records(101, [dele(1)])])
    group = add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    prm = "EXTRACT pmp\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/bb\nTABLE hr.*;\n"
    now = [datetime(2026, 3, 14, 9, 31, 5)]
    clock = lambda: now[0]  # noqa: E731
    events: list[str] = []
    pump = Pump(home, model(home, "pmp", prm), group,
                lambda c, s, t: events.append(c), durable=False, clock=clock)  # fmt: skip
    pump.run(lambda: False, stop_at_eof=True)
    pump.close()
    now[0] += timedelta(minutes=9)

    class Idle(GroupRunner):
        def run(self, ctx: GroupContext) -> None:
            pass

    report = ReportWriter(home.dirrpt / "PMP.rpt", clock)
    ctx = GroupContext(home, group, clock, report)
    ctx.stats_book = pump.stats_book
    handlers = default_handlers(ctx, Idle())
    assert handlers.dispatch(Request.parse("REPORT")).lines == ("Request processed.",)
    text = (home.dirrpt / "PMP.rpt").read_text()
    assert "** Run Time Statistics **" in text
    assert "Report at 2026-03-14 09:40:05 (activity since 2026-03-14 09:31:05)" in text
    assert "Output to ./dirrmt/bb:" in text
    block = text[text.index("From Table HR.EMP:") :].splitlines()
    assert [ln.split() for ln in block[1:5]] == [
        ["#", "inserts:", "2"], ["#", "updates:", "1"], ["#", "deletes:", "1"],
        ["#", "discards:", "0"],
    ]  # fmt: skip
