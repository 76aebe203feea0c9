"""Bounded Recovery: seed 000's example, step by step, on a manual redo clock.

BR interval 20 minutes (the minimum; the seed's figure uses 4 hours, the mechanics are the
same). Transactions are named after the seed's figure: T27, T45, T801, T950, T1024, T208412.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pytest

from engine.events import Severity
from engine.extract import br as br_module
from engine.extract.engine import ExtractRun
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


def test_brreset_and_changed_selection_use_normal_recovery(
    home: Home, src: Source, spark: SparkSession
) -> None:
    src.at(1)
    src.change("T27")
    src.at(41)
    src.change("C1")
    src.commit("C1")
    run_once(home, spark, Log())
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
