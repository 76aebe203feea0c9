"""Appending records to a trail: files, file headers, rollover, durability, recovery.

Where it runs: the driver. Extract encodes records on executors with
:func:`engine.trail.codec.encode_record` and hands the bytes to :meth:`TrailWriter.append`
in commit order. The writer

* checks the envelope of every record it is given (garbage never reaches the trail);
* writes the file header of its FORMAT RELEASE (releases.py) and, for 12.2 and later
  unless NO_OBJECTDEFS, a DDR before the first TDR of each file and a TDR (table
  definition) before the first record of a table in each file, for the tables registered
  with :meth:`TrailWriter.define_table` (metadata.py); a release before 12.2 writes none;
* rolls over to the next file before a record that would take the file past
  ``max_bytes`` (MEGABYTES), and on request (:meth:`rollover`);
* makes bytes durable only in :meth:`sync`, which returns the durable position: publish
  a checkpoint only with a position returned by ``sync``;
* on open, runs append-mode recovery (recovery.py) and, as GoldenGate does on restart,
  continues in a new file unless the last one holds no records;
* with ``checksum=True`` (the default) says so in each new file's header (``Checksum 1``)
  and seals every record it writes there with a CRC-32 token (checksum.py). A file keeps
  the setting it was created with (a reopened file its own): a changed setting takes
  effect in the next file the writer creates.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import os
import platform
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from engine._native import load as load_native
from engine.home.lockfile import foreign_holder, open_lock_file
from engine.trail.checksum import GROWTH_NEW_AREA, seal_growth, seal_records
from engine.trail.codec import RecordSummary, encode_record, peek_logcsn, summarize
from engine.trail.continued import span
from engine.trail.envelope import record_length
from engine.trail.errors import TrailIOError
from engine.trail.fileheader import decode_file_header, encode_file_header, new_file_header
from engine.trail.files import TrailName, fsync_directory
from engine.trail.layout import CHECKSUM_CRC32, NON_TRANSACTIONAL_IO_TYPES, TransInd
from engine.trail.metadata import ddr_record, tdr_record
from engine.trail.model import TableDef, TrailPosition
from engine.trail.recovery import (
    RecoveryMode,
    RecoveryResult,
    recover_trail,
    restart_marker,
    scan_file,
)
from engine.trail.releases import DEFAULT_RELEASE, Release, check_table_name, release_of_level

#: The C envelope walk (engine/_native/trailkit.c), when built.
_KIT = load_native("trailkit")

MEGABYTE = 1 << 20


def default_header_info() -> dict[str, str | int]:
    """File-header tokens describing the writing host and program."""
    try:
        version = importlib.metadata.version("ggsci")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return {
        "HostName": socket.gethostname(),
        "OSName": platform.system(),
        "Producer": "ggsci",
        "ProducerVersion": version,
    }


def split_records(data: bytes) -> list[bytes]:
    """Concatenated records cut into records, each envelope checked; the pieces of a
    continued row stay together (continued.py)."""
    out = []
    pos = 0
    while pos < len(data):
        length = span(data, pos)
        out.append(data[pos : pos + length])
        pos += length
    return out


def count_records(data: bytes, rows: bool = False) -> int:
    """How many records concatenated ``data`` holds, each envelope checked (by the C
    kernel when it is built; here when it is not, or to say what is wrong); ``rows``: a
    continued row's pieces counted as one (continued.py; always here, in Python)."""
    if _KIT is not None and not rows:
        counted: int = _KIT.count_records(data)
        if counted >= 0:
            return counted
    pos = n = 0
    while pos < len(data):
        pos += span(data, pos) if rows else record_length(data, pos)
        n += 1
    return n


def seal(data: bytes) -> bytes:
    """Concatenated records, each with its checksum token (checksum.py): by the C kernel
    when it is built; here when it is not, or to say what is wrong."""
    if _KIT is not None:
        sealed: bytes | None = _KIT.seal(data)
        if sealed is not None:
            return sealed
    return seal_records(data)


def _wall_clock_us() -> int:
    return time.time_ns() // 1000


