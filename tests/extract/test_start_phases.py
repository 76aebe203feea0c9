"""START -> capturing, in the report (issue 29): each start-up phase with its seconds, then
the time from the process's set-up to the end of the first read of the redo."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any

from engine.extract.run import ExtractRun
from engine.home.groups import GroupDef, GroupKind, SourceType
from engine.home.layout import Home
from engine.runtime.process import GroupContext
from engine.runtime.report import ReportWriter
from params.check import check_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _ctx(home: Home, ticks: list[float]) -> GroupContext:
    group = GroupDef(GroupKind.EXTRACT, "E1", SourceType.TRANLOG, "2026-03-14 09:00:00")
    now = datetime(2026, 3, 14, 9, 0, 0)
    ctx = GroupContext(home, group, lambda: now, ReportWriter(home.dirrpt / "E1.rpt", lambda: now))
    clock = iter(ticks)
    ctx.monotonic = lambda: next(clock)
    ctx.created = 100.0
    return ctx


def test_phases_are_written_with_their_seconds(home: Home) -> None:
    ctx = _ctx(home, [100.5, 101.0, 104.25, 104.5, 105.75, 106.0])
    for phase in ("parameter file", "Spark session", "recovery", "first read of the redo"):
        ctx.phase(phase)
    ctx.phase(None)
    ctx.phase(None)  # once up, nothing more is written
    lines = (home.dirrpt / "E1.rpt").read_text().splitlines()
    assert lines == [
        "Start-up phase: parameter file: 0.50 s.",
        "Start-up phase: Spark session: 3.25 s.",
        "Start-up phase: recovery: 0.25 s.",
        "Start-up phase: first read of the redo: 1.25 s.",
        "Start-up done: 5.75 s after the process set up.",
    ]


def test_the_extract_says_when_its_first_read_of_the_redo_is_done(
    home: Home, source: Any, spark: SparkSession
) -> None:
    prm = "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\nTABLE hr.*;\n"
    run = ExtractRun(home, check_text(prm).model, None, lambda *a: None, spark=spark,
                     durable=False)  # fmt: skip
    calls: list[int] = []
    run.after_first_poll = lambda: calls.append(1)
    run.run(threading.Event(), stop_at_eof=True)
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    assert calls == [1]
