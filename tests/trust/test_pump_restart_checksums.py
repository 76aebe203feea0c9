"""A pump killed and restarted many times: every record of every remote trail file passes
its checksum, and the Replicat side reads each transaction exactly once.

Seen in a soak (OGG-01184 "no checksum token" at the first record of the file a
restarted pump began). The pump runs in process; a kill is simulated at a chosen write:
the bytes handed to the operating system stay, the rest is lost, the trail is not
closed (no header patch, no checkpoint), as with SIGKILL. Crash points: after the
header of a new file before any record (a rollover), in the middle of a transaction,
at a random record, with the remote trail cut so the pump copies again from its history.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.home.groups import GroupKind, SourceType
from engine.home.layout import Home
from engine.logdump.views import count_lines
from engine.pump.pump import Pump
from engine.pump.sink import local_writer
from engine.trail.codec import encode_record
from engine.trail.model import FileHeader, TrailPosition
from engine.trail.reader import FileCursor, TrailReader
from engine.trail.recovery import complete_transactions
from engine.trail.txreader import TransactionReader
from engine.trail.writer import TrailWriter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicat"))
from replicat_helpers import EMP, add_group, ins, model, txn_records, upd

PUMP_PRM = "EXTRACT pmp\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/rt\nPASSTHRU\n"
SMALL = 2_000  # bytes per remote file: a rollover every few transactions


class Killed(Exception):
    """The simulated SIGKILL."""


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    return h


def source_trail(home: Home, first: int, count: int, *, checksum: bool = True) -> None:
    """Append ``count`` whole transactions to the local trail dirdat/lt (several files)."""
    writer = TrailWriter.open(
        home.root / "dirdat" / "lt",
        durable=False,
        roll_on_restart=False,
        checksum=checksum,
        max_bytes=1_500,
    )
    writer.define_table(EMP)
    for i in range(first, first + count):
        records = txn_records(1000 + i, [ins(i), upd(i, i), upd(i, i + 1)])
        writer.append_many(encode_record(r) for r in records)
    writer.close()


def start_pump(home: Home, seen: list[str] | None = None) -> Pump:
    """A pump started as the Manager would; the codes it emits go to ``seen``."""
    group = add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/lt")
    codes = seen if seen is not None else []
    run = Pump(
        home,
        model(home, "pmp", PUMP_PRM),
        group,
        lambda code, _sev, _text: codes.append(code),
        durable=False,
    )
    local_writer(run).max_bytes = SMALL
    return run


def kill(run: Pump, torn: int = 0) -> None:
    """What SIGKILL leaves: bytes already written stay, pending ones are lost but for
    the first ``torn`` bytes (a write cut short), nothing is closed or checkpointed; the
    lock goes with the process."""
    writer = local_writer(run)
    pending = b"".join(writer._pending)
    writer._pending.clear()
    if torn and writer._file is not None:
        writer._file.write(pending[:torn])
        writer._file.flush()
    writer._abandon()
    run.reader.close()


def run_until_killed(
    run: Pump, *, at_write: int | None, after_new_file: bool, torn: int = 0
) -> bool:
    """Copy everything, checkpointing after each poll; kill at the ``at_write``-th record
    written (the records before it reach the file, and ``torn`` bytes of it), or right
    after the next new file's header. Returns whether the kill happened."""
    writer = local_writer(run)
    writes = 0
    real_write, real_create = writer._write, writer._create_file

    def write(data: bytes, sealed: bool = False) -> None:
        nonlocal writes
        writes += 1
        if at_write is not None and writes >= at_write:
            writer.flush()
            real_write(data, sealed)
            raise Killed
        real_write(data, sealed)

    def create(seqno: int) -> None:
        real_create(seqno)
        if after_new_file:
            raise Killed

    writer._write = write  # type: ignore[method-assign]
    writer._create_file = create  # type: ignore[method-assign]
    try:
        while run.poll(limit=3):
            run.checkpoint()
        run.checkpoint()
    except Killed:
        kill(run, torn)
        return True
    writer._write = real_write  # type: ignore[method-assign]
    writer._create_file = real_create  # type: ignore[method-assign]
    run.close()
    return False


def remote_files(home: Home) -> list[Path]:
    return sorted((home.root / "dirrmt").glob("rt[0-9]*"))


def checksum_report(path: Path) -> tuple[bool, int, int, list[int]]:
    """(header says Checksum 1, Logdump COUNT's 'Checksums verified' and 'Checksum
    mismatches', the RBAs of records that fail)."""
    with FileCursor(path, 0, verify=False) as cursor:
        entries = list(cursor)
    header = entries[0].record
    assert isinstance(header, FileHeader)
    lines = count_lines(str(path), iter(entries))
    figures = {
        line.split("  ")[0].strip(): int(line.split()[-1])
        for line in lines
        if line.startswith("Checksum")
    }
    bad = [e.rba for e in entries[1:] if e.crc is None or not e.crc.ok]
    return (
        header.get("Checksum", 0) == 1,
        figures.get("Checksums verified", 0),
        figures.get("Checksum mismatches", 0),
        bad,
    )


def assert_remote_sound(home: Home, expected: int) -> None:
    files = remote_files(home)
    assert len(files) > 3
    for path in files:
        sealed, verified, mismatched, bad = checksum_report(path)
        assert sealed, f"{path.name}: header without Checksum 1"
        assert mismatched == 0 and bad == [], f"{path.name}: records failing at RBA {bad}"
        assert verified >= 1
    reader = TrailReader(home.root / "dirrmt" / "rt")  # checks every record's CRC
    try:
        txns = list(complete_transactions((entry.position, rec) for entry, rec in reader.records()))
    finally:
        reader.close()
    keys = [dict(t[0][1].columns)[0] for t in txns]
    assert keys == [str(i) for i in range(expected)]
    assert all(len(t) == 3 for t in txns)


