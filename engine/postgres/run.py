"""A PostgreSQL Extract run: connection, registration check, trail, checkpoints, status;
polled by the group process (:class:`PgExtractRunner`) or a test until stopped.

The order that makes it exactly once (docs/postgres-source.md): poll (write the trail),
:meth:`PgExtractRun.checkpoint` (trail fsync, then the checkpoint file), and only then the
slot is advanced. ``kill -9`` anywhere in between leaves the slot at or behind the
checkpoint, and the restart skips what the checkpoint or the trail's last CSN covers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.extract.run import open_output_trail
from engine.extract.start import ExtractError
from engine.heartbeat.flow import ExtractRule
from engine.heartbeat.names import for_capture
from engine.heartbeat.settings import utc_now
from engine.home.checkpoints import (
    CsnState,
    ReadCheckpoint,
    WriteCheckpoint,
    load_checkpoints,
    next_checkpoint,
    save_checkpoints,
)
from engine.home.checkpoints import Position as CpPosition
from engine.home.groups import GroupDef
from engine.home.layout import Home
from engine.postgres.capture import PgCapture
from engine.postgres.connect import PgSource, SourceLoginError, connect, pg_source
from engine.postgres.lsn import format_lsn
from engine.postgres.slot import Registration, load_registration, slot_state
from engine.postgres.state import PgCaptureError, PgState
from engine.runtime.events import Severity
from engine.runtime.ipc import Reply, Request
from engine.runtime.loop import GroupRun
from engine.runtime.process import GroupContext, GroupRunner, ProcessAbend
from engine.runtime.stats import StatsBook, counted
from engine.runtime.stats import handler as stats_handler
from engine.trail.model import datetime_to_micros, micros_to_datetime
from params.models import ParamFile

Emit = Callable[[str, Severity, str], None]


class PgExtractRun(GroupRun):
    def __init__(
        self,
        home: Home,
        model: ParamFile,
        group: GroupDef,
        emit: Emit,
        *,
        source: PgSource | None = None,
        durable: bool = True,
        clock: Callable[[], datetime] = datetime.now,
        heartbeat_clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if not model.trails:
            raise ExtractError("OGG-01044", "No EXTTRAIL or RMTTRAIL in the parameter file.")
        self.home = home
        self.model = model
        self.group = group
        self.name = group.name.upper()
        self.emit = emit
        self.clock = clock
        try:
            src = source or pg_source(home, model)
        except SourceLoginError as exc:
            raise ExtractError("OGG-00664", f"Cannot log in: {exc}") from exc
        if src is None:
            raise ExtractError("OGG-00664", "The parameter file names no PostgreSQL database.")
        self.reg: Registration = self._registration()
        try:
            self.conn: Any = connect(src)
        except Exception as exc:  # psycopg.Error
            raise ExtractError("OGG-00664", f"Cannot connect to the source: {_first(exc)}") from exc
        self._check_database()
        self.writer, self.trail_path, self.megabytes = open_output_trail(
            home, model, group, self.name, self.reg.database, durable=durable, emit=emit
        )
        trail = model.trails[0]
        rec = self.writer.recovery
        last = rec.last_transaction if rec is not None else None
        trail_csn = int(str(last.logcsn)) if last is not None and str(last.logcsn).isdigit() else 0
        try:
            self.checkpoints = load_checkpoints(home, "EXTRACT", self.name)
            cps = self.checkpoints
            state = PgState.from_json(cps.extra["pg"]) if cps and "pg" in cps.extra else None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.close()
            raise ExtractError(
                "OGG-00444", f"Checkpoint file dirchk/{self.name}.cpe is corrupt ({exc})."
            ) from None
        begin_us = None
        if group.begin:
            local = datetime.fromisoformat(group.begin).astimezone(UTC).replace(tzinfo=None)
            begin_us = datetime_to_micros(local)
        if cps is not None:
            wanted = next((w.position.seqno for w in cps.writes if _same(w.trail, trail.path)), 0)
            while self.writer.position.seqno < wanted:  # ALTER EXTRACT ..., ETROLLOVER
                self.writer.rollover()
        try:
            self.capture = PgCapture(
                model,
                self.conn,
                self.reg.slot,
                self.writer,
                home.dirtmp / self.name,
                emit,
                state=state,
                trail_csn=trail_csn,
                begin_us=begin_us,
                begin_lsn=group.scn if state is None else None,
                heartbeat=ExtractRule(for_capture(home.globals_file), self.name, heartbeat_clock),
            )
        except PgCaptureError as exc:
            self.close()
            raise ExtractError(exc.code, exc.text) from exc
        if state is not None:
            emit(
                "OGG-01515",
                Severity.INFO,
                f"Positioning to the checkpoint: read LSN {format_lsn(state.read_lsn)}, "
                f"replication slot '{self.reg.slot}' at "
                f"{format_lsn(self.capture.confirmed_lsn)}.",
            )
        self.stats_book = StatsBook(clock, output=self.trail_path)
        self.capture.on_counts = lambda rows: self.stats_book.add(counted(rows))
        self.capture.on_commit = self._committed
        self.latest_txn = cps.csn.latest_txn if cps and cps.csn else None
        self.at_eof = False
        self.batch_id = cps.batch_id if cps else 0
        self.lock = threading.RLock()
        self.last_checkpoint = 0.0
        self.startup_lsn = state.read_lsn if state else self.capture.confirmed_lsn
        self.slot_cache: tuple[float, list[str]] = (0.0, [])

    def _registration(self) -> Registration:
        reg = load_registration(self.home, self.name)
        if reg is None:
            raise ExtractError(
                "OGG-25360",
                f"EXTRACT {self.name} is not registered with a database: DBLOGIN and "
                f"REGISTER EXTRACT {self.name} DATABASE.",
            )
        return reg

    def _check_database(self) -> None:
        row = self.conn.execute(
            "SELECT system_identifier::text, current_database() FROM pg_control_system()"
        ).fetchone()
        if (str(row[0]), str(row[1])) != (self.reg.system_id, self.reg.database):
            self.conn.close()
            raise ExtractError(
                "OGG-25360",
                f"EXTRACT {self.name} is registered with database {self.reg.database} "
                f"(system {self.reg.system_id}); the parameter file names {row[1]} "
                f"(system {row[0]}).",
            )

    def _committed(self, xid: str, _lsn: int, _records: int) -> None:
        self.latest_txn = xid

    # -- running -------------------------------------------------------------------------
    @property
    def checkpoint_secs(self) -> int:
        return self.model.checkpoint_secs

    def poll(self) -> int:
        with self.lock:
            return self.capture.poll()

    def checkpoint(self) -> None:
        """Trail durable, then the checkpoint file, then (only then) the slot advanced."""
        with self.lock:
            state = self.capture.durable_state()
            self.batch_id += 1
            when = micros_to_datetime(state.last_time_us) if state.last_time_us else None
            stamp = when.isoformat(" ") if when else None

            def cp(lsn: int) -> CpPosition:
                return CpPosition(
                    seqno=lsn >> 32, rba=lsn & 0xFFFFFFFF, scn=lsn or None, timestamp=stamp
                )

            reads = (
                ReadCheckpoint(
                    "TRANLOG", cp(self.startup_lsn), cp(state.read_lsn), cp(state.read_lsn)
                ),
            )
            write = WriteCheckpoint(
                self.trail_path,
                "EXTTRAIL",
                CpPosition(self.writer.position.seqno, self.writer.position.rba),
                self.megabytes,
            )
            cps = next_checkpoint(
                self.checkpoints,
                self.name,
                "EXTRACT",
                reads=reads,
                write=write,
                batch_id=self.batch_id,
                now=self.clock(),
                source_time=when,
                extra={
                    "pg": state.to_json(),
                    "slot": self.reg.slot,
                    "slot_status": self._slot_status(),
                },
                csn=CsnState(
                    state.last_commit_lsn or None, self.latest_txn, state.read_lsn or None, stamp
                ),
            )
            save_checkpoints(self.home, cps)
            self.checkpoints = cps
            self.last_checkpoint = time.monotonic()
            self.capture.confirm()

    def _slot_status(self) -> dict[str, object]:
        """What INFO EXTRACT ..., DETAIL shows of the slot (as of this checkpoint)."""
        st = slot_state(self.conn, self.reg.slot)
        if st is None:
            return {"wal_status": "missing"}
        return {
            "plugin": st.plugin,
            "wal_status": st.wal_status,
            "confirmed_lsn": None if st.confirmed_lsn is None else format_lsn(st.confirmed_lsn),
            "retained": st.retained,
        }

    def close(self) -> None:
        self.writer.close()
        self.conn.close()

    # -- what an operator sees -------------------------------------------------------------
    def slot_lines(self) -> list[str]:
        """The slot, its confirmed LSN and the WAL it holds back (bytes)."""
        with self.lock:
            st = slot_state(self.conn, self.reg.slot)
        if st is None:
            return [f"  Replication slot '{self.reg.slot}': MISSING"]
        confirmed = "none" if st.confirmed_lsn is None else format_lsn(st.confirmed_lsn)
        retained = "unknown" if st.retained is None else f"{st.retained} bytes"
        return [
            f"  Replication slot '{st.name}' ({st.plugin}, database {st.database}, "
            f"wal_status {st.wal_status})",
            f"  Confirmed LSN: {confirmed}; WAL retained: {retained}; current WAL LSN: "
            f"{format_lsn(st.current_lsn)}",
        ]

    def status_lines(self) -> list[str]:
        c = self.capture
        s = c.stats
        last = micros_to_datetime(c.last_time_us).isoformat(" ") if c.last_time_us else "none"
        return [
            f"EXTRACT {self.name}: RUNNING",
            "  Current status: Recovery complete",
            f"  Source: PostgreSQL database {self.reg.database}; read LSN {format_lsn(c.read_lsn)}"
            f" (last commit {last}, transaction {c.last_xid or 'none'})",
            *self.slot_lines(),
            f"  Committed transactions written: {s.transactions}; skipped as already in the "
            f"trail: {s.skipped_recovered}",
            f"  Trail {self.trail_path}: {s.trail_records} records written, position "
            f"{self.writer.position.seqno}/{self.writer.position.rba}",
        ]


class PgExtractRunner(GroupRunner):
    """The group process of an Extract whose parameter file names a PostgreSQL database:
    no Spark session (docs/postgres-source.md says why), the same SEND handlers."""

    def __init__(self, model: ParamFile) -> None:
        self.model = model
        self.run_: PgExtractRun | None = None

    def prepare(self, ctx: GroupContext) -> None:
        ctx.starting = "recovery"
        ctx.phase("recovery (slot, trail, checkpoint)")
        try:
            self.run_ = PgExtractRun(ctx.home, self.model, ctx.group, ctx.event)
        except ExtractError as exc:
            raise ProcessAbend(exc.code, exc.text) from exc
        run = self.run_
        ctx.handlers.add("STATS", stats_handler(run.stats_book))

        def no_open_transactions(req: Request) -> Reply:
            return Reply.error(
                f"ERROR: {req.command} is not available for a PostgreSQL Extract: its "
                "replication slot gives a transaction only when it commits, so there are no "
                "open transactions to show, skip or force."
            )

        for command in ("SHOWTRANS", "SKIPTRANS", "FORCETRANS", "BR"):
            ctx.handlers.add(command, no_open_transactions)
        ctx.phase(None)
        ctx.event(
            "OGG-01055",
            Severity.INFO,
            f"Recovery initialization completed for target file {run.trail_path}.",
        )

    def run(self, ctx: GroupContext) -> None:
        if self.run_ is None:
            return
        import psycopg

        try:
            self.run_.run(ctx.stop_requested)
        except PgCaptureError as exc:
            raise ProcessAbend(exc.code, exc.text) from exc
        except psycopg.Error as exc:  # the slot's advance or status: connection lost
            raise ProcessAbend("OGG-25366", f"The source database failed: {_first(exc)}") from exc
        finally:
            self.run_.close()

    def at_eof(self, ctx: GroupContext) -> bool:
        return self.run_ is not None and self.run_.at_eof

    def status_lines(self, ctx: GroupContext) -> list[str]:
        return self.run_.status_lines() if self.run_ else super().status_lines(ctx)


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _same(a: str, b: str) -> bool:
    return Path(a).as_posix().lstrip("./") == Path(b).as_posix().lstrip("./")
