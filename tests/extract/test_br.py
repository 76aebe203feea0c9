"""Bounded Recovery: seed 000's example, step by step, on a manual redo clock.

BR interval 20 minutes (the minimum; the seed's figure uses 4 hours, the mechanics are the
same). Transactions are named after the seed's figure: T27, T45, T801, T950, T1024, T208412.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from engine.changes import Fragment, Kind, Lcr, Position
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database
from engine.embedded.sql import execute
from engine.extract import br as br_module
from engine.extract.cache import Txn
from engine.extract.longtrans import RequestError
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from engine.runtime.events import Severity
from engine.trail.reader import TrailReader
from params.check import check_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRM = (
    "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\nBR BRINTERVAL 20M, BRDIR ./BR\nTABLE hr.emp;\n"
)
MINUTE = 60


class Log:
    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def __call__(self, code: str, severity: Severity, text: str) -> None:
        self.items.append((code, text))

    def codes(self) -> list[str]:
        return [c for c, _ in self.items]


class Source:
    """The embedded database with one session per seed transaction, on a manual clock."""

    def __init__(self, root: Any) -> None:
        self.clock = ManualClock(datetime(2026, 3, 1, 0, 0, 0))
        self.db = Database(root, clock=self.clock)
        execute(
            self.db,
            self.db.session("ddl", thread=1),
            "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, t VARCHAR2(10))",
        )
        self.n = 0

    def at(self, minute: float) -> None:
        now = self.clock.current
        target = datetime(2026, 3, 1) + (minute * MINUTE) * (
            datetime(2026, 3, 1, 0, 0, 1) - datetime(2026, 3, 1)
        )
        if target > now:
            self.clock.advance((target - now).total_seconds())

    def change(self, txn: str) -> None:
        self.n += 1
        execute(
            self.db,
            self.db.session(txn, thread=1),
            f"INSERT INTO hr.emp VALUES ({self.n}, '{txn}')",
        )
        self.db.checkpoint()

    def commit(self, txn: str) -> None:
        execute(self.db, self.db.session(txn, thread=1), "COMMIT")
        self.db.checkpoint()


def run_once(home: Home, spark: SparkSession, log: Log, **kw: Any) -> ExtractRun:
    run = ExtractRun(home, check_text(PRM).model, None, log, spark=spark, durable=False, **kw)
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    return run


class Running:
    """An Extract that keeps up with the source: it reads to the end of the redo at each
    moment the test gives, on the same manual clock as the source (its processing clock)."""

    def __init__(self, home: Home, src: Source, spark: SparkSession, log: Log) -> None:
        self.src = src
        self.run = ExtractRun(
            home, check_text(PRM).model, None, log, spark=spark, durable=False,
            clock=src.clock.now,
        )  # fmt: skip
        self.run.run(threading.Event(), stop_at_eof=True)

    def at(self, minute: float, *changes: str, commit: tuple[str, ...] = ()) -> None:
        self.src.at(minute)
        for t in changes:
            self.src.change(t)
        for t in commit:
            self.src.commit(t)
        self.run.run(threading.Event(), stop_at_eof=True)

    def close(self) -> None:
        self.run.close()


def open_txns(run: ExtractRun) -> list[Txn]:
    return run.capture.cache.open_transactions()


def trail(home: Home) -> list[str]:
    return [
        dict(r.columns)[1] or "" for _, r in TrailReader(str(home.root / "dirdat" / "aa")).records()
    ]


def br_files(home: Home) -> list[str]:
    return sorted(p.name for p in (home.root / "BR" / "E1").iterdir())


@pytest.fixture
def src(source: Any) -> Any:
    root, _ = source
    s = Source(root)
    yield s
    s.db.close()


def test_seed_000_bounded_recovery(
    home: Home, src: Source, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Extract runs from minute 0; BR checkpoints fall due every 20 minutes of its clock.
    log = Log()
    ext = Running(home, src, spark, log)
    ext.at(1, "T27")
    ext.at(6, "T45")
    ext.at(10, "C1", commit=("C1",))
    ext.at(20)  # checkpoint n-1: nothing has been open across an interval yet
    assert [f for f in br_files(home) if f.startswith("PO.")] == []
    ext.at(25, "T801")
    ext.at(30, "T950")
    ext.at(35, "T1024")
    ext.at(40)  # checkpoint n: T27 and T45 were open at n-1: persisted; T801 the restart
    n_files = br_files(home)
    cps = [f for f in n_files if f.startswith("CP.")]
    pos = [f for f in n_files if f.startswith("PO.")]
    assert cps == ["CP.E1.000000002"] and len(pos) == 2  # only the current checkpoint is kept
    assert "OGG-01738" in log.codes() and "OGG-01631" in log.codes()
    # changes read after their transaction's first batch came assembled (parallel assembly)
    assert any(isinstance(e, Fragment) for t in open_txns(ext.run) for e in t.rows)
    starts = {t.xid: t.start for t in ext.run.capture.cache.open_transactions()}
    xid = {
        name: x
        for name, x in zip(
            ["T27", "T45", "T801", "T950", "T1024"],
            sorted(starts, key=lambda k: starts[k]),
            strict=True,
        )
    }
    ext.at(41, "C2", commit=("C2",))

    # During interval n → n+1, T45 is dirtied; Extract fails while writing checkpoint n+1
    # (at 60 minutes): the new T45 file is written, the checkpoint never published.
    ext.at(45, "T45")
    real_write = br_module._write_atomic

    def failing(path: Any, data: bytes, sync: bool) -> None:
        if path.name.startswith("CP."):
            raise OSError(28, "No space left on device")
        real_write(path, data, sync)

    monkeypatch.setattr(br_module, "_write_atomic", failing)
    ext.at(60, "C3", commit=("C3",))
    monkeypatch.setattr(br_module, "_write_atomic", real_write)
    ext.close()  # the Extract stops (abends) within interval n → n+1
    assert "OGG-01574" in log.codes()
    assert set(pos) <= set(br_files(home))  # checkpoint n's files are all still there

    # Recovery uses checkpoint n: T27 and T45 from their files, reading again from T801.
    src.at(61)
    log = Log()
    restarted = ExtractRun(
        home, check_text(PRM).model, None, log, spark=spark, durable=False, clock=src.clock.now
    )
    assert "OGG-01641" in log.codes() and "OGG-01644" in log.codes()
    assert restarted.capture.positions[1] == starts[xid["T801"]]
    assert {t.xid for t in restarted.capture.cache.open_transactions()} == {xid["T27"], xid["T45"]}
    assert any(isinstance(e, Fragment) for t in open_txns(restarted) for e in t.rows)  # from PO
    assert "  Current status: In recovery[1]" in restarted.status_lines()
    restarted.run(threading.Event(), stop_at_eof=True)
    restarted.close()
    assert "  Current status: Recovery complete" in restarted.status_lines()
    cps = json.loads((home.dirchk / "E1.cpe").read_text())
    assert set(cps["extra"]["br"]["1"]) == {"begin", "end"}  # SHOWCH's BR recovery checkpoints
    assert {t.xid for t in restarted.capture.cache.open_transactions()} == set(xid.values())
    # Checkpoint n+1 was due at 60 (one interval after n): taken at once when the restart
    # reads its first record; checkpoint n deleted after it completed.
    after = br_files(home)
    assert [f for f in after if f.startswith("CP.")] == ["CP.E1.000000003"]
    assert set(pos) <= set(after)  # T27 and T45 not changed since their files were written

    # Much later: T801, T950, T1024 commit; T208412 opens; checkpoint; power failure.
    ext = Running(home, src, spark, Log())
    ext.at(70, commit=("T801", "T950", "T1024"))
    ext.at(85, "T208412")  # not open at checkpoint n+1: not persisted at the next one
    # Checkpoint n+2 (due at 81, taken at 85): T45, dirtied at 45, re-persisted to a new file;
    # its old file deleted after the checkpoint completed, T27's unchanged.
    after = br_files(home)
    assert [f for f in after if f.startswith("CP.")] == ["CP.E1.000000004"]
    assert [f for f in pos if f in after] == [min(pos)]
    assert any(f.endswith(".0000001") for f in after)  # T45's new version
    ext.at(101, "C4", commit=("C4",))
    t208412 = next(
        t
        for t in ext.run.capture.cache.open_transactions()
        if t.xid not in (xid["T27"], xid["T45"])
    )
    ext.close()
    log = Log()
    restarted = ExtractRun(home, check_text(PRM).model, None, log, spark=spark, durable=False)
    assert restarted.capture.positions[1] == t208412.start  # resumes at T208412's start
    assert {t.xid for t in restarted.capture.cache.open_transactions()} == {xid["T27"], xid["T45"]}
    restarted.close()

    # T27 and T45 finally commit: whole, once, with the change T45 made after checkpoint n.
    src.commit("T27")
    src.commit("T45")
    run_once(home, spark, Log())
    got = trail(home)
    assert sorted(got) == sorted(
        ["C1", "C2", "C3", "T801", "T950", "T1024", "C4", "T27", "T45", "T45"]
    )
    assert got[-3:] == ["T27", "T45", "T45"]


def test_br_checkpoints_are_due_on_the_extract_clock_not_redo_time(
    home: Home, src: Source, spark: SparkSession
) -> None:
    """Seed 000: the interval is a multiple of the Extract checkpoint interval and recovery
    is bounded in Extract processing time. An idle source still checkpoints; a catch-up over
    hours of redo writes one checkpoint, not one per interval of redo."""
    ext = Running(home, src, spark, Log())
    ext.at(19)  # no redo at all
    assert br_files(home) == []
    ext.at(20)  # idle source, one interval of the Extract's clock: a checkpoint
    assert br_files(home) == ["CP.E1.000000001"]
    ext.close()
    # The source runs for 2 hours of redo while Extract is stopped ...
    for minute in range(21, 141, 10):
        src.at(minute)
        src.change(f"C{minute}")
        src.commit(f"C{minute}")
    log = Log()
    run = ExtractRun(
        home, check_text(PRM).model, None, log, spark=spark, durable=False, clock=src.clock.now
    )
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    # ... then catches up in one go: one checkpoint (due since 40), not six.
    assert log.codes().count("OGG-01738") == 1
    assert br_files(home) == ["CP.E1.000000002"]


def persist_t27(home: Home, src: Source, spark: SparkSession) -> None:
    """T27 opens at 1 minute; the checkpoint of 40 minutes persists it."""
    ext = Running(home, src, spark, Log())
    ext.at(1, "T27")
    ext.at(20)
    ext.at(41, "C1", commit=("C1",))
    ext.close()


def test_brreset_and_changed_selection_use_normal_recovery(
    home: Home, src: Source, spark: SparkSession
) -> None:
    persist_t27(home, src, spark)
    # BR BRRESET in the parameter file (seed 000: an option of BR) does what the command
    # line's BRRESET does: normal recovery for this start, BR on again for the run.
    log = Log()
    in_file = check_text(PRM.replace("BRDIR ./BR", "BRDIR ./BR, BRRESET")).model
    ExtractRun(home, in_file, None, log, spark=spark, durable=False).close()
    assert "OGG-10019" in log.codes() and "OGG-01641" not in log.codes()
    log = Log()
    ExtractRun(home, check_text(PRM).model, None, log, spark=spark, durable=False).close()
    assert "OGG-01641" in log.codes()  # without it, the same start is a bounded recovery
    log = Log()
    run = ExtractRun(
        home, check_text(PRM).model, None, log, spark=spark, durable=False, brreset=True
    )
    assert "OGG-10019" in log.codes() and "OGG-01641" not in log.codes()
    with pytest.raises(RequestError, match="BRCHECKPOINT AT needs"):
        run.br_request(("BRCHECKPOINT", "AT", "tomorrow"))
    with pytest.raises(RequestError, match="outside 20M to 96H"):
        run.br_request(("BRINTERVAL", "5M"))
    assert run.br_request(("BRINTERVAL", "2H")) == ["BR interval set to 2H (7200 seconds)."]
    assert run.br_request(("BRSTATS",))[0].startswith("BR directory: ")
    run.close()
    # a changed row option too: the persisted fragments were selected under the old WHERE
    log = Log()
    where = check_text(PRM.replace("TABLE hr.emp;", "TABLE hr.emp, WHERE (id > 2);")).model
    ExtractRun(home, where, None, log, spark=spark, durable=False).close()
    assert any("TABLE selection" in t for c, t in log.items if c == "OGG-10019")
    log = Log()
    changed = check_text(PRM.replace("TABLE hr.emp;", "TABLE hr.emp;\nTABLE hr.other;")).model
    ExtractRun(home, changed, None, log, spark=spark, durable=False).close()
    assert any("TABLE selection" in t for c, t in log.items if c == "OGG-10019")
    for f in (home.root / "BR" / "E1").iterdir():
        f.write_bytes(b"garbage")
    log = Log()
    ExtractRun(home, check_text(PRM).model, None, log, spark=spark, durable=False).close()
    assert "OGG-01643" in log.codes()


class _RunsCommand:
    """A pickle that runs a shell command when loaded (what a crafted PO file held)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, (self.command,))


