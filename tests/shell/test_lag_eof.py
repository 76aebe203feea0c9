"""Issue 15: LAG says "At EOF, no more records to process." from a real group process, whose
SEND table is made before its runner is loaded (it answers from its first second)."""

from __future__ import annotations

from datetime import datetime

from engine.home.groups import GroupDef, GroupKind, SourceType
from engine.home.layout import Home
from engine.runtime.ipc import Request
from engine.runtime.process import GroupContext, GroupRunner, default_handlers
from engine.runtime.report import ReportWriter


class AtEof(GroupRunner):
    def run(self, ctx: GroupContext) -> None:
        pass

    def at_eof(self, ctx: GroupContext) -> bool:
        return True


def test_getlag_asks_the_runner_loaded_after_the_table(home: Home) -> None:
    group = GroupDef(
        kind=GroupKind.REPLICAT,
        name="REP",
        source=SourceType.EXTTRAIL,
        created="2024-01-01 00:00:00",
        source_path="./dirrmt/bb",
    )
    now = datetime(2026, 3, 14, 9, 0, 0)
    ctx = GroupContext(home, group, lambda: now, ReportWriter(home.dirrpt / "REP.rpt", lambda: now))
    table = default_handlers(ctx)  # as run_group does: before the engine is imported
    assert table.dispatch(Request.parse("GETLAG")).lines == ("No records yet processed.",)
    ctx.runner = AtEof()  # as run_group does once the engine is loaded
    ctx.starting = None
    assert table.dispatch(Request.parse("GETLAG")).lines == (
        "No records yet processed.",
        "At EOF, no more records to process.",
    )
