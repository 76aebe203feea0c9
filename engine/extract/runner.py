"""The Extract group process's runner (registered in :data:`engine.runtime.process.RUNNERS`).

``prepare`` checks the parameter file (abend with every diagnostic) and opens the run
(:meth:`engine.extract.run.ExtractRun.start`: its SparkSession starts in a background thread
while the run recovers and captures in this process); ``run`` polls until STOP.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.cluster.spark import SparkConfigError, task_failure
from engine.cluster.watch import Watchdog
from engine.embedded.catalog import RedoGapError
from engine.extract.longtrans import RequestError
from engine.extract.run import ExtractRun
from engine.extract.start import ExtractError
from engine.runtime.events import Severity
from engine.runtime.ipc import Reply, Request
from engine.runtime.paramcheck import load_group_params
from engine.runtime.process import GroupContext, GroupRunner, ProcessAbend
from engine.runtime.stats import handler as stats_handler
from params.models import ParamFile


def _postgres_source(ctx: GroupContext, model: ParamFile) -> bool:
    from engine.postgres.connect import SourceLoginError, pg_source

    try:
        return pg_source(ctx.home, model) is not None
    except SourceLoginError as exc:
        raise ProcessAbend("OGG-00664", f"Cannot log in: {exc}") from exc


class ExtractRunner(GroupRunner):
    """Capture from redo. (A group added with EXTTRAILSOURCE is a data pump: the process runs
    :class:`engine.pump.runner.PumpRunner` for it, :func:`engine.runtime.process.runner_kind`.)"""

    def __init__(self) -> None:
        self.run_: ExtractRun | None = None
        self.watch: Watchdog | None = None
        self.pg: GroupRunner | None = None  # a PostgreSQL source's runner (engine/postgres)

    def prepare(self, ctx: GroupContext) -> None:
        ctx.phase("parameter file")
        model = load_group_params(ctx)
        if _postgres_source(ctx, model):  # issue 25: no Spark, engine/postgres
            from engine.postgres.run import PgExtractRunner

            self.pg = PgExtractRunner(model)
            self.pg.prepare(ctx)
            return
        ctx.starting = "recovery"
        ctx.phase("recovery (trail, checkpoints, Bounded Recovery)")
        try:  # the Spark session starts in the background: capture begins without it
            self.run_ = ExtractRun.start(
                ctx.home,
                model,
                ctx.group,
                ctx.event,
                report_line=ctx.report.line,
                on_fault=ctx.stop_requested.set,  # a stall: the run stops, then abends
            )
        except (ExtractError, SparkConfigError) as exc:
            raise ProcessAbend(exc.code, exc.text) from exc
        self.watch = self.run_.watch
        self._register(ctx)
        ctx.phase("first read of the redo")
        self.run_.after_first_poll = lambda: ctx.phase(None)
        ctx.event(
            "OGG-01055",
            Severity.INFO,
            f"Recovery initialization completed for target file {self.run_.trail_path}.",
        )

    def _register(self, ctx: GroupContext) -> None:
        run = self.run_
        assert run is not None

        def rollover(_: Request) -> Reply:
            run.rollover_done.clear()
            run.rollover_requested.set()
            if not run.rollover_done.wait(30):
                return Reply.error("ERROR: rollover did not complete within 30 seconds.")
            pos = run.writer.position
            return Reply((f"Rollover performed: {run.trail_path} is now at sequence {pos.seqno}.",))

        ctx.handlers.add("ROLLOVER", rollover)

        def guarded(action: Callable[[Request], list[str]]) -> Callable[[Request], Reply]:
            def handler(req: Request) -> Reply:
                try:
                    return Reply(tuple(action(req)))
                except RequestError as exc:
                    return Reply.error(str(exc))

            return handler

        ctx.handlers.add("SHOWTRANS", guarded(lambda r: run.showtrans(r.args)))
        ctx.handlers.add(
            "SKIPTRANS", guarded(lambda r: run.transaction_action("SKIPTRANS", r.args))
        )
        ctx.handlers.add(
            "FORCETRANS", guarded(lambda r: run.transaction_action("FORCETRANS", r.args))
        )
        ctx.handlers.add("BR", guarded(lambda r: run.br_request(r.args)))
        ctx.handlers.add("STATS", stats_handler(run.stats_book))
        ctx.stats_book = run.stats_book
        run.after_batch = ctx.report_schedule(run.model.report_schedule, run.model.report_rollover)
        ctx.handlers.add("TRANLOGOPTIONS", guarded(lambda r: run.tranlog_request(r.args)))

        def stop(_: Request) -> Reply:
            refusal = run.stop_refusal()
            if refusal is not None:
                return Reply.error(*refusal)
            ctx.stop_requested.set()
            return Reply(("Request processed.",))

        ctx.handlers.add("STOP", stop)

    def run(self, ctx: GroupContext) -> None:
        if self.pg is not None:
            self.pg.run(ctx)
            return
        if self.run_ is None:
            return  # stopped while starting
        try:
            self.run_.run(ctx.stop_requested)
        except RedoGapError as exc:  # redo missing, cut short or unreadable: named, no trace
            raise ProcessAbend(exc.code, exc.message) from exc
        except ExtractError as exc:  # e.g. a captured table's structure changed in the redo
            raise ProcessAbend(exc.code, exc.text) from exc
        except Exception as exc:
            fault = self.watch.fault if self.watch is not None else None
            if fault is not None:  # the watchdog cancelled the job: its line says why
                raise ProcessAbend(fault.code, fault.text) from None
            line = task_failure(exc)  # a task's own check, in one line rather than a trace
            if line is None:
                raise
            raise ProcessAbend("OGG-01668", line) from exc
        finally:
            self.run_.close()
            if self.watch is not None:
                self.watch.close()
        fault = self.watch.fault if self.watch is not None else None
        if fault is not None:  # stopped by the watchdog, not by the user
            raise ProcessAbend(fault.code, fault.text)

    def at_eof(self, ctx: GroupContext) -> bool:
        if self.pg is not None:
            return self.pg.at_eof(ctx)
        return self.run_ is not None and self.run_.at_eof

    def status_lines(self, ctx: GroupContext) -> list[str]:
        if self.pg is not None:
            return self.pg.status_lines(ctx)
        lines = self.run_.status_lines() if self.run_ else super().status_lines(ctx)
        waiting = self.watch.status() if self.watch is not None else None
        return [*lines, f"  Spark: {waiting}"] if waiting else lines
