"""The Replicat group process's runner (registered in :data:`engine.runtime.process.RUNNERS`).

``prepare`` checks the parameter file (abend with every diagnostic), connects to the target,
reads the checkpoint table and positions in the trail; ``run`` applies until STOP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.home.groups import GroupDef
from engine.home.layout import Home
from engine.replicat import ReplicatError
from engine.replicat.engine import Emit, ReplicatRun
from engine.runtime.events import Severity
from engine.runtime.ipc import Reply, Request
from engine.runtime.paramcheck import load_group_params
from engine.runtime.process import GroupContext, GroupRunner, ProcessAbend
from engine.runtime.stats import handler as stats_handler
from engine.targets import TargetError
from params.models import ParamFile

if TYPE_CHECKING:
    from engine.replicat.lakerun import LakeReplicatRun


def open_run(home: Home, model: ParamFile, group: GroupDef, emit: Emit) -> ReplicatRun:
    """The Replicat's run: into lakehouse tables for TARGETDB LIBFILE (a Big Data handler,
    engine.targets.lake), else into the SQL target."""
    if model.handler_props is not None:
        from engine.replicat.lakerun import LakeReplicatRun

        return LakeReplicatRun(home, model, group, emit)
    return ReplicatRun(home, model, group, emit)


class ReplicatRunner(GroupRunner):
    def __init__(self) -> None:
        self.run_: ReplicatRun | None = None

    def prepare(self, ctx: GroupContext) -> None:
        model = load_group_params(ctx)
        try:
            self.run_ = open_run(ctx.home, model, ctx.group, ctx.event)
            self.run_.report_counter.line = ctx.report.line  # REPORTCOUNT's lines
            if model.handler_props is not None:
                self._lake_requests(ctx, self.run_)  # type: ignore[arg-type]
        except ReplicatError as exc:
            raise ProcessAbend(exc.code, exc.text) from exc
        except TargetError as exc:
            raise ProcessAbend("OGG-00664", exc.message) from exc
        ctx.handlers.add("STATS", stats_handler(self.run_.stats_book))
        ctx.stats_book = self.run_.stats_book
        self.run_.after_batch = ctx.report_schedule(
            self.run_.model.report_schedule, self.run_.model.report_rollover
        )
        ctx.event(
            "OGG-06505",
            Severity.INFO,
            f"REPLICAT {ctx.group.name} connected to target database {self.run_.target.name} "
            f"({self.run_.target.dialect}).",
        )

    def _lake_requests(self, ctx: GroupContext, run: LakeReplicatRun) -> None:
        """SEND REPLICAT name, OPTIMIZE | VACUUM | EXPIRESNAPSHOTS [RETAINHOURS n]."""
        from engine.replicat.lakerun import DEFAULT_RETAIN_HOURS, MAINTENANCE

        def answer(request: Request) -> Reply:
            action = request.command.upper()
            words = [w.upper() for w in request.args]
            hours = DEFAULT_RETAIN_HOURS
            if words:
                if len(words) != 2 or words[0] != "RETAINHOURS":
                    return Reply.error(f"ERROR: {action} takes RETAINHOURS n only.")
                try:
                    hours = float(words[1])
                except ValueError:
                    return Reply.error(f"ERROR: RETAINHOURS needs a number, not {words[1]}.")
            return Reply(tuple(run.maintain(action, hours)))

        for action in MAINTENANCE:
            ctx.handlers.add(action, answer)

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
