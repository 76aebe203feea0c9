"""Issue 12 "Trust": nothing lost or doubled silently in trails.

- A trail cut short behind its write checkpoint: Extract captures the lost transactions
  again (exactly once) or abends naming the file and the positions; the pump copies them
  again from its source trail or abends; a reader (pump, Replicat) whose read checkpoint
  is past the end of its trail file abends (OGG-01705) instead of waiting forever.
- A changed byte in a trail record: with checksums (the default) the pump and Replicat
  abend naming the file and the RBA, Logdump shows the mismatch; with NOCHECKSUM the old
  behaviour (the changed value is read as it is).
"""

from __future__ import annotations

import contextlib
import io
import sqlite3
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.extract.run import ExtractRun
from engine.extract.start import ExtractError
from engine.home.checkpoints import Position as CpPosition
from engine.home.checkpoints import WriteCheckpoint, load_checkpoints, save_checkpoints
from engine.home.groups import GroupKind, SourceType
from engine.home.layout import Home
from engine.logdump.dump import dump_files
from engine.logdump.session import LogdumpSession
from engine.pump import PumpError
from engine.pump.pump import Pump
from engine.replicat import ReplicatError
from engine.replicat.engine import ReplicatRun
from engine.trail.codec import encode_record
from engine.trail.errors import TrailError
from engine.trail.fileheader import decode_file_header
from engine.trail.reader import TrailReader
from engine.trail.writer import TrailWriter
from params.check import check_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRM = "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\nTABLE hr.emp;\n"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    return h


@pytest.fixture
def source(home: Home) -> Iterator[Callable[[], Database]]:
    root = create_database(home.dirdb, "src")
    yield lambda: Database(root)


def sql(open_db: Callable[[], Database], *statements: str) -> None:
    with open_db() as db:
        session = db.session("s1")
        for statement in statements:
            execute(db, session, statement)


def transactions(open_db: Callable[[], Database], first: int, count: int) -> None:
    """``count`` committed transactions of two inserts each, keys from ``first``."""
    statements = []
    for i in range(first, first + count):
        statements += [
            f"INSERT INTO hr.emp VALUES ({2 * i}, 'n{i}', {i})",
            f"INSERT INTO hr.emp VALUES ({2 * i + 1}, 'm{i}', {i})",
            "COMMIT",
        ]
    sql(open_db, *statements)


def extract(
    home: Home, spark: SparkSession, prm: str = PRM
) -> tuple[ExtractRun, list[tuple[str, str]]]:
    events: list[tuple[str, str]] = []
    run = ExtractRun(
        home,
        check_text(prm).model,
        None,
        lambda code, _sev, text: events.append((code, text)),
        spark=spark,
        durable=False,
    )
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    return run, events


def trail_transactions(trail: Path) -> list[tuple[Any, ...]]:
    """The trail as its transactions: (LOGCSN, TRANID, [(op, columns), ...]) in order."""
    out: list[tuple[Any, ...]] = []
    for _, rec in TrailReader(trail).records():
        if rec.begins_transaction:
            out.append((rec.logcsn, rec.tranid, []))
        out[-1][2].append((rec.op_name, rec.columns))
    return out


def cut(path: Path, nbytes: int) -> None:
    """Remove the last ``nbytes`` of a file (a trail file cut short, whole records)."""
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(size - nbytes)


def cut_transactions(path: Path, n: int) -> int:
    """Cut the last ``n`` transactions off a trail file; the bytes removed."""
    lost = path.stat().st_size - record_ends(path)[-n - 1]
    cut(path, lost)
    return lost


def record_ends(path: Path) -> list[int]:
    """The RBAs where the transactions of a trail file end."""
    seqno = int(path.name[2:])
    reader = TrailReader(path.parent / path.name[:2], start=None)
    return [e.end.rba for e, r in reader.records() if e.seqno == seqno and r.ends_transaction]


