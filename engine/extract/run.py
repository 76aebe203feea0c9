"""An Extract run: from a home, a parameter file and (optionally) a group definition to a
:class:`~engine.extract.capture.Capture` that is polled until stopped, with checkpoints.

Used by the group process (:mod:`engine.extract.runner`) and by the foreground
``ggsci extract paramfile ...``. Everything the run reports goes through ``emit`` (OGG
message format: code, severity, text), which writes the report file and ``ggserr.log``.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from engine.changes import Position
from engine.cluster.heap import keep_heap
from engine.cluster.spark import (
    UNPROTECTED_CODE,
    abandon_session,
    batch_splits,
    extract_settings,
    start_session,
    unprotected,
)
from engine.cluster.starting import SessionStart
from engine.cluster.watch import Limits, Watchdog
from engine.embedded.catalog import RedoCatalog, RedoGapError
from engine.embedded.errors import RedoFormatError
from engine.extract import containers
from engine.extract import longtrans as lt
from engine.extract.alo import (
    ArchiveCatalog,
    AttachedOrigin,
    attached_source,
    legacy_state,
    not_used,
)
from engine.extract.br import BoundedRecovery, BrError, Restored, selection_digest
from engine.extract.cache import Txn
from engine.extract.capture import Capture, CaptureHooks, CaptureState, LogCatalog
from engine.extract.cpcheck import commit_problem, trail_problem
from engine.extract.keyfetch import for_extract
from engine.extract.orphans import OrphanScanner
from engine.extract.redo_source import DEFAULT_SPLIT_BYTES, MINER_MODULES
from engine.extract.start import (
    ExtractError,
    initial_positions,
    recapture_lost_trail,
    source_root,
)
from engine.extract.txnmgmt import TransactionManagement
from engine.heartbeat.flow import ExtractRule
from engine.heartbeat.names import for_capture
from engine.heartbeat.settings import utc_now
from engine.home.checkpoints import (
    MOVED_READ,
    MOVED_RECOVERY,
    MOVED_WRITE,
    Checkpoints,
    CsnState,
    ReadCheckpoint,
    WriteCheckpoint,
    load_checkpoints,
    next_checkpoint,
    save_checkpoints,
)
from engine.home.checkpoints import Position as CpPosition
from engine.home.groups import DEFAULT_MEGABYTES, GroupDef, normalize_trail
from engine.home.layout import Home
from engine.runtime.events import Severity
from engine.runtime.loop import GroupRun, Stop
from engine.runtime.reportcount import ReportCounter
from engine.runtime.stats import StatsBook, counted
from engine.trail.model import TrailPosition, datetime_to_micros, micros_to_datetime
from engine.trail.recovery import RecoveryMode
from engine.trail.releases import parse_release
from engine.trail.writer import TrailWriter
from params.models import ParamFile

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Emit = Callable[[str, Severity, str], None]


class ExtractRun(TransactionManagement, GroupRun):
    session_start: SessionStart | None = None
    """The Spark session starting in the background (None: up, or never asked for)."""
    watch: Watchdog | None = None
    """The Spark application's watchdog (engine/cluster/watch.py), once a session is asked for."""

    @classmethod
    def start(
        cls,
        home: Home,
        model: ParamFile,
        group: GroupDef | None,
        emit: Emit,
        *,
        master: str | None = None,
        brreset: bool = False,
        report_line: Callable[[str], None] | None = None,
        on_fault: Callable[[], None] | None = None,
    ) -> ExtractRun:
        """Start an Extract (of the embedded source or an attached one), for the group process
        and the foreground command alike: its Spark session starts in the background (a
        daemon thread) while the run opens (recovery, trail, checkpoints) and captures in this
        process; the session takes the batches over once it is up (:meth:`_adopt_session`).
        ``on_fault`` is called from the watchdog when the application stalls or cannot start
        (the run is then stopped, and the caller abends with ``run.watch.fault``)."""
        name = (model.group or (group.name if group else "EXTRACT")).upper()
        settings = extract_settings(home, model, name, master)  # a bad one: raised at once
        watch = Watchdog(Limits())
        if on_fault is not None:
            watch.on_fault(lambda _fault: on_fault())
        session = SessionStart(lambda: start_session(settings, MINER_MODULES, watch), watch)
        try:
            run = cls(
                home, model, group, emit, spark=None, brreset=brreset, report_line=report_line
            )
        except BaseException:
            watch.close()
            raise
        run.watch, run.session_start = watch, session
        run.capture.max_poll_splits = 1  # a split of each thread a batch until Spark takes over
        return run

    def __init__(
        self,
        home: Home,
        model: ParamFile,
        group: GroupDef | None,
        emit: Emit,
        *,
        spark: SparkSession | None,
        brreset: bool = False,
        durable: bool = True,
        clock: Callable[[], datetime] = datetime.now,
        report_line: Callable[[str], None] | None = None,
        heartbeat_clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if not model.trails:
            raise ExtractError("OGG-01044", "No EXTTRAIL or RMTTRAIL in the parameter file.")
        keep_heap()  # the buffers of split after split stay this process's (engine/cluster/heap.py)
        self.home = home
        self.model = model
        self.report_line = report_line or (lambda _text: None)
        self.report_counter = ReportCounter(model.report_count, self.report_line, clock)
        self.after_first_poll: Callable[[], None] | None = None
        self.name = (model.group or (group.name if group else "EXTRACT")).upper()
        self.group = group
        self.emit = emit
        self.clock = clock
        # the source: the embedded database, or an attached one's archived logs (alo.py)
        self.attached = attached_source(home, model)
        self.root = self.attached.root if self.attached else source_root(home, model)
        self.origin = (
            AttachedOrigin(self.attached, self._redo_warning, model) if self.attached else None
        )
        for what in not_used(model) if self.attached else ():
            emit("OGG-10144", Severity.WARNING, f"{what} not used by an Extract reading the "
                 f"archived logs of attached database {self.root.name}.")  # fmt: skip
        cdb = bool(self.origin and self.origin.containers())
        for text in containers.exclude_catalogs(
            model.tranlog.exclude_users, self.origin.oracle
        ) if self.origin else ():  # fmt: skip
            emit("OGG-02340", Severity.WARNING, text.removeprefix("OGG-02340: ") + ".")
        for user in (u for u in model.tranlog.exclude_users if "." in u and not cdb):
            catalog, _, name = user.rpartition(".")
            emit("OGG-10144", Severity.WARNING, f"Catalog {catalog.upper()} of TRANLOGOPTIONS "
                 f"EXCLUDEUSER {user} not used: {name.upper()} is excluded in every "
                 "container.")  # fmt: skip
        for spec in () if self.attached else containers.with_catalog(model):
            emit("OGG-10144", Severity.WARNING, f"Catalog {spec.source.catalog} of "
                 f"{spec.statement} {spec.source} not used: embedded database "
                 f"{self.root.name} has no containers.")  # fmt: skip
        self.writer, self.trail_path, self.megabytes = open_output_trail(
            home, model, group, self.name, self.root.name, durable=durable, emit=emit
        )
        trail = model.trails[0]
        try:
            self.checkpoints = load_checkpoints(home, "EXTRACT", self.name)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self.writer.close()
            raise ExtractError(
                "OGG-00444", f"Checkpoint file dirchk/{self.name}.cpe is corrupt ({exc})."
            ) from None
        cps = self.checkpoints
        state, altered = self._saved_state(cps, trail.path, group)
        self.stats_book = StatsBook(clock, output=self.trail_path)
        self.br = self._open_br(model, home)
        restored = None
        if self.br is not None and state is not None and not altered:
            state, restored = self._restored(state, brreset or model.br.reset)
        if state is not None and restored is None:
            emit(
                "OGG-01515",
                Severity.INFO,
                "Positioning to the recovery checkpoint (start of the oldest open transaction).",
            )
        if cps is not None:
            wanted = next(
                (w.position.seqno for w in cps.writes if _same_trail(w.trail, trail.path)), 0
            )
            while self.writer.position.seqno < wanted:  # ALTER EXTRACT ..., ETROLLOVER
                self.writer.rollover()
        start = self._open_capture(cps, group, state, spark, heartbeat_clock)
        self.at_eof = False  # the last poll found nothing (LAG: 'At EOF')
        if restored is not None:
            self.capture.restore(restored.txns, restored.checkpoint.current)
            if self.origin is not None:  # the redo miner learns what it may take back
                self.origin.restored(restored.txns)
        if self.capture.heartbeat is not None:  # LOGBSN on heartbeat records (seed 001)
            self.capture.heartbeat.restart = self._oldest_open
        self._redo_files: dict[tuple[int, int], str | None] = {}  # (thread, seq): log path
        csn_saved = self.checkpoints.csn if self.checkpoints else None
        self.latest_txn = csn_saved.latest_txn if csn_saved else None  # SHOWCH "Latest TXN"
        self.orphans = OrphanScanner(
            model.tranlog.trans_cleanup_frequency, model.tranlog.purge_orphaned
        )
        self.br_off_on_failure = model.br.off_on_failure
        self.br_positions: dict[str, dict[str, object]] = dict(
            cps.extra.get("br", {}) if cps is not None else {}
        )
        # Until reading passes where the previous run had got to, this start is recovering.
        self.recovery_end: dict[int, Position] = dict(
            restored.checkpoint.current
            if restored is not None
            else (state.current if state else {})
        )
        self.br_requested: str | None = None
        self.batch_id = cps.batch_id if cps else 0
        self.started = time.monotonic()
        self.lock = threading.RLock()  # SEND handlers (IPC thread) vs the capture loop
        self._next_check_us: int | None = None
        self.rollover_requested = threading.Event()
        self.rollover_done = threading.Event()
        self.startup = {t: p for t, p in start.items()} if state is None else dict(state.current)
        self._startup_at = _points_known(cps.reads if cps else (), self.startup)
        self.last_checkpoint = 0.0

    def _catalog(self) -> LogCatalog:
        """Where the source's logs are read: the embedded database's online logs and archive
        destinations, or the attached database's archive location."""
        if self.attached is not None:
            return ArchiveCatalog.of(self.attached, self.model)
        return RedoCatalog.for_extract(self.root, self.model.tranlog)

    def _redo_warning(self, text: str) -> None:
        """A warning of the miner of real redo (a column of a type not captured)."""
        code, sep, rest = text.partition(": ")
        if sep and code.startswith("OGG-"):
            self.emit(code, Severity.WARNING, rest)
        else:
            self.emit("OGG-01431", Severity.WARNING, text)

    def _saved_state(
        self, cps: Checkpoints | None, trail: str, group: GroupDef | None
    ) -> tuple[CaptureState | None, bool]:
        """The capture state the checkpoint records, checked against the redo and the trail
        (OGG-00444 when it cannot be true; a trail cut short is captured again, OGG-01741),
        and whether this start is not where the last run left off (ADD/ALTER moved a
        position: normal recovery, no BR restore, OGG-01635)."""
        if cps is None:
            return None, False
        # (a checkpoint of an earlier release's archived-log run: its state, read as ours)
        extra = cps.extra.get("capture") or legacy_state(cps.extra)
        if extra is None:
            return None, False
        written = next((w for w in cps.writes if _same_trail(w.trail, trail)), None)
        at = written.position if written is not None else CpPosition()
        saved = CaptureState.from_checkpoint(extra, cps.reads, TrailPosition(at.seqno, at.rba))
        moved = cps.altered and MOVED_READ in cps.moved
        # seed 000: an altered I/O checkpoint (IOEXTSEQNO/IOEXTRBA: the recovery position;
        # ETROLLOVER: the write position) also means normal recovery, from that position
        io_moved = cps.altered and bool({MOVED_RECOVERY, MOVED_WRITE} & set(cps.moved))
        if moved or io_moved:
            self.emit(
                "OGG-01635",
                Severity.INFO,
                "BOUNDED RECOVERY: reset to initial or altered checkpoint.",
            )
            return (None if moved else saved), True
        self._check_state(cps, saved, self.model)
        # The trail against the write checkpoint: lost data is captured again, or abend.
        try:
            again = recapture_lost_trail(
                cps, saved.trail, trail, self.writer, self.root / "redo",
                group.threads if group else 1,
                lambda: self._catalog().logs(),
            )  # fmt: skip
        except ExtractError:
            self.writer.close()
            raise
        if again is None:
            return saved, False
        self.emit("OGG-01741", Severity.WARNING, again.message)
        positions = dict(again.positions)
        state = replace(saved, current=positions, recovery=dict(positions),
                        last_commit_scn=again.last_commit_scn, last_commit_xids=())  # fmt: skip
        return state, True  # not a restart where the last run left off: no BR restore

    def _restored(self, state: CaptureState, brreset: bool) -> tuple[CaptureState, Restored | None]:
        """The state Bounded Recovery restores (its restart positions and last commit), or
        ``state`` when BR does not restore (none taken, BRRESET, a damaged checkpoint)."""
        restored = self._br_restore(state, brreset)
        if restored is None:
            return state, None
        cp = restored.checkpoint
        return (
            CaptureState(
                dict(cp.restart),
                dict(cp.restart),
                cp.last_commit_scn,
                state.trail,
                cp.redo_time_us,
                state.last_scn,
                tuple(sorted(set(cp.ignored) | set(state.ignored))),
            ),
            restored,
        )

    def _open_capture(
        self,
        cps: Checkpoints | None,
        group: GroupDef | None,
        state: CaptureState | None,
        spark: SparkSession | None,
        heartbeat_clock: Callable[[], datetime],
    ) -> dict[int, Position]:
        """Open :attr:`capture` from ``state`` (None: from the read checkpoints, or the
        redo's start); the positions it starts at when there is no state."""
        model, home = self.model, self.home
        try:
            catalog = self._catalog()
            start = initial_positions(
                self.root / "redo",
                cps.reads if cps else (),
                group.threads if group else 1,
                catalog.logs,
            )
            self.capture = Capture(
                model,
                self.root,
                self.writer,
                home.dirtmp / self.name,
                start=start,
                spark=spark,
                state=state,
                heartbeat=ExtractRule(for_capture(home.globals_file), self.name, heartbeat_clock),
                hooks=CaptureHooks(
                    on_commit=self._committed,
                    on_counts=lambda rows: self.stats_book.add(counted(rows)),
                    br_due=self._br_due if self.br is not None else None,
                    br_take=self._br_checkpoint if self.br is not None else None,
                ),
                catalog=catalog,
                fetch=None
                if self.origin is not None  # no database to fetch a key from
                else for_extract(
                    model,
                    self.root,
                    lambda: self.capture.decoder.dictionary,
                    lambda: self.capture.keycols,
                    self.emit,
                ),
                origin=self.origin,
                split_bytes=_split_bytes(),
                # a batch mines one wave of the share's tasks (another is mined ahead)
                max_poll_splits=batch_splits(spark) if spark is not None else 8,
            )
        except ExtractError:  # e.g. OGG-00366, a TABLE option naming an unknown column
            self.writer.close()
            raise
        except RedoGapError as exc:  # ARCHIVEDLOGONLY without a destination, archives unreadable
            self.writer.close()
            raise ExtractError(exc.code, exc.message) from exc
        except RedoFormatError as exc:  # a log header unreadable, or of a database made before
            self.writer.close()  # Oracle's format (GGS-SRC-0120: recreate it): one line
            raise ExtractError(exc.code, exc.message) from exc
        return start

    # -- running --------------------------------------------------------------------
    @property
    def checkpoint_secs(self) -> int:
        return self.model.checkpoint_secs

    def between(self) -> None:
        """SEND ... ROLLOVER, acted on between batches (the request waits for it)."""
        if self.rollover_requested.is_set():
            self.writer.rollover()
            self.rollover_requested.clear()
            self.checkpoint()
            self.rollover_done.set()

    def wake(self) -> bool:
        return self.rollover_requested.is_set()

    def poll(self) -> int:
        """One batch of capture, then what is due on the Extract's clock: long-running
        transaction warnings, the orphan purge, a Bounded Recovery checkpoint, REPORTCOUNT."""
        with self.lock:
            if self.session_start is not None:
                self._adopt_session(self.session_start)
            n = self.capture.poll()
            if self.after_first_poll is not None:  # the start-up phases end here
                done, self.after_first_poll = self.after_first_poll, None
                done()
            self._warn_long_transactions()
            self._purge_orphans()
            if self.br is not None and (self.br_requested or self._br_due(0)):
                # BRCHECKPOINT IMMEDIATE, or due on the Extract's clock (an idle source too)
                self.br_requested = None
                self.writer.sync()
                redo = self.capture.last_time_us or self._now_us()
                self._br_checkpoint(self.capture.applied_positions(), redo)
        self.report_counter.tick(self.capture.stats.trail_records)
        return n

    def _adopt_session(self, start: SessionStart) -> None:
        """The Spark session, once its background start ends: batches go to its tasks from
        now on (until then they are mined here, one split at a time). A session that could
        not start raises its SparkConfigError: the process abends with its line."""
        started = start.take()
        if started is None:
            return
        self.session_start = None
        spark, summary = started
        self.capture.use_spark(spark, batch_splits(spark))
        self.report_line(summary)
        exposed = unprotected(dict(spark.sparkContext.getConf().getAll()))
        if exposed is not None:
            self.emit(UNPROTECTED_CODE, Severity.WARNING, exposed)
        self.report_line(
            f"Start-up phase: Spark session: {start.took or 0.0:.2f} s "
            "(capture ran in the Extract's own process meanwhile)."
        )

    def run(self, stop: Stop, *, stop_at_eof: bool = False, idle: float = 0.5) -> None:
        written, since = self.capture.stats.trail_records, dict(self.capture.positions)
        super().run(stop, stop_at_eof=stop_at_eof, idle=idle)
        if stop_at_eof and self.at_eof and self.capture.stats.trail_records == written:
            self._say_waiting(since)

    def _say_waiting(self, since: dict[int, Position]) -> None:
        """A run to the end of the redo that wrote nothing, of an attached database: which
        thread and sequence it waits for (alo.py, ArchiveCatalog.waiting), not a silent 0."""
        catalog = self._catalog()
        if isinstance(catalog, ArchiveCatalog):
            line = catalog.waiting(self.capture.positions, since)
            if line is not None:
                self.emit("OGG-00446", Severity.WARNING, line)

    def wait_for_session(self) -> None:
        """Wait until the Spark session is up and mine with it from the first batch (the
        foreground command does: what it mines, Spark mines); its failure is raised."""
        if self.session_start is not None:
            self.session_start.wait()
            with self.lock:
                self._adopt_session(self.session_start)

    def _committed(self, xid: str, _scn: int, _records: int) -> None:
        self.latest_txn = xid

    def _csn_state(self, last_commit_scn: int, last_scn: int, last_time_us: int) -> CsnState:
        """The CSN state a checkpoint publishes: the last transaction written and LOGBSN
        (the oldest open transaction's begin, else the last record read)."""
        point = self._oldest_open()
        bsn, when = point if point else (last_scn or None, last_time_us)
        stamp = micros_to_datetime(when).isoformat(" ") if when else None
        return CsnState(last_commit_scn or None, self.latest_txn, bsn, stamp)

    def _oldest_open(self) -> tuple[int, int] | None:
        """Extract's restart position (LOGBSN): begin SCN and time of the oldest open
        transaction, None when none is open."""
        txns = self.capture.cache.open_transactions()
        if not txns:
            return None
        oldest = min(txns, key=lambda t: t.start_scn)
        return (oldest.start_scn, oldest.start_time_us)

    def _check_state(self, cps: Checkpoints, state: CaptureState, model: ParamFile) -> None:
        """The checkpoint against the redo it names (:mod:`engine.extract.cpcheck`):
        ExtractError OGG-00444 naming the file when it cannot be true."""
        rec = self.writer.recovery
        problem = trail_problem(state, rec.last_transaction if rec is not None else None)
        if problem is None:
            try:
                logs = self._catalog().logs()
            except RedoGapError:
                logs = []  # an archive destination unreadable: the reader says so
            problem = commit_problem(state, logs)
        if problem is not None:
            self.writer.close()
            raise ExtractError(
                "OGG-00444",
                f"Checkpoint file dirchk/{self.name}.cpe cannot be believed: {problem}. "
                f"Reposition with ALTER EXTRACT {self.name} (EXTSEQNO/EXTRBA, SCN or BEGIN) "
                "to capture from a point you choose.",
            )

    # -- Bounded Recovery -------------------------------------------------------------
    def _purge_orphans(self) -> None:
        """PURGEORPHANEDTRANSACTIONS asks the embedded database which transactions it still
        has open; an attached database's archived logs cannot say (none is purged)."""
        if self.attached is None:
            super()._purge_orphans()

    def _now_us(self) -> int:
        """The Extract's processing clock (injected): what BR checkpoints are due on."""
        return datetime_to_micros(self.clock())

    def _br_due(self, _redo_us: int) -> bool:
        """Capture's per-record question, answered on the processing clock, not redo time."""
        return self.br is not None and self.br.due(self._now_us())

    def _open_br(self, model: ParamFile, home: Home) -> BoundedRecovery | None:
        b = model.br
        if b.off:
            return None
        base = Path(b.brdir) if Path(b.brdir).is_absolute() else home.root / b.brdir
        # with their options: a fragment persisted holds rows its WHERE and COLS already cut
        statements = [
            " ".join(
                (t.statement, str(t.source), *(f"{o.name} {o.value or ''}" for o in t.options))
            )
            for t in model.tables
        ]
        return BoundedRecovery(
            base / self.name,
            self.name,
            b.effective_interval,
            keep_stale=b.keep_stale_files,
            sync=b.fs_option == "MS_SYNC",
            selection=selection_digest(statements),
        )

    def _br_restore(self, normal: CaptureState, brreset: bool) -> Restored | None:
        """Which recovery this start uses, said in the report and ggserr.log."""
        assert self.br is not None
        if brreset:
            self.emit("OGG-10019", Severity.INFO, BR_NOT_USED)
            return None
        if not self.br.checkpoints():
            self.emit("OGG-02937", Severity.INFO, "No valid Bounded Recovery checkpoint found.")
            return None
        try:
            restored = self.br.load()
        except BrError as exc:
            self.emit(
                "OGG-01643",
                Severity.INFO,
                f"BOUNDED RECOVERY: CANCELED: for object pool 1: {self.name}: {exc}",
            )
            if self.model.br.off_on_failure:  # seed 000: off for the runtime processing
                self.emit("OGG-10019", Severity.INFO, BR_OFF_ON_FAILURE)
                self.br = None
            else:
                self.emit("OGG-10019", Severity.INFO, BR_NOT_USED)
            return None
        for damaged in restored.passed:
            self.emit(
                "OGG-01643",
                Severity.INFO,
                f"BOUNDED RECOVERY: CANCELED: for object pool 1: {self.name}: {damaged}; "
                f"using {restored.path.name}, the checkpoint before it.",
            )
        cp = restored.checkpoint
        if cp.selection != self.br.selection:
            self.emit(
                "OGG-10019",
                Severity.INFO,
                BR_NOT_USED + " (the TABLE selection of the parameter file changed)",
            )
            return None
        if not cp.objects and all(normal.recovery.get(t, p) >= p for t, p in cp.restart.items()):
            return None  # nothing persisted and normal recovery starts later: use it
        for t, p in sorted(cp.restart.items()):
            self.emit(
                "OGG-01641",
                Severity.INFO,
                f"BOUNDED RECOVERY: recovery start position: SeqNo: {p.sequence}, "
                f"RBA: {p.offset}, Thread: {t}.",
            )
        for t, p in sorted(cp.current.items()):
            self.emit(
                "OGG-01642",
                Severity.INFO,
                f"BOUNDED RECOVERY: recovery end position: SeqNo: {p.sequence}, "
                f"RBA: {p.offset}, Thread: {t}.",
            )
        self.emit(
            "OGG-01644",
            Severity.INFO,
            f"BOUNDED RECOVERY: COMPLETE: for object pool 1: {self.name} at {restored.path.name}: "
            f"{len(restored.txns)} persisted transaction(s) restored.",
        )
        return restored

    def _br_checkpoint(self, current: dict[int, Position], now_us: int) -> None:
        if self.br is None:
            return
        c = self.capture
        try:
            cp, path = self.br.checkpoint(
                c.cache.open_transactions(),
                c.cache.all_rows,
                current,
                now_us,
                c.last_commit_scn,
                tuple(sorted(c.ignored)),
                now_us=self._now_us(),
            )
        except OSError as exc:
            self.emit(
                "OGG-01574",
                Severity.ERROR,
                f"BR: failed in call to: checkpoint: error code: {exc.errno} ({exc.strerror})",
            )
            if self.br_off_on_failure:
                self.br = None
                c.br_due = None
            return
        stamp = micros_to_datetime(now_us).isoformat(" ")
        self.br_positions = {
            str(t): {
                "begin": _cp(cp.restart.get(t, p), None, None).to_json(),
                "end": _cp(p, None, stamp).to_json(),
            }
            for t, p in cp.current.items()
        }
        start = ", ".join(
            f"SeqNo: {p.sequence}, RBA: {p.offset}, Thread: {t}"
            for t, p in sorted(cp.restart.items())
        )
        end = ", ".join(
            f"SeqNo: {p.sequence}, RBA: {p.offset}, Thread: {t}"
            for t, p in sorted(cp.current.items())
        )
        self.emit(
            "OGG-01738",
            Severity.INFO,
            f"BOUNDED RECOVERY: CHECKPOINT: for object pool 1: {self.name}: start={start}, "
            f"end={end}.",
        )
        self.emit(
            "OGG-01631",
            Severity.INFO,
            f"Bounded Recovery completed successfully. Bounded Recovery checkpoint file: {path}.",
        )

    def br_request(self, args: tuple[str, ...]) -> list[str]:
        """SEND EXTRACT g, BR {BRCHECKPOINT {IMMEDIATE | IN n{M|H} | AT time} |
        BRINTERVAL n{M|H} | BRSTATS | BRSTATUS}."""
        if self.br is None:
            raise lt.RequestError("ERROR: Bounded Recovery is off (BROFF) for this Extract.")
        words = [w.upper() for w in args]
        if not words:
            raise lt.RequestError("ERROR: BR needs BRCHECKPOINT, BRINTERVAL, BRSTATS or BRSTATUS.")
        with self.lock:
            now = self._now_us()
            if words[0] == "BRSTATS" and len(words) == 1:
                return self.br.status_lines()
            if words[0] == "BRSTATUS":
                return self.br.status_lines() + self._br_timeline(args[1:])
            if words[0] == "BRINTERVAL" and len(words) == 2:
                secs = _interval_seconds(words[1])
                self.br.set_interval(secs, now)
                return [f"BR interval set to {words[1]} ({secs} seconds)."]
            if words[0] == "BRCHECKPOINT" and len(words) >= 2:
                if words[1] == "IMMEDIATE":
                    self.br_requested = "now"
                    return ["A Bounded Recovery checkpoint will be taken now."]
                if words[1] == "IN" and len(words) == 3:
                    secs = _interval_seconds(words[2], minimum=60)
                    self.br.next_due_us = now + secs * 1_000_000
                    return [f"A Bounded Recovery checkpoint will be taken in {words[2]}."]
                if words[1] == "AT" and len(words) >= 3:
                    try:
                        when = datetime.fromisoformat(" ".join(args[2:]))
                    except ValueError:
                        raise lt.RequestError(
                            f"ERROR: BRCHECKPOINT AT needs yyyy-mm-dd[ hh:mm[:ss]], "
                            f"not {' '.join(args[2:])!r}."
                        ) from None
                    self.br.next_due_us = datetime_to_micros(when)
                    return [f"A Bounded Recovery checkpoint will be taken at {when}."]
        raise lt.RequestError(f"ERROR: invalid BR request: {' '.join(args)}")

    def _br_timeline(self, rest: tuple[str, ...]) -> list[str]:
        """BRSTATUS's picture (engine.extract.brpicture), and its SVG for ``FILE name.svg``."""
        from engine.extract import brpicture as pic

        assert self.br is not None
        if rest and (len(rest) != 2 or rest[0].upper() != "FILE" or
                     not rest[1].lower().endswith(".svg")):  # fmt: skip
            raise lt.RequestError("ERROR: BRSTATUS takes FILE <name>.svg, or nothing.")
        if not self.capture.last_time_us:
            return ["", "No redo read yet: no Bounded Recovery timeline to draw."]
        tl = pic.timeline_of(
            self.br.directory,
            self.name,
            self.br.interval_s,
            self.br.next_due_on_redo_axis(self._now_us(), self.capture.last_time_us),
            self.capture.cache.open_transactions(),
            self.capture.last_time_us,
        )
        lines = ["", *pic.text_lines(tl)]
        if rest:
            path = Path(rest[1]) if Path(rest[1]).is_absolute() else self.home.root / rest[1]
            try:
                pic.to_svg(tl).write(path)
            except OSError as exc:
                raise lt.RequestError(f"ERROR: cannot write {rest[1]}: {exc.strerror}.") from exc
            lines.append(f"Picture written to {rest[1]}.")
        return lines

    def checkpoint(self) -> None:
        """Make the trail durable, then publish the checkpoint that covers it."""
        with self.lock:
            self._checkpoint()

    def _checkpoint(self) -> None:
        state = self.capture.durable_state()
        self.batch_id += 1
        ts = self.capture.last_time
        stamp = ts.isoformat(" ") if ts else None
        oldest: dict[int, Txn] = {}  # per thread, the open transaction recovery starts at
        for txn in self.capture.cache.open_transactions():
            t = txn.start.thread
            if t not in oldest or txn.start < oldest[t].start:
                oldest[t] = txn
        reads = tuple(
            ReadCheckpoint(
                "TRANLOG",
                *(
                    self._with_file(c)
                    for c in (
                        _cp(self.startup.get(t, p), *self._startup_at.get(t, (None, None))),
                        _recovery_cp(
                            state.recovery.get(t, p), p, oldest.get(t), state.last_scn, stamp
                        ),
                        _cp(p, state.last_scn or None, stamp),
                    )
                ),
            )
            for t, p in sorted(state.current.items())
        )
        write = WriteCheckpoint(
            self.trail_path,
            "EXTTRAIL",
            CpPosition(state.trail.seqno, state.trail.rba),
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
            source_time=ts,
            extra={"capture": state.to_json(), "br": self.br_positions},
            csn=self._csn_state(state.last_commit_scn, state.last_scn, state.last_time_us),
        )
        save_checkpoints(self.home, cps)
        self.checkpoints = cps
        self.last_checkpoint = time.monotonic()

    def _with_file(self, cp: CpPosition) -> CpPosition:
        """``cp`` with the redo log file holding its sequence (SHOWCH "Redo File"); the
        catalog (online logs and archives) is listed again only for a sequence not seen."""
        key = (cp.thread, cp.seqno)
        if key not in self._redo_files:
            self._redo_files.update(
                ((i.thread, i.sequence), str(i.path)) for i in self.capture.catalog.logs()
            )
            self._redo_files.setdefault(key, None)  # not listed (purged): not looked for again
        return replace(cp, redo_file=self._redo_files[key])

    def close(self) -> None:
        """End the run (the group process and the foreground alike). After a cluster fault
        the watchdog found, the driver JVM this process launched is ended too: left alone,
        its shutdown hook waits on the executor that does not answer (about 90 s on a frozen
        one) while the application keeps its cores
        (:func:`engine.cluster.spark.abandon_session`)."""
        try:
            if self.session_start is not None and self.session_start.status() is not None:
                self.report_line("Stopped while starting (Spark session).")
            if self.watch is not None:
                self.watch.close()
            if self.capture.fetch is not None:
                self.capture.fetch.close()
            self.capture.close()
            self.writer.close()
        finally:
            if self.watch is not None and self.watch.fault is not None:
                abandon_session()

    def status_lines(self) -> list[str]:
        c = self.capture
        s = c.stats
        last = micros_to_datetime(c.last_time_us).isoformat(" ") if c.last_time_us else "none"
        pos = ", ".join(
            f"thread {t} seq {p.sequence} rba {p.offset}" for t, p in sorted(c.positions.items())
        )
        behind = any(c.positions.get(t, p) < p for t, p in self.recovery_end.items())
        phase = "In recovery[1]" if behind else "Recovery complete"
        return [
            f"EXTRACT {self.name}: RUNNING",
            f"  Current status: {phase}",
            f"  Redo read: {pos} (last record time {last}, SCN {c.last_scn})",
            f"  Open transactions: {len(c.cache)}; committed: {s.transactions}; "
            f"rolled back: {s.rollbacks}",
            f"  Trail {self.trail_path}: {s.trail_records} records written, position "
            f"{self.writer.position.seqno}/{self.writer.position.rba}",
        ]


def open_output_trail(
    home: Home,
    model: ParamFile,
    group: GroupDef | None,
    name: str,
    db_name: str,
    *,
    durable: bool,
    emit: Emit,
) -> tuple[TrailWriter, str, int]:
    """The Extract's output trail opened for appending (recovering a partly written
    transaction, said as OGG-01740): the writer, the trail's path and its megabytes."""
    trail = model.trails[0]
    added = next(
        (t for t in (group.trails if group else ()) if _same_trail(t.path, trail.path)),
        None,
    )
    mb = added.megabytes if added else None
    release_name = trail.format_release or (added.format_release if added else None)
    megabytes = mb or trail.megabytes or DEFAULT_MEGABYTES
    target = Path(trail.path) if Path(trail.path).is_absolute() else home.root / trail.path
    target.parent.mkdir(parents=True, exist_ok=True)
    writer = TrailWriter.open(
        target,
        megabytes=megabytes,
        header_info={"Producer": "ggsci", "GroupName": name, "DbName": db_name},
        durable=durable,
        checksum=trail.checksum,
        recovery=RecoveryMode.of_option(model.recovery_options),
        release=parse_release(release_name) if release_name else None,
        objectdefs=trail.objectdefs,
    )
    rec = writer.recovery
    if rec is not None and rec.action != "none":
        emit(
            "OGG-01740",
            Severity.INFO,
            f"Recovered trail {trail.path}: {rec.action} {rec.partial_records} record(s) "
            "of a partly written transaction.",
        )
    return writer, trail.path, megabytes


def _points_known(
    reads: tuple[ReadCheckpoint, ...], positions: dict[int, Position]
) -> dict[int, tuple[int | None, str | None]]:
    """The SCN and time of each of ``positions`` (per thread) that is a saved checkpoint's
    current position: SHOWCH's Startup Checkpoint shows them."""
    out: dict[int, tuple[int | None, str | None]] = {}
    for r in reads:
        p = positions.get(r.current.thread)
        if p is not None and (p.sequence, p.offset) == (r.current.seqno, r.current.rba):
            out[r.current.thread] = (r.current.scn, r.current.timestamp)
    return out


BR_OFF_ON_FAILURE = (
    "BOUNDED RECOVERY: BR not being used for restore. Extract will revert to normal recovery "
    "and, as BROFFONFAILURE asks, leave Bounded Recovery off for this run."
)
BR_NOT_USED = (
    "BOUNDED RECOVERY: BR not being used for restore. Extract will revert to normal recovery "
    "for this recovery and then turn on Bounded Recovery again."
)


def _interval_seconds(text: str, minimum: int = 20 * 60) -> int:
    m = re.fullmatch(r"(\d+)([MH])", text.upper())
    if not m:
        raise lt.RequestError(f"ERROR: {text} is not an interval like 20M or 4H.")
    secs = int(m.group(1)) * (60 if m.group(2) == "M" else 3600)
    if not minimum <= secs <= 96 * 3600:
        raise lt.RequestError(f"ERROR: {text} is outside {minimum // 60}M to 96H.")
    return secs


def _cp(p: Position, scn: int | None, stamp: str | None) -> CpPosition:
    return CpPosition(seqno=p.sequence, rba=p.offset, scn=scn, timestamp=stamp, thread=p.thread)


def _recovery_cp(
    rec: Position, current: Position, txn: Txn | None, last_scn: int, stamp: str | None
) -> CpPosition:
    """The recovery checkpoint with its SCN and timestamp (SHOWCH): those of the oldest open
    transaction it starts at, or of the last record read when nothing is open."""
    if txn is not None and txn.start == rec:
        return _cp(rec, txn.start_scn, micros_to_datetime(txn.start_time_us).isoformat(" "))
    if rec == current:
        return _cp(rec, last_scn or None, stamp)
    return _cp(rec, None, None)


def _same_trail(a: str, b: str) -> bool:
    return normalize_trail(a) == normalize_trail(b)


def _split_bytes() -> int:
    """``GGSCI_EXTRACT_SPLIT_MB`` (tuning and benchmarks: smaller batches; a whole number of
    MB from 1), else the default."""
    split_mb = os.environ.get("GGSCI_EXTRACT_SPLIT_MB")
    if split_mb and split_mb.isdigit() and int(split_mb) >= 1:
        return int(split_mb) << 20
    return DEFAULT_SPLIT_BYTES
