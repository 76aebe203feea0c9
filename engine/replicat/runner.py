"""The Replicat group process's runner (registered in :data:`engine.runtime.process.RUNNERS`).

``prepare`` checks the parameter file (abend with every diagnostic), connects to the target,
reads the checkpoint table and positions in the trail; ``run`` applies until STOP.
"""

from __future__ import annotations

from engine.replicat import ReplicatError
from engine.replicat.engine import ReplicatRun
from engine.runtime.events import Severity
from engine.runtime.paramcheck import load_group_params
from engine.runtime.process import GroupContext, GroupRunner, ProcessAbend
from engine.runtime.stats import handler as stats_handler
from engine.targets import TargetError


class ReplicatRunner(GroupRunner):
    def __init__(self) -> None:
        self.run_: ReplicatRun | None = None

    def prepare(self, ctx: GroupContext) -> None:
        model = load_group_params(ctx)
        try:
            self.run_ = ReplicatRun(ctx.home, model, ctx.group, ctx.event)
        except ReplicatError as exc:
            raise ProcessAbend(exc.code, exc.text) from exc
        except TargetError as exc:
            raise ProcessAbend("OGG-00664", exc.message) from exc
        ctx.handlers.add("STATS", stats_handler(self.run_.stats_book))
        ctx.event(
            "OGG-06505",
            Severity.INFO,
            f"REPLICAT {ctx.group.name} connected to target database {self.run_.target.name} "
            f"({self.run_.target.dialect}).",
        )

    def run(self, ctx: GroupContext) -> None:
        assert self.run_ is not None
        try:
            self.run_.run(ctx.stop_requested.is_set)
        except ReplicatError as exc:
            raise ProcessAbend(exc.code, exc.text) from exc
        except TargetError as exc:
            raise ProcessAbend("OGG-01004", exc.message) from exc
        finally:
            self.run_.close()

    def at_eof(self, ctx: GroupContext) -> bool:
        return self.run_ is not None and self.run_.at_eof

    def status_lines(self, ctx: GroupContext) -> list[str]:
        return self.run_.status_lines() if self.run_ else super().status_lines(ctx)