def _replace_object(bdir: Path, data: bytes, name: str | None = None) -> None:
    """Put ``data`` in the newest checkpoint's persisted-object file (or name another file),
    with its SHA-256 in the checkpoint, whose own checksum is recomputed: what someone with
    write access to the BR directory can do."""
    cp_path = max(p for p in bdir.iterdir() if p.name.startswith("CP."))
    body = json.loads(cp_path.read_bytes().rstrip(b"\n").rpartition(b"\n")[0])
    (po,) = body["objects"]
    (bdir / po["file"]).write_bytes(data)
    po["sha256"] = hashlib.sha256(data).hexdigest()
    po["file"] = name or po["file"]
    raw = json.dumps(body, sort_keys=True).encode()
    cp_path.write_bytes(raw + b"\n" + hashlib.sha256(raw).hexdigest().encode() + b"\n")


def test_a_crafted_pickle_in_a_po_file_is_never_run(
    home: Home, src: Source, spark: SparkSession, tmp_path: Path
) -> None:
    """The old format's magic, a pickle that runs ``id``, its SHA-256 in the checkpoint."""
    persist_t27(home, src, spark)
    marker = tmp_path / "ran"
    payload = pickle.dumps(({"xid": "x"}, [_RunsCommand(f"id > {marker}")]))
    _replace_object(home.root / "BR" / "E1", b"GGSCI-BR-PO\x02" + payload)
    log = Log()
    restarted = ExtractRun(home, check_text(PRM).model, None, log, spark=spark, durable=False)
    assert not marker.exists()
    canceled = [t for c, t in log.items if c == "OGG-01643"]
    assert canceled and "PO.E1.0000001.0000000" in canceled[0]
    assert "OGG-10019" in log.codes() and "OGG-01641" not in log.codes()
    restarted.run(threading.Event(), stop_at_eof=True)  # normal recovery: from T27's start
    restarted.close()
    src.commit("T27")
    run_once(home, spark, Log())
    assert trail(home) == ["C1", "T27"]
    assert not marker.exists()


