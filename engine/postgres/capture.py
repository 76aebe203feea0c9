"""The PostgreSQL Extract's capture loop (driver side, in-process: see docs/postgres-source.md
for why no Spark): read committed transactions from the group's replication slot, write
them to the trail in commit order, and let the slot go only past what is durable.

One :meth:`PgCapture.poll` peeks at most ``batch_changes`` changes from the slot
(``pg_logical_slot_peek_changes`` through a server-side cursor: the server keeps the batch,
the Extract fetches it in pieces, so a transaction of a million rows never sits in memory
whole; its rows go through the transaction cache, which pages out past CACHEMGR's budget),
and writes each committed transaction. The caller then makes the trail durable, publishes
the checkpoint (:meth:`durable_state`), and only then moves the slot to the end of the last
transaction read (:meth:`confirm`). A restart peeks again from where the slot stands and
skips every transaction whose commit ends at or before the checkpoint's read LSN or the
trail's last CSN: each committed transaction is in the trail exactly once.

TRANID is the PostgreSQL xid, the CSN the LSN just past the commit record (what the slot
confirms; ``0/16B3748`` is written as its 64-bit value), the IO time the commit timestamp.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.changes import Fragment, Kind, Lcr
from engine.expr.rowrule import Process, UnknownColumn
from engine.extract.cache import TransactionCache
from engine.extract.tasks.assemble import op_name, stream_encoded, surviving
from engine.extract.tasks.decode import _FORMATS, BEFORES_NONE, BEFORES_RECORD
from engine.extract.tasks.tablerules import TableRules, resolve
from engine.heartbeat.flow import ExtractRule
from engine.postgres import fastpath
from engine.postgres import testdecoding as td
from engine.postgres.catalog import PgTable, load_table, split_qualified
from engine.postgres.lsn import format_lsn
from engine.postgres.slot import slot_state
from engine.postgres.state import PgCaptureError, PgState, PgStats, commit_micros, position_of
from engine.postgres.types import CONVERSION_CODES
from engine.postgres.writing import APPEND_CHUNK, write_runs
from engine.runtime.events import Severity
from engine.trail.codec import column_entry, row_record
from engine.trail.layout import BEFORE_IMAGE, IOType
from engine.trail.model import Columns
from engine.trail.model import TableDef as TrailTableDef
from engine.trail.writer import TrailWriter
from params.models import ParamFile

Emit = Callable[[str, Severity, str], None]

#: changes asked of the slot per poll (whole transactions: the server stops after a commit)
BATCH_CHANGES = 1_000_000
#: rows fetched from the server-side cursor at a time
FETCH_ROWS = 5_000

#: the templates of an open transaction held in memory before they go to the cache
RUN_BUDGET = 16 << 20

PEEK_SQL = (
    "SELECT (lsn - '0/0')::bigint, data FROM pg_logical_slot_peek_changes(%s, %s::pg_lsn, %s, "
    "'include-xids', '1', 'include-timestamp', '1', 'skip-empty-xacts', '1')"
)
FLUSH_SQL = "SELECT (pg_current_wal_flush_lsn() - '0/0')::bigint"
BEGIN, COMMIT = fastpath.BEGIN, fastpath.COMMIT


class PgCapture:
    def __init__(
        self,
        model: ParamFile,
        conn: Any,
        slot: str,
        writer: TrailWriter,
        spill_dir: Path,
        emit: Emit,
        *,
        state: PgState | None,
        trail_csn: int,
        begin_us: int | None = None,
        begin_lsn: int | None = None,
        cache_budget: int | None = None,
        heartbeat: ExtractRule | None = None,
    ) -> None:
        self.model = model
        # heartbeat tables are captured without a TABLE line; their committed rows are
        # rewritten by the heartbeat rule (seed 001's OUTGOING_EXTRACT) before encoding
        self.heartbeat = heartbeat
        self.conn = conn
        self.slot = slot
        self.writer = writer
        self.emit = emit
        budget = cache_budget or model.cachemgr.cache_size or (256 << 20)
        self.cache = TransactionCache(spill_dir, budget)
        self.run_budget = min(RUN_BUDGET, max(64 << 10, budget // 4))
        # the slot moves past WAL without captured changes when the Extract is caught up
        self.advance_idle = True
        # the WAL position up to which the last peek not cut short by its batch read
        self.decoded_upto = 0
        # captured tables as the C kernel reads them (fastpath.TableSpec; None: not
        # captured); a table missing here is read by the Python path, which adds it
        self.fast: dict[str, fastpath.TableSpec | None] = {}
        self._xid = ""
        self._begin_lsn = 0
        self._runs: list[tuple[bytes, int, tuple[tuple[str, int, int], ...]]] = []
        self._held = 0
        self._changes = 0
        self.stats = PgStats()
        self.batch_changes = BATCH_CHANGES
        self.state = state
        self.read_lsn = state.read_lsn if state else 0
        self.last_commit_lsn = state.last_commit_lsn if state else 0
        self.last_time_us = state.last_time_us if state else 0
        self.last_xid = state.last_xid if state else None
        # everything ending at or before this is in the trail already (or was skipped)
        self.skip_upto = max(self.read_lsn, trail_csn, begin_lsn or 0)
        self.begin_us = begin_us if state is None else None
        self.confirmed_lsn = 0
        self.on_counts: Callable[[list[tuple[str, str, int]]], None] | None = None
        self.on_commit: Callable[[str, int, int], None] | None = None
        self.tables: dict[str, PgTable | None] = {}
        self._warned: set[str] = set()
        self.rules = TableRules({}, Process(model.group or ""), datetime.now)
        self.keycols: dict[str, tuple[int, ...]] = {}
        self._befores: dict[str, int] = {}  # per table: how its updates carry before images
        self._names: dict[str, bytes] = {}  # table name -> its bytes in records
        self._hooked: set[str] = set()  # heartbeat tables: rows keep their columns
        # TRANLOGOPTIONS FILTERTABLE: a transaction changing one is a Replicat's (loop
        # detection); IGNOREREPLICATES (the default) skips it, GETREPLICATES keeps it
        self.filter_tables = frozenset(_plain(t) for t in model.tranlog.filter_tables)
        self.replicated: set[str] = set()
        self.conn.execute("SET TimeZone = 'UTC'")
        self.conn.execute("SET DateStyle = 'ISO, YMD'")
        self.conn.execute("SET lc_monetary = 'C'")
        self.conn.execute("SET IntervalStyle = 'postgres'")
        self.conn.execute("SET extra_float_digits = 1")
        self.check_slot(first=True)
        self._load_all()

    # -- the slot ----------------------------------------------------------------------
    def check_slot(self, *, first: bool = False) -> None:
        """Abend, naming the slot and the LSNs, when the slot is gone, has lost WAL, or
        stands past what this Extract has read (someone else consumed changes: a gap)."""
        st = slot_state(self.conn, self.slot)
        where = f"checkpoint read LSN {format_lsn(self.read_lsn)}"
        if st is None:
            raise PgCaptureError(
                "OGG-25361",
                f"Replication slot '{self.slot}' does not exist (dropped?); the Extract cannot "
                f"capture past {where} without it. REGISTER EXTRACT again and reposition.",
            )
        if st.wal_status == "lost" or st.restart_lsn is None:
            raise PgCaptureError(
                "OGG-25362",
                f"Replication slot '{self.slot}' has lost the WAL it needs (wal_status "
                f"{st.wal_status}, restart LSN "
                f"{'none' if st.restart_lsn is None else format_lsn(st.restart_lsn)}, {where}).",
            )
        confirmed = st.confirmed_lsn or 0
        if first and self.state is not None and confirmed > self.read_lsn:
            raise PgCaptureError(
                "OGG-25363",
                f"Replication slot '{self.slot}' is at confirmed LSN {format_lsn(confirmed)}, "
                f"past this Extract's {where}: changes between them were consumed elsewhere "
                "and are not in the trail.",
            )
        self.confirmed_lsn = confirmed

    def confirm(self) -> None:
        """Let the slot go up to the last transaction read: call only after the trail and
        the checkpoint that cover it are durable."""
        if self.read_lsn > self.confirmed_lsn:
            self.conn.execute(
                "SELECT pg_replication_slot_advance(%s, %s::pg_lsn)",
                (self.slot, format_lsn(self.read_lsn)),
            )
            self.confirmed_lsn = self.read_lsn

    # -- tables ------------------------------------------------------------------------
    def _query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return list(self.conn.execute(sql, params).fetchall())

    def _load_all(self) -> None:
        """Every table the TABLE statements select now: row rules (WHERE, COLS, TOKENS,
        FILTER, KEYCOLS) resolved once, table definitions given to the trail."""
        rows = self.conn.execute(
            "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p') "
            "AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        for (qualified,) in rows:
            schema, name = split_qualified(str(qualified))
            if self._selects(schema, name):
                self._table(str(qualified))

    def _table(self, qualified: str, *, reload: bool = False) -> PgTable | None:
        if qualified in self.tables and not reload:
            return self.tables[qualified]
        schema, name = split_qualified(qualified)
        self.fast.pop(qualified, None)
        if not self._selects(schema, name):
            self.tables[qualified] = None
            if not (self.filter_tables and _plain(qualified) in self.filter_tables):
                self.fast[qualified] = None
            return None
        table = load_table(self._query, qualified)
        self.tables[qualified] = table
        if table is None:
            return None
        self._resolve(table)
        if self.heartbeat is not None and self.heartbeat.owns(schema, name):
            self._hooked.add(qualified)
        spec = self._spec(table)
        if spec is not None:
            self.fast[qualified] = spec
        self.writer.define_table(TrailTableDef(qualified, tuple(c.name for c in table.columns)))
        for c in table.unsupported:
            key = f"{qualified}.{c.name}"
            if key not in self._warned:
                self._warned.add(key)
                self.emit(
                    "OGG-25364",
                    Severity.WARNING,
                    f"Column {c.name} of table {qualified} has unsupported data type "
                    f"{c.type_name} ({c.kind}); its values are not captured.",
                )
        if table.identity in ("n", "i") or (table.identity == "d" and not table.key):
            what = {"n": "NOTHING", "i": "USING INDEX"}.get(table.identity, "DEFAULT without a key")
            self.emit(
                "OGG-25365",
                Severity.WARNING,
                f"Table {qualified} has REPLICA IDENTITY {what}: its updates and deletes "
                "cannot be identified; use ADD TRANDATA.",
            )
        return table

    def _spec(self, table: PgTable) -> fastpath.TableSpec | None:
        """What the C kernel needs to write the table's changes; None when they take the
        Python path (TABLE row options, a heartbeat table, a FILTERTABLE table)."""
        q = table.qualified
        if q in self.rules.rules or q in self._hooked:
            return None
        if self.filter_tables and _plain(q) in self.filter_tables:
            return None
        convs = [c.convert for c in table.columns]
        if any(c is not None and c not in CONVERSION_CODES for c in convs):
            return None  # a conversion the kernel does not know
        codes = bytes(0 if c is None else CONVERSION_CODES[c] for c in convs)
        full = table.identity == "f"
        return fastpath.TableSpec(
            q,
            q.encode(),
            tuple(c.name for c in table.columns),
            codes,
            self._key_idx(table),
            full and not self.keycols.get(q),
            full,
            self._befores_of(table),
        )

    def _befores_of(self, table: PgTable) -> int:
        """How the table's updates carry their before images (decode.BEFORES_*)."""
        mode = self._befores.get(table.qualified)
        if mode is None:
            spec = self.model.captured(table.schema, table.name)
            mode = BEFORES_NONE
            if spec is not None and spec.get_update_befores:
                mode = _FORMATS.get(self.model.update_record_format, BEFORES_RECORD)
            self._befores[table.qualified] = mode
        return mode

    def _selects(self, schema: str, name: str) -> bool:
        if self.model.captured(schema, name) is not None:
            return True
        return self.heartbeat is not None and self.heartbeat.owns(schema, name)

    def _columns_of(self, table: str) -> tuple[str, ...] | None:
        t = self.tables.get(table)
        return tuple(c.name for c in t.columns) if t is not None else None

    def _resolve(self, table: PgTable) -> None:
        names = tuple(c.name for c in table.columns)
        got = resolve(self.model, [(table.schema, table.name, table.qualified, names, table.key)])
        if isinstance(got, UnknownColumn):
            raise PgCaptureError("OGG-00366", got.text)
        rules = dict(self.rules.rules)
        rules.pop(table.qualified, None)
        rules.update(got[0])
        self.keycols.update(got[1])
        self.rules = TableRules(rules, self.rules.process, self.rules.clock)

    # -- the loop ----------------------------------------------------------------------
    def poll(self) -> int:
        """Read and write what the slot has now (up to one batch); the changes read past
        what was read before (0 when the slot, not yet advanced, gave the same again)."""
        import psycopg

        try:
            return self._poll()
        except psycopg.Error as exc:  # connection lost, WAL removed under the slot, ...
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise PgCaptureError(
                "OGG-25366",
                f"Reading replication slot '{self.slot}' failed after read LSN "
                f"{format_lsn(self.read_lsn)}: {text}",
            ) from exc

    def _poll(self) -> int:
        self.check_slot()
        before = self.read_lsn
        # the WAL flushed now: the peek decodes up to it, and when it is not cut short by
        # the batch, every transaction committed before it is read (the idle advance)
        row = self.conn.execute(FLUSH_SQL).fetchone()
        upto = int(row[0]) if row is not None and row[0] is not None else 0
        if upto and upto <= self.decoded_upto:
            # no WAL flushed since a peek read everything up to it: nothing to read, and no
            # need to have the server decode again from the slot's restart LSN to find that
            return 0
        self._changes = 0
        read = 0
        # fastpath's events by their number: BEGIN, COMMIT, RUN, SLOW
        handle = (self._begin, self._commit, self._run, self._slow)
        with self.conn.transaction():
            cur = self.conn.cursor(name="ggsci_peek")
            cur.execute(PEEK_SQL, (self.slot, format_lsn(upto), self.batch_changes))
            while rows := cur.fetchmany(FETCH_ROWS):
                read += len(rows)
                at = 0
                while at < len(rows):
                    events, at = fastpath.scan(rows, at, self.fast)
                    for ev in events:
                        handle[ev[0]](ev)
            cur.close()
        n = self._changes if self.read_lsn > before else 0
        if read < self.batch_changes:
            self.decoded_upto = upto  # (not cut short by the batch: all of it was read)
        if read < self.batch_changes and not self.cache.txns and self.advance_idle:
            # caught up, nothing open: the slot may go to where the peek decoded up to,
            # even when no captured table changed (an idle database, other databases, or
            # tables not captured), so that the WAL it holds back does not grow
            self.read_lsn = max(self.read_lsn, upto)
        self.stats.changes += n
        return n

    # -- the events of fastpath.scan -----------------------------------------------------
    def _begin(self, ev: tuple[Any, ...]) -> None:
        self._xid, self._begin_lsn = ev[2], ev[1]
        self._runs = []
        self._held = 0

    def _run(self, ev: tuple[Any, ...]) -> None:
        _, blob, count, ops, changes = ev
        self._changes += changes
        if count:
            self._runs.append((blob, count, ops))
            self._held += len(blob)
            if self._held > self.run_budget:  # a large transaction: to the cache (CACHEMGR)
                self._runs_to_cache()

    def _runs_to_cache(self) -> None:
        pos = position_of(self._begin_lsn)
        for blob, count, ops in self._runs:
            self.cache.add_fragment(
                Fragment(
                    self._xid, pos, 0, self._begin_lsn, 0, 0, self._begin_lsn, 0, (), blob,
                    count, ("",) * count, (), ops, count,
                )
            )  # fmt: skip
        self._runs = []
        self._held = 0

    def _slow(self, ev: tuple[Any, ...]) -> None:
        _, lsn, data = ev
        try:
            parsed = td.parse_line(data)
        except td.DecodeError as exc:  # not test_decoding's text: abend, naming where
            raise PgCaptureError(
                "OGG-25366",
                f"Replication slot '{self.slot}' gave a line this Extract cannot read at LSN "
                f"{format_lsn(lsn)} ({exc}): {data[:80]!r}",
            ) from None
        if isinstance(parsed, td.Change):
            self._changes += 1
            self._runs_to_cache()
            for lcr in self._lcrs(parsed, self._xid, lsn):
                self.cache.add(lcr)
        elif isinstance(parsed, td.Begin):
            self._begin((BEGIN, lsn, parsed.xid))
        elif isinstance(parsed, td.Commit):
            self._commit((COMMIT, lsn, parsed.xid, parsed.time))

    def _commit(self, ev: tuple[Any, ...]) -> None:
        _, lsn, xid, time = ev
        time_us = commit_micros(time)
        self.read_lsn = max(self.read_lsn, lsn)
        runs, self._runs, self._held = self._runs, [], 0
        seen, self.skip_upto = self.skip_upto, max(self.skip_upto, lsn)
        replicated = xid in self.replicated and not self.model.get_replicates
        self.replicated.discard(xid)
        early = self.begin_us is not None and time_us < self.begin_us
        if lsn <= seen or early or replicated:
            self.cache.rollback(xid)  # releases its page file
            if lsn <= seen:
                self.stats.skipped_recovered += 1
            elif early:
                self.stats.skipped_before_begin += 1
            else:
                self.stats.replicated += 1
            return
        self.stats.transactions += 1
        per_table: Counter[tuple[str, str]] = Counter()
        if xid not in self.cache:
            k = write_runs(self.writer, runs, xid, lsn, time_us, 0, per_table)
        else:
            self._runs = runs
            self._runs_to_cache()
            k = self._write_cached(xid, lsn, time_us, per_table)
        if k:
            self.last_commit_lsn = lsn
            self.last_time_us = time_us
            self.last_xid = xid
        self.stats.trail_records += k
        by_op = self.stats.by_op
        for (_, name), m in per_table.items():
            by_op[name] = by_op.get(name, 0) + m
        if self.on_counts is not None and per_table:
            self.on_counts([(t, op, m) for (t, op), m in per_table.items()])
        if self.on_commit is not None:
            self.on_commit(xid, lsn, k)

    def _write_cached(
        self, xid: str, lsn: int, time_us: int, per_table: Counter[tuple[str, str]]
    ) -> int:
        """A transaction the cache holds (a large one, or one with changes of the Python
        path): in runs when it is runs only, row by row otherwise."""
        done = self.cache.commit_entries(xid)
        if done is None:
            return 0
        txn, entries = done
        if txn.changes == 0 and not txn.undone:
            runs = ((f.records, f.count, f.table_ops) for f in entries if isinstance(f, Fragment))
            return write_runs(self.writer, runs, xid, lsn, time_us, txn.row_count, per_table)
        rows: Iterable[Lcr] = surviving(entries, txn.undone)
        if self.heartbeat is not None:
            rows = self.heartbeat.rows(rows, self._columns_of)
        rows = self.rules.rows(rows, xid, lsn, time_us)
        tables: list[str] = []
        out: list[bytes] = []
        k = 0
        for data, io_type in stream_encoded(xid, lsn, time_us, _noting(rows, tables)):
            out.append(data)
            per_table[(tables[k], op_name(io_type))] += 1
            k += 1
            if len(out) >= APPEND_CHUNK:
                self.writer.append_many(out)
                out.clear()
        if out:
            self.writer.append_many(out)
        return k

    # -- one change to trail rows --------------------------------------------------------
    def _lcrs(self, ch: td.Change, xid: str, lsn: int) -> list[Lcr]:
        if ch.op == "TRUNCATE":
            out = []
            for name in ch.tables:
                table = self._table(name)
                if table is None:
                    continue
                spec = self.model.captured(table.schema, table.name)
                if spec is not None and spec.get_truncates:
                    out.append(self._row(xid, lsn, IOType.PURGEDATA, table.qualified, ()))
            return out
        if self.filter_tables and _plain(ch.table) in self.filter_tables:
            self.replicated.add(xid)
        table = self._table(ch.table)
        if table is None:
            return []
        try:
            new = self._columns(table, table.index, ch.new)
            old = self._columns(table, table.index, ch.old) if ch.old else ()
        except KeyError:  # a column the catalog did not have: added since it was read
            table = self._table(ch.table, reload=True)
            if table is None:
                return []
            # still unknown: dropped since this change (decoded with the catalog of its
            # time); such a column is left out
            new = self._columns(table, table.index, ch.new, strict=False)
            old = self._columns(table, table.index, ch.old, strict=False) if ch.old else ()
        if ch.op == "INSERT":
            return [self._row(xid, lsn, IOType.INSERT, table.qualified, new)]
        if ch.op == "DELETE":
            return [self._row(xid, lsn, IOType.DELETE, table.qualified, self._key_of(table, old))]
        return self._update(table, xid, lsn, new, old)

    def _columns(
        self,
        table: PgTable,
        index: dict[str, int],
        cols: tuple[td.Column, ...],
        *,
        strict: bool = True,
    ) -> Columns:
        """The changed row's columns as trail text, by column index; KeyError (strict) for
        a column the catalog does not have."""
        out = []
        for name, _type, value in cols:
            i = index.get(name, -1) if not strict else index[name]
            if i < 0:
                continue
            conv = table.columns[i].convert
            if conv is None or isinstance(value, td.Unchanged):
                continue  # unsupported (warned), or TOAST the update left alone: not NULL
            out.append((i, None if value is None else conv(value)))
        out.sort()
        return tuple(out)

    def _key_idx(self, table: PgTable) -> tuple[int, ...]:
        keys = self.keycols.get(table.qualified)
        if keys is not None:
            return keys
        if table.key:
            index = table.index
            return tuple(index[k] for k in table.key if k in index)
        return tuple(range(len(table.columns)))

    def _key_of(self, table: PgTable, image: Columns) -> Columns:
        if table.identity == "f" and not self.keycols.get(table.qualified):
            return self._full_old(table, image)
        keys = set(self._key_idx(table))
        return tuple((i, v) for i, v in image if i in keys) or image

    def _full_old(self, table: PgTable, image: Columns) -> Columns:
        """An old tuple of REPLICA IDENTITY FULL: test_decoding leaves its NULLs out."""
        have = dict(image)
        return tuple((i, have.get(i)) for i, c in enumerate(table.columns) if c.convert is not None)

    def _update(self, table: PgTable, xid: str, lsn: int, new: Columns, old: Columns) -> list[Lcr]:
        name = table.qualified
        mode = self._befores_of(table)
        keys = self._key_idx(table)
        after = dict(new)
        before_full = self._full_old(table, old) if old and table.identity == "f" else old
        before = dict(before_full)
        key_changed = bool(old) and any(
            i in before and i in after and before[i] != after[i] for i in keys
        )
        if key_changed:
            bimg = before_full if mode else tuple((i, before[i]) for i in keys if i in before)
            return [self._row(xid, lsn, IOType.KEYFIELDCOMP, name, new, bimg)]
        if mode == BEFORES_NONE:
            return [self._row(xid, lsn, IOType.FIELDCOMP, name, new)]
        bcols = before_full or tuple((i, after[i]) for i in keys if i in after)
        if mode == BEFORES_RECORD:
            return [
                self._row(xid, lsn, IOType.FIELDCOMP | BEFORE_IMAGE, name, bcols),
                self._row(xid, lsn, IOType.FIELDCOMP, name, new),
            ]
        return [self._row(xid, lsn, IOType.UNIFIED_UPDATE, name, new, bcols)]

    def _row(
        self, xid: str, lsn: int, io_type: int, table: str, columns: Columns, before: Columns = ()
    ) -> Lcr:
        """A row change; of a table without TABLE row options, with its record encoded now
        (a template :func:`~engine.trail.codec.finalize` completes at commit), as the redo
        Extract's miner does: half the cost of encoding it from its columns."""
        pos = position_of(lsn)
        if table in self.rules.rules or table in self._hooked:
            return Lcr(Kind.ROW, xid, pos, 0, lsn, io_type=io_type, table=table,
                       columns=columns, before_columns=before)  # fmt: skip
        name = self._names.get(table)
        if name is None:
            name = self._names[table] = table.encode()
        entry = column_entry
        data = b"".join([entry(i, v) for i, v in columns])
        bdata = b"".join([entry(i, v) for i, v in before]) if before else b""
        record = row_record(io_type, name, data, bdata, None, pos.sequence, pos.offset)
        return Lcr(Kind.ROW, xid, pos, 0, lsn, io_type=io_type, table=table, record=record)

    # -- checkpoints -------------------------------------------------------------------
    def durable_state(self) -> PgState:
        """Make the trail durable, then describe what a checkpoint may publish."""
        self.writer.sync()
        return PgState(self.read_lsn, self.last_commit_lsn, self.last_time_us, self.last_xid)


def _plain(name: str) -> str:
    """A table name compared as unquoted SQL names are (``public.t`` = ``PUBLIC.T``)."""
    schema, table = split_qualified(name)
    return f"{schema}.{table}".lower()


def _noting(rows: Iterable[Lcr], tables: list[str]) -> Iterator[Lcr]:
    for row in rows:
        tables.append(row.table)
        yield row
