"""Seed 001 through the real process code, in one test process with injected clocks: the
update job on the embedded source, Extract (real Spark), the pump and Replicat into an SQLite
target; every stamped column and the GG_LAG arithmetic checked exactly."""

from __future__ import annotations

import re
import sqlite3
import threading
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import pytest

from engine.embedded.clock import ManualClock
from engine.embedded.database import Database
from engine.extract.run import ExtractRun
from engine.home.groups import GroupDef, GroupKind, GroupStore, SourceType
from engine.home.layout import Home
from engine.pump.pump import Pump
from engine.replicat.engine import ReplicatRun
from engine.trail.reader import TrailReader
from params.check import check_text

from .conftest import Shell, Tick

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

T0 = datetime(2030, 1, 2, 3, 4, 5, 123456)
S = timedelta(seconds=1)


def _group(home: Home, kind: GroupKind, name: str, source: SourceType, path: str) -> GroupDef:
    group = GroupDef(kind=kind, name=name, source=source, created="2030-01-01 00:00:00",
                     source_path=path)  # fmt: skip
    GroupStore(home).save(group)
    return group


def _emit(code: str, _severity: object, text: str) -> None:
    pass


def run_pipeline(home: Home, spark: SparkSession, replicat_clock: Tick) -> None:
    ext = ExtractRun(
        home,
        check_text("EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nTABLE wl.*;\n").model,
        None,
        _emit,
        spark=spark,
        durable=False,
        heartbeat_clock=Tick(T0 + 1 * S),
    )
    ext.run(threading.Event(), stop_at_eof=True)
    ext.close()
    pmp = _group(home, GroupKind.EXTRACT, "PMP1", SourceType.EXTTRAILSOURCE, "./dirdat/lt")
    pump = Pump(
        home,
        check_text(
            "EXTRACT pmp1\nRMTHOST h, MGRPORT 7809\nRMTTRAIL ./dirrmt/rt\nPASSTHRU\nTABLE wl.*;\n"
        ).model,
        pmp,
        _emit,
        durable=False,
    )
    from engine.heartbeat.flow import RoutingRule
    from engine.heartbeat.names import for_capture

    pump.hook = RoutingRule(for_capture(home.globals_file), "PMP1", Tick(T0 + 2 * S))
    pump.run(lambda: False, stop_at_eof=True)
    pump.close()
    rep = _group(home, GroupKind.REPLICAT, "REP1", SourceType.EXTTRAIL, "./dirrmt/rt")
    run = ReplicatRun(
        home,
        check_text("REPLICAT rep1\nTARGETDB ./tgt.db\nMAP wl.*, TARGET wl.*;\n").model,
        rep,
        _emit,
        heartbeat_clock=replicat_clock,
    )
    run.run(lambda: False, stop_at_eof=True)
    run.close()