# -- Extract: a local trail cut short behind its write checkpoint ------------------------
def test_extract_captures_a_cut_trail_again_exactly_once(
    home: Home, source: Callable[[], Database], spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    sql(source, "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20), sal NUMBER)")
    transactions(source, 0, 3)
    extract(home, spark)  # run 1: file 0
    transactions(source, 3, 5)
    extract(home, spark)  # run 2 (rolls over): file 1
    trail = home.root / "dirdat" / "aa"
    uncut = trail_transactions(trail)
    assert len(uncut) == 8
    # The last 3 committed transactions of file 1 are lost (whole records cut away).
    lost = cut_transactions(home.root / "dirdat" / "aa000000001", 3)
    assert len(trail_transactions(trail)) == 5
    # With the redo gone it cannot be captured again: abend, naming what is missing.
    with monkeypatch.context() as m:
        m.setattr("engine.extract.start.list_logs", lambda *_a: [])
        m.setattr("engine.embedded.catalog.list_logs", lambda *_a: [])  # where it reads them
        with pytest.raises(ExtractError) as caught:
            extract(home, spark)
    assert caught.value.code == "OGG-01496"
    assert f"{lost} bytes are missing" in caught.value.text
    assert "is no longer available (oldest: none)" in caught.value.text
    # That start rolled the trail over to an empty file 2: the gap in file 1 still shows.
    assert (home.root / "dirdat" / "aa000000002").exists()

    _, events = extract(home, spark)
    warning = [t for c, t in events if c == "OGG-01741"]
    assert len(warning) == 1
    assert f"{lost} bytes are missing" in warning[0] and "aa000000001" in warning[0]
    assert trail_transactions(trail) == uncut  # each lost transaction once, in order
    # A further restart adds nothing.
    extract(home, spark)
    assert trail_transactions(trail) == uncut


def test_extract_abends_when_no_checkpoint_precedes_the_lost_data(
    home: Home, source: Callable[[], Database], spark: SparkSession
) -> None:
    sql(source, "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20), sal NUMBER)")
    transactions(source, 0, 6)
    extract(home, spark)  # one run, one poll: no checkpoint before the end of the data
    file0 = home.root / "dirdat" / "aa000000000"
    cps = load_checkpoints(home, "EXTRACT", "E1")
    assert cps is not None
    written = cps.writes[0].position
    cut_transactions(file0, 3)
    end = file0.stat().st_size
    with pytest.raises(ExtractError) as caught:
        extract(home, spark)
    assert caught.value.code == "OGG-01496"
    text = caught.value.text
    assert f"ends at Seqno 0, RBA {end}" in text and "aa000000000" in text
    assert f"write checkpoint is Seqno 0, RBA {written.rba}" in text
    assert "cannot be captured again" in text
    assert "\n" not in text


def test_extract_moved_to_a_new_trail_is_not_taken_for_a_cut_one(
    home: Home, source: Callable[[], Database], spark: SparkSession
) -> None:
    """ADD EXTTRAIL of a new trail and EXTTRAIL changed to it: the old trail's position in
    the capture state is no write checkpoint of the new one."""
    sql(source, "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20), sal NUMBER)")
    transactions(source, 0, 3)
    extract(home, spark)
    cps = load_checkpoints(home, "EXTRACT", "E1")
    assert cps is not None
    new = WriteCheckpoint("./dirdat/bb", "EXTTRAIL", CpPosition(seqno=0), 500)
    save_checkpoints(home, cps.with_write(new))  # what ADD EXTTRAIL ./dirdat/bb does
    transactions(source, 3, 2)
    _, events = extract(home, spark, PRM.replace("./dirdat/aa", "./dirdat/bb"))
    assert not [c for c, _ in events if c in ("OGG-01741", "OGG-01496")]
    assert len(trail_transactions(home.root / "dirdat" / "bb")) == 2


# -- pump and Replicat --------------------------------------------------------------------
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicat"))
from replicat_helpers import EMP, add_group, ins, model, txn_records, upd  # noqa: E402

PUMP_PRM = "EXTRACT pmp\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/bb{opt}\nPASSTHRU\n"
REP_PRM = "REPLICAT rep\nTARGETDB ./tgt.db\nASSUMETARGETDEFS\nMAP hr.emp, TARGET hr.emp;\n"


def source_trail(home: Home, txns: list[list[Any]], *, checksum: bool = True) -> None:
    """Append whole transactions to the local trail dirdat/aa."""
    writer = TrailWriter.open(
        home.root / "dirdat" / "aa", durable=False, roll_on_restart=False, checksum=checksum
    )
    writer.define_table(EMP)
    for records in txns:
        writer.append_many(encode_record(r) for r in records)
    writer.close()


def pump(home: Home, opt: str = "") -> tuple[Pump, list[tuple[str, str]]]:
    group = add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    seen: list[tuple[str, str]] = []
    run = Pump(
        home,
        model(home, "pmp", PUMP_PRM.format(opt=opt)),
        group,
        lambda code, _sev, text: seen.append((code, text)),
        durable=False,
    )
    return run, seen


def pump_all(home: Home) -> list[tuple[str, str]]:
    run, seen = pump(home)
    try:
        run.run(lambda: False, stop_at_eof=True)
    finally:
        run.close()
    return seen


def batch(first: int, count: int) -> list[list[Any]]:
    return [txn_records(100 + i, [ins(i), upd(i, i)]) for i in range(first, first + count)]


def test_pump_copies_a_cut_remote_trail_again_exactly_once(home: Home) -> None:
    source_trail(home, batch(0, 3))
    pump_all(home)
    source_trail(home, batch(3, 5))
    pump_all(home)  # restart: rolls over, remote file 1
    remote = home.root / "dirrmt" / "bb"
    uncut = trail_transactions(remote)
    assert len(uncut) == 8
    lost = cut_transactions(home.root / "dirrmt" / "bb000000001", 3)
    TrailWriter.open(remote, durable=False).close()  # a failed start rolled over: file 2
    seen = pump_all(home)
    warning = [t for c, t in seen if c == "OGG-01741"]
    assert len(warning) == 1 and f"{lost} bytes are missing" in warning[0]
    assert trail_transactions(remote) == uncut
    pump_all(home)
    assert trail_transactions(remote) == uncut


def test_pump_abends_when_no_checkpoint_precedes_the_lost_data(home: Home) -> None:
    source_trail(home, batch(0, 6))
    run, _ = pump(home)
    run.poll()
    run.checkpoint()
    run.close()
    file0 = home.root / "dirrmt" / "bb000000000"
    cut_transactions(file0, 3)
    with pytest.raises(PumpError) as caught:
        pump(home)
    assert caught.value.code == "OGG-01496"
    assert f"ends at Seqno 0, RBA {file0.stat().st_size}" in caught.value.text
    assert "bb000000000" in caught.value.text and "cannot be copied again" in caught.value.text


def test_pump_abends_when_its_read_checkpoint_is_past_the_end_of_its_source_file(
    home: Home,
) -> None:
    source_trail(home, batch(0, 4))
    pump_all(home)
    local = home.root / "dirdat" / "aa000000000"
    size = local.stat().st_size
    cut(local, size - record_ends(local)[1])
    with pytest.raises(PumpError) as caught:
        pump(home)
    assert caught.value.code == "OGG-01705"
    assert f"Input checkpoint position {size}" in caught.value.text
    assert f"'{local}' is greater than the size of the file" in caught.value.text


def test_pump_goes_on_after_its_source_was_cut_and_captured_again(home: Home) -> None:
    """The source Extract lost its last 3 transactions, captured them again into a new
    file and went on: the pump, which had copied them already, copies only what is new."""
    source_trail(home, batch(0, 5))
    pump_all(home)
    local = home.root / "dirdat" / "aa000000000"
    cut(local, local.stat().st_size - record_ends(local)[1])
    writer = TrailWriter.open(home.root / "dirdat" / "aa", durable=False)  # rolls: file 1
    writer.define_table(EMP)
    for records in batch(2, 4):  # 3 captured again, 1 new
        writer.append_many(encode_record(r) for r in records)
    writer.close()
    seen = pump_all(home)
    assert any(c == "OGG-01741" and "not copied again" in t for c, t in seen)
    got = [t[0] for t in trail_transactions(home.root / "dirrmt" / "bb")]
    assert got == ["100", "101", "102", "103", "104", "105"]


def flip_value(path: Path, value: bytes) -> int:
    """Change one byte of ``value`` in the file (the record still decodes); its RBA."""
    data = bytearray(path.read_bytes())
    at = data.index(value)
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    rba = 0
    for entry in TrailReader(path.parent / path.name[:2], verify=False):
        if entry.rba <= at < entry.rba + entry.length:
            rba = entry.rba
    return rba


def test_pump_abends_on_a_changed_byte_naming_file_and_rba(home: Home) -> None:
    source_trail(home, [txn_records(100, [ins(1, "alice")]), txn_records(101, [ins(2, "bobby")])])
    rba = flip_value(home.root / "dirdat" / "aa000000000", b"bobby")
    run, _ = pump(home)
    with pytest.raises(PumpError) as caught:
        run.run(lambda: False, stop_at_eof=True)
    run.close()
    assert caught.value.code == "OGG-01184"
    text = caught.value.text
    assert f"{home.root / 'dirdat' / 'aa000000000'}, RBA {rba}" in text
    assert "Checksum mismatch" in text and "\n" not in text
    # The transaction before the bad record was copied; nothing after it.
    assert [t[0] for t in trail_transactions(home.root / "dirrmt" / "bb")] == ["100"]


def test_without_checksums_the_changed_byte_is_copied_as_it_is(home: Home) -> None:
    source_trail(home, [txn_records(100, [ins(1, "bobby")])], checksum=False)
    flip_value(home.root / "dirdat" / "aa000000000", b"bobby")
    pump_all(home)
    [(_, _, [(_, columns)])] = trail_transactions(home.root / "dirrmt" / "bb")
    assert dict(columns)[1] == "cobby1"  # the old behaviour: nothing can tell


def test_pump_output_follows_its_rmttrail_option(home: Home) -> None:
    source_trail(home, batch(0, 1))
    run, _ = pump(home, ", NOCHECKSUM")
    run.run(lambda: False, stop_at_eof=True)
    run.close()
    entries = list(TrailReader(home.root / "dirrmt" / "bb"))
    assert all(e.crc is None for e in entries)
    assert (
        decode_file_header((home.root / "dirrmt" / "bb000000000").read_bytes())[0].get("Checksum")
        is None
    )


@pytest.fixture
def target(home: Home) -> Path:
    db = home.root / "tgt.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE emp (id NUMERIC PRIMARY KEY, name TEXT, sal NUMERIC)")
    conn.close()
    return db


