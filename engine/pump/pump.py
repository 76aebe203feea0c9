"""The pump's copy loop: whole transactions from the source trail to the remote trail.

Guarantees (the same as Extract's toward its trail):

* Only whole transactions reach the remote trail (:mod:`engine.trail.txreader`), in source
  order; records of tables no TABLE statement selects are left out (PASSTHRU: records are
  copied as they are, no mapping).
* A checkpoint (read position = end of the last source transaction copied; write position)
  is published only with a position returned by ``TrailWriter.sync()``.
* Restart after a crash (kill -9) duplicates nothing: the remote trail is opened with
  append-mode recovery (a partly copied transaction is closed by a RestartAbend marker; cut
  away with RECOVERYOPTIONS OVERWRITEMODE), then the whole transactions the
  remote trail holds after the published write checkpoint are counted; that many copied
  transactions are skipped when reading again from the published read checkpoint. The last
  one skipped must be the remote trail's last transaction (LOGCSN and TRANID), which is
  reported, and any disagreement abends (OGG-01496) rather than guessing.
* A remote trail that ends before the published write checkpoint (a file cut short or
  removed) lost copied transactions: the pump resumes from the newest checkpoint (the
  current one or its history) whose write position the remote trail still reaches, so
  the lost transactions are copied again once (OGG-01741); with no such checkpoint left it
  abends (OGG-01496) naming the file and the positions.
* A read checkpoint past the end of its source trail file abends (OGG-01705); a source
  record that fails its checksum, or cannot be decoded, abends (OGG-01184) naming the file
  and the RBA.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Final, Protocol

from engine.heartbeat.flow import RoutingRule
from engine.heartbeat.names import for_capture
from engine.heartbeat.settings import utc_now
from engine.home.checkpoints import (
    Checkpoints,
    Position,
    WriteCheckpoint,
    load_checkpoints,
)
from engine.home.groups import DEFAULT_MEGABYTES, GroupDef, normalize_trail
from engine.home.layout import Home, in_home
from engine.pump import PumpError
from engine.pump.rowoptions import PumpRowOptions, RowOptionError
from engine.pump.sink import TrailSink, TrailSpec, local_opener
from engine.runtime.events import Severity
from engine.runtime.loop import GroupRun
from engine.runtime.reportcount import ReportCounter
from engine.runtime.stats import StatsBook, counted
from engine.trail.codec import encode_record
from engine.trail.errors import ReleaseError, TrailError
from engine.trail.files import TrailName
from engine.trail.layout import TransInd
from engine.trail.model import TableDef, TrailPosition, TrailRecord, valid_datetime
from engine.trail.reader import (
    position_problem,
    read_error_text,
)
from engine.trail.readmark import KEY as MARK
from engine.trail.readmark import mark_problem, publish_read
from engine.trail.releases import release_of_level
from engine.trail.txreader import Transaction, TransactionReader
from params.models import (
    BoundedRecovery,
    CacheMgr,
    ParamFile,
    TranlogOptions,
    WarnLongTrans,
)

Emit = Callable[[str, Severity, str], None]


class RecordHook(Protocol):
    """Per-record step between reading and writing (heartbeat routing, seed 001)."""

    def owns(self, table: str) -> bool:
        """Records of ``table`` are copied whatever the TABLE statements select."""
        ...

    def __call__(self, record: TrailRecord, definition: TableDef | None) -> TrailRecord | None:
        """The record to write (maybe rewritten), or None to drop it."""
        ...


class Pump(GroupRun):
    """One pump run over a home, its parameter file and its group definition."""

    def __init__(
        self,
        home: Home,
        model: ParamFile,
        group: GroupDef,
        emit: Emit,
        *,
        durable: bool = True,
        clock: Callable[[], datetime] = datetime.now,
        hook: RecordHook | None = None,
        opener: Callable[[TrailSpec], TrailSink] | None = None,
        stats: StatsBook | None = None,
        report_line: Callable[[str], None] | None = None,
    ) -> None:
        """``opener`` opens the output trail (default: on this host; the runner passes the
        Collector's for RMTHOST, :mod:`engine.pump.remote`)."""
        if not group.source_path:
            raise PumpError("OGG-01044", f"EXTRACT {group.name} has no EXTTRAILSOURCE trail.")
        if not model.trails:
            raise PumpError("OGG-01044", "No RMTTRAIL or EXTTRAIL in the parameter file.")
        self.home = home
        self.model = model
        self.group = group
        self.name = group.name
        self.emit = emit
        self.clock = clock
        self.hook: RecordHook = hook or RoutingRule(
            for_capture(home.globals_file), group.name, utc_now
        )
        self.row_options = PumpRowOptions(model, group.name, clock)  # its own TABLE options
        self.source_path = group.source_path
        trail = model.trails[0]
        self.trail_path = trail.path
        self.trail_kind = "RMTTRAIL" if trail.remote else "EXTTRAIL"
        self.stats_book = stats or StatsBook(clock, output=trail.path)
        # REPORTCOUNT: the records copied, as the Extract counts the records it writes
        self.report_counter = ReportCounter(model.report_count, report_line or _no_line, clock)
        self.at_eof = False  # the last poll found nothing (LAG: 'At EOF')
        mb = next(
            (
                t.megabytes
                for t in group.trails
                if normalize_trail(t.path) == normalize_trail(trail.path)
            ),
            None,
        )
        self.megabytes = mb or trail.megabytes or DEFAULT_MEGABYTES
        self.checkpoints = load_checkpoints(home, "EXTRACT", self.name)
        self.spec = TrailSpec(
            trail.path,
            group.name,
            self.megabytes,
            checksum=trail.checksum,
            recovery=model.recovery_options or "APPENDMODE",
            release=trail.format_release,
            objectdefs=trail.objectdefs,
            durable=durable,
        )
        try:
            self.writer: TrailSink = (opener or local_opener(home))(self.spec)
        except TrailError as exc:
            raise PumpError("OGG-01031", f"Cannot open {trail.path}: {exc}") from exc
        # Seed 003: a pump's output is of its input's release unless FORMAT RELEASE says
        # otherwise (then it converts: an older release drops the DDR/TDR records).
        self.follow_input_release = trail.format_release is None
        try:
            cps = self._resume_from(self.checkpoints)
            read = cps.reads[0].current if cps and cps.reads else Position()
            start = TrailPosition(read.seqno, read.rba)
            source = in_home(home, self.source_path)
            self.source_trail = TrailName.parse(source)
            self.copied_csn: int | None = None
            self.skip = 0
            self.skip_until: tuple[str | None, ...] = ()
            problem = position_problem(TrailName.parse(source), start)
            if problem is None and cps is not None and cps is self.checkpoints:
                self._check_mark(cps, TrailName.parse(source), start)
            if problem is not None:
                start = self._past_the_end(TrailName.parse(source), start, problem)
                read = Position(seqno=start.seqno, rba=start.rba)
            else:
                self.skip, self.skip_until = self._already_copied(cps)
        except TrailError as exc:
            self.writer.close()
            raise PumpError("OGG-01184", read_error_text(exc)) from exc
        except PumpError:
            self.writer.close()
            raise
        self.startup = read
        for name in _capture_only(model):
            emit(
                "OGG-10144",
                Severity.WARNING,
                f"Parameter {name} is not used by a data pump: it copies the records the "
                "Extract wrote and reads no redo.",
            )
        rec = self.writer.recovery
        if rec is not None and rec.action != "none":
            emit(
                "OGG-01740",
                Severity.INFO,
                f"Recovered trail {trail.path}: {rec.action} {rec.partial_records} record(s) "
                "of a partly copied transaction.",
            )
        if self.skip:
            emit(
                "OGG-01516",
                Severity.INFO,
                f"{self.skip} transaction(s) after the checkpoint are already in "
                f"{trail.path}; they are not copied again.",
            )
        self.reader = TransactionReader(source, start)
        self.batch_id = cps.batch_id if cps else 0
        self.copied_transactions = 0
        self.copied_records = 0
        self.last_io_us = 0
        self.last_checkpoint = 0.0
        self.dirty = True

    def _past_the_end(self, source: TrailName, start: TrailPosition, problem: str) -> TrailPosition:
        """The read checkpoint is past the end of its source file, which is there (cut
        short since), and a later file exists: the source Extract captured the lost data
        again into it. Go on from that file, skipping what committed at or before the last
        transaction the remote trail holds (source LOGCSNs grow with commit order), so what
        was copied already is not copied twice. Otherwise abend (OGG-01705)."""
        last = self.writer.recovery.last_transaction if self.writer.recovery else None
        csn = last.logcsn if last is not None else None
        later = [s for s in source.seqnos() if s > start.seqno]
        if not source.file(start.seqno).exists() or not later or not (csn and csn.isdigit()):
            raise PumpError("OGG-01705", problem)
        self.copied_csn = int(csn)
        self.emit(
            "OGG-01741",
            Severity.WARNING,
            f"{problem} Going on from Seqno {later[0]}, RBA 0 of {self.source_path}: "
            f"transactions committed at or before LOGCSN {csn} (the last one in "
            f"{self.trail_path}) are not copied again.",
        )
        return TrailPosition(later[0], 0)

    def _check_mark(self, cps: Checkpoints, source: TrailName, start: TrailPosition) -> None:
        """The read position against its input file (:mod:`engine.trail.readmark`): a
        position the pump did not leave there, and ADD or ALTER did not set, is OGG-01705."""
        if cps.altered:
            return
        problem = mark_problem(
            cps.extra.get(MARK), source.file(start.seqno), start.seqno, start.rba
        )
        if problem is not None:
            raise PumpError(
                "OGG-01705",
                f"Checkpoint file dirchk/{self.name}.cpe does not match input trail "
                f"{self.source_path}: {problem}. Reposition with ALTER EXTRACT {self.name}, "
                "EXTSEQNO, EXTRBA if it is to read there.",
            )

    def _write_of(self, cps: Checkpoints) -> TrailPosition | None:
        for w in cps.writes:
            if normalize_trail(w.trail) == normalize_trail(self.trail_path):
                return TrailPosition(w.position.seqno, w.position.rba)
        return None

    def _resume_from(self, cps: Checkpoints | None) -> Checkpoints | None:
        """The checkpoint to resume from: the current one, unless the remote trail ends
        before its write position; then the newest one of its history that the remote
        trail reaches (the transactions lost are copied again), or PumpError."""
        written = self._write_of(cps) if cps is not None else None
        if cps is None or written is None:
            return cps
        lost = self.writer.gap(written, f"{self.trail_kind} {self.trail_path}")
        if lost is None:
            return cps
        for older in cps.history:
            at = self._write_of(older)
            if at is not None and self.writer.reaches(at) and older.reads:
                read = older.reads[0].current
                self.emit(
                    "OGG-01741",
                    Severity.WARNING,
                    f"{lost}. Copying again from the checkpoint of {older.updated} (source "
                    f"trail {self.source_path} Seqno {read.seqno}, RBA {read.rba}).",
                )
                return replace(older, history=cps.history, batch_id=cps.batch_id)
        raise PumpError(
            "OGG-01496",
            f"{lost}. No checkpoint left is from before the missing data, so it cannot be "
            "copied again: restore the trail file, or reposition with ALTER EXTRACT.",
        )

    def _already_copied(self, cps: Checkpoints | None) -> tuple[int, tuple[str | None, ...]]:
        """How many whole transactions the remote trail holds after the write checkpoint,
        and the (LOGCSN, TRANID) of its last one."""
        write = next(
            (
                w
                for w in (cps.writes if cps else ())
                if normalize_trail(w.trail) == normalize_trail(self.trail_path)
            ),
            None,
        )
        if write is None or self.writer.recovery is None:
            return 0, ()
        last = self.writer.recovery.last_transaction
        if last is None:
            return 0, ()
        count = self.writer.transactions_after(
            TrailPosition(write.position.seqno, write.position.rba)
        )
        return count, (last.logcsn, last.tranid)

    # -- copying --------------------------------------------------------------------------
    def selected(self, record: TrailRecord) -> bool:
        if not self.model.tables:
            return True
        owner, _, name = record.table.rpartition(".")
        return self.model.captured(owner, name) is not None

    def poll(self, limit: int | None = 1000) -> int:
        """Copy the whole transactions available (at most ``limit``); return how many were
        read from the source trail."""
        seen = 0
        try:
            for txn in self.reader.poll(limit):
                seen += 1
                self._copy(txn)
        except TrailError as exc:
            raise PumpError("OGG-01184", read_error_text(exc)) from exc
        if seen:
            self.dirty = True
        self.report_counter.tick(self.copied_records)
        return seen

    def _copy(self, txn: Transaction) -> None:
        hook = self.hook
        out = [r for r in txn.records if self.selected(r) or hook.owns(r.table)]
        out = [h for r in out if (h := hook(r, self.reader.tables.get(r.table))) is not None]
        try:
            out = self.row_options.apply(txn, out, self.reader.tables)
        except RowOptionError as exc:
            raise PumpError("OGG-00366", exc.text) from exc
        self.last_io_us = txn.io_time_us or self.last_io_us
        if not out:
            return
        if self.copied_csn is not None:
            csn = txn.csn
            if csn is not None and csn <= self.copied_csn:
                return  # copied before its source file was cut and written again
            self.copied_csn = None
        if self.skip:
            self.skip -= 1
            if self.skip == 0 and self.skip_until and (txn.logcsn, txn.tranid) != self.skip_until:
                raise PumpError(
                    "OGG-01496",
                    f"Cannot resume {self.trail_path}: its last transaction (LOGCSN, TRANID) "
                    f"{self.skip_until} is not the source trail's {(txn.logcsn, txn.tranid)}.",
                )
            return
        header = self.reader.header
        if self.follow_input_release and header is not None:
            release = release_of_level(header.compatibility)
            if release is not None and release != self.writer.release:
                self.writer.set_release(release)
        for table in {r.table for r in out}:
            definition = self.reader.tables.get(table)
            if definition is not None:
                self.writer.define_table(definition)
        out = _retag(txn, out)
        try:
            self.writer.append_many([encode_record(r) for r in out])
        except ReleaseError as exc:
            raise PumpError("OGG-01031", f"Cannot write {self.trail_path}: {exc.message}") from exc
        self.copied_transactions += 1
        self.copied_records += len(out)
        self.stats_book.add(counted(Counter((r.table, r.op_name) for r in out)))

    @property
    def checkpoint_secs(self) -> int:
        return self.model.checkpoint_secs

    def between(self) -> None:
        """Keep the link to a Collector alive while there is nothing to send."""
        self.writer.idle()

    def checkpoint(self) -> None:
        """Make the remote trail durable, then publish the positions that cover it."""
        if self.skip:
            return  # the write position does not yet match the read position
        if not self.dirty and self.checkpoints is not None and not self.checkpoints.altered:
            self.last_checkpoint = time.monotonic()
            return
        durable = self.writer.sync()
        self.batch_id += 1
        now = self.clock()
        stamp = valid_datetime(self.last_io_us) if self.last_io_us else None
        pos = self.reader.position
        current = Position(
            seqno=pos.seqno,
            rba=pos.rba,
            timestamp=stamp.isoformat(" ") if stamp else None,
        )
        write = WriteCheckpoint(
            self.trail_path,
            self.trail_kind,
            Position(seqno=durable.seqno, rba=durable.rba),
            self.megabytes,
        )
        cps = publish_read(
            self.home, self.checkpoints, self.name, "EXTRACT",
            source_path=self.source_path, source_file=self.source_trail.file(pos.seqno),
            startup=self.startup, at=current, write=write, batch_id=self.batch_id, now=now,
            source_time=stamp,
        )  # fmt: skip
        self.checkpoints = cps
        self.dirty = False
        self.last_checkpoint = time.monotonic()

    def close(self) -> None:
        self.reader.close()
        self.writer.close()

    def status_lines(self) -> list[str]:
        r = self.reader.position
        w = self.writer.position
        return [
            f"EXTRACT {self.name}: RUNNING (data pump)",
            f"  Source trail {self.source_path}: read position {r.seqno}/{r.rba}",
            f"  {self.trail_kind} {self.trail_path}: {self.copied_transactions} transactions, "
            f"{self.copied_records} records copied, position {w.seqno}/{w.rba}",
        ]


def _retag(txn: Transaction, records: list[TrailRecord]) -> list[TrailRecord]:
    """TransInd and the first-record tokens of a transaction whose records were filtered:
    the copy is again a well-formed transaction (first/middle/last or whole) whose first
    record carries the source transaction's LOGCSN and TRANID."""
    n = len(records)
    out = []
    for i, r in enumerate(records):
        ind = TransInd.of(i, n)
        if r.trans_ind != ind:
            r = replace(r, trans_ind=ind)
        if i == 0 and (r.logcsn, r.tranid) != (txn.logcsn, txn.tranid):
            r = replace(r, logcsn=txn.logcsn, tranid=txn.tranid)
        out.append(r)
    return out


#: The parameters that shape what an Extract captures from redo, each with how a file
#: shows it is there: a pump reads a trail, so it has no use for them (it says so at start).
_REDO_ONLY: Final[tuple[tuple[str, Callable[[ParamFile], bool]], ...]] = (
    ("TRANLOGOPTIONS", lambda m: m.tranlog != TranlogOptions()),
    ("BR", lambda m: m.br != BoundedRecovery()),
    ("WARNLONGTRANS", lambda m: m.warn_long_trans != WarnLongTrans()),
    ("CACHEMGR", lambda m: m.cachemgr != CacheMgr()),
    ("FETCHOPTIONS", lambda m: bool(m.fetch_options)),
    ("GETUPDATEBEFORES", lambda m: any(t.get_update_befores for t in m.tables)),
    ("UPDATERECORDFORMAT", lambda m: m.update_record_format is not None),
    ("NOCOMPRESSDELETES", lambda m: any(t.full_deletes for t in m.tables)),
)


def _no_line(_text: str) -> None:
    pass


def _capture_only(model: ParamFile) -> list[str]:
    """The redo-capture parameters in a pump's file (:data:`_REDO_ONLY`)."""
    return [name for name, present in _REDO_ONLY if present(model)]
