"""A Replicat run: read whole transactions from the trail, apply them to the target in
groups of about GROUPTRANSOPS operations per target transaction, record progress in the
checkpoint table in that same transaction, then publish the file checkpoint (INFO, LAG).

Before a record is applied its MAP decides whether it is: IGNOREINSERTS / IGNOREUPDATES /
IGNOREDELETES skip operations, WHERE and FILTER test the record (a FILTER with RAISEERROR n
treats a record that fails it as error n). Errors while applying a record go through the
REPERROR rules in force for its MAP (its own, then the file's before it): the rule for the
error's number, else ``DEFAULT``, else ABEND. ABEND rolls back the group and abends
(OGG-01004 with the database's message); DISCARD writes the record to the discard file and
goes on; IGNORE goes on; RETRYOP applies the record again, up to MAXRETRIES times (default
1) DELAYSECS apart, then abends; TRANSDISCARD rolls back the record's whole source
transaction and writes all its records to the discard file (the transactions grouped with
it are applied again one by one). A
failure the database raises (rather than one detected from a row count) aborts the group on
PostgreSQL, so the group is rolled back and applied again one transaction at a time, each
record in a savepoint, where the rule can act on the one record.

Where it starts: the checkpoint table's SEQNO/RBA when the group has a row there (it is
written with the data, so it is exact), else the file checkpoint (ADD/ALTER REPLICAT
EXTSEQNO/EXTRBA). Transactions the watermarks say were applied are skipped
(:meth:`engine.replicat.progress.Progress.applied`). A start position past the end of its
trail file abends (OGG-01705) rather than waiting there forever; a record that fails its
checksum or cannot be decoded abends (OGG-01184, the file and the RBA) once the whole
transactions before it are applied.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime

from engine.expr.rowrule import LOGICAL_OPS, Process, RowEnv
from engine.heartbeat.apply import HeartbeatApplier
from engine.heartbeat.names import for_capture
from engine.heartbeat.settings import utc_now
from engine.home.checkpoints import (
    Position,
    load_checkpoints,
)
from engine.home.groups import GroupDef
from engine.home.layout import Home, in_home
from engine.replicat import ApplyError, ReplicatError
from engine.replicat.apply import Applier, is_before_image
from engine.replicat.discard import DiscardFile
from engine.replicat.mapping import Mapper, RecordEnv, TableMap
from engine.replicat.progress import CheckpointTable, Progress, group_key
from engine.runtime.events import Severity
from engine.runtime.loop import GroupRun
from engine.runtime.reportcount import ReportCounter
from engine.runtime.stats import StatsBook, op_of
from engine.targets import TargetError
from engine.targets.base import Target
from engine.targets.resolve import open_target, target_spec
from engine.trail.errors import TrailError
from engine.trail.files import TrailName
from engine.trail.model import TrailPosition, TrailRecord, valid_datetime
from engine.trail.reader import position_problem, read_error_text
from engine.trail.readmark import KEY as MARK
from engine.trail.readmark import mark_problem, publish_read
from engine.trail.txreader import Transaction, TransactionReader
from params.models import ParamFile, RepError

Emit = Callable[[str, Severity, str], None]
_GLOBALS_CPT = re.compile(r"^\s*CHECKPOINTTABLE\s+(\S+)", re.IGNORECASE | re.MULTILINE)
#: The REPERROR responses the Replicat carries out (params.catalog.REPERROR_ACTS must be
#: the same set: tests/params/test_acts_or_warns.py); others are run as ABEND.
SUPPORTED_RESPONSES = frozenset({"ABEND", "DISCARD", "IGNORE", "RETRYOP", "TRANSDISCARD"})


def checkpoint_table_name(home: Home, group: GroupDef) -> str | None:
    """ADD REPLICAT ... CHECKPOINTTABLE, else CHECKPOINTTABLE of GLOBALS."""
    if group.checkpoint_table:
        return group.checkpoint_table
    try:
        m = _GLOBALS_CPT.search(home.globals_file.read_text())
    except OSError:
        return None
    return m.group(1) if m else None


class ReplicatRun(GroupRun):
    def __init__(
        self,
        home: Home,
        model: ParamFile,
        group: GroupDef,
        emit: Emit,
        *,
        target: Target | None = None,
        clock: Callable[[], datetime] = datetime.now,
        heartbeat_clock: Callable[[], datetime] = utc_now,
        report_line: Callable[[str], None] | None = None,
    ) -> None:
        if not group.source_path:
            raise ReplicatError("OGG-01044", f"REPLICAT {group.name} has no EXTTRAIL.")
        self.home = home
        self.model = model
        self.group = group
        self.name = group.name
        self.emit = emit
        self.clock = clock
        rules = dict.fromkeys([*model.reperrors, *(r for t in model.tables for r in t.reperrors)])
        for rule in rules:
            if rule.response.upper() not in SUPPORTED_RESPONSES:
                emit(
                    "OGG-01706",
                    Severity.WARNING,
                    f"REPERROR ({rule.error}, {rule.response}) is not supported; "
                    "ABEND is used for that error.",
                )
        if target is None:
            spec = target_spec(model)
            if spec is None:
                raise ReplicatError(
                    "OGG-00664",
                    "No target database: add TARGETDB <SQLite file | postgresql:// URL> "
                    "or USERID user@database to the parameter file.",
                )
            try:
                target = open_target(home, spec)
            except TargetError as exc:
                raise ReplicatError("OGG-00664", exc.message) from exc
        self.target = target
        self.stats_book = StatsBook(clock)
        # REPORTCOUNT: the trail records read and processed
        self.report_counter = ReportCounter(
            model.report_count, report_line or (lambda _text: None), clock
        )
        self.at_eof = False  # the last poll found nothing (LAG: 'At EOF')
        self.stats_book.verb = "Replicating"
        self._stat_rows: list[tuple[str, str, str, int]] = []  # this target transaction's
        self.mapper = Mapper(model, target)
        self.applier = Applier(target)
        self._stats = _Stats(self)
        self.process = Process(group.name, "REPLICAT", home=str(home.root))
        self.sleep: Callable[[float], None] = time.sleep
        self.heartbeat = HeartbeatApplier(
            target, for_capture(home.globals_file), group.name, heartbeat_clock, emit
        )
        self.heartbeat_clock = heartbeat_clock
        self._read_at: dict[int, datetime] = {}  # heartbeat transactions: when they were read
        cpt_name = checkpoint_table_name(home, group)
        self.cptable = (
            CheckpointTable(
                target, cpt_name, group.name, group_key(str(home.root), group.name), str(home.root)
            )
            if cpt_name
            else None
        )
        if self.cptable is not None and self.cptable.upgraded is not None:
            kept = self.cptable.upgraded
            emit("OGG-02545", Severity.INFO, f"Checkpoint table {cpt_name} upgraded: CREATE_TS "
                 f"now defaults to its creation time ({kept} row(s) kept).")  # fmt: skip
        if self.cptable is None:
            emit(
                "OGG-02544",
                Severity.WARNING,
                f"REPLICAT {group.name} has no checkpoint table: progress is kept in the "
                "checkpoint file only, so a crash may apply a transaction twice.",
            )
        self.checkpoints = load_checkpoints(home, "REPLICAT", group.name)
        cps = self.checkpoints
        read = cps.reads[0].current if cps and cps.reads else Position()
        self.startup = read
        progress = self.cptable.load() if self.cptable else None
        from_file = not (progress is not None and (cps is None or not cps.altered))
        if not from_file:
            assert progress is not None
            start = progress.position
            emit(
                "OGG-06506",
                Severity.INFO,
                f"Checkpoint table {cpt_name}: restarting at Seqno {start.seqno}, RBA "
                f"{start.rba}, low watermark CSN {progress.csn} "
                f"({len(progress.xids)} transaction(s) at it).",
            )
        else:
            start = TrailPosition(read.seqno, read.rba)
            progress = Progress(start, progress.csn if progress else None,
                                progress.xids if progress else ())  # fmt: skip
        self.progress = progress
        source = in_home(home, group.source_path)
        self.source_trail = TrailName.parse(source)
        problem = position_problem(self.source_trail, start)
        if problem is None and cps is not None and not cps.altered and from_file:
            # the read position of the checkpoint file against its trail (readmark)
            moved = mark_problem(
                cps.extra.get(MARK), self.source_trail.file(start.seqno), start.seqno, start.rba
            )
            if moved is not None:
                problem = (
                    f"Checkpoint file dirchk/{group.name}.cpr does not match trail "
                    f"{group.source_path}: {moved}. Reposition with ALTER REPLICAT "
                    f"{group.name}, EXTSEQNO, EXTRBA if it is to read there."
                )
        if problem is not None:
            target.close()
            raise ReplicatError("OGG-01705", problem)
        self.reader = TransactionReader(source, start)
        d = model.discard
        self.discard = DiscardFile(
            in_home(home, d.path) if d else home.dirrpt / f"{group.name}.dsc",
            append=bool(d and d.append),
            megabytes=d.megabytes if d else None,
            max_bytes=d.max_bytes if d else None,
        )
        self._discards: list[tuple[TrailRecord, int, str, TrailPosition, str]] = []
        self.batch_id = cps.batch_id if cps else 0
        self.transactions = 0
        self.skipped = 0
        self.ignored = 0
        self.filtered = 0  # records WHERE, FILTER or IGNORE<op>S left out
        self.before_images = 0  # before-image records, not applied (apply.is_before_image)
        self.last_io_us = 0
        self.last_checkpoint = 0.0
        self.dirty = True

    # -- applying -----------------------------------------------------------------------
    def poll(self) -> int:
        """Apply what the trail holds now, in groups; return the transactions read."""
        seen = 0
        group: list[Transaction] = []
        ops = 0
        try:
            for txn in self.reader.poll():
                seen += 1
                group.append(txn)
                if any(self.heartbeat.owns(r.table) for r in txn.records):
                    self._read_at[id(txn)] = self.heartbeat_clock()
                ops += len(txn.records)
                if ops >= self.model.group_trans_ops:
                    self._apply_group(group)
                    group, ops = [], 0
        except TrailError as exc:  # the whole transactions before the bad record, then abend
            if group:
                self._apply_group(group)
            self.dirty = True
            self.checkpoint()
            raise ReplicatError("OGG-01184", read_error_text(exc)) from exc
        if group:
            self._apply_group(group)
        if seen:
            self.dirty = True
        self.report_counter.tick(self.reader.records_read)
        return seen

    def _apply_group(self, txns: list[Transaction]) -> None:
        try:
            self._apply(txns, savepoints=False)
        except (_Retry, _TransDiscard):
            self.target.rollback()
            for txn in txns:  # one transaction per target transaction, record by record
                try:
                    self._apply([txn], savepoints=True)
                except _TransDiscard as exc:
                    self._discard_transaction(txn, exc)
        finally:
            for txn in txns:
                self._read_at.pop(id(txn), None)

    def _apply(self, txns: list[Transaction], *, savepoints: bool) -> None:
        progress = self.progress
        applied = skipped = 0
        counted = (dict(self.applier.counts), self.applier.collisions, self.ignored,
                   self.filtered)  # fmt: skip
        self._discards = []
        self._stat_rows = []
        self.target.begin()
        try:
            for txn in txns:
                if progress.applied(txn):
                    skipped += 1
                    progress = replace(progress, position=txn.end)
                    continue
                for i, record in enumerate(txn.records):
                    at = txn.positions[i] if txn.positions else txn.start
                    self._apply_record(txn, record, savepoints, at)
                applied += 1
                progress = _after(progress, txn)
            self._commit_batch(progress)
            if self.cptable is not None:
                self.cptable.save(progress, self.clock())
            self.target.commit()
        except BaseException:
            self.target.rollback()
            counts, self.applier.collisions, self.ignored, self.filtered = counted
            self.applier.counts.update(counts)  # statistics count committed work only
            raise
        for record, number, text, start, target in self._discards:
            self.discard.write(
                self.clock(), record, self.reader.tables.get(record.table), number, text,
                start, target,
            )  # fmt: skip
        self._discards = []
        self.stats_book.add(self._stat_rows)  # committed work only
        self._stat_rows = []
        self.progress = progress
        self.transactions += applied
        self.skipped += skipped
        if txns:
            self.last_io_us = txns[-1].io_time_us or self.last_io_us

    def _commit_batch(self, progress: Progress) -> None:
        """Commit what the group's records wrote outside the target transaction (a target
        that is not the checkpoint database: engine.targets.lake), recording ``progress``
        there; called before the checkpoint table's row is written and committed."""

    def _discard_transaction(self, txn: Transaction, exc: _TransDiscard) -> None:
        """REPERROR TRANSDISCARD: the transaction's records to the discard file, its end
        to the checkpoint table (in one target transaction), nothing of it applied."""
        progress = _after(self.progress, txn)
        self.target.begin()
        try:
            if self.cptable is not None:
                self.cptable.save(progress, self.clock())
            self.target.commit()
        except BaseException:
            self.target.rollback()
            raise
        for record in txn.records:
            self.discard.write(
                self.clock(), record, self.reader.tables.get(record.table), exc.number,
                exc.text, txn.start, exc.target,
            )  # fmt: skip
        self.progress = progress
        self.last_io_us = txn.io_time_us or self.last_io_us

    def _apply_record(
        self, txn: Transaction, record: TrailRecord, savepoints: bool, at: TrailPosition
    ) -> None:
        definition = self.reader.tables.get(record.table)
        if self.heartbeat.owns(record.table):  # seed 001: not MAP but the automatic mapping
            self.heartbeat.apply(
                record,
                definition,
                logcsn=txn.logcsn,
                low_watermark=None if self.progress.csn is None else str(self.progress.csn),
                read_at=self._read_at.get(id(txn)),
            )
            return
        for m in self.mapper.maps_for(record.table, definition):
            self._apply_mapped(txn, record, m, savepoints, at)

    def _apply_mapped(
        self,
        txn: Transaction,
        record: TrailRecord,
        m: TableMap,
        savepoints: bool,
        at: TrailPosition,
    ) -> None:
        if is_before_image(record) and not (m.insert_all and m.get_befores):
            self.before_images += 1  # not a change (apply.py): skipped, not filtered
            return
        kind = LOGICAL_OPS.get(record.io_type)
        if kind in m.ignore_ops:
            self.filtered += 1
            return
        row_rule = m.rule
        env: RowEnv | None = None
        if row_rule is not None:
            # what COLMAP expressions, WHERE and FILTER may ask about the record, at ``at``
            # in the trail (@GETENV ('RECORD', 'FILESEQNO' / 'FILERBA')); the log position
            # (GGHEADERINFO LOGRBA / LOGPOSITION) is the one its header carries
            env = RecordEnv(row_rule, record, txn, at, self.process, self._stats, self.clock)
            if m.selects and not self._selected(txn, record, m, env, kind):
                return
        attempt = 0
        while True:
            if savepoints:
                self.target.savepoint("gg_rec")
            failure: tuple[int, str] | None = None
            try:
                self.applier.apply(m, record, env)
                op = op_of(record.op_name)
                if op is not None:
                    self._stat_rows.append((record.table, m.target.name, op, 1))
            except ApplyError as exc:
                if savepoints:
                    self.target.rollback_to("gg_rec")
                failure = (exc.number, exc.text)
            except TargetError as exc:
                if not savepoints:
                    raise _Retry from exc
                self.target.rollback_to("gg_rec")
                failure = (exc.number, exc.message)
            if savepoints:
                self.target.release("gg_rec")
            if failure is None:
                return
            rule = self.rule(failure[0], m.reperrors)
            if rule is not None and rule.response == "RETRYOP":
                attempt += 1
                if attempt <= (rule.max_retries if rule.max_retries is not None else 1):
                    self.sleep(rule.delay_secs)
                    continue
                failure = (failure[0], f"{failure[1]} (after {attempt - 1} RETRYOP retries)")
            self._reperror(txn, record, failure[0], failure[1], m.target.name, m.reperrors)
            return

    def _selected(
        self, txn: Transaction, record: TrailRecord, m: TableMap, env: RowEnv, kind: str | None
    ) -> bool:
        """WHERE and FILTER of the record's MAP (operations other than row changes pass)."""
        if kind is None:
            return True
        rule = m.rule
        assert rule is not None
        if not rule.where_holds(env):
            self.filtered += 1
            return False
        f = rule.failed_filter(env, kind)
        if f is not None:
            if f.raise_error is not None:
                text = f"FILTER RAISEERROR {f.raise_error}: the record fails the filter."
                self._reperror(txn, record, f.raise_error, text, m.target.name, m.reperrors)
            else:
                self.filtered += 1
            return False
        return True

    def _reperror(
        self,
        txn: Transaction,
        record: TrailRecord,
        number: int,
        text: str,
        target: str,
        rules: tuple[RepError, ...] = (),
    ) -> None:
        response = self.response(number, rules)
        if response == "DISCARD":  # written once the target transaction has committed
            self._discards.append((record, number, text, txn.start, target))
            self._stat_rows.append((record.table, target, "DISCARD", 1))
            return
        if response == "IGNORE":
            self.ignored += 1
            return
        if response == "TRANSDISCARD":
            raise _TransDiscard(number, text, target)
        raise ReplicatError(
            "OGG-01004",
            f"Aborted grouped transaction on '{target}', Database error {number} ({text}). "
            f"Transaction LOGCSN {txn.logcsn}, TRANID {txn.tranid}, trail Seqno "
            f"{txn.start.seqno}, RBA {txn.start.rba}.",
        )

    def rule(self, number: int, rules: tuple[RepError, ...] = ()) -> RepError | None:
        """The REPERROR rule for error ``number`` among a MAP's ``rules`` (its own first,
        then the file's before it): the first naming it, else the first DEFAULT."""
        found = next((r for r in rules if r.error == str(number)), None)
        return found or next((r for r in rules if r.error == "DEFAULT"), None)

    def response(self, number: int, rules: tuple[RepError, ...] = ()) -> str:
        rule = self.rule(number, rules)
        response = rule.response.upper() if rule else "ABEND"
        if response == "RETRYOP":  # the retries are spent: the error stands
            return "ABEND"
        return response if response in SUPPORTED_RESPONSES else "ABEND"

    # -- running ------------------------------------------------------------------------
    @property
    def checkpoint_secs(self) -> int:
        return self.model.checkpoint_secs

    def checkpoint(self) -> None:
        """Publish the position the target has committed (``dirchk/<GROUP>.cpr``)."""
        now = self.clock()
        if not self.dirty and self.checkpoints is not None and not self.checkpoints.altered:
            self.last_checkpoint = time.monotonic()
            return
        self.batch_id += 1
        stamp = valid_datetime(self.last_io_us) if self.last_io_us else None
        pos = self.progress.position
        current = Position(
            seqno=pos.seqno,
            rba=pos.rba,
            scn=self.progress.csn,
            timestamp=stamp.isoformat(" ") if stamp else None,
        )
        cps = publish_read(
            self.home, self.checkpoints, self.name, "REPLICAT",
            source_path=self.group.source_path or "", source_file=self.source_trail.file(pos.seqno),
            startup=self.startup, at=current, write=None, batch_id=self.batch_id, now=now,
            source_time=stamp,
        )  # fmt: skip
        self.checkpoints = cps
        self.dirty = False
        self.last_checkpoint = time.monotonic()

    def close(self) -> None:
        self.reader.close()
        self.target.close()

    def status_lines(self) -> list[str]:
        p = self.progress.position
        c = self.applier.counts
        return [
            f"REPLICAT {self.name}: RUNNING",
            f"  Trail {self.group.source_path}: position Seqno {p.seqno}, RBA {p.rba}; "
            f"low watermark CSN {self.progress.csn}",
            f"  Applied {self.transactions} transactions ({c['inserts']} inserts, "
            f"{c['updates']} updates, {c['deletes']} deletes, {c['truncates']} truncates); "
            f"skipped as already applied {self.skipped}; collisions handled "
            f"{self.applier.collisions}; discarded {self.discard.discarded}; "
            f"ignored {self.ignored}; filtered {self.filtered}",
        ]


