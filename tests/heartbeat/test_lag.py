"""GG_LAG / GG_LAG_HISTORY arithmetic with chosen timestamps (microseconds exact, a negative
lag kept, a path across midnight, ages against now), and LAG ... GLOBAL's screen."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from typing import Any

import pytest

from engine.embedded.database import Database
from engine.heartbeat.lag import DayRow, LagRow, duration, history_lines, lag_lines
from engine.heartbeat.settings import stamp, utc_now
from engine.home.layout import Home

from .conftest import Shell

COLS = (
    "LOCAL_DATABASE, REMOTE_DATABASE, INCOMING_EXTRACT, INCOMING_ROUTING_PATH, INCOMING_REPLICAT, "
    "INCOMING_HEARTBEAT_TS, INCOMING_EXTRACT_TS, INCOMING_ROUTING_TS, INCOMING_REPLICAT_TS, "
    "HEARTBEAT_RECEIVED_TS"
)
ROWS = [
    # lag 2.499999: microseconds count
    ("TGT", "SRC", "EXT1", "PMP1", "REP1", "2026-01-01 00:00:00.000001", "2026-01-01 00:00:00.5",
     "2026-01-01 00:00:01.25", "2026-01-01 00:00:02", "2026-01-01 00:00:02.5"),
    # the target clock 3.25 s behind: a negative lag, shown as it is
    ("TGT", "SRC", "EXT2", None, "REP2", "2026-01-01 00:00:10", "2026-01-01 00:00:10.5", None,
     "2026-01-01 00:00:06.5", "2026-01-01 00:00:06.75"),
    # across midnight, a whole second without fraction on one side
    ("TGT", "SRC", "EXT3", "PMP1,PMP2", "REP3", "2025-12-31 23:59:59.9", None, None, None,
     "2026-01-01 00:00:00"),
]  # fmt: skip


def fill(conn: Any, table: str, extra: list[tuple[Any, ...]] | None = None) -> None:
    marks = ", ".join("?" for _ in COLS.split(","))
    conn.executemany(f"INSERT INTO {table} ({COLS}) VALUES ({marks})", ROWS + (extra or []))
    conn.commit()


def received_now(seconds_ago: float) -> tuple[str, ...]:
    t = stamp(utc_now() - timedelta(seconds=seconds_ago))
    return ("TGT", "SRC", "EXT4", "PMP1", "REP4", t, None, None, None, t)


def lags(conn: Any, view: str) -> dict[str, tuple[Any, ...]]:
    rows = conn.execute(
        f"SELECT INCOMING_PATH, INCOMING_LAG, INCOMING_HEARTBEAT_AGE FROM {view}"
    ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def check_lag_view(conn: Any, view: str) -> None:
    got = lags(conn, view)
    assert got["EXT1 ==> PMP1 ==> REP1"][0] == 2.499999
    assert got["EXT2 ==> REP2"][0] == -3.25
    assert got["EXT3 ==> PMP1 ==> PMP2 ==> REP3"][0] == pytest.approx(0.1, abs=1e-9)
    lag, age = got["EXT4 ==> PMP1 ==> REP4"]
    assert lag == 0
    # age = now - received, by the database's own clock (UTC; SQLite's has milliseconds)
    assert 4.99 <= age < 30.0


def test_gg_lag_on_sqlite(home: Home, shell: Shell) -> None:
    shell.run("DBLOGIN USERID gg@./tgt.db")
    shell.run("ADD HEARTBEATTABLE")
    conn = sqlite3.connect(home.root / "tgt.db")
    fill(conn, "gg_heartbeat", [received_now(5)])
    check_lag_view(conn, "gg_lag")
    (out_path, out_lag) = conn.execute("SELECT OUTGOING_PATH, OUTGOING_LAG FROM gg_lag").fetchone()
    assert (out_path, out_lag) == (None, None)  # unidirectional: no outgoing side


def test_gg_lag_history_components_on_sqlite(home: Home, shell: Shell) -> None:
    shell.run("DBLOGIN USERID gg@./tgt.db")
    shell.run("ADD HEARTBEATTABLE")
    conn = sqlite3.connect(home.root / "tgt.db")
    fill(conn, "gg_heartbeat_history")
    rows = conn.execute(
        "SELECT INCOMING_PATH, INCOMING_LAG, INCOMING_EXTRACT_LAG, INCOMING_ROUTING_LAG, "
        "INCOMING_REPLICAT_READ_LAG, INCOMING_REPLICAT_LAG, DB_NAME FROM gg_lag_history "
        "ORDER BY HEARTBEAT_RECEIVED_TS"
    ).fetchall()
    assert rows == [
        ("EXT3 ==> PMP1 ==> PMP2 ==> REP3", pytest.approx(0.1), None, None, None, None, "SRC"),
        ("EXT1 ==> PMP1 ==> REP1", 2.499999, 0.499999, 0.75, 0.75, 0.5, "SRC"),
        # no pump: Replicat read its trail 4 s "before" Extract wrote it (skewed clocks)
        ("EXT2 ==> REP2", -3.25, 0.5, None, -4.0, 0.25, "SRC"),
    ]


OUT_COLS = (
    "LOCAL_DATABASE, REMOTE_DATABASE, INCOMING_EXTRACT, INCOMING_REPLICAT, INCOMING_HEARTBEAT_TS, "
    "HEARTBEAT_RECEIVED_TS, OUTGOING_EXTRACT, OUTGOING_ROUTING_PATH, OUTGOING_REPLICAT, "
    "OUTGOING_HEARTBEAT_TS, OUTGOING_EXTRACT_TS, OUTGOING_ROUTING_TS, OUTGOING_REPLICAT_TS, "
    "OUTGOING_RECEIVED_TS"
)
OUT_ROW = ("TGT", "FAR", "E_FAR", "R_TGT", "2026-01-01 00:00:00", "2026-01-01 00:00:03",
           "E_TGT", "P_TGT", "R_FAR", "2026-01-01 00:01:00", "2026-01-01 00:01:00.25",
           "2026-01-01 00:01:01", "2026-01-01 00:01:02.5", "2026-01-01 00:01:04.125")  # fmt: skip


def test_outgoing_replicat_lag_is_the_remote_apply_time_minus_its_read(
    home: Home, shell: Shell
) -> None:
    """Seed 001: GG_LAG_HISTORY's OUTGOING_REPLICAT_LAG, the outgoing side's split like the
    incoming one's; OUTGOING_LAG is "generated at the local database" to "persistently
    inserted into the table at the remote database" (OUTGOING_RECEIVED_TS)."""
    shell.run("DBLOGIN USERID gg@./tgt.db")
    shell.run("ADD HEARTBEATTABLE")
    conn = sqlite3.connect(home.root / "tgt.db")
    marks = ", ".join("?" for _ in OUT_COLS.split(","))
    for table in ("gg_heartbeat", "gg_heartbeat_history"):
        conn.execute(f"INSERT INTO {table} ({OUT_COLS}) VALUES ({marks})", OUT_ROW)
    conn.commit()
    got = conn.execute(
        "SELECT OUTGOING_PATH, OUTGOING_LAG, OUTGOING_EXTRACT_LAG, OUTGOING_ROUTING_LAG, "
        "OUTGOING_REPLICAT_READ_LAG, OUTGOING_REPLICAT_LAG, INCOMING_LAG FROM gg_lag_history"
    ).fetchone()
    assert got == ("E_TGT ==> P_TGT ==> R_FAR", 4.125, 0.25, 0.75, 1.5, 1.625, 3.0)
    assert conn.execute("SELECT OUTGOING_LAG FROM gg_lag").fetchone() == (4.125,)