def _po_fixture(tmp_path: Path) -> Path:
    """A BR directory with one checkpoint that persisted one transaction of three rows."""
    br = br_module.BoundedRecovery(tmp_path / "BR", "E1", 1200)
    txn = Txn("1.2.3", Position(1, 5, 100), 1000, 0, "SCOTT", "t1", last_time_us=5)
    txn.undone = {"u1"}
    rows = [
        Lcr(Kind.ROW, "1.2.3", Position(1, 5, 100 + i), 150 + i, 1000 + i, ref=f"u{i}",
            columns=((0, str(i)), (1, None)), record=b"\x00rec")
        for i in range(3)
    ]  # fmt: skip
    br.checkpoint([txn], lambda _t: [], {1: Position(1, 5, 150)}, 1_000_000_000, 999, ())
    br.checkpoint([txn], lambda _t: rows, {1: Position(1, 5, 900)}, 2_000_000_000, 999, ())
    (po,) = (p for p in (tmp_path / "BR").iterdir() if p.name.startswith("PO."))
    return po


def test_a_persisted_object_reads_back_whole(tmp_path: Path) -> None:
    po = _po_fixture(tmp_path)
    assert po.read_bytes().startswith(br_module.MAGIC)
    restored = br_module.BoundedRecovery(tmp_path / "BR", "E1", 1200).load()
    ((txn, rows),) = restored.txns
    assert (txn.xid, txn.user, txn.name, txn.undone, txn.start) == (
        "1.2.3", "SCOTT", "t1", {"u1"}, Position(1, 5, 100)
    )  # fmt: skip
    assert [r.columns for r in rows] == [((0, str(i)), (1, None)) for i in range(3)]
    assert all(r.record == b"\x00rec" for r in rows)


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d[: len(d) // 2],  # truncated
        lambda d: d[:40] + bytes([d[40] ^ 1]) + d[41:],  # a byte flipped in the state frame
        lambda d: d[:-40] + bytes([d[-40] ^ 0xFF]) + d[-39:],  # one in the rows
        lambda d: d + d[-60:],  # trailing garbage
    ],
)
def test_a_damaged_po_file_with_a_matching_sha_is_refused_as_data(
    tmp_path: Path, damage: Any
) -> None:
    po = _po_fixture(tmp_path)
    _replace_object(tmp_path / "BR", damage(po.read_bytes()))
    with pytest.raises(br_module.BrError, match=po.name):
        br_module.BoundedRecovery(tmp_path / "BR", "E1", 1200).load()