class _Stats(Mapping[tuple[str, str], int]):
    """@GETENV ('STATS', op) so far, read when an expression asks (not built per record)."""

    _KEYS = ("INSERT", "UPDATE", "DELETE", "TRUNCATE", "DISCARD", "DML", "TOTAL")

    def __init__(self, run: ReplicatRun) -> None:
        self.run = run

    def __getitem__(self, key: tuple[str, str]) -> int:
        c = self.run.applier.counts
        dml = c["inserts"] + c["updates"] + c["deletes"]
        values = {"INSERT": c["inserts"], "UPDATE": c["updates"], "DELETE": c["deletes"],
                  "TRUNCATE": c["truncates"], "DISCARD": self.run.discard.discarded,
                  "DML": dml, "TOTAL": dml + c["truncates"]}  # fmt: skip
        if key[0] or key[1] not in values:
            raise KeyError(key)
        return values[key[1]]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(("", k) for k in self._KEYS)

    def __len__(self) -> int:
        return len(self._KEYS)


def _after(progress: Progress, txn: Transaction) -> Progress:
    moment = valid_datetime(txn.io_time_us)
    stamp = moment.isoformat(" ") if moment else progress.audit_ts
    return progress.after(txn, stamp or "")


class _TransDiscard(Exception):
    """REPERROR TRANSDISCARD for a record: its whole transaction goes to the discard file."""

    def __init__(self, number: int, text: str, target: str) -> None:
        super().__init__(text)
        self.number, self.text, self.target = number, text, target


class _Retry(Exception):
    """The database refused a statement inside a group: apply it again record by record."""
