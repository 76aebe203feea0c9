"""One embedded database: a directory holding SQLite storage, the dictionary, the redo logs.

Layout of ``<home>/dirdb/<NAME>/``::

    data.sqlite       user tables (``OWNER$NAME``, with a ``_rid`` = block << 16 | slot),
                      ``_gg_state`` (counters, sessions with open transactions) and
                      ``_gg_pieces`` (where each chained row's pieces are: ``Database.chained``)
    dictionary.json   the data dictionary (:mod:`engine.embedded.dictionary`)
    archive.json      LOG_ARCHIVE_DEST and LOG_ARCHIVE_FORMAT (:mod:`engine.embedded.archiver`)
    redo/t<T>/<seq>.log   redo logs per thread (:mod:`engine.embedded.logs`)
    lock              held (flock) by the one process that has the database open

One process opens a database at a time (a second gets ``GGS-SRC-0103``); sessions with open
transactions are saved when it closes and restored by the next one, so ``ggsci db sql
--session A`` and ``--session B`` in separate invocations interleave like concurrent
sessions, locks included.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO, Final

from engine.embedded import redogen as rg
from engine.embedded.archiver import (
    ArchiveParams,
    Archiver,
    checked_format,
    forget_dest_secret,
    set_archive_params,
)
from engine.embedded.clock import Clock, SimClock
from engine.embedded.dictionary import (
    ColumnDef,
    Dictionary,
    IndexDef,
    TableDef,
    load_dictionary,
    save_dictionary,
)
from engine.embedded.errors import DatabaseError, RedoFormatError, SourceError, SqlError
from engine.embedded.logfile import read_records
from engine.embedded.logs import LogInfo, LogSet, check_format, list_logs
from engine.embedded.ownfiles import check_database_files, create_private, private_dir
from engine.embedded.recovery import recover, report
from engine.embedded.rollforward import RollForward
from engine.embedded.scheduler import Scheduler, load_jobs
from engine.embedded.session import Session
from engine.embedded.state import Pieces
from engine.embedded.statefile import (
    OldFormatError,
    decode_sessions,
    decode_state_fields,
    encode_sessions,
    encode_state,
)
from engine.home import datafile as df
from engine.home.lockfile import foreign_holder, open_lock_file
from engine.home.names import database_name
from engine.redo.ids import Xid, make_dba
from engine.redo.model import ChangeVector, Cleanout, Ddl, LocatedRecord, RedoRecord
from engine.runtime.events import GGSCI_COMPONENT

DEFAULT_LOG_BYTES: Final = 64 * 1024 * 1024
FLUSH_INTERVAL: Final = 0.05  # seconds of wall time between redo flushes at commit
SQLITE_CACHE_KIB: Final = 64 * 1024  # SQLite page cache (allocated as used)
LOCK_WAIT: Final = 1.0  # seconds an open waits for another process to close the database
FIRST_OBJ: Final = 76480
FIRST_SCN: Final = 1_600_000
MAX_USN: Final = 10
SLOTS_PER_USN: Final = 48
_SQLITE_TYPE: Final = {"NUMBER": "NUMERIC", "INTEGER": "NUMERIC", "FLOAT": "NUMERIC"}


def check_name(name: str) -> str:
    up = database_name(name)
    if up is None:
        raise DatabaseError(f"invalid database name {name!r}", "GGS-SRC-0104")
    return up


@dataclass
class State:
    """Counters that must survive restarts (saved in ``_gg_state``)."""

    threads: int = 1
    log_bytes: int = DEFAULT_LOG_BYTES
    scn: int = FIRST_SCN
    next_obj: int = FIRST_OBJ
    next_usn: int = 1
    sqn: dict[str, int] = field(default_factory=dict)
    next_sid: int = 30
    audit: int = 220000
    last_time: str = ""
    # how far redo time ran ahead of UTC wall time (a faster clock, --clock-rate): kept, so
    # the source's clock goes on from there at the normal rate instead of standing still
    ahead_us: int = 0
    space: dict[str, list[int]] = field(default_factory=dict)  # obj -> [block, slot, per_block]
    next_block: int = 0x430
    crashed: list[int] = field(default_factory=list)
    next_thread: int = 0
    # blocks changed by committed transactions and not cleaned out yet: dba -> ITL entries
    dirty: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)


def _load_state(raw: bytes) -> State:
    """The saved counters; a field an older version did not save takes its default."""
    return State(**decode_state_fields(raw))  # type: ignore[arg-type]


_PIECES_TABLE: Final = (
    "CREATE TABLE IF NOT EXISTS _gg_pieces "
    "(obj INTEGER, rid INTEGER, pieces TEXT, PRIMARY KEY (obj, rid))"
)


def _load_pieces(conn: sqlite3.Connection) -> dict[int, dict[int, Pieces]]:
    """The chained rows' pieces (``_gg_pieces``: none in a database made before it, which
    gets the table with its first chained row)."""
    out: dict[int, dict[int, Pieces]] = {}
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = '_gg_pieces'").fetchone():
        return out
    for obj, rid, text in conn.execute("SELECT obj, rid, pieces FROM _gg_pieces"):
        got = json.loads(text)
        out.setdefault(obj, {})[rid] = tuple(_piece(*p) for p in got)
    return out


def _piece(
    rid: int, lo: int, hi: int, skip: int = 0, end: int = 0
) -> tuple[int, int, int, int, int]:
    """A kept piece (one kept before columns were cut has no ``skip`` / ``end``)."""
    return int(rid), int(lo), int(hi), int(skip), int(end)


def databases(dirdb: Path) -> list[str]:
    if not dirdb.is_dir():
        return []
    return sorted(p.name for p in dirdb.iterdir() if (p / "data.sqlite").exists())


def create_database(
    dirdb: Path,
    name: str,
    threads: int = 1,
    log_bytes: int = DEFAULT_LOG_BYTES,
    archive: ArchiveParams | None = None,
) -> Path:
    """A new database; ``archive``: its LOG_ARCHIVE_DEST and LOG_ARCHIVE_FORMAT
    (:mod:`engine.embedded.archiver`; default: no destination, Oracle's default format)."""
    name = check_name(name)
    if threads < 1 or threads > 16:
        raise DatabaseError("threads must be between 1 and 16", "GGS-SRC-0105")
    archive = archive or ArchiveParams()
    checked_format(archive.format)  # refused before anything is made
    root = dirdb / name
    if (root / "data.sqlite").exists():
        raise DatabaseError(f"database {name} already exists", "GGS-SRC-0101")
    # 0700 / 0600 whatever the umask (engine/embedded/ownfiles.py checks them at every open)
    root.parent.mkdir(parents=True, exist_ok=True)
    private_dir(root)
    private_dir(root / "redo")
    save_dictionary(root / "dictionary.json", Dictionary())
    os.close(create_private(root / "data.sqlite"))  # SQLite's -wal, -shm take its mode
    conn = sqlite3.connect(root / "data.sqlite")
    conn.execute("CREATE TABLE _gg_state (key TEXT PRIMARY KEY, value BLOB)")
    conn.execute(_PIECES_TABLE)
    state = State(threads=threads, log_bytes=log_bytes)
    conn.execute("INSERT INTO _gg_state VALUES ('state', ?)", (encode_state(state),))
    conn.execute("INSERT INTO _gg_state VALUES ('sessions', ?)", (encode_sessions({}),))
    # (no 'users' value: the default user only, until a user statement (engine/embedded/users.py))
    conn.commit()
    conn.close()
    set_archive_params(root, archive)
    return root


def drop_database(dirdb: Path, name: str) -> None:
    root = dirdb / check_name(name)
    if not (root / "data.sqlite").exists():
        raise DatabaseError(f"database {name.upper()} does not exist", "GGS-SRC-0102")
    with _DirLock(root):
        forget_dest_secret(root)  # its destination's secret leaves the credential store
        shutil.rmtree(root)


class _DirLock:
    """An exclusive flock on ``<db>/lock``: one process per database. ``wait`` seconds are
    allowed for a holder to let go (the Manager holds an idle database for the milliseconds
    its scheduled jobs take, :mod:`engine.embedded.scheduler`)."""

    def __init__(self, root: Path, wait: float = 0.0) -> None:
        self.path = root / "lock"
        self.wait = wait
        self.fh: BinaryIO | None = None

    def __enter__(self) -> _DirLock:
        try:
            self.fh = os.fdopen(open_lock_file(self.path, os.O_RDWR | os.O_APPEND), "a+b")
        except OSError as exc:
            raise DatabaseError(
                f"database {self.path.parent.name} cannot be locked: {exc}", "GGS-SRC-0103"
            ) from None
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(self.fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except OSError as exc:
                if time.monotonic() < deadline:
                    time.sleep(0.01)
                    continue
                self.fh.close()
                foreign = foreign_holder(self.path)
                raise DatabaseError(
                    f"database {self.path.parent.name} is in use by another process"
                    + (f" ({foreign}, not a process of this home)" if foreign else ""),
                    "GGS-SRC-0103",
                ) from exc

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            fcntl.flock(self.fh.fileno(), fcntl.LOCK_UN)
            self.fh.close()
            self.fh = None


class Database:
    """An open database (implements the session layer's ``Engine`` protocol)."""

    def __init__(
        self,
        root: Path,
        *,
        clock: Clock | None = None,
        clock_rate: float = 1.0,
        fsync: bool = False,
        lock_wait: float = LOCK_WAIT,
        component: str = GGSCI_COMPONENT,
    ) -> None:
        """``component``: the process opening the database, as its ggserr.log lines name
        it (an open that runs instance recovery logs it: engine/embedded/recovery.py)."""
        if not (root / "data.sqlite").exists():
            raise DatabaseError(f"database {root.name} does not exist", "GGS-SRC-0102")
        check_database_files(root)  # another user's or a writable file: not a byte read
        self.root = root
        self._lock = _DirLock(root, lock_wait)
        self._lock.__enter__()
        try:
            self.conn = sqlite3.connect(root / "data.sqlite", isolation_level="DEFERRED")
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL" if fsync else "PRAGMA synchronous=OFF")
            # changes stay uncommitted until a checkpoint: with SQLite's default 2 MiB cache
            # they spill to the WAL and every later read of those pages goes back to it
            self.conn.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
            self.dictionary = load_dictionary(root / "dictionary.json")
            self.state: State = _load_state(self._get("state"))
            self.chained = _load_pieces(self.conn)
            saved: dict[str, Session] = decode_sessions(self._get("sessions"))
        except BaseException as exc:
            self._lock.__exit__()  # whatever went wrong: the database is not left locked
            if isinstance(exc, OldFormatError):
                raise DatabaseError(
                    f"cannot open database {root.name}: {exc}, which is no longer read "
                    "because loading it could run code; recreate the database (DROP and "
                    "CREATE, then load its tables again)",
                    "GGS-SRC-0108",
                ) from exc
            if isinstance(exc, sqlite3.Error | df.DataError):
                raise DatabaseError(f"cannot open database {root.name}: {exc}") from exc
            raise
        last = datetime.fromisoformat(self.state.last_time) if self.state.last_time else None
        wall = datetime.now(UTC).replace(tzinfo=None)
        start = max(wall + timedelta(microseconds=self.state.ahead_us), last) if last else wall
        self.clock: Clock = clock or SimClock(start, clock_rate)
        try:
            check_format(root / "redo")
        except RedoFormatError as exc:
            self._lock.__exit__()
            raise DatabaseError(
                f"cannot open database {root.name}: {exc.message}", exc.code
            ) from None
        self.logs = LogSet(
            root / "redo",
            self.state.log_bytes,
            self._micros,
            fsync=fsync,
            progress=lambda: self.state.scn,  # every flush marks each open thread's progress
            threads=lambda: self.state.threads,
        )
        # ARCn: each log a switch archives is copied to the archive destination, if one is set
        self.archiver = Archiver.for_database(root, fsync=fsync)
        self.logs.on_archived = self.archiver
        self.locks: dict[tuple[int, int], str] = {}
        self.table_locks: dict[int, str] = {}
        self.key_locks: dict[tuple[int, str, tuple[bytes | None, ...]], str] = {}
        self.sessions: dict[str, Session] = saved
        self.scheduler = Scheduler(load_jobs(self.conn))
        self.xids_in_use: set[tuple[int, int]] = set()
        for s in saved.values():
            if s.txn is not None:
                self.xids_in_use.add((s.txn.xid.usn, s.txn.xid.slot))
                for key in s.txn.locked:
                    self.locks[key] = s.name
                for kl in s.txn.keys:
                    self.key_locks[kl] = s.name
                for obj in s.txn.direct_tables:
                    self.table_locks[obj] = s.name
        self.dirty_dictionary = False
        self._last_time: datetime | None = None
        self._last_us: int | None = None
        self._flushed_at = time.monotonic()
        self._one_scn: int | None = None  # set inside same_scn()
        #: what instance recovery rolled forward at this open (None: nothing to recover)
        self.rolled_forward: RollForward | None = None
        #: transactions a process killed since the last checkpoint left open, rolled back
        #: at this open (instance recovery: engine/embedded/recovery.py)
        began = time.monotonic()
        try:
            self.recovered = recover(self)
        except BaseException:  # (recovery refused: the database is not left open or locked)
            self.conn.close()
            self._lock.__exit__()
            raise
        #: the OGG line that tells what this open's instance recovery did (None: nothing),
        #: written to the home's ggserr.log (recovery.report) for the opener to show too
        self.recovery_line = report(
            root, self.rolled_forward, self.recovered, time.monotonic() - began, component
        )

    # -- persistence ---------------------------------------------------------------------

    def _get(self, key: str) -> bytes:
        row = self.conn.execute("SELECT value FROM _gg_state WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise DatabaseError(f"database {self.root.name} has no {key}")
        return bytes(row[0])

    def _micros(self) -> int:
        t = self.clock.now()
        return int((t - datetime(1970, 1, 1)).total_seconds() * 1_000_000)

    def checkpoint(self) -> None:
        """Make everything so far durable-as-configured: redo flushed (the log write being
        gathered ended: all redo so far in the files), SQLite committed."""
        self.logs.flush(everything=True)
        last = self._last_time
        if self._last_us is not None:
            from_us = datetime(1970, 1, 1) + timedelta(microseconds=self._last_us)
            last = from_us if last is None or from_us > last else last
        if last is not None:
            self.state.last_time = last.isoformat()
            ahead = last - datetime.now(UTC).replace(tzinfo=None)
            self.state.ahead_us = max(0, ahead // timedelta(microseconds=1))
        self.conn.execute(
            "UPDATE _gg_state SET value = ? WHERE key = 'state'", (encode_state(self.state),)
        )
        # the open transactions with the tables they changed: a process killed before the
        # next checkpoint leaves both as of this one, for recovery at open (recovery.py)
        open_sessions = {n: s for n, s in self.sessions.items() if s.txn is not None}
        self.conn.execute(
            "UPDATE _gg_state SET value = ? WHERE key = 'sessions'",
            (encode_sessions(open_sessions),),
        )
        self.conn.commit()
        if self.dirty_dictionary:
            save_dictionary(self.root / "dictionary.json", self.dictionary)
            self.dirty_dictionary = False

    def close(self) -> None:
        self.checkpoint()
        self.logs.close()
        self.conn.close()
        self._lock.__exit__()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- Engine protocol -----------------------------------------------------------------

    def keep_pieces(self, table: TableDef, rid: int, pieces: Pieces) -> None:
        """Row ``rid`` of ``table`` is chained over ``pieces`` (kept in ``_gg_pieces``, which
        SQLite commits with the rows at each checkpoint: a crash loses both or neither). A
        deleted chained row's entry stays (ROWIDs are never given out again), so a rollback
        of the delete finds its pieces where they were; DROP TABLE removes the table's.
        No ``pieces``: the row is in one piece again (a re-chain rolled back: chained.py)."""
        self.conn.execute(_PIECES_TABLE)
        if not pieces:
            self.chained.get(table.obj, {}).pop(rid, None)
            self.conn.execute("DELETE FROM _gg_pieces WHERE obj = ? AND rid = ?", (table.obj, rid))
            return
        self.chained.setdefault(table.obj, {})[rid] = pieces
        self.conn.execute(
            "INSERT OR REPLACE INTO _gg_pieces (obj, rid, pieces) VALUES (?, ?, ?)",
            (table.obj, rid, json.dumps(pieces)),
        )

    def next_scn(self) -> int:
        if self._one_scn is not None:
            return self._one_scn
        self.state.scn += 1
        return self.state.scn

    @contextmanager
    def same_scn(self) -> Iterator[int]:
        """Every SCN taken inside is one SCN (yielded), for tests of readers merging redo
        threads: the instances of a RAC database keep their SCNs in step by messages, not
        from one counter, so commits on two threads may carry the same SCN."""
        self._one_scn = self.next_scn()
        try:
            yield self._one_scn
        finally:
            self._one_scn = None

    def now(self) -> datetime:
        t = self.clock.now()
        self._last_time = t
        return t

    def now_us(self) -> int:
        us = self.clock.now_us()
        self._last_us = us
        return us

    def new_xid(self) -> Xid:
        st = self.state
        for _ in range(MAX_USN * SLOTS_PER_USN):
            usn = st.next_usn
            st.next_usn = usn % MAX_USN + 1
            key = f"{usn}"
            slot = st.sqn.get(key + ".next", 0)
            st.sqn[key + ".next"] = (slot + 1) % SLOTS_PER_USN
            if (usn, slot) in self.xids_in_use:
                continue
            sk = f"{usn}.{slot}"
            st.sqn[sk] = st.sqn.get(sk, 0x300) + 1
            self.xids_in_use.add((usn, slot))
            return Xid(usn, slot, st.sqn[sk])
        raise DatabaseError("no free transaction slot (too many open transactions)", "ORA-01554")

    def release_xid(self, xid: Xid) -> None:
        self.xids_in_use.discard((xid.usn, xid.slot))

    def allocate(self, table: TableDef, n: int, fresh_block: bool = False) -> list[int]:
        sp = self.state.space[str(table.obj)]
        block, slot, per = sp
        if fresh_block and slot:
            block, slot = self._new_block(), 0
        out = []
        for _ in range(n):
            if slot >= per:
                block, slot = self._new_block(), 0
            out.append(block << 16 | slot)
            slot += 1
        sp[0], sp[1] = block, slot
        return out

    def _new_block(self) -> int:
        self.state.next_block += 1
        return self.state.next_block

    def emit(
        self, thread: int, scn: int, changes: Sequence[ChangeVector], *, switch: bool = True
    ) -> None:
        """One record; the log switches after it once it is ``log_bytes`` big (not with
        ``switch`` False: a chained row's pieces before its head stay in one log)."""
        w = self.logs.writer(thread, scn)
        rec = RedoRecord(thread, w.next_rba(), scn, 1, self.now(), tuple(changes))
        w.append(rec)
        if switch and w.size >= self.state.log_bytes:
            self.logs.switch(thread, self.state.scn + 1)

    @property
    def dirty_blocks(self) -> dict[int, list[tuple[int, int, int]]]:
        return self.state.dirty

    def note_commit(self, blocks: set[int], scn: int) -> None:
        """The blocks a committed transaction changed still carry its ITL entry: the next
        reader cleans them out (4.1), as in seed 002's "Block Cleanouts"."""
        dirty = self.state.dirty
        for dba in blocks:
            entries = dirty.get(dba)
            if entries is None:
                dirty[dba] = [(1, 2, scn)]
            else:
                entries.append((len(entries) % 3 + 1, 2, scn))
                if len(entries) > 3:
                    del entries[0]

    def cleanout(self, thread: int, table: TableDef) -> int:
        """A query read ``table``: write one 4.1 record per dirty block of it."""
        dirty = self.state.dirty
        if not dirty:
            return 0
        blocks = [
            b
            for (b,) in self.conn.execute(
                f'SELECT DISTINCT "_rid" >> 16 FROM "{table.sqlite_name}"'
            )
        ]
        dbas = [make_dba(table.file_no, b) for b in blocks if make_dba(table.file_no, b) in dirty]
        if not dbas:
            return 0
        scn = self.next_scn()
        for dba in sorted(dbas):
            body = Cleanout(scn, tuple(dirty.pop(dba)))
            self.emit(
                thread,
                scn,
                [
                    ChangeVector(
                        4,
                        1,
                        body,
                        typ=0,
                        cls=1,
                        afn=table.file_no,
                        dba=dba,
                        obj=table.dataobj,
                        scn=scn,
                    )
                ],
            )
        return len(dbas)

    def end_transaction(self, thread: int) -> None:
        """After a commit or rollback: hand buffered redo to the OS when there is much of it
        or when the last flush is older than ``FLUSH_INTERVAL`` (so a tailing reader sees
        committed work within about that time, at any transaction rate). Then scheduled
        jobs that are due run (:mod:`engine.embedded.scheduler`)."""
        if self.scheduler.jobs:
            self.scheduler.tick(self)
        w = self.logs.writers.get(thread)
        if w is None or not w.buffered:
            return
        now = time.monotonic()
        if w.buffered > 256 * 1024 or now - self._flushed_at >= FLUSH_INTERVAL:
            self.logs.flush(everything=False)  # the commit ended its LWN: written now
            self._flushed_at = now

    # -- sessions ------------------------------------------------------------------------

    def session(
        self, name: str = "", username: str = "GGUSER", thread: int | None = None
    ) -> Session:
        key = (name or "DEFAULT").upper()
        s = self.sessions.get(key)
        if s is None:
            st = self.state
            if thread is None:
                thread = st.next_thread % st.threads + 1
                st.next_thread += 1
            if not 1 <= thread <= st.threads:
                raise DatabaseError(
                    f"thread {thread} does not exist (threads: {st.threads})", "GGS-SRC-0106"
                )
            st.next_sid += 1
            st.audit += 1
            s = Session(
                key, thread, st.next_sid, (st.next_sid * 37) % 2000 + 1, username.upper(), st.audit
            )
            self.sessions[key] = s
        return s

    def open_transactions(self) -> list[Session]:
        return [s for s in self.sessions.values() if s.txn is not None]

    # -- DDL -----------------------------------------------------------------------------

    def _obj(self) -> int:
        self.state.next_obj = max(self.state.next_obj, self.dictionary.max_obj()) + 1
        return self.state.next_obj

    def create_table(
        self,
        session: Session,
        owner: str,
        name: str,
        columns: Sequence[ColumnDef],
        text: str,
        key: tuple[str, ...] = (),
    ) -> TableDef:
        if f"{owner}.{name}" in self.dictionary.tables:
            raise SqlError("name is already used by an existing object", "ORA-00955")
        if not columns:
            raise SqlError("a table must have at least one column", "ORA-00904")
        obj = self._obj()
        self.state.next_block += 4
        table = TableDef(owner, name, obj, obj, tuple(columns), header_block=self.state.next_block)
        self.state.next_block += 1
        per = max(4, min(400, 7000 // max(8, sum(min(c.length or 22, 60) + 1 for c in columns))))
        self.state.space[str(obj)] = [self.state.next_block + 1, 0, per]
        self.state.next_block += 2
        cols = ", ".join(
            f'"{c.name}" {_SQLITE_TYPE.get(c.type, "TEXT")}{"" if c.nullable else " NOT NULL"}'
            for c in columns
        )
        self.conn.execute(
            f'CREATE TABLE "{table.sqlite_name}" ("_rid" INTEGER PRIMARY KEY, {cols})'
        )
        self.dictionary.add(table)
        if key:
            table = self.add_constraint(session, table, f"SYS_C{obj}", "P", key, text, ddl=False)
        self._ddl(session, table, text)
        return table

    def _storage(self, table: TableDef) -> None:
        """SQLite storage for a table known only from an imported dictionary (empty)."""
        cols = ", ".join(
            f'"{c.name}" {_SQLITE_TYPE.get(c.type, "TEXT")}{"" if c.nullable else " NOT NULL"}'
            for c in table.columns
        )
        self.conn.execute(
            f'CREATE TABLE IF NOT EXISTS "{table.sqlite_name}" ("_rid" INTEGER PRIMARY KEY, {cols})'
        )
        for ix in table.indexes:
            names = ", ".join(f'"{c}"' for c in ix.columns)
            unique = "UNIQUE " if ix.unique else ""
            self.conn.execute(
                f'CREATE {unique}INDEX IF NOT EXISTS "{table.sqlite_name}${ix.name}" '
                f'ON "{table.sqlite_name}" ({names})'
            )

    def add_constraint(
        self,
        session: Session,
        table: TableDef,
        cname: str,
        kind: str,
        columns: tuple[str, ...],
        text: str,
        ddl: bool = True,
        foreign: dict[str, Any] | None = None,
    ) -> TableDef:
        for c in columns:
            table.column_index(c)
        if kind == "F":
            table = self.dictionary.replace_table(table, foreign=(*table.foreign, foreign or {}))
        else:
            if kind == "P" and table.key:
                raise SqlError("table can have only one primary key", "ORA-02260")
            obj = self._obj()
            self.state.next_block += 2
            index = IndexDef(
                cname,
                obj,
                obj,
                columns,
                unique=True,
                primary=kind == "P",
                block=self.state.next_block,
            )
            try:
                self.conn.execute(
                    f'CREATE UNIQUE INDEX "{table.sqlite_name}${cname}" ON "{table.sqlite_name}" '
                    f"({', '.join(chr(34) + c + chr(34) for c in columns)})"
                )
            except sqlite3.IntegrityError as exc:
                raise SqlError(
                    f"cannot validate ({table.owner}.{cname}) - duplicate keys found", "ORA-02437"
                ) from exc
            changes: dict[str, Any] = {"indexes": (*table.indexes, index)}
            if kind == "P":
                changes["key"] = columns
                changes["columns"] = tuple(
                    ColumnDef(c.name, c.type, c.length, False, c.precision, c.scale)
                    if c.name in columns
                    else c
                    for c in table.columns
                )
            else:
                changes["unique"] = (*table.unique, columns)
            table = self.dictionary.replace_table(table, **changes)
        if ddl:
            self._ddl(session, table, text)
        return table

    def drop_table(self, session: Session, table: TableDef, text: str) -> None:
        if any(obj == table.obj for obj, _ in self.locks):
            raise SqlError("resource busy: table has locked rows", "ORA-00054")
        self.conn.execute(f'DROP TABLE "{table.sqlite_name}"')
        if self.chained.pop(table.obj, None):  # (a chained row made the table)
            self.conn.execute("DELETE FROM _gg_pieces WHERE obj = ?", (table.obj,))
        self.dictionary.remove(table.qualified)
        self._ddl(session, table, text, definition=False)

    def _ddl(self, session: Session, table: TableDef, text: str, definition: bool = True) -> None:
        """DDL commits the session's transaction first, then logs 24.1 and its own commit."""
        session.commit(self)
        scn = self.next_scn()
        xid = self.new_xid()
        ids = rg.TxnIds(xid=xid, undo_seq=(scn >> 4) & 0xFFFF)
        body = Ddl(
            xid,
            table.owner,
            table.name,
            table.obj,
            text,
            json.dumps(table.to_json()) if definition else "",
        )
        self.emit(
            session.thread,
            scn,
            [
                rg.slot_alloc(ids, scn),
                ChangeVector(24, 1, body, marker=True, scn=scn),
                rg.session_info(session.sid, session.serial, session.username, "", session.audit),
            ],
        )
        cscn = self.next_scn()
        self.emit(session.thread, cscn, [rg.commit_cv(ids, cscn, rollback=False)])
        self.release_xid(xid)
        self.dirty_dictionary = True
        self.checkpoint()

    # -- logs ----------------------------------------------------------------------------

    def switch_log(self, thread: int | None = None) -> list[int]:
        threads = [thread] if thread else list(range(1, self.state.threads + 1))
        out = []
        for t in threads:
            if not 1 <= t <= self.state.threads:
                raise DatabaseError(f"thread {t} does not exist", "GGS-SRC-0106")
            w = self.logs.switch(t, self.state.scn + 1)
            out.append(w.sequence)
        self.checkpoint()
        return out

    def crash_instance(self, thread: int) -> list[str]:
        """Kill instance ``thread``: its sessions vanish, their transactions are undone in
        the tables but never get a rollback record (orphaned transactions)."""
        if not 1 <= thread <= self.state.threads:
            raise DatabaseError(f"thread {thread} does not exist", "GGS-SRC-0106")
        orphans = []
        self.logs.close_thread(thread)  # a reader merging threads stops waiting on it
        for name, s in list(self.sessions.items()):
            if s.thread != thread:
                continue
            if s.txn is not None:
                orphans.append(str(s.txn.xid))
                s.abandon(self)
            del self.sessions[name]
        if thread not in self.state.crashed:
            self.state.crashed.append(thread)  # Extract's orphan purge asks which died
        self.checkpoint()
        return orphans

    def list_logs(self) -> list[LogInfo]:
        self.logs.flush(everything=True)
        return list_logs(self.root / "redo")

    def records(self, thread: int | None = None, from_scn: int = 0) -> list[LocatedRecord]:
        """Every record (optionally of one thread) with SCN >= ``from_scn``, in log order."""
        self.logs.flush(everything=True)
        out = []
        for info in list_logs(self.root / "redo", thread):
            for lr in read_records(info.path):
                if lr.record.scn >= from_scn:
                    out.append(lr)
        return out

    def append_foreign(self, records: Sequence[RedoRecord], dictionary: Dictionary) -> int:
        """``import-dump``: append records from an Oracle dump, keeping their own SCNs, XIDs,
        RBAs and timestamps; the dump's log sequences become ours (switching as needed)."""
        for t in dictionary.tables.values():
            old = self.dictionary.tables.get(t.qualified)
            if old is not None and (old.obj, old.dataobj) != (t.obj, t.dataobj):
                raise SourceError(f"{t.qualified} already exists with other object numbers")
            if old is None:
                if any(ix.block == 0 for ix in t.indexes):  # leaf blocks for our own redo
                    blocks = []
                    for ix in t.indexes:
                        self.state.next_block += 2
                        blocks.append(replace(ix, block=ix.block or self.state.next_block))
                    t = replace(t, indexes=tuple(blocks))
                self.dictionary.add(t)
                self.state.space[str(t.obj)] = [t.header_block + 4, 0, 100]
                self._storage(t)
        self.dirty_dictionary = True
        for rec in records:
            if rec.thread > self.state.threads:
                raise DatabaseError(
                    f"dump record of thread {rec.thread}: database has "
                    f"{self.state.threads} threads",
                    "GGS-SRC-0106",
                )
            w = self.logs.writer(rec.thread, rec.scn)
            if rec.rba.sequence > w.sequence:
                w = self.logs.switch(rec.thread, rec.scn, to_sequence=rec.rba.sequence)
            w.append(rec)
            self.state.scn = max(self.state.scn, rec.scn)
        self.checkpoint()
        return len(records)

    def table(self, owner: str, name: str) -> TableDef:
        """The dictionary entry of ``owner.name`` (``ORA-00942`` when there is none)."""
        return self.dictionary.get(owner, name)

    def rows(self, table: TableDef) -> list[tuple[Any, ...]]:
        names = ", ".join(f'"{c.name}"' for c in table.columns)
        return self.conn.execute(
            f'SELECT {names} FROM "{table.sqlite_name}" ORDER BY "_rid"'
        ).fetchall()


def open_database(dirdb: Path, name: str, **kwargs: Any) -> Database:
    root = dirdb / check_name(name)
    if not (root / "data.sqlite").exists():
        raise DatabaseError(f"database {name.upper()} does not exist", "GGS-SRC-0102")
    return Database(root, **kwargs)