def test_a_pickle_behind_the_new_magic_is_refused_not_run(tmp_path: Path) -> None:
    po = _po_fixture(tmp_path)
    marker = tmp_path / "ran"
    payload = pickle.dumps(({"xid": "x"}, [_RunsCommand(f"id > {marker}")]))
    _replace_object(tmp_path / "BR", br_module.MAGIC + payload)
    with pytest.raises(br_module.BrError, match=f"{po.name}: "):
        br_module.BoundedRecovery(tmp_path / "BR", "E1", 1200).load()
    assert not marker.exists()


def test_a_checkpoint_naming_a_file_outside_its_directory_is_refused(tmp_path: Path) -> None:
    po = _po_fixture(tmp_path)
    _replace_object(tmp_path / "BR", po.read_bytes(), "../../" + po.name)
    with pytest.raises(br_module.BrError, match="invalid persisted-object name"):
        br_module.BoundedRecovery(tmp_path / "BR", "E1", 1200).load()


def test_brstatus_draws_the_timeline_of_the_live_state(
    home: Home, src: Source, spark: SparkSession
) -> None:
    """SEND EXTRACT e1, BR BRSTATUS [FILE x.svg] (issue 15): the seed's state at checkpoint n
    drawn from the run itself: five bars, T27 and T45 persisted at CP 2, the restart at
    T801."""
    ext = Running(home, src, spark, Log())
    for minute, name in ((1, "T27"), (6, "T45"), (25, "T801"), (30, "T950"), (35, "T1024")):
        ext.at(minute, name)
        if minute == 6:
            ext.at(20)  # checkpoint n-1
    ext.at(40)  # checkpoint n, at the position read by then (T1024's change, 00:35 redo)
    ext.at(41, "C2", commit=("C2",))
    run = ext.run
    opened = sorted(run.capture.cache.open_transactions(), key=lambda t: t.start)
    xid = dict(zip(["T27", "T45", "T801", "T950", "T1024"], [t.xid for t in opened], strict=True))
    lines = run.br_request(("BRSTATUS", "FILE", "dirrpt/br.svg"))
    assert lines[0].startswith("BR directory: ")
    at = lines.index("Bounded Recovery timeline of EXTRACT E1 (redo time, interval 0H20M):")
    rows = {ln[2:17].strip(): ln for ln in lines[at + 2 :]}
    assert rows["CP 000000002"].endswith(f"00:35:00; persisted {xid['T27']}, {xid['T45']}")
    assert rows[xid["T27"]].endswith("since 00:01:00; persisted at CP 2")
    assert rows[xid["T45"]].endswith("since 00:06:00; persisted at CP 2")
    assert rows[xid["T801"]].endswith("since 00:25:00; not persisted")
    assert rows["restart"].index("▲") == rows[xid["T801"]].index("█")
    assert (
        f"start of {xid['T801']}, the oldest transaction CP 2 did not persist" in (rows["restart"])
    )
    assert lines[-1] == "Picture written to dirrpt/br.svg."
    svg = (home.root / "dirrpt" / "br.svg").read_text()
    assert svg.count('class="txn persisted"') == 2 and svg.count('class="txn"') == 3
    with pytest.raises(RequestError, match=r"BRSTATUS takes FILE <name>\.svg"):
        run.br_request(("BRSTATUS", "FILE", "x.png"))
    ext.close()


