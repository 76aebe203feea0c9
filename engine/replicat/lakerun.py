"""The Replicat run into lakehouse tables (``TARGETDB LIBFILE libggjava.so SET
property=dirprm/NAME.props``).

It is the Replicat of :mod:`engine.replicat.engine` (trail, MAP, COLMAP, WHERE, FILTER,
REPERROR DISCARD/IGNORE, checkpoint table, heartbeats) with these differences:

* Records go to per-table batches (:mod:`engine.replicat.lakeapply`), not SQL statements.
* A batch is GROUPTRANSOPS operations, or what the trail held when ``batchIntervalMs``
  passed since the batch's first transaction was read, whichever comes first: a user trades
  latency against the number of table versions.
* A batch is committed as one table commit per table, each recording the Replicat's position
  (exactly once: a table skips what its own record says it holds), then the heartbeat rows
  (stamped after the table commits, so the lag includes them) and the checkpoint table row
  in the checkpoint database (SQLite by default: ``LAG ... GLOBAL`` reads it), then the
  checkpoint file.
* ``SEND REPLICAT name, OPTIMIZE | VACUUM [RETAINHOURS n] | EXPIRESNAPSHOTS [RETAINHOURS n]``
  maintains the tables written since the start, between two batches (never during a commit).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from datetime import datetime

from engine.heartbeat.settings import utc_now
from engine.home.groups import GroupDef
from engine.home.layout import Home
from engine.replicat import ReplicatError
from engine.replicat.engine import Emit, ReplicatRun
from engine.replicat.lakeapply import LakeApplier, LakeCatalog, LakeMapper, Store
from engine.replicat.lakefast import FastPath
from engine.replicat.lakeread import Read
from engine.replicat.progress import Progress
from engine.runtime.events import Severity
from engine.runtime.loop import Stop
from engine.targets import TargetError
from engine.targets.lake import LakeError, require
from engine.targets.lake.location import resolve
from engine.targets.lake.tables import Stamp
from engine.targets.resolve import open_target
from engine.trail.errors import TrailError
from engine.trail.model import TrailPosition, TrailRecord
from engine.trail.reader import read_error_text
from engine.trail.txreader import Transaction, TransactionReader
from params.check import find_handler_props
from params.handlerprops import HandlerProps, check_properties
from params.models import ParamFile

MAINTENANCE = ("OPTIMIZE", "VACUUM", "EXPIRESNAPSHOTS")
#: In the checkpoint database: the lakehouse tables each group has committed to.
WRITTEN = "gg_lake_tables"
DEFAULT_RETAIN_HOURS = 168.0


def columnar() -> bool:
    """The columnar path is on unless ``GGSCI_LAKE_COLUMNAR=0`` (to measure or test the
    record-by-record path)."""
    return os.environ.get("GGSCI_LAKE_COLUMNAR", "1").strip() != "0"


def load_props(home: Home, model: ParamFile) -> HandlerProps:
    ref = model.handler_props
    assert ref is not None
    found = find_handler_props(ref, [home.root])
    if found is None:
        raise ReplicatError("OGG-00664", f"Properties file {ref.path} does not exist.")
    props, diags = check_properties(found.read_text(errors="replace"), ref.path)
    errors = [d for d in diags if d.is_error]
    if props is None or errors:
        d = errors[0] if errors else None
        where = f" (line {d.origin.line}: {d.message})" if d else ""
        raise ReplicatError("OGG-00664", f"Properties file {ref.path} has errors{where}.")
    return props


def open_store(home: Home, props: HandlerProps) -> Store:
    require(props.type)
    location = resolve(props.location, home.root)
    if props.type == "deltalake":
        from engine.targets.lake.delta import DeltaStore

        return DeltaStore(location)
    from engine.targets.lake.iceberg import IcebergStore

    return IcebergStore(
        location, home.root, props.catalog_type, props.catalog_uri, props.catalog_name
    )


class LakeReplicatRun(ReplicatRun):
    def __init__(
        self,
        home: Home,
        model: ParamFile,
        group: GroupDef,
        emit: Emit,
        *,
        clock: Callable[[], datetime] = datetime.now,
        heartbeat_clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.props = props = load_props(home, model)
        try:
            store = open_store(home, props)
            checkpoint_db = open_target(home, props.checkpoint_database)
        except TargetError as exc:
            raise ReplicatError(getattr(exc, "code", "OGG-00664"), exc.message) from exc
        super().__init__(
            home,
            model,
            group,
            emit,
            target=checkpoint_db,
            clock=clock,
            heartbeat_clock=heartbeat_clock,
        )

        def note(text: str) -> None:
            emit("OGG-06510", Severity.INFO, text)

        self.catalog = LakeCatalog(store, group.name, note)
        self.catalog.written = self._written_tables()
        self.mapper = LakeMapper(model, self.catalog)
        self.lake = LakeApplier(self.catalog)
        self.applier = self.lake
        self.handler_kind = props.type
        self.interval = props.batch_interval_ms / 1000.0
        self.lock = threading.Lock()  # held while a batch is applied and committed
        self._batch: list[Transaction] = []
        self._batch_ops = 0
        self._batch_started = 0.0
        self._heartbeats: list[tuple[Transaction, TrailRecord]] = []
        self._classic = False  # the classic path reads until its batch is committed
        self._pending: list[Read] = []  # the columnar batch read so far
        self._pending_ops = 0
        self.fast: FastPath | None = FastPath(self) if columnar() else None
        emit(
            "OGG-06505",
            Severity.INFO,
            f"REPLICAT {group.name} delivers to {props.type} tables at "
            f"{resolve(props.location, home.root).shown} (handler {props.name}); "
            f"checkpoint database {props.checkpoint_database}.",
        )

    def _written_tables(self) -> set[str]:
        """The tables this group has committed to, from the checkpoint database (a table
        missing at a restart that is among them was deleted: it is not made again)."""
        t = self.target
        t.begin()
        try:
            t.execute(
                f"CREATE TABLE IF NOT EXISTS {WRITTEN} (group_name VARCHAR(8) NOT NULL, "
                "table_name VARCHAR(512) NOT NULL, PRIMARY KEY (group_name, table_name))"
            )
            rows = t.query(
                f"SELECT table_name FROM {WRITTEN} WHERE group_name = {t.placeholder}", (self.name,)
            )
            t.commit()
        except BaseException:
            t.rollback()
            raise
        return {str(r[0]) for r in rows}

    # -- batching -----------------------------------------------------------------------
    def poll(self) -> int:
        """The columnar path (:mod:`engine.replicat.lakefast`) while it can take what the
        trail holds; else the classic one, from the start of the transaction it cannot
        take, until that batch is committed."""
        if self.fast is None or self._classic:
            seen = self._poll_records()
            if self.fast is not None and not self._batch:
                self._classic = False  # back to columns, where the classic batch ended
                self.fast.reader.position = self.reader.position
                self.fast.reader.tables = dict(self.reader.tables)
            return seen
        return self._poll_columns()

    def _poll_columns(self) -> int:
        """Whole transactions read into columns; a batch is committed when it holds
        GROUPTRANSOPS operations or ``batchIntervalMs`` has passed since its first was read
        (as on the classic path), or before the classic path takes over."""
        assert self.fast is not None
        fast = self.fast
        read = fast.reader.read(max(self.model.group_trans_ops - self._pending_ops, 1))
        if read.records:
            if not self._pending:
                self._batch_started = time.monotonic()
            self._pending.append(read)
            self._pending_ops += read.records
        if read.error is not None:  # the whole transactions before it, then abend
            self._flush_columns()
            self.dirty = True
            self.checkpoint()
            raise ReplicatError("OGG-01184", read_error_text(read.error)) from read.error
        left = self.interval - (time.monotonic() - self._batch_started)
        if self._pending_ops >= self.model.group_trans_ops or read.classic or left <= 0:
            self._flush_columns()
        elif self._pending and not read.records:
            time.sleep(min(left, 0.05))  # more may come before the batch is due
        if read.classic is not None:
            self._classic = True
            fast.handovers += 1
            self.reader.close()
            self.reader = TransactionReader(self.source_trail, read.classic)
            return 1
        return 1 if read.records or self._pending else 0

    def _flush_columns(self) -> None:
        pending, self._pending, self._pending_ops = self._pending, [], 0
        if pending and self.fast is not None:
            self.fast.apply(Read([c for r in pending for c in r.chunks], 0))
            self.report_counter.tick(self.fast.reader.records_read)

    def _poll_records(self) -> int:
        """Read what the trail holds into the batch; commit it when it holds GROUPTRANSOPS
        operations or ``batchIntervalMs`` has passed. A batch still open counts as work (the
        run neither waits idle nor stops at end of data until it is committed)."""
        seen = 0
        try:
            for txn in self.reader.poll():
                seen += 1
                if not self._batch:
                    self._batch_started = time.monotonic()
                self._batch.append(txn)
                if any(self.heartbeat.owns(r.table) for r in txn.records):
                    self._read_at[id(txn)] = self.heartbeat_clock()
                self._batch_ops += len(txn.records)
                if self._batch_ops >= self.model.group_trans_ops:
                    self.flush()
                    if self._classic:
                        break  # one batch, then back to the columnar path
        except TrailError as exc:
            self.flush()
            self.dirty = True
            self.checkpoint()
            raise ReplicatError("OGG-01184", read_error_text(exc)) from exc
        if self._batch:
            left = self.interval - (time.monotonic() - self._batch_started)
            if left <= 0:
                self.flush()
            elif not seen:
                time.sleep(min(left, 0.05))  # more may come before the batch is due
        if seen:
            self.dirty = True
        self.report_counter.tick(self.reader.records_read)  # REPORTCOUNT, as every Replicat
        return seen or (1 if self._batch else 0)

    def flush(self) -> None:
        batch, self._batch, self._batch_ops = self._batch, [], 0
        if batch:
            self._apply_group(batch)
            self.dirty = True

    def run(self, stop: Stop, *, stop_at_eof: bool = False, idle: float = 0.2) -> None:
        super().run(stop, stop_at_eof=stop_at_eof, idle=idle)
        if self._pending:
            self._flush_columns()
            self.checkpoint()
        if self._batch:  # what was read before the stop
            self.flush()
            self.checkpoint()

    # -- applying -----------------------------------------------------------------------
    def _apply(self, txns: list[Transaction], *, savepoints: bool) -> None:
        with self.lock:
            self.lake.discard()
            self._heartbeats = []
            try:
                super()._apply(txns, savepoints=savepoints)
            finally:
                self.lake.discard()
                self._heartbeats = []

    def _apply_record(
        self, txn: Transaction, record: TrailRecord, savepoints: bool, at: TrailPosition
    ) -> None:
        if self.heartbeat.owns(record.table):
            self._heartbeats.append((txn, record))  # after the table commits
            return
        self.lake.txn, self.lake.at = txn, at
        super()._apply_record(txn, record, savepoints, at)

    def _commit_batch(self, progress: Progress) -> None:
        stamp = Stamp(self.name, progress.position, progress.csn, progress.xids)
        try:
            done = self.lake.commit(stamp)
        except LakeError as exc:
            raise ReplicatError(exc.code, exc.message) from exc
        self.record_written(done)
        for txn, record in self._heartbeats:
            super()._apply_record(txn, record, False, txn.start)

    def record_written(self, done: list[str]) -> None:
        """The tables committed to, in the checkpoint database's transaction."""
        ph = self.target.placeholder
        for name in done:
            if name.upper() not in self.catalog.written:
                self.target.execute(
                    f"INSERT INTO {WRITTEN} (group_name, table_name) VALUES ({ph}, {ph})",
                    (self.name, name.upper()),
                )
                self.catalog.written.add(name.upper())

    # -- maintenance ----------------------------------------------------------------------
    def maintain(self, action: str, retain_hours: float = DEFAULT_RETAIN_HOURS) -> list[str]:
        """Run ``action`` on every table written since the start, between two batches."""
        with self.lock:
            tables = list(self.catalog.tables.values())
            if not tables:
                return ["No lakehouse table has been written since the Replicat started."]
            out = []
            for t in tables:
                try:
                    out.append(t.maintain(action, retain_hours))
                except LakeError as exc:
                    out.append(f"{t.name}: {exc.message}")
                except Exception as exc:  # the library's own failure, one line
                    out.append(f"{t.name}: {action} failed: {str(exc).splitlines()[0]}")
            return out

    def _paths(self) -> str:
        f = self.fast
        if f is None:
            return "record by record (GGSCI_LAKE_COLUMNAR=0); "
        return (
            f"columnar path {f.operations} operations in {f.batches} batches, handed to "
            f"the record-by-record path {f.handovers} times; "
        )

    def status_lines(self) -> list[str]:
        lines = super().status_lines()
        recorded = [
            f"  {self.catalog.tables[n].name}: Seqno {p.seqno}, RBA {p.rba}"
            for n, p in self.catalog.recorded.items()
            if p is not None
        ]
        return [
            *lines,
            f"  Handler {self.props.name} ({self.props.type}); "
            f"operations already in their table skipped {self.lake.skipped_ops}; "
            + self._paths()
            + "positions the tables record:",
            *recorded,
        ]
