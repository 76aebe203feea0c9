"""Long-running transactions on the redo clock: WARNLONGTRANS, SHOWTRANS, SKIPTRANS,
FORCETRANS and the STOP refusal (GG_REFERENCE §3.1, §7), driven by a manual redo clock."""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from engine.changes import Fragment
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database
from engine.embedded.logs import list_logs
from engine.embedded.sql import execute
from engine.extract.longtrans import RequestError
from engine.extract.run import ExtractRun
from engine.home.checkpoints import load_checkpoints
from engine.home.layout import Home
from engine.runtime.events import Severity
from engine.trail.reader import TrailReader
from params.check import check_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRM = (
    "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\nWARNLONGTRANS 1H, CHECKINTERVAL 10M\n"
    "TABLE hr.emp;\n"
)


class Events:
    def __init__(self) -> None:
        self.items: list[tuple[str, Severity, str]] = []

    def __call__(self, code: str, severity: Severity, text: str) -> None:
        self.items.append((code, severity, text))

    def codes(self, code: str) -> list[str]:
        return [t for c, _, t in self.items if c == code]


def new_run(home: Home, spark: SparkSession, events: Events) -> ExtractRun:
    return ExtractRun(home, check_text(PRM).model, None, events, spark=spark, durable=False)


def drain(run: ExtractRun) -> None:
    run.run(threading.Event(), stop_at_eof=True)


def rows(home: Home) -> list[tuple[str, str]]:
    return [
        (r.op_name, dict(r.columns)[0] or "")
        for _, r in TrailReader(str(home.root / "dirdat" / "aa")).records()
    ]


@pytest.fixture
def db(source: Any) -> Any:
    root, _ = source
    clock = ManualClock(datetime(2026, 1, 1, 8, 0, 0))
    database = Database(root, clock=clock)
    s = database.session("ddl", thread=1)
    execute(database, s, "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, v NUMBER)")
    yield database, clock
    database.close()


