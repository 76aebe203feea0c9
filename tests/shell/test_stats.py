"""STATS: the book a process keeps (windows, RESET, REPORTRATE, TABLE / TOTALSONLY), the
request words, the grammar, and GGSCI's answer for a group that is not running."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.home.layout import Home
from engine.runtime.ipc import Request
from engine.runtime.stats import (
    LABELS,
    OPS,
    StatsBook,
    StatsRequest,
    StatsRequestError,
    handler,
    parse_request,
)
from ggsci.commands import models as M
from ggsci.commands.parse import parse_command

from .conftest import Shell, check_golden

START = datetime(2026, 3, 14, 9, 26, 53)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def book() -> tuple[StatsBook, Clock]:
    clock = Clock()
    b = StatsBook(clock, output="./dirdat/lt")
    b.add([("HR.EMP", "HR.EMP", "INSERT", 3), ("HR.EMP", "HR.EMP", "UPDATE", 2)])
    b.add([("HR.DEPT", "HR.DEPT", "DELETE", 1)])
    return b, clock


def test_screen_per_table_with_all_windows_is_goldengates() -> None:
    b, clock = book()
    clock.now = START + timedelta(minutes=5)
    check_golden("stats_extract.txt", "\n".join(b.screen(StatsRequest())) + "\n")


def test_since_labels_show_the_process_start_until_the_hour_and_day_roll() -> None:
    """Issue 29: a process started at 09:26:53 showed daily statistics "since 00:00:00";
    GoldenGate counts from the process start, then from the hour or the day that follows."""
    b, clock = book()
    text = "\n".join(b.screen(StatsRequest(("DAILY", "HOURLY"), table="HR.EMP")))
    assert "*** Daily statistics since 2026-03-14 09:26:53 ***" in text
    assert "*** Hourly statistics since 2026-03-14 09:26:53 ***" in text
    clock.now = START + timedelta(minutes=40)  # 10:06:53
    text = "\n".join(b.screen(StatsRequest(("DAILY", "HOURLY"), table="HR.EMP")))
    assert "*** Daily statistics since 2026-03-14 09:26:53 ***" in text
    assert "*** Hourly statistics since 2026-03-14 10:00:00 ***" in text


def test_windows_roll_at_the_hour_and_the_day_and_latest_restarts_at_reset() -> None:
    b, clock = book()
    clock.now = START + timedelta(hours=1)  # 10:26: a new hour
    b.add([("HR.EMP", "HR.EMP", "INSERT", 10)])
    screen = b.screen(StatsRequest(("HOURLY", "TOTAL"), table="HR.EMP"))
    text = "\n".join(screen)
    assert "*** Hourly statistics since 2026-03-14 10:00:00 ***" in text
    figures = [line.split("\t")[-1].strip() for line in screen if "Total inserts" in line]
    assert figures == ["10.00", "13.00"]  # HOURLY then TOTAL, in the order asked
    assert "HR.DEPT" not in text
    b.screen(StatsRequest(("LATEST",), reset=True))
    b.add([("HR.EMP", "HR.EMP", "DELETE", 4)])
    latest = b.screen(StatsRequest(("LATEST",), table="HR.E*"))
    assert [line.split()[-1] for line in latest if "Total" in line] == [
        "0.00", "0.00", "4.00", "0.00", "0.00", "4.00",
    ]  # fmt: skip
    clock.now = datetime(2026, 3, 15, 0, 0, 1)  # a new day: DAILY starts again
    daily = "\n".join(b.screen(StatsRequest(("DAILY",))))
    assert "*** Daily statistics since 2026-03-15 00:00:00 ***" in daily
    assert "No database operations" not in daily and "Total operations" in daily
    assert b.total("INSERT") == 13


def test_totalsonly_sums_the_matching_tables_and_reportrate_divides() -> None:
    b, clock = book()
    clock.now = START + timedelta(minutes=2)
    screen = b.screen(StatsRequest(("TOTAL",), totals_only="HR.*", rate="MIN"))
    assert "Cumulative totals for specified table(s):" in screen
    ops = next(line for line in screen if "Total operations/minute" in line)
    assert ops.split()[-1] == "3.00"  # 6 operations in 2 minutes
    fetch = b.screen(StatsRequest(("TOTAL",), fetch=True, detail=False))
    assert any("Total row fetch attempts" in line for line in fetch)
    assert not any("discards" in line for line in fetch)


def test_no_operations_yet() -> None:
    b = StatsBook(Clock())
    assert "No database operations have been performed." in b.screen(StatsRequest())


def test_request_words_round_trip_and_bad_words_are_one_line() -> None:
    req = StatsRequest(("DAILY",), True, "HR.EMP", None, "SEC", True, False)
    assert parse_request(req.words().split()[1:]) == req
    with pytest.raises(StatsRequestError, match="Invalid STATS option: BOGUS"):
        parse_request(["BOGUS"])
    with pytest.raises(StatsRequestError, match="REPORTRATE takes HR, MIN or SEC"):
        parse_request(["REPORTRATE", "DAY"])
    b, _ = book()
    reply = handler(b)(Request.parse("STATS TOTAL, BOGUS"))
    assert not reply.ok and reply.lines == ("ERROR: Invalid STATS option: BOGUS.",)
    assert handler(b)(Request.parse("STATS TOTAL")).lines[0].startswith("Start of Statistics")


def test_grammar() -> None:
    cmd = parse_command("stats ext ext1, total, daily, table hr.emp, reportrate min, reset")
    assert cmd == M.StatsGroup(
        "EXTRACT", "EXT1", ("TOTAL", "DAILY"), True, "HR.EMP", None, "MIN", False, True
    )
    assert parse_command("STATS R*") == M.StatsGroup(None, "R*")
    assert parse_command("STATS ER *, TOTALSONLY *.*, NOREPORTDETAIL") == M.StatsGroup(
        None, "*", totals_only="*.*", detail=False
    )
    for bad, message in (
        ("STATS EXTRACT e, REPORTRATE DAY", "Expected HR | MIN | SEC"),
        ("STATS EXTRACT e, TABLE a.b, TOTALSONLY a.b", "either TABLE or TOTALSONLY"),
        ("STATS EXTRACT e, REPORTFETCH, NOREPORTFETCH", "exclude each other"),
    ):
        with pytest.raises(M.CommandError, match=message):
            parse_command(bad)


def test_stopped_group_is_not_currently_running(home: Home) -> None:
    (home.dirprm / "ext1.prm").write_text("EXTRACT ext1\nEXTTRAIL ./dirdat/lt\nTABLE hr.*;\n")
    shell = Shell(home)
    shell.run("ADD EXTRACT ext1, TRANLOG, BEGIN NOW")
    assert shell.run("STATS EXTRACT ext1") == "ERROR: EXTRACT EXT1 not currently running.\n"
    assert not shell.ok
    assert shell.run("STATS REPLICAT nosuch").startswith("ERROR: REPLICAT NOSUCH does not exist")
    assert "STATS {EXTRACT | REPLICAT | ER} group" in shell.run("HELP STATS")
    assert "LAG {EXTRACT | REPLICAT | ER} group" in shell.run("HELP LAG REPLICAT")
    assert "ADD REPLICAT group" in shell.run("HELP ADD REPLICAT")


def test_obey_files_with_stats_parse(tmp_path: Path) -> None:
    from ggsci.runner import syntax_errors

    script = tmp_path / "daily.oby"
    script.write_text(
        "STATS EXTRACT ext1, TOTAL, DAILY\nSTATS REPLICAT rep*, TABLE hr.emp, REPORTRATE SEC\n"
        "STATS ER *, LATEST, RESET\n"
    )
    assert syntax_errors(script) == []


_TABLES = ("HR.EMP", "hr.dept", "SALES.ORDERS")
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 2), st.sampled_from(OPS), st.integers(0, 5)),
        st.tuples(st.just("tick"), st.integers(0, 3 * 3600)),
        st.tuples(st.just("reset")),
        st.tuples(st.just("read")),
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(steps=_STEPS)
def test_every_window_counts_what_was_added_in_it(steps: list[tuple[Any, ...]]) -> None:
    """Whatever the order of adds, hours and days passing, RESETs and reads (the windows
    take the pending counts only when read or rolled), each window shows exactly the adds
    made in it: TOTAL all, DAILY this day's, HOURLY this hour's, LATEST those since RESET."""
    clock = Clock()
    b = StatsBook(clock)
    added: list[tuple[datetime, str, str, int]] = []
    since_reset = 0  # the adds before the last RESET
    for step in steps:
        if step[0] == "add":
            _, t, op, n = step
            b.add([(_TABLES[t], _TABLES[t], op, n)])
            added.append((clock.now, _TABLES[t].upper(), op, n))
        elif step[0] == "tick":
            clock.now += timedelta(seconds=step[1])
        elif step[0] == "reset":
            b.reset()
            since_reset = len(added)
        else:
            _check_windows(b, clock.now, added, since_reset)
    _check_windows(b, clock.now, added, since_reset)


def _check_windows(
    b: StatsBook, now: datetime, added: list[tuple[datetime, str, str, int]], since_reset: int
) -> None:
    assert b.total("INSERT") == sum(n for _, _, op, n in added if op == "INSERT")
    hour = now.replace(minute=0, second=0)
    within = {
        "TOTAL": lambda i, t: True,
        "DAILY": lambda i, t: t.date() == now.date(),
        "HOURLY": lambda i, t: t.replace(minute=0, second=0) == hour,
        "LATEST": lambda i, t: i >= since_reset,
    }
    for table in {t.upper() for t in _TABLES}:
        for window, inside in within.items():
            want = {op: 0 for op in OPS}
            for i, (t, name, op, n) in enumerate(added):
                if name == table and inside(i, t):
                    want[op] += n
            screen = b.screen(StatsRequest((window,), table=table))
            got = {
                op: float(line.split()[-1])
                for op in OPS
                for line in screen
                if line.strip().startswith(f"Total {LABELS[op]}")
            }
            if any(n for _, name, _, n in added if name == table):
                assert got == {op: float(n) for op, n in want.items()}, (window, table)
            else:
                assert "No database operations have been performed." in screen