def _alter(home: Home, **how: int) -> None:
    """What ALTER EXTRACT e1 writes (ggsci/dispatch/groups.py): IOEXTSEQNO/IOEXTRBA move the
    recovery position, ETROLLOVER the write position to the next file; the file says altered,
    and what was moved."""
    from dataclasses import replace

    from engine.home.checkpoints import Position as CpPos
    from engine.home.checkpoints import load_checkpoints, save_checkpoints

    cps = load_checkpoints(home, "EXTRACT", "E1")
    assert cps is not None
    reads, writes = cps.reads, cps.writes
    if "ioextseqno" in how:
        reads = tuple(
            replace(r, recovery=replace(r.recovery, seqno=how["ioextseqno"], rba=how["ioextrba"]))
            for r in reads
        )
    if how.get("etrollover"):
        writes = tuple(replace(w, position=CpPos(seqno=w.position.seqno + 1)) for w in writes)
    moved = ("recovery",) * ("ioextseqno" in how) + ("write",) * bool(how.get("etrollover"))
    save_checkpoints(home, replace(cps, reads=reads, writes=writes, altered=True, moved=moved))


def test_an_altered_io_checkpoint_means_normal_recovery_from_it(
    home: Home, src: Source, spark: SparkSession
) -> None:
    """Seed 000: BR is not invoked when the I/O checkpoint is altered (issue 29: a restart
    restored from BR and ignored IOEXTSEQNO/IOEXTRBA). Normal recovery reads from the
    altered position; what was written is not written again."""
    persist_t27(home, src, spark)
    first = Position(1, min(int(p.name.split(".")[0]) for p in (src.db.root / "redo" / "t1")
                            .iterdir()), 0)  # fmt: skip
    _alter(home, ioextseqno=first.sequence, ioextrba=0)
    log = Log()
    run = ExtractRun(home, check_text(PRM).model, None, log, spark=spark, durable=False)
    assert "OGG-01635" in log.codes() and "OGG-01641" not in log.codes()
    assert run.capture.positions[1] == first
    run.close()
    src.commit("T27")
    run_once(home, spark, Log())
    assert trail(home) == ["C1", "T27"]