class LiveReader:
    """The Replicat's reader, polling the remote trail while the pump dies and restarts."""

    def __init__(self, home: Home) -> None:
        self.reader = TransactionReader(home.root / "dirrmt" / "rt", TrailPosition(0, 0))
        self.keys: list[str] = []

    def poll(self) -> None:
        for txn in self.reader.poll(None):
            assert len(txn.records) == 3
            self.keys.append(dict(txn.records[0].columns)[0])


def cycles(seed: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    yield {"at_write": None, "after_new_file": True}  # header of a new file, no record
    yield {"at_write": 2, "after_new_file": False}  # mid-transaction
    yield {"at_write": 3, "after_new_file": False}  # right after a transaction
    for _ in range(6):
        yield {
            "at_write": rng.randint(1, 12),
            "after_new_file": rng.random() < 0.3,
            "torn": rng.choice([0, 0, 1, 7, 40, 200]),
        }


@pytest.mark.parametrize("source_checksum", [True, False])
def test_pump_killed_again_and_again_leaves_every_remote_record_sealed(
    home: Home, source_checksum: bool
) -> None:
    total = 0
    kills = 0
    seen: list[str] = []
    live = LiveReader(home)
    for n, crash in enumerate(cycles(7 if source_checksum else 11)):
        source_trail(home, total, 4, checksum=source_checksum)
        total += 4
        kills += run_until_killed(start_pump(home, seen), **crash)
        live.poll()  # reads up to the torn or partly copied tail the kill left
        if n % 3 == 2:
            # a restart that dies right after the header of the file it rolled over to
            run = start_pump(home, seen)
            kill(run)
            live.poll()
    assert kills >= 8
    assert "OGG-01740" in seen  # a RestartAbend marker closed a partly copied transaction
    assert "OGG-01516" in seen  # copied transactions after the checkpoint were skipped
    run_until_killed(start_pump(home), at_write=None, after_new_file=False)
    live.poll()
    live.reader.close()
    assert live.keys == [str(i) for i in range(total)]
    assert_remote_sound(home, total)


def test_pump_copying_a_cut_remote_trail_again_after_kills_seals_every_record(
    home: Home,
) -> None:
    total = 0
    for crash in cycles(3):
        source_trail(home, total, 4)
        total += 4
        run_until_killed(start_pump(home), **crash)
    run_until_killed(start_pump(home), at_write=None, after_new_file=False)
    # cut the newest file with records back into its header: the pump copies from history
    files = [p for p in remote_files(home) if checksum_report(p)[1]]
    newest = files[-1]
    with open(newest, "rb") as handle:
        data = handle.read()
    with FileCursor(newest, 0, verify=False) as cursor:
        rbas = [e.rba for e in cursor]
    with open(newest, "r+b") as handle:
        handle.truncate(rbas[1] if len(rbas) > 1 else len(data))
    seen: list[str] = []
    for crash in cycles(5):
        source_trail(home, total, 2)
        total += 2
        run_until_killed(start_pump(home, seen), **crash)
    assert seen.count("OGG-01741") == 1  # copied again from a history checkpoint
    run_until_killed(start_pump(home), at_write=None, after_new_file=False)
    assert_remote_sound(home, total)


def test_a_reader_at_a_torn_tail_reads_what_the_restarted_writer_put_there(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Replicat's reader meets the torn first record of a new file (the pump was
    killed writing it); before it looks whether a next file exists, the pump restarts:
    recovery cuts the torn bytes and another record of the same length is written at
    that RBA, then the pump rolls over. The reader must read the new bytes, not the torn
    ones it had buffered joined with the rest of the new ones: that false mix abended it
    with OGG-01184 'Checksum mismatch in trail file ...rt000000001, RBA 307: CRC-32
    mismatch' at the first record of the file."""
    trail = home.root / "dirrmt" / "rt"
    first = [encode_record(r) for r in txn_records(1, [ins(1), upd(1, 2)])]
    torn = [encode_record(r) for r in txn_records(2, [ins(2, "x" * 300), upd(2, 3)])]
    again = [encode_record(r) for r in txn_records(3, [ins(3, "y" * 300), upd(3, 4)])]
    writer = TrailWriter.open(trail, durable=False)
    writer.append_many(first)
    writer.sync()
    writer.rollover()
    writer.append_many(torn)
    pending = b"".join(writer._pending)
    writer._pending.clear()
    assert writer._file is not None
    writer._file.write(pending[:150])  # killed in the middle of the first record
    writer._file.flush()
    writer._abandon()

    def restart() -> None:
        w = TrailWriter.open(trail, durable=False)
        assert w.recovery is not None and w.recovery.torn_bytes == 150
        assert w.position == TrailPosition(1, w.position.rba) and w._records == 0
        w.append_many(again)
        w.append_many(first)
        w.close()  # rolls over at the next start; the next file is there already
        TrailWriter.open(trail, durable=False).close()

    real_next = FileCursor.next
    pending_restart = [restart]

    def next_then_restart(cursor: FileCursor) -> Any:
        entry = real_next(cursor)
        if entry is None and cursor.incomplete_tail and pending_restart:
            pending_restart.pop()()
        return entry

    monkeypatch.setattr(FileCursor, "next", next_then_restart)
    reader = TransactionReader(trail, TrailPosition(0, 0))
    keys = [dict(t.records[0].columns)[0] for t in reader.poll(None)]
    keys += [dict(t.records[0].columns)[0] for t in reader.poll(None)]
    reader.close()
    assert not pending_restart
    assert keys == ["1", "3", "1"]
