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

from engine.events import Severity
from engine.extract import br as br_module
from engine.extract.cache import Txn
from engine.extract.engine import ExtractRun
from engine.extract.lcr import Kind, Lcr, Position
from engine.extract.longtrans import RequestError
from engine.home import Home
from engine.source.clock import ManualClock
from engine.source.database import Database
from engine.source.sql import execute
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
    # Before checkpoint n (at 40 minutes): T27 and T45 open for more than one interval,
    # T801, T950, T1024 younger; other transactions commit.
    src.at(1)
    src.change("T27")
    src.at(6)
    src.change("T45")
    src.at(10)
    src.change("C1")
    src.commit("C1")
    src.at(25)
    src.change("T801")
    src.at(30)
    src.change("T950")
    src.at(35)
    src.change("T1024")
    src.at(41)
    src.change("C2")  # redo time crosses 40 min: BR checkpoint n
    src.commit("C2")
    log = Log()
    run = run_once(home, spark, log)
    n_files = br_files(home)
    cps = [f for f in n_files if f.startswith("CP.")]
    pos = [f for f in n_files if f.startswith("PO.")]
    assert len(cps) == 2 and len(pos) == 2  # checkpoints at 20 (nothing old yet) and 40 minutes
    assert "OGG-01738" in log.codes() and "OGG-01631" in log.codes()
    starts = {t.xid: t.start for t in run.capture.cache.open_transactions()}
    xid = {
        name: x
        for name, x in zip(
            ["T27", "T45", "T801", "T950", "T1024"],
            sorted(starts, key=lambda k: starts[k]),
            strict=True,
        )
    }

    # During interval n → n+1, T45 is dirtied; Extract fails while writing checkpoint n+1
    # (at 60 minutes): the new T45 file is written, the checkpoint never published.
    src.at(45)
    src.change("T45")
    src.at(61)
    src.change("C3")
    src.commit("C3")
    real_write = br_module._write_atomic

    def failing(path: Any, data: bytes, sync: bool) -> None:
        if path.name.startswith("CP."):
            raise OSError(28, "No space left on device")
        real_write(path, data, sync)

    monkeypatch.setattr(br_module, "_write_atomic", failing)
    log = Log()
    run_once(home, spark, log)
    monkeypatch.setattr(br_module, "_write_atomic", real_write)
    assert "OGG-01574" in log.codes()
    assert set(pos) <= set(br_files(home))  # checkpoint n's files are all still there

    # Recovery uses checkpoint n: T27 and T45 from their files, reading again from T801.
    log = Log()
    restarted = ExtractRun(home, check_text(PRM).model, None, log, spark=spark, durable=False)
    assert "OGG-01641" in log.codes() and "OGG-01644" in log.codes()
    assert restarted.capture.positions[1] == starts[xid["T801"]]
    assert {t.xid for t in restarted.capture.cache.open_transactions()} == {xid["T27"], xid["T45"]}
    assert "  Current status: In recovery[1]" in restarted.status_lines()
    restarted.run(threading.Event(), stop_at_eof=True)
    restarted.close()
    assert "  Current status: Recovery complete" in restarted.status_lines()
    cps = json.loads((home.dirchk / "E1.cpe").read_text())
    assert set(cps["extra"]["br"]["1"]) == {"begin", "end"}  # SHOWCH's BR recovery checkpoints
    assert {t.xid for t in restarted.capture.cache.open_transactions()} == set(xid.values())
    # Checkpoint n+1, taken again on the way: T45, dirtied, re-persisted; its old file gone.
    after = br_files(home)
    assert [f for f in pos if f in after] == [min(pos)]  # T27's file unchanged
    assert any(f.endswith(".0000001") for f in after)  # T45's new version

    # Much later: T801, T950, T1024 commit; T208412 opens; checkpoint; power failure.
    src.at(70)
    for t in ("T801", "T950", "T1024"):
        src.commit(t)
    src.at(85)  # younger than one interval at the checkpoint of 100 minutes
    src.change("T208412")
    src.at(101)
    src.change("C4")
    src.commit("C4")
    run = run_once(home, spark, Log())
    t208412 = next(
        t for t in run.capture.cache.open_transactions() if t.xid not in (xid["T27"], xid["T45"])
    )
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


def persist_t27(home: Home, src: Source, spark: SparkSession) -> None:
    """T27 opens at 1 minute; the checkpoint of 40 minutes persists it."""
    src.at(1)
    src.change("T27")
    src.at(41)
    src.change("C1")
    src.commit("C1")
    run_once(home, spark, Log())


def test_brreset_and_changed_selection_use_normal_recovery(
    home: Home, src: Source, spark: SparkSession
) -> None:
    persist_t27(home, src, spark)
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
    drawn from the run itself: five bars, T27 persisted at CP 1, T45 at CP 2, the restart at
    T801."""
    for minute, name in ((1, "T27"), (6, "T45"), (25, "T801"), (30, "T950"), (35, "T1024")):
        src.at(minute)
        src.change(name)
    src.at(41)
    src.change("C2")  # redo time crosses 40 min: BR checkpoint n
    src.commit("C2")
    run = run_once(home, spark, Log())
    opened = sorted(run.capture.cache.open_transactions(), key=lambda t: t.start)
    xid = dict(zip(["T27", "T45", "T801", "T950", "T1024"], [t.xid for t in opened], strict=True))
    lines = run.br_request(("BRSTATUS", "FILE", "dirrpt/br.svg"))
    assert lines[0].startswith("BR directory: ")
    at = lines.index("Bounded Recovery timeline of EXTRACT E1 (redo time, interval 0H20M):")
    rows = {ln[2:17].strip(): ln for ln in lines[at + 2 :]}
    assert rows["CP 000000002"].endswith(f"00:41:00; persisted {xid['T27']}, {xid['T45']}")
    assert rows[xid["T27"]].endswith("since 00:01:00; persisted at CP 1")  # at 25 min
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