def test_heartbeat_flows_extract_pump_replicat(
    home: Home, shell: Shell, spark: SparkSession
) -> None:
    shell.run("DBLOGIN SOURCEDB src")
    assert "OGG-14005" in shell.run("ADD HEARTBEATTABLE, FREQUENCY 5")
    shell.run("DBLOGIN USERID gg@./tgt.db")
    assert "OGG-14091" in shell.run("ADD HEARTBEATTABLE, TARGETONLY")
    # the update job, run by the source's scheduler at a chosen redo time
    with Database(home.dirdb / "SRC", clock=ManualClock(T0)) as db:
        assert db.scheduler.run_due(db) == T0 + 5 * S
    # the trail holds the seed insert (ADD) and the update, each with every column
    run_pipeline(home, spark, Tick(T0 + 3 * S, step=S / 2))

    recs = [r for _, r in TrailReader(home.root / "dirdat" / "lt").records()]
    assert [(r.table, r.op_name) for r in recs] == [
        ("TESTER.GG_HEARTBEAT_SEED", "Insert"),
        ("TESTER.GG_HEARTBEAT_SEED", "FieldComp"),
    ]
    assert len(recs[1].columns) == 17  # the whole row: the job writes every column

    conn = sqlite3.connect(home.root / "tgt.db")
    conn.row_factory = sqlite3.Row
    (hb,) = conn.execute("SELECT * FROM gg_heartbeat").fetchall()
    assert dict(hb) == {
        "LOCAL_DATABASE": "TGT",
        "HEARTBEAT_TIMESTAMP": "2030-01-02 03:04:05.123456",
        "REMOTE_DATABASE": "SRC",
        "INCOMING_EXTRACT": "EXT1",
        "INCOMING_ROUTING_PATH": "PMP1",
        "INCOMING_REPLICAT": "REP1",
        "INCOMING_HEARTBEAT_TS": "2030-01-02 03:04:05.123456",
        "INCOMING_EXTRACT_TS": "2030-01-02 03:04:06.123456",
        "INCOMING_ROUTING_TS": "2030-01-02 03:04:07.123456",
        "INCOMING_REPLICAT_TS": "2030-01-02 03:04:08.623456",  # read (2nd reading)
        "OUTGOING_EXTRACT": None,
        "OUTGOING_ROUTING_PATH": None,
        "OUTGOING_REPLICAT": None,
        "OUTGOING_HEARTBEAT_TS": None,
        "OUTGOING_EXTRACT_TS": None,
        "OUTGOING_ROUTING_TS": None,
        "OUTGOING_REPLICAT_TS": None,
        "HEARTBEAT_RECEIVED_TS": "2030-01-02 03:04:09.623456",  # applied (4th reading)
        "INCOMING_REPLICAT_LW_CSN": None,
        "INCOMING_EXTRACT_HEARTBEAT_CSN": recs[1].logcsn,
        # Extract's LOGBSN (seed 001): no other transaction open, so the begin of the
        # heartbeat update itself, at its redo time (whole seconds, as Oracle's redo has it)
        "INCOMING_EXTRACT_RESTART_CSN": hb["INCOMING_EXTRACT_RESTART_CSN"],
        "INCOMING_EXTRACT_RESTART_TS": "2030-01-02 03:04:05",
        "OUTGOING_RECEIVED_TS": None,  # unidirectional: nothing comes back
    }
    restart = hb["INCOMING_EXTRACT_RESTART_CSN"]
    assert restart is not None and int(restart) <= int(recs[1].logcsn or 0)
    (h,) = conn.execute(
        "SELECT SOURCE_EXTRACT_RESTART_CSN, SOURCE_EXTRACT_RESTART_CSN_TS FROM "
        "gg_heartbeat_history WHERE SOURCE_EXTRACT_HEARTBEAT_CSN = ?",
        (recs[1].logcsn,),
    ).fetchall()
    assert tuple(h) == (restart, "2030-01-02 03:04:05")
    (v,) = conn.execute(
        "SELECT DB_UNIQUE_NAME, REMOTE_EXTRACT_RESTART_CSN, REMOTE_EXTRACT_RESTART_CSN_TIME, "
        "REMOTE_DB_OLDEST_OPEN_TXN_AGE FROM gg_lag"
    ).fetchall()
    assert tuple(v)[:3] == ("SRC", restart, "2030-01-02 03:04:05")
    assert v[3] is not None  # now - restart time (negative: T0 is years ahead)
    ages = conn.execute("SELECT REMOTE_DB_OLDEST_OPEN_TXN_AGE FROM gg_lag_history").fetchall()
    assert len(ages) == 2 and ages[1][0] is not None
    history = conn.execute(
        "SELECT INCOMING_PATH, INCOMING_LAG, INCOMING_EXTRACT_LAG, INCOMING_ROUTING_LAG, "
        "INCOMING_REPLICAT_READ_LAG, INCOMING_REPLICAT_LAG FROM gg_lag_history "
        "ORDER BY HEARTBEAT_RECEIVED_TS"
    ).fetchall()
    assert len(history) == 2
    assert tuple(history[1]) == ("EXT1 ==> PMP1 ==> REP1", 4.5, 1.0, 1.0, 1.5, 1.0)
    (lag,) = conn.execute("SELECT INCOMING_PATH, INCOMING_LAG FROM gg_lag").fetchall()
    assert tuple(lag) == ("EXT1 ==> PMP1 ==> REP1", 4.5)
    out = shell.run("LAG REPLICAT rep1, GLOBAL").splitlines()
    assert out[0] == "Lag Information From Heartbeat Table"
    assert out[1].split() == ["LAG", "AGE", "FROM", "TO", "PATH"]
    # T0 is years ahead of this machine's clock: the age is negative, and shown
    assert re.fullmatch(r"4\.50s +-\d+d \d\dh \d\dm \d\d\.\d\ds +SRC +TGT +EXT1 ==> PMP1 ==> REP1",
                        out[2]), out  # fmt: skip