def test_warning_showtrans_skip_and_force(home: Home, db: Any, spark: SparkSession) -> None:
    database, clock = db
    a, b, c = (database.session(n, thread=1) for n in ("a", "b", "c"))
    execute(database, a, "INSERT INTO hr.emp VALUES (1, 1)")  # T1 at 08:00, stays open
    clock.advance(600)
    execute(database, b, "INSERT INTO hr.emp VALUES (2, 2)")  # T2 at 08:10
    execute(database, b, "INSERT INTO hr.emp VALUES (3, 3)")
    clock.advance(600)
    execute(database, c, "INSERT INTO hr.emp VALUES (4, 4)")  # T3 at 08:20
    execute(database, c, "COMMIT")
    database.checkpoint()
    events = Events()
    run = new_run(home, spark, events)
    drain(run)
    assert events.codes("OGG-01027") == []  # nothing is an hour old yet
    clock.advance(3600)
    execute(database, c, "INSERT INTO hr.emp VALUES (5, 5)")
    execute(database, c, "COMMIT")
    database.checkpoint()
    drain(run)
    warned = events.codes("OGG-01027")
    assert len(warned) == 2
    t1 = run.capture.cache.open_transactions()[0]
    assert warned[0] == (
        f"Long Running Transaction: XID {t1.xid}, Items 1, Extract E1, Redo Thread 1, "
        f"SCN {t1.start_scn >> 32}.{t1.start_scn & 0xFFFFFFFF} ({t1.start_scn}), "
        f"Redo Seq #{t1.start.sequence}, Redo RBA {t1.start.offset}, Status Running."
    )

    run.checkpoint()  # SHOWCH's recovery checkpoint: the oldest open transaction's SCN and time
    recovery = run.checkpoints.reads[0].recovery
    assert (recovery.seqno, recovery.rba) == (t1.start.sequence, t1.start.offset)
    assert recovery.scn == t1.start_scn and str(recovery.timestamp).startswith(
        "2026-01-01 08:00:00"
    )
    (log,) = [i for i in list_logs(home.dirdb / "SRC" / "redo", 1)
              if i.sequence == t1.start.sequence]  # fmt: skip
    assert recovery.redo_file == str(log.path)  # SHOWCH's Redo File
    # The restart position (LOGBSN, seeds 001/004) in the checkpoint file: the recovery
    # checkpoint's SCN and time, the value heartbeat records carry; with the last
    # transaction written (SHOWCH "CSN state information").
    saved = load_checkpoints(home, "EXTRACT", "E1")
    csn = saved.csn if saved else None
    assert csn is not None and run._oldest_open() == (t1.start_scn, t1.start_time_us)
    assert (csn.logbsn, csn.logbsn_time) == (recovery.scn, recovery.timestamp)
    last = [r for _, r in TrailReader(str(home.root / "dirdat" / "aa")).records() if r.tranid][-1]
    assert (str(csn.latest_csn), csn.latest_txn) == (last.logcsn, last.tranid)
    shown = run.showtrans(())
    assert shown[:4] == [  # where a restart reads from: the oldest open transaction's start
        "Oldest redo log file necessary to restart Extract is:",
        "",
        f"Redo Log Sequence Number {t1.start.sequence}, RBA {t1.start.offset}",
        "",
    ]
    shown = shown[4:]
    assert shown[0] == "-" * 60 and shown[1] == f"XID:                  {t1.xid}"
    assert "Start Time:           2026-01-01:08:00:00" in shown
    assert len([ln for ln in shown if ln.startswith("XID:")]) == 2
    assert run.showtrans(("COUNT", "1"))[5:6] == [f"XID:                  {t1.xid}"]
    assert run.showtrans(("DURATION", "75", "MIN"))[4:] == shown[:10]
    assert run.showtrans(("TABULAR",))[4].startswith("XID ")
    assert run.showtrans(("FILE", "dirrpt/trans.txt", "DETAIL")) == [
        "Transaction information written to file dirrpt/trans.txt."
    ]
    assert "Items of" in (home.root / "dirrpt" / "trans.txt").read_text()
    assert run.stop_refusal() is not None

    t2 = run.capture.cache.open_transactions()[1]
    # both open transactions are held as fragments (assembled in the task, issue 13)
    assert all(isinstance(e, Fragment) for t in (t1, t2) for e in t.rows)
    assert "(fragment: thread 1 seqno" in (home.root / "dirrpt" / "trans.txt").read_text()
    with pytest.raises(RequestError, match="OGG-25140"):
        run.transaction_action("SKIPTRANS", (t2.xid,))
    with pytest.raises(RequestError, match="OGG-25141"):
        run.transaction_action("FORCETRANS", (t2.xid, "FORCE"))
    assert run.transaction_action("SKIPTRANS", (t1.xid, "VALIDATE"))[0].startswith(
        f"XID {t1.xid}, Redo Thread 1"
    )
    assert run.transaction_action("SKIPTRANS", (t1.xid, "FORCE"))[0].endswith("skipped.")
    with pytest.raises(RequestError, match="OGG-01012"):
        run.transaction_action("FORCETRANS", ("9.9.9", "FORCE"))
    inserts = run.stats_book.total("Inserts")
    assert run.transaction_action("FORCETRANS", (t2.xid, "FORCE"))[0].endswith(
        "forced to trail file."
    )
    # written as if it committed now: counted in STATS, the latest transaction of the trail
    assert run.latest_txn == t2.xid
    assert run.stats_book.total("Inserts") == inserts + len(t2.rows)
    assert run.stop_refusal() is None
    assert run.showtrans(())[-1] == "No transactions found."
    assert rows(home) == [("Insert", "4"), ("Insert", "5"), ("Insert", "2"), ("Insert", "3")]

    # Their later redo is ignored, also after a restart that re-reads from the recovery point.
    execute(database, a, "INSERT INTO hr.emp VALUES (6, 6)")
    execute(database, a, "COMMIT")
    execute(database, b, "COMMIT")
    database.checkpoint()
    drain(run)
    run.close()
    saved = load_checkpoints(home, "EXTRACT", "E1")
    assert saved is not None and saved.csn is not None
    assert saved.csn.latest_txn == t2.xid  # the forced transaction is the last one written
    run2 = new_run(home, spark, Events())
    assert run2.latest_txn == saved.csn.latest_txn  # the CSN state survives a restart
    drain(run2)
    before = run.checkpoints.reads[0].current  # where run stopped: run2's startup checkpoint
    startup = run2.checkpoints.reads[0].startup
    assert (startup.seqno, startup.rba, startup.scn, startup.timestamp) == (
        before.seqno, before.rba, before.scn, before.timestamp)  # fmt: skip
    assert startup.scn is not None and startup.redo_file is not None
    run2.close()
    assert rows(home) == [("Insert", "4"), ("Insert", "5"), ("Insert", "2"), ("Insert", "3")]
    assert Path(home.dirchk / "E1.cpe").exists()
