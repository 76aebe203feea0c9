"""The built-in group runner, used until the engine issues register theirs in ``RUNNERS``.

It does what every group process must do before capturing anything, and nothing it cannot do:
it validates the parameter file (abending with every diagnostic, as a real process abends on a
bad parameter file), then stays RUNNING and answers SEND requests until stopped. It neither reads
redo nor writes a trail; ``SEND ... STATUS`` says so.
"""

from __future__ import annotations

from engine.paramcheck import check_param_file
from engine.process import GroupContext, GroupRunner, ProcessAbend

IDLE_POLL_SECONDS = 0.2


class ParameterCheckRunner(GroupRunner):
    def prepare(self, ctx: GroupContext) -> None:
        path = ctx.param_file
        if not path.exists():
            raise ProcessAbend("OGG-00303", f"Could not open parameter file {path}.")
        result = check_param_file(path, cwd=ctx.home.root)
        for line in result.rendered:
            ctx.report.line(line)
        if not result.ok:
            raise ProcessAbend(
                "OGG-10144",
                f"Parameter file {path.name} has {result.errors} error(s); see the report.",
            )

    def run(self, ctx: GroupContext) -> None:
        while not ctx.stop_requested.wait(IDLE_POLL_SECONDS):
            pass

    def status_lines(self, ctx: GroupContext) -> list[str]:
        return [
            f"{ctx.group.kind} {ctx.group.name}: RUNNING",
            f"  Current status: Idle: parameter file {ctx.param_file.name} validated; "
            f"no {ctx.group.kind.lower()} engine is registered for this kind yet.",
        ]