def replicat(home: Home) -> ReplicatRun:
    group = add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, "./dirdat/aa")
    return ReplicatRun(home, model(home, "rep", REP_PRM), group, lambda *_: None)


def names(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT name FROM emp ORDER BY id")]
    finally:
        conn.close()


def test_replicat_abends_on_a_changed_byte_after_applying_what_precedes(
    home: Home, target: Path
) -> None:
    source_trail(home, [txn_records(100, [ins(1, "alice")]), txn_records(101, [ins(2, "bobby")])])
    rba = flip_value(home.root / "dirdat" / "aa000000000", b"bobby")
    run = replicat(home)
    with pytest.raises(ReplicatError) as caught:
        run.run(lambda: False, stop_at_eof=True)
    run.close()
    assert caught.value.code == "OGG-01184"
    assert f"aa000000000, RBA {rba}: CRC-32 mismatch" in caught.value.text
    assert names(target) == ["alice1"]  # never the changed "cobby2"
    cps = load_checkpoints(home, "REPLICAT", "REP")
    assert cps is not None and 0 < cps.reads[0].current.rba < rba + 1


def test_replicat_without_checksums_applies_the_changed_value(home: Home, target: Path) -> None:
    source_trail(home, [txn_records(100, [ins(2, "bobby")])], checksum=False)
    flip_value(home.root / "dirdat" / "aa000000000", b"bobby")
    run = replicat(home)
    run.run(lambda: False, stop_at_eof=True)
    run.close()
    assert names(target) == ["cobby2"]


def test_replicat_abends_when_its_trail_is_shorter_than_its_read_checkpoint(
    home: Home, target: Path
) -> None:
    source_trail(home, batch(0, 4))
    run = replicat(home)
    run.run(lambda: False, stop_at_eof=True)
    run.close()
    local = home.root / "dirdat" / "aa000000000"
    size = local.stat().st_size
    cut(local, size - record_ends(local)[1])
    with pytest.raises(ReplicatError) as caught:
        replicat(home)
    assert caught.value.code == "OGG-01705"
    assert caught.value.text == (
        f"Input checkpoint position {size} for input trail file '{local}' is greater than "
        f"the size of the file ({record_ends(local)[1]})."
    )


def test_the_checksum_option_of_exttrail_and_rmttrail() -> None:
    def trails(line: str) -> tuple[list[bool], list[str]]:
        result = check_text(f"EXTRACT e1\nSOURCEDB src\n{line}\nTABLE hr.emp;\n")
        model = result.model
        return [t.checksum for t in model.trails] if model else [], [
            d.message for d in result.errors
        ]

    assert trails("EXTTRAIL ./dirdat/aa") == ([True], [])
    assert trails("EXTTRAIL ./dirdat/aa, CHECKSUM") == ([True], [])
    assert trails("EXTTRAIL ./dirdat/aa, MEGABYTES 5, NOCHECKSUM") == ([False], [])
    _, errors = trails("EXTTRAIL ./dirdat/aa, CHECKSUM, NOCHECKSUM")
    assert errors == ["CHECKSUM and NOCHECKSUM together: choose one"]


def _fresh_home(base: Path) -> Home:
    h = Home(base / "home")
    h.create_subdirs()
    conn = sqlite3.connect(h.root / "tgt.db")
    conn.execute("CREATE TABLE emp (id NUMERIC PRIMARY KEY, name TEXT, sal NUMERIC)")
    conn.close()
    return h


@settings(max_examples=25, deadline=None)
@given(where=st.integers(0, 10**6), xor=st.integers(1, 255), checksum=st.booleans())
def test_pump_replicat_and_logdump_never_crash_on_a_changed_byte(
    where: int, xor: int, checksum: bool
) -> None:
    """One byte changed anywhere in the source trail: the pump and Replicat either go on
    (with checksums, only if the byte was not in a record's checked bytes) or abend with
    one OGG message; Logdump's dump and COUNT report, never raise."""
    with tempfile.TemporaryDirectory() as tmp:
        home = _fresh_home(Path(tmp))
        source_trail(home, batch(0, 3), checksum=checksum)
        path = home.root / "dirdat" / "aa000000000"
        data = bytearray(path.read_bytes())
        at = where % len(data)
        data[at] ^= xor
        path.write_bytes(bytes(data))
        try:
            pump_all(home)
        except PumpError as exc:
            assert exc.code in ("OGG-01184", "OGG-01031") and "\n" not in exc.text
        try:
            run = replicat(home)
            try:
                run.run(lambda: False, stop_at_eof=True)
            finally:
                run.close()
        except ReplicatError as exc:
            assert exc.code.startswith("OGG-") and "\n" not in exc.text
        out = io.StringIO()
        LogdumpSession(io.StringIO(f"OPEN {path}\nCOUNT\nNEXT 20\nEXIT\n"), out).run()
        assert "Traceback" not in out.getvalue()
        with contextlib.suppress(TrailError):
            dump_files([path], io.StringIO())
