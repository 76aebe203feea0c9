"""The built-in group runner, used until the engine issues register theirs in ``RUNNERS``.

It does what every group process must do before capturing anything, and nothing it cannot do:
it validates the parameter file (abending with every diagnostic, as a real process abends on a
bad parameter file), then stays RUNNING and answers SEND requests until stopped. It neither reads
redo nor writes a trail; ``SEND ... STATUS`` says so.
"""

from __future__ import annotations

from engine.runtime.paramcheck import load_group_params
from engine.runtime.process import GroupContext, GroupRunner

IDLE_POLL_SECONDS = 0.2


class ParameterCheckRunner(GroupRunner):
    def prepare(self, ctx: GroupContext) -> None:
        load_group_params(ctx)

    def run(self, ctx: GroupContext) -> None:
        while not ctx.stop_requested.wait(IDLE_POLL_SECONDS):
            pass

    def status_lines(self, ctx: GroupContext) -> list[str]:
        return [
            f"{ctx.group.kind} {ctx.group.name}: RUNNING",
            f"  Current status: Idle: parameter file {ctx.param_file.name} validated; "
            f"no {ctx.group.kind.lower()} engine is registered for this kind yet.",
        ]
