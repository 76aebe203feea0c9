"""The pump group process's runner: an Extract group added with ``EXTTRAILSOURCE``.

:class:`engine.extract.runner.ExtractRunner` delegates to it for such groups, so ``START
EXTRACT p`` runs it in the same process model (report, SEND, checkpoints) without a
SparkSession: a pump only copies trail records.

With ``RMTHOST`` and an ``RMTTRAIL`` the trail is written by a Collector on the target host
(:mod:`engine.pump.remote`). A lost link (:class:`~engine.pump.remote.LinkLost`) is answered
by the home's TCPERRS rules (:mod:`engine.pump.tcperrs`): wait the rule's delay and build the
pump again from its last checkpoint, which only an acknowledgement of the Collector moved, so
the Collector's append-mode recovery and the pump's restart rules copy nothing twice and lose
nothing; after ``max_retries`` failures in a row (or an ABEND rule) the pump abends. A retry
count starts again once the Collector has acknowledged a checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.pump import PumpError
from engine.pump.pump import Pump
from engine.pump.remote import LinkLost, RemoteSink, remote_opener
from engine.pump.sink import TrailSink, TrailSpec
from engine.pump.tcperrs import TcpErrs, TcpErrsError, load_tcperrs
from engine.runtime.events import Severity
from engine.runtime.ipc import Reply, Request
from engine.runtime.paramcheck import load_group_params
from engine.runtime.process import GroupContext, GroupRunner, ProcessAbend
from engine.runtime.stats import StatsBook
from engine.runtime.stats import handler as stats_handler
from params.models import ParamFile


class PumpRunner(GroupRunner):
    def __init__(self) -> None:
        self.pump: Pump | None = None
        self.model: ParamFile | None = None
        self.stats: StatsBook | None = None
        self.opener: Callable[[TrailSpec], TrailSink] | None = None
        self.tcperrs = TcpErrs({})
        self.retries = 0
        self.after_batch: Callable[[], None] | None = None

    def prepare(self, ctx: GroupContext) -> None:
        model = self.model = load_group_params(ctx)
        trail = model.trails[0] if model.trails else None
        if model.rmthost is not None and trail is not None and trail.remote:
            self.opener = remote_opener(ctx.home, model.rmthost)
            try:
                self.tcperrs = load_tcperrs(ctx.home.root)
            except TcpErrsError as exc:
                raise ProcessAbend("OGG-10144", str(exc)) from exc
        self.stats = StatsBook(ctx.clock, output=trail.path if trail else "")
        self.after_batch = ctx.report_schedule(model.report_schedule, model.report_rollover)
        try:
            self.pump = self._build(ctx)
        except LinkLost as exc:  # the run retries it, by the TCPERRS rules
            self._retry_or_abend(ctx, exc)
        except PumpError as exc:
            raise ProcessAbend(exc.code, exc.text) from exc
        if self.pump is not None:
            ctx.event(
                "OGG-01055",
                Severity.INFO,
                f"Recovery initialization completed for target file {self.pump.trail_path}.",
            )

        def rollover(_: Request) -> Reply:
            return Reply.error("ERROR: ROLLOVER of a data pump's trail is done at its next start.")

        ctx.handlers.add("ROLLOVER", rollover)
        ctx.handlers.add("STATS", stats_handler(self.stats))
        ctx.stats_book = self.stats

    def _build(self, ctx: GroupContext) -> Pump:
        assert self.model is not None
        pump = Pump(
            ctx.home,
            self.model,
            ctx.group,
            ctx.event,
            opener=self.opener,
            stats=self.stats,
            report_line=ctx.report.line,
        )
        pump.after_batch = self.after_batch
        return pump

    def _retry_or_abend(self, ctx: GroupContext, exc: LinkLost) -> None:
        rule = self.tcperrs.rule(exc.name)
        if not rule.retry or self.retries >= rule.max_retries:
            why = "no retry for it" if not rule.retry else f"{rule.max_retries} retries failed"
            raise ProcessAbend(exc.code, f"{exc.text} ({why}; TCPERRS {rule.error}).")
        self.retries += 1
        ctx.event(
            exc.code,
            Severity.WARNING,
            f"{exc.text}; retrying in {rule.delay_seconds:g} s "
            f"(retry {self.retries} of {rule.max_retries}).",
        )
        ctx.stop_requested.wait(rule.delay_seconds)

    def run(self, ctx: GroupContext) -> None:
        while not ctx.stop_requested.is_set():
            try:
                if self.pump is None:
                    self.pump = self._build(ctx)
                    ctx.event(
                        "OGG-01055",
                        Severity.INFO,
                        f"Recovery initialization completed for target file "
                        f"{self.pump.trail_path} (link to the Collector again).",
                    )
                self.pump.run(ctx.stop_requested.is_set)
            except LinkLost as exc:
                self._lost(ctx, exc)
                continue
            except PumpError as exc:
                raise ProcessAbend(exc.code, exc.text) from exc
            finally:
                if ctx.stop_requested.is_set() and self.pump is not None:
                    self.pump.close()
                    self.pump = None
            return

    def _lost(self, ctx: GroupContext, exc: LinkLost) -> None:
        pump, self.pump = self.pump, None
        if pump is not None:
            sink = pump.writer
            if isinstance(sink, RemoteSink) and sink.acks:
                self.retries = 0  # it got through since the last failure
            pump.close()
        self._retry_or_abend(ctx, exc)

    def at_eof(self, ctx: GroupContext) -> bool:
        return self.pump is not None and self.pump.at_eof

    def status_lines(self, ctx: GroupContext) -> list[str]:
        return self.pump.status_lines() if self.pump else super().status_lines(ctx)
