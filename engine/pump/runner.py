"""The pump group process's runner: an Extract group added with ``EXTTRAILSOURCE``.

:class:`engine.extract.runner.ExtractRunner` delegates to it for such groups, so ``START
EXTRACT p`` runs it in the same process model (report, SEND, checkpoints) without a
SparkSession: a pump only copies trail records.
"""

from __future__ import annotations

from engine.pump import PumpError
from engine.pump.pump import Pump
from engine.runtime.events import Severity
from engine.runtime.ipc import Reply, Request
from engine.runtime.paramcheck import load_group_params
from engine.runtime.process import GroupContext, GroupRunner, ProcessAbend
from engine.runtime.stats import handler as stats_handler


class PumpRunner(GroupRunner):
    def __init__(self) -> None:
        self.pump: Pump | None = None

    def prepare(self, ctx: GroupContext) -> None:
        model = load_group_params(ctx)
        try:
            self.pump = Pump(ctx.home, model, ctx.group, ctx.event)
        except PumpError as exc:
            raise ProcessAbend(exc.code, exc.text) from exc
        pump = self.pump
        ctx.event(
            "OGG-01055",
            Severity.INFO,
            f"Recovery initialization completed for target file {pump.trail_path}.",
        )

        def rollover(_: Request) -> Reply:
            return Reply.error("ERROR: ROLLOVER of a data pump's trail is done at its next start.")

        ctx.handlers.add("ROLLOVER", rollover)
        ctx.handlers.add("STATS", stats_handler(pump.stats_book))

    def run(self, ctx: GroupContext) -> None:
        assert self.pump is not None
        try:
            self.pump.run(ctx.stop_requested.is_set)
        except PumpError as exc:
            raise ProcessAbend(exc.code, exc.text) from exc
        finally:
            self.pump.close()

    def at_eof(self, ctx: GroupContext) -> bool:
        return self.pump is not None and self.pump.at_eof

    def status_lines(self, ctx: GroupContext) -> list[str]:
        return self.pump.status_lines() if self.pump else super().status_lines(ctx)
