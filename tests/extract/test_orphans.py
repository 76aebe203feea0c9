"""Orphaned transactions: an instance crash leaves a transaction that never ends in redo;
with PURGEORPHANEDTRANSACTIONS it is found, confirmed at the next scan, and purged."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any

from engine.embedded.clock import ManualClock
from engine.embedded.database import Database
from engine.embedded.sql import execute
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from engine.runtime.events import Severity
from params.check import check_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRM = (
    "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\n"
    "TRANLOGOPTIONS PURGEORPHANEDTRANSACTIONS TRANSCLEANUPFREQUENCY 1\nTABLE hr.emp;\n"
)


def test_orphan_of_a_crashed_instance_is_purged(
    home: Home, source: Any, spark: SparkSession
) -> None:
    root, _ = source
    clock = ManualClock(datetime(2026, 5, 1, 12, 0, 0))
    events: list[tuple[str, str]] = []

    def emit(code: str, severity: Severity, text: str) -> None:
        events.append((code, text))

    with Database(root, clock=clock) as db:
        execute(db, db.session("ddl", thread=1), "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY)")
        execute(db, db.session("doomed", thread=2), "INSERT INTO hr.emp VALUES (1)")
        execute(db, db.session("alive", thread=1), "INSERT INTO hr.emp VALUES (2)")
        assert len(db.crash_instance(2)) == 1
        db.checkpoint()
    run = ExtractRun(home, check_text(PRM).model, None, emit, spark=spark, durable=False)
    counter = 10
    for _ in range(3):
        run.run(threading.Event(), stop_at_eof=True)
        clock.advance(90)
        counter += 1
        with Database(root, clock=clock) as db:
            s = db.session("tick", thread=1)
            execute(db, s, f"INSERT INTO hr.emp VALUES ({counter})")
            execute(db, s, "COMMIT")
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    purged = [t for c, t in events if c == "OGG-01972"]
    assert len(purged) == 1 and "Redo Thread 2" in purged[0]
    open_xids = [t.xid for t in run.capture.cache.open_transactions()]
    assert len(open_xids) == 1  # the live transaction of thread 1 stays
    assert run.showtrans(("THREAD", "2"))[-1] == "No transactions found."
    assert run.tranlog_request(("NOPURGEORPHANEDTRANSACTIONS",)) == [
        "Purging of orphaned transactions is off."
    ]
