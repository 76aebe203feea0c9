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


def test_reportcount_acts_in_a_pump_and_a_replicat(home: Home) -> None:
    """Issue 29: REPORTCOUNT was accepted in a pump and a Replicat and did nothing there (25
    minutes of workload, no "records processed" line). Both now write GoldenGate's line."""
    txns = [txn_records(100 + i, [ins(10 * i + 1), ins(10 * i + 2)]) for i in range(3)]
    write_trail(home.root / "dirdat" / "aa", txns)
    pmp = add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    prm = (
        "EXTRACT pmp\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/bb\n"
        "REPORTCOUNT EVERY 2 RECORDS, RATE\nTABLE hr.emp;\n"
    )
    lines: list[str] = []
    pump = Pump(home, model(home, "pmp", prm), pmp, lambda *a: None, durable=False,
                report_line=lines.append)  # fmt: skip
    pump.run(lambda: False, stop_at_eof=True)
    pump.close()
    assert lines and lines[-1].startswith("6 records processed as of ")
    assert "(rate " in lines[-1] and ",delta " in lines[-1]
    rep = add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, "./dirrmt/bb")
    rprm = (
        "REPLICAT rep\nTARGETDB ./tgt.db\nASSUMETARGETDEFS\nREPORTCOUNT EVERY 1 RECORDS\n"
        "MAP hr.emp, TARGET hr.emp;\n"
    )
    applied: list[str] = []
    r = ReplicatRun(home, model(home, "rep", rprm), rep, lambda *a: None,
                    report_line=applied.append)  # fmt: skip
    r.run(lambda: False, stop_at_eof=True)
    r.close()
    assert applied and applied[-1].startswith("6 records processed as of ")


def test_report_at_writes_the_run_time_statistics_on_its_schedule(home: Home) -> None:
    """REPORT AT hh:mi [ON day] (issue 29: accepted and not used): the Run Time Statistics go
    to the report when a scheduled moment passes, once per moment, from the run's loop."""
    from datetime import datetime, timedelta

    from engine.runtime.process import GroupContext
    from engine.runtime.report import ReportWriter
    from engine.runtime.reportschedule import ReportSchedule

    now = [datetime(2026, 3, 14, 9, 58, 0)]  # a Saturday
    clock = lambda: now[0]  # noqa: E731
    daily = ReportSchedule(("AT 10:00",), clock)
    sunday = ReportSchedule(("ON SUNDAY",), clock)
    both = ReportSchedule(("AT 03:00 ON SUNDAY",), clock)
    seen = []
    for minutes in (1, 1, 1, 60 * 14, 60 * 3 + 1, 60 * 20):
        now[0] += timedelta(minutes=minutes)
        seen.append((daily.due(), sunday.due(), both.due()))
    assert seen == [
        (False, False, False),  # 09:59
        (True, False, False),  # 10:00
        (False, False, False),  # 10:01
        (False, True, False),  # Sunday 00:01: midnight passed
        (False, False, True),  # Sunday 03:02
        (True, False, False),  # Sunday 23:02: 10:00 passed
    ]
    write_trail(home.root / "dirdat" / "aa", [txn_records(100, [ins(1)])])
    group = add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    prm = (
        "EXTRACT pmp\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/bb\n"
        "REPORT AT 10:00\nTABLE hr.emp;\n"
    )
    now[0] = datetime(2026, 3, 14, 9, 59, 59)
    pump = Pump(home, model(home, "pmp", prm), group, lambda *a: None, durable=False,
                clock=clock)  # fmt: skip
    ctx = GroupContext(home, group, clock, ReportWriter(home.dirrpt / "PMP.rpt", clock))
    ctx.stats_book = pump.stats_book
    pump.after_batch = ctx.report_schedule(pump.model.report_schedule)

    poll = pump.poll

    def ticking(limit: int | None = 1000) -> int:  # a second passes per batch
        now[0] += timedelta(seconds=1)
        return poll(limit)

    pump.poll = ticking  # type: ignore[method-assign]
    pump.run(lambda: False, stop_at_eof=True)
    pump.close()
    text = (home.dirrpt / "PMP.rpt").read_text()
    assert text.count("** Run Time Statistics **") == 1
    assert "Report at 2026-03-14 10:00:00" in text and "#" in text


def test_reportrollover_writes_the_statistics_then_starts_a_new_report(home: Home) -> None:
    """REPORTROLLOVER AT hh:mi (was "not used"): at the moment, the Run Time Statistics end
    the report, which becomes PMP0.rpt, and PMP.rpt begins again saying so."""
    from datetime import datetime, timedelta

    from engine.runtime.process import GroupContext
    from engine.runtime.report import ReportWriter

    write_trail(home.root / "dirdat" / "aa", [txn_records(100, [ins(1)])])
    group = add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    prm = (
        "EXTRACT pmp\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/bb\n"
        "REPORTROLLOVER AT 10:00\nTABLE hr.emp;\n"
    )
    result = model(home, "pmp", prm)
    assert result.report_rollover == ("AT 10:00",)
    now = [datetime(2026, 3, 14, 9, 59, 30)]
    clock = lambda: now[0]  # noqa: E731
    pump = Pump(home, result, group, lambda *a: None, durable=False, clock=clock)
    report = ReportWriter(home.dirrpt / "PMP.rpt", clock)
    report.line("the report so far")
    ctx = GroupContext(home, group, clock, report)
    ctx.stats_book = pump.stats_book
    tick = ctx.report_schedule(result.report_schedule, result.report_rollover)
    pump.poll()
    tick()
    now[0] += timedelta(minutes=1)
    tick()
    pump.close()
    old = (home.dirrpt / "PMP0.rpt").read_text()
    assert old.startswith("the report so far") and "** Run Time Statistics **" in old
    new = (home.dirrpt / "PMP.rpt").read_text()
    assert new.startswith("2026-03-14 10:00:30  Report rolled over (REPORTROLLOVER)")
    assert "PMP0.rpt" in new and "Run Time Statistics" not in new