class TrailWriter:
    """The single writer of one trail. Use :meth:`open`; not thread-safe."""

    def __init__(
        self,
        trail: TrailName,
        *,
        max_bytes: int,
        header_info: Mapping[str, str | int],
        clock: Callable[[], int],
        durable: bool,
        checksum: bool = True,
        release: Release = DEFAULT_RELEASE,
        objectdefs: bool = True,
    ) -> None:
        self.trail = trail
        self.release = release  # FORMAT RELEASE of the files this writer creates
        self._file_release: Release | None = release  # the current file's (None: legacy)
        self.objectdefs = objectdefs  # OBJECTDEFS | NO_OBJECTDEFS: DDR/TDR records
        self._ddr_written = False
        self._tdr_count = 0
        self._names_ok: set[str] = set()
        self._follow_existing = False
        self.checksum = checksum  # for the files this writer creates
        self._sealing = checksum  # what the current file's header says
        self.max_bytes = max_bytes
        self._header_info = dict(header_info)
        self._clock = clock
        self._durable_io = durable
        self._file: BinaryIO | None = None
        self._pending: list[bytes] = []
        self._seqno = 0
        self._size = 0  # bytes in the current file, pending included
        self._header_tokens: dict[str, str | int] = {}
        self._defined: dict[str, TableDef] = {}
        self._defs_written: set[str] = set()
        self._records = 0
        self._first_csn: str | None = None
        self._last_csn: str | None = None
        self._first_io: int | None = None
        self._last_io: int | None = None
        self._durable = TrailPosition(0, 0)
        self._lock_handle: BinaryIO | None = None
        self.recovery: RecoveryResult | None = None

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        trail: str | os.PathLike[str] | TrailName,
        *,
        megabytes: int = 500,
        max_bytes: int | None = None,
        recovery: RecoveryMode = RecoveryMode.APPEND,
        roll_on_restart: bool = True,
        start_seqno: int = 0,
        header_info: Mapping[str, str | int] | None = None,
        clock: Callable[[], int] = _wall_clock_us,
        durable: bool = True,
        checksum: bool = True,
        release: Release | None = None,
        objectdefs: bool = True,
    ) -> TrailWriter:
        """Open a trail for appending, creating its first file or recovering its tail.

        ``header_info`` adds file-header tokens (Producer, DbName, GroupName, URI, ...);
        without it, :func:`default_header_info` (this host and program) is used.
        ``clock`` gives microseconds since the epoch (CreationTime). ``durable=False``
        skips fsync (tests and benchmarks only). ``checksum`` (EXTTRAIL/RMTTRAIL
        CHECKSUM | NOCHECKSUM) seals the records of each new file with a CRC-32.
        ``recovery`` (RECOVERYOPTIONS): APPEND keeps a partly written transaction and
        writes a RestartAbend marker after it; OVERWRITE cuts it (recovery.py).
        ``release`` (FORMAT RELEASE) is the format of the files it creates: their header's
        Compatibility and, from 12.2, DDR/TDR metadata records unless ``objectdefs`` is
        False (NO_OBJECTDEFS). A reopened file of another release is rolled over (or, if it
        holds no records, rewritten), so each file is of one release (seed 003). Without
        ``release`` an existing trail keeps the release of its last file (GoldenGate 19c:
        an upgraded Extract writes the existing format unless FORMAT RELEASE says
        otherwise) and a new trail gets ``DEFAULT_RELEASE``.
        """
        name = trail if isinstance(trail, TrailName) else TrailName.parse(trail)
        limit = max_bytes if max_bytes is not None else megabytes * MEGABYTE
        writer = cls(
            name,
            max_bytes=limit,
            header_info=default_header_info() if header_info is None else header_info,
            clock=clock,
            durable=durable,
            checksum=checksum,
            release=release or DEFAULT_RELEASE,
            objectdefs=objectdefs,
        )
        writer._follow_existing = release is None
        try:
            name.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TrailIOError(f"cannot create {name.directory}: {exc.strerror}") from exc
        writer._lock()
        try:
            writer._start(recovery, roll_on_restart, start_seqno)
        except BaseException:
            writer._abandon()
            raise
        return writer

    def _start(self, recovery: RecoveryMode, roll_on_restart: bool, start_seqno: int) -> None:
        if not self.trail.seqnos():
            self._create_file(start_seqno)
            self.recovery = RecoveryResult(None, 0, 0, "none", self.position)
            return
        result = recover_trail(self.trail, recovery)
        self.recovery = result
        self._reopen(result.resume.seqno)
        if self._follow_existing and self._file_release is not None:
            self.release = self._file_release
        if result.action == "marked":
            self.append(encode_record(restart_marker(self._clock())))
        if roll_on_restart and self._records > 0:
            self.rollover()
        elif self._file_release != self.release:
            self.set_release(self.release)
        self.sync()

    def _abandon(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._unlock()

    def _lock(self) -> None:
        """One writer per trail: an exclusive lock on ``<dir>/<prefix>.lock``, taken
        before recovery touches any file and held until close."""
        path = self.trail.directory / f"{self.trail.prefix}.lock"
        try:
            handle = os.fdopen(open_lock_file(path, os.O_WRONLY | os.O_APPEND), "ab")
        except OSError as exc:
            raise TrailIOError(f"cannot create lock file {path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            handle.close()
            foreign = foreign_holder(path)
            who = f" ({foreign}, not a process of this home)" if foreign else ""
            raise TrailIOError(
                f"trail {self.trail} is being written by another writer{who}"
            ) from exc
        self._lock_handle = handle

    def _unlock(self) -> None:
        if self._lock_handle is not None:
            self._lock_handle.close()
            self._lock_handle = None

    def _create_file(self, seqno: int) -> None:
        path = self.trail.file(seqno)
        tokens = new_file_header(
            seqno=seqno,
            file_name=str(path),
            creation_time_us=self._clock(),
            info=self._header_info,
            release=self.release,
        )
        if self.checksum:
            tokens["Checksum"] = CHECKSUM_CRC32
        header = encode_file_header(tokens)
        try:
            handle = open(path, "xb")  # noqa: SIM115 (owned by the writer until close)
            handle.write(header)
            handle.flush()
            if self._durable_io:
                os.fsync(handle.fileno())
                fsync_directory(self.trail.directory)
        except OSError as exc:
            raise TrailIOError(f"cannot create trail file {path}: {exc.strerror}") from exc
        self._file = handle
        self._seqno = seqno
        self._size = len(header)
        self._header_tokens = tokens
        self._sealing = self.checksum
        self._file_release = self.release
        self._defs_written = set()
        self._ddr_written = False
        self._tdr_count = 0
        self._stats_reset()
        self._durable = TrailPosition(seqno, self._size)

    def _reopen(self, seqno: int) -> None:
        path = self.trail.file(seqno)
        scan = scan_file(path, seqno)
        if not scan.has_header:
            path.unlink()
            self._create_file(seqno)
            return
        try:
            handle = open(path, "r+b")  # noqa: SIM115
            handle.seek(scan.valid_end)
        except OSError as exc:
            raise TrailIOError(f"cannot reopen trail file {path}: {exc.strerror}") from exc
        with open(path, "rb") as reader:
            header, _ = decode_file_header(reader.read(1 << 16))
        self._file = handle
        self._seqno = seqno
        self._size = scan.valid_end
        self._header_tokens = dict(header.tokens)
        self._sealing = header.get("Checksum", 0) == CHECKSUM_CRC32
        self._file_release = release_of_level(header.compatibility)
        self._defs_written = set(scan.metadata_tables)
        self._ddr_written = scan.ddr_written
        self._tdr_count = len(scan.metadata_tables)
        self._records = scan.records
        self._first_csn = scan.first_csn
        self._last_csn = scan.last_csn
        self._first_io = scan.first_io_time_us
        self._last_io = scan.last_io_time_us
        self._durable = TrailPosition(seqno, scan.valid_end)

    def _stats_reset(self) -> None:
        self._records = 0
        self._first_csn = None
        self._last_csn = None
        self._first_io = None
        self._last_io = None

    # -- writing ---------------------------------------------------------------------------
    @property
    def position(self) -> TrailPosition:
        """Where the next record will be written (not necessarily durable yet)."""
        return TrailPosition(self._seqno, self._size)

    @property
    def durable_position(self) -> TrailPosition:
        """The end of the bytes made durable by the last :meth:`sync`."""
        return self._durable

    def set_release(self, release: Release) -> None:
        """Write ``release`` from now on: the current file is rolled over when it holds
        records, or its header rewritten when it holds none (a file is of one release)."""
        self.release = release
        if self._file_release == release or self._file is None:
            return
        if self._records:
            self.rollover()
            return
        self.flush()
        tokens = new_file_header(
            seqno=self._seqno,
            file_name=str(self.current_file),
            creation_time_us=self._clock(),
            info=self._header_info,
            release=release,
        )
        if self._sealing:
            tokens["Checksum"] = CHECKSUM_CRC32
        header = encode_file_header(tokens)
        try:
            self._file.seek(0)
            self._file.truncate()
            self._file.write(header)
            self._file.flush()
        except OSError as exc:
            raise TrailIOError(f"cannot rewrite trail file header: {exc.strerror}") from exc
        self._header_tokens = tokens
        self._size = len(header)
        self._file_release = release
        self._defs_written = set()
        self._ddr_written = False
        self._tdr_count = 0
        self._durable = TrailPosition(self._seqno, self._size)

    @property
    def writes_metadata(self) -> bool:
        """Whether the current file gets DDR/TDR records (12.2+, OBJECTDEFS)."""
        release = self._file_release
        return self.objectdefs and (release is None or release.metadata)

    def _needs_definition(self, table: str) -> bool:
        return table in self._defined and table not in self._defs_written and self.writes_metadata

    def _check_name(self, table: str) -> None:
        if table not in self._names_ok and self._file_release is not None:
            check_table_name(self._file_release, table)
            self._names_ok.add(table)

    def define_table(self, table: TableDef) -> None:
        """Register column names; a Metadata record precedes the table's first record
        in each file from now on."""
        if self._defined.get(table.table) != table:
            self._defined[table.table] = table
            self._defs_written.discard(table.table)

    def append(self, *records: bytes) -> TrailPosition:
        """Append encoded records; return the position after the last one."""
        return self.append_many(records)

    @property
    def seals_records(self) -> bool:
        """Whether records given sealed (:meth:`append_transaction` ``sealed``) fit: the
        current file and every file after it (the configured CHECKSUM) carry checksums."""
        return self._sealing and self.checksum

    def append_many(self, records: Iterable[bytes], *, sealed: bool = False) -> TrailPosition:
        """Append encoded records in order; return the position after the last one.

        Each record's envelope and row header are checked (CorruptRecordError otherwise;
        the records before it in the batch stay appended). Nothing is durable until
        :meth:`sync`. ``sealed``: the records carry their checksums already.
        """
        if self._file is None:
            raise TrailIOError(f"trail {self.trail} is closed")
        for data in records:
            summary = summarize(data)
            if summary is None:
                raise TrailIOError("a file header cannot be appended as a record")
            self._check_name(summary.table)
            definitions = self._definitions(summary)
            needed = len(data) + sum(len(d) for d in definitions)
            if self._sealing:  # (a sealed record: as if it were not, for the same files)
                grows = GROWTH_NEW_AREA - seal_growth(data) if sealed else GROWTH_NEW_AREA
                needed += len(definitions) * GROWTH_NEW_AREA + grows
            if self._records and self._size + needed > self.max_bytes:
                self.rollover()
                definitions = self._definitions(summary)
            for definition in definitions:
                self._write(definition)
            if definitions:
                self._ddr_written = True
                self._tdr_count += 1
                self._defs_written.add(summary.table)
            self._write(data, sealed)
            if summary.io_type not in NON_TRANSACTIONAL_IO_TYPES:
                if self._first_io is None:
                    self._first_io = summary.io_time_us
                self._last_io = summary.io_time_us
                if summary.trans_ind in (TransInd.BEGIN, TransInd.WHOLE):
                    csn = peek_logcsn(data)
                    if csn is not None:
                        self._first_csn = self._first_csn or csn
                        self._last_csn = csn
        return self.position

    def append_transaction(
        self,
        records: bytes,
        count: int,
        tables: Iterable[str],
        io_time_us: int,
        logcsn: str | None,
        *,
        sealed: bool = False,
    ) -> TrailPosition:
        """Append the ``count`` records of one transaction, encoded and concatenated (the
        Extract's miner assembles them), all with IO time ``io_time_us``, the first with
        LOGCSN ``logcsn``. One write when they fit in the current file and their tables'
        Metadata records are there already; record by record (:meth:`append_many`)
        otherwise. The records' envelopes are checked either way. ``sealed``: they carry
        their checksums already (sealed in the Extract's tasks: only when
        :attr:`seals_records`)."""
        if self._file is None:
            raise TrailIOError(f"trail {self.trail} is closed")
        if sealed and not self.seals_records:
            raise TrailIOError(f"sealed records for {self.trail}, which has no checksums")
        data = records if sealed or not self._sealing else seal(records)
        tables = tuple(tables)
        for table in tables:
            self._check_name(table)
        if self._size + len(data) > self.max_bytes or any(
            self._needs_definition(t) for t in tables
        ):
            return self.append_many(split_records(records), sealed=sealed)
        if count_records(data) != count and count_records(data, rows=True) != count:
            raise TrailIOError(f"a transaction of {count} records holds another number")
        self._pending.append(data)
        self._size += len(data)
        self._records += count
        if self._first_io is None:
            self._first_io = io_time_us
        self._last_io = io_time_us
        if logcsn is not None:
            self._first_csn = self._first_csn or logcsn
            self._last_csn = logcsn
        if len(self._pending) >= 512:
            self.flush()
        return self.position

    def _definitions(self, summary: RecordSummary) -> list[bytes]:
        """The metadata records due before a record of this file: its table's TDR, after
        the file's DDR when there is none yet; stamped with the record's IO time."""
        if not self._needs_definition(summary.table):
            return []
        out = []
        if not self._ddr_written:
            name = self._header_info.get("DbName", "")
            out.append(encode_record(ddr_record(summary.io_time_us, global_name=str(name))))
        definition = self._defined[summary.table]
        out.append(
            encode_record(
                tdr_record(
                    definition, summary.io_time_us, ddr_index=1, tdr_index=self._tdr_count + 1
                )
            )
        )
        return out

    def _write(self, data: bytes, sealed: bool = False) -> None:
        if self._sealing and not sealed:
            data = seal(data)
        self._pending.append(data)
        self._size += len(data)
        self._records += 1
        if len(self._pending) >= 4096:
            self.flush()

    def flush(self) -> None:
        """Hand pending bytes to the operating system (survives a process crash, not a
        power loss)."""
        if self._pending and self._file is not None:
            try:
                self._file.write(b"".join(self._pending))
                self._file.flush()
            except OSError as exc:
                raise TrailIOError(f"write to {self.trail} failed: {exc.strerror}") from exc
            self._pending.clear()

    def sync(self) -> TrailPosition:
        """Make everything appended so far durable; return that durable position."""
        self.flush()
        if self._file is not None and self._durable_io:
            try:
                os.fsync(self._file.fileno())
            except OSError as exc:
                raise TrailIOError(f"fsync of {self.trail} failed: {exc.strerror}") from exc
        self._durable = self.position
        return self._durable

    def rollover(self) -> TrailPosition:
        """Finish the current file and start the next one; return the new position."""
        self._finish_file()
        self._create_file(self._seqno + 1)
        return self.position

    def _finish_file(self) -> None:
        self.sync()
        if self._file is None:
            return
        tokens = dict(self._header_tokens)
        tokens.update(
            FileSize=self._size,
            FirstCSN=self._first_csn or "",
            LastCSN=self._last_csn or "",
            FirstIOTime=self._first_io or 0,
            LastIOTime=self._last_io or 0,
            RecordCount=self._records,
        )
        header = encode_file_header(tokens)
        try:
            self._file.seek(0)
            self._file.write(header)
            self._file.flush()
            if self._durable_io:
                os.fsync(self._file.fileno())
            self._file.close()
        except OSError as exc:
            raise TrailIOError(f"cannot finish trail file: {exc.strerror}") from exc
        self._file = None

    def close(self) -> TrailPosition:
        """Sync, complete the file header and release the trail."""
        position = self.position
        try:
            self._finish_file()
        finally:
            self._unlock()
        self._durable = position
        return position

    @property
    def current_file(self) -> Path:
        return self.trail.file(self._seqno)

    def __enter__(self) -> TrailWriter:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._file is not None:
            self.close()