def test_etrollover_acts_on_a_restart_that_bounded_recovery_would_restore(
    home: Home, src: Source, spark: SparkSession
) -> None:
    persist_t27(home, src, spark)
    before = max(p.name for p in (home.root / "dirdat").iterdir())
    _alter(home, etrollover=1)
    log = Log()
    run = ExtractRun(home, check_text(PRM).model, None, log, spark=spark, durable=False)
    assert "OGG-01635" in log.codes() and "OGG-01641" not in log.codes()
    run.close()
    src.commit("T27")
    run_once(home, spark, Log())
    files = sorted(p.name for p in (home.root / "dirdat").iterdir())
    assert files[-1] > before  # T27 went to the next file
    assert trail(home) == ["C1", "T27"]


def test_broffonfailure_leaves_br_off_after_a_recovery_error(
    home: Home, src: Source, spark: SparkSession
) -> None:
    """Seed 000: BROFFONFAILURE turns BR off for the runtime processing after a BR error;
    without it, BR is on again once normal recovery is done."""
    persist_t27(home, src, spark)
    for f in (home.root / "BR" / "E1").iterdir():
        f.write_bytes(b"garbage")
    prm = PRM.replace("BRDIR ./BR", "BRDIR ./BR, BROFFONFAILURE")
    log = Log()
    run = ExtractRun(
        home, check_text(prm).model, None, log, spark=spark, durable=False, clock=src.clock.now
    )
    assert "OGG-01643" in log.codes()
    assert any("BROFFONFAILURE" in t for c, t in log.items if c == "OGG-10019")
    for minute in (61, 81, 101):  # three intervals of the Extract's clock
        src.at(minute)
        src.change(f"C{minute}")
        src.commit(f"C{minute}")
        run.run(threading.Event(), stop_at_eof=True)
    run.close()
    assert "OGG-01738" not in log.codes()  # no BR checkpoint taken in this run
    assert all((home.root / "BR" / "E1" / f).read_bytes() == b"garbage" for f in br_files(home))


def test_br_status_says_whose_checkpoint_it_shows(
    home: Home, src: Source, spark: SparkSession
) -> None:
    """Issue 29: the BR status said "0 checkpoints written" beside a checkpoint file of the
    previous run; it now says the file is that run's."""
    persist_t27(home, src, spark)
    newest = max(f for f in br_files(home) if f.startswith("CP."))
    run = ExtractRun(home, check_text(PRM).model, None, Log(), spark=spark, durable=False)
    lines = run.br_request(("BRSTATS",))
    run.close()
    assert f"BR checkpoints written by this run: 0; last: {newest} (written by a previous run)" in (
        lines
    )