def test_gg_lag_on_the_embedded_source(home: Home, shell: Shell) -> None:
    """The source's views are SQLite views in its storage; the same arithmetic."""
    shell.run("DBLOGIN SOURCEDB src")
    shell.run("ADD HEARTBEATTABLE")
    with Database(home.dirdb / "SRC") as db:
        fill(db.conn, '"TESTER$GG_HEARTBEAT"', [received_now(5)])
        check_lag_view(db.conn, '"TESTER$GG_LAG"')


def test_lag_global_screen(home: Home, shell: Shell) -> None:
    shell.run("DBLOGIN USERID gg@./tgt.db")
    shell.run("ADD HEARTBEATTABLE")
    conn = sqlite3.connect(home.root / "tgt.db")
    fill(conn, "gg_heartbeat")
    fill(conn, "gg_heartbeat_history")
    out = shell.run("LAG REPLICAT rep*, GLOBAL").splitlines()
    assert out[0] == "Lag Information From Heartbeat Table"
    assert [line.split()[0] for line in out[1:]] == ["LAG", "2.50s", "-3.25s", "0.10s"]
    assert out[2].endswith("SRC    TGT     EXT1 ==> PMP1 ==> REP1")
    assert (
        shell.run("LAG EXTRACT pmp2, GLOBAL")
        .splitlines()[2]
        .endswith("EXT3 ==> PMP1 ==> PMP2 ==> REP3")
    )
    history = shell.run("LAG ext1, GLOBAL, HISTORY").splitlines()
    assert history[3:7] == [
        "",
        "Lag History for EXT1 ==> PMP1 ==> REP1",
        "DATE         MIN       AVG       MAX       COUNT",
        "2026-01-01   2.50s     2.50s     2.50s     1",
    ]
    assert history[8].startswith("Lag Chart for EXT1 ==> PMP1 ==> REP1 (1 heartbeat, ")  # charts
    assert (
        shell.run("LAG nothing, GLOBAL") == "No heartbeat lag information for [NOTHING] in TGT.\n"
    )


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (5.77, "5.77s"),
        (0.004, "0.00s"),
        (-3.25, "-3.25s"),
        (622.87, "10m 22.87s"),
        (3600 * 2 + 184, "2h 03m 04.00s"),
        (86400 + 3600 * 2 + 184, "1d 02h 03m 04.00s"),
        (None, "unknown"),
    ],
)
def test_duration(seconds: float | None, text: str) -> None:
    assert duration(seconds) == text


def test_screens_widen_for_long_values() -> None:
    rows = [LagRow(5.77, 622.87, "ORCL", "BIGDATA", "ETPC ==> PTPC ==> RTPC")]
    assert lag_lines(rows) == [
        "Lag Information From Heartbeat Table",
        "LAG      AGE          FROM   TO      PATH",
        "5.77s    10m 22.87s   ORCL   BIGDATA ETPC ==> PTPC ==> RTPC",
    ]
    wide = lag_lines([LagRow(1.0, 2.0, "A_LONG_NAME", "B", "E ==> R")])
    assert wide[1:] == [
        "LAG      AGE          FROM        TO      PATH",
        "1.00s    2.00s        A_LONG_NAME B       E ==> R",
    ]
    assert history_lines([DayRow("E ==> R", "2026-03-14", 0.5, 0.75, 1.0, 3)])[1:] == [
        "Lag History for E ==> R",
        "DATE         MIN       AVG       MAX       COUNT",
        "2026-03-14   0.50s     0.75s     1.00s     3",
    ]
