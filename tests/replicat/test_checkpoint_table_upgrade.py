"""Checkpoint tables of an older version (seed 004's layout without the CREATE_TS default):
ADD CHECKPOINTTABLE and Replicat's first use upgrade them in place, keeping their rows, on
SQLite (rebuilt) and PostgreSQL (altered)."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from shell.conftest import Shell

from engine.home.layout import Home
from engine.replicat import checkpoint_table as ct
from engine.replicat.progress import CheckpointTable, Progress
from engine.targets.base import Target
from engine.targets.postgres import PostgresTarget
from engine.targets.sqlite import SqliteTarget
from engine.trail.model import TrailPosition

OLD_ROW_TS = "2025-03-04 05:06:07.000000"  # what the old Replicat wrote when it began


def old_layout(conn: Any, main: str, lox: str) -> None:
    """The tables as an older version made them: CREATE_TS without a default; one group's
    checkpoint row in them."""
    cols = ", ".join(f"{c} {t}" for c, t in ct.COLUMNS)
    lox_cols = ", ".join(f"{c} {t}" for c, t in ct.LOX_COLUMNS)
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {main} ({cols}, PRIMARY KEY (group_name, group_key))")
    cur.execute(f"CREATE TABLE {lox} ({lox_cols}, PRIMARY KEY ({', '.join(ct.LOX_PRIMARY_KEY)}))")
    cur.execute(
        f"INSERT INTO {main} (group_name, group_key, seqno, rba, create_ts, last_update_ts, "
        f"current_dir, log_csn, version) VALUES ('OLDREP', 1, 3, 4567, '{OLD_ROW_TS}', "
        f"'2025-03-05 00:00:00', '/old', '99', 1)"
    )
    conn.commit()


def _new_group(target: Target, name: str, tmp: Path) -> tuple[CheckpointTable, list[Any]]:
    """Replicat's first use of the table, then a checkpoint of a new group (whose row takes
    CREATE_TS from the default); every row after it."""
    table = CheckpointTable(target, name, "rep1", 7, str(tmp),
                            clock=lambda: datetime(2026, 1, 1))  # fmt: skip
    target.begin()
    table.save(Progress(TrailPosition(0, 1234), 42, ("1.2.3",), None), datetime(2026, 5, 6))
    target.commit()
    rows = target.query(
        f"SELECT group_name, rba, CAST(create_ts AS VARCHAR(40)) FROM {table.main} "
        "ORDER BY group_name"
    )
    target.rollback()
    return table, rows


def test_replicat_upgrades_an_old_sqlite_checkpoint_table(tmp_path: Path) -> None:
    db = tmp_path / "tgt.db"
    with sqlite3.connect(db) as conn:
        old_layout(conn, '"chkpt"', '"chkpt_lox"')
    target = SqliteTarget(db)
    table, rows = _new_group(target, "gg.chkpt", tmp_path)
    assert table.upgraded == 1
    assert rows == [("OLDREP", 4567, OLD_ROW_TS), ("REP1", 1234, OLD_ROW_TS)]
    again = CheckpointTable(target, "gg.chkpt", "rep1", 7, str(tmp_path))
    assert again.upgraded is None  # upgraded once
    target.close()
    with sqlite3.connect(db) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "chkpt__upgrade" not in names and {"chkpt", "chkpt_lox"} <= names


def test_add_checkpointtable_upgrades_an_old_table_and_keeps_its_rows(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.create_subdirs()
    with sqlite3.connect(home.root / "tgt.db") as conn:
        old_layout(conn, '"chkpt"', '"chkpt_lox"')
    shell = Shell(home)
    shell.run("DBLOGIN USERID gg@./tgt.db")
    out = shell.run("ADD CHECKPOINTTABLE gg.chkpt")
    assert "Checkpoint table gg.chkpt upgraded" in out and "(1 checkpoint row(s) kept)" in out
    assert "already exists" in shell.run("ADD CHECKPOINTTABLE gg.chkpt")
    with sqlite3.connect(home.root / "tgt.db") as conn:
        conn.execute(
            "INSERT INTO chkpt (group_name, group_key, rba, last_update_ts, current_dir) "
            "VALUES ('NEW', 2, 0, '2026-01-01', '/x')"
        )
        got = conn.execute("SELECT group_name, create_ts FROM chkpt ORDER BY 1").fetchall()
    assert got == [("NEW", OLD_ROW_TS), ("OLDREP", OLD_ROW_TS)]


def test_an_empty_old_table_takes_the_upgrade_time(tmp_path: Path) -> None:
    db = tmp_path / "tgt.db"
    with sqlite3.connect(db) as conn:
        old_layout(conn, '"chkpt"', '"chkpt_lox"')
        conn.execute('DELETE FROM "chkpt"')
        conn.commit()
    target = SqliteTarget(db)
    table, rows = _new_group(target, "chkpt", tmp_path)
    target.close()
    assert table.upgraded == 0
    assert rows == [("REP1", 1234, "2026-01-01 00:00:00.000000")]


@pytest.mark.postgres
def test_replicat_and_add_checkpointtable_upgrade_an_old_postgresql_table(
    pg_url: str, tmp_path: Path
) -> None:
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS upg")
        old_layout(conn, "upg.chkpt", "upg.chkpt_lox")
        conn.execute("CREATE SCHEMA IF NOT EXISTS upg2")
        old_layout(conn, "upg2.chkpt", "upg2.chkpt_lox")
    target = PostgresTarget(pg_url)
    table, rows = _new_group(target, "upg.chkpt", tmp_path)
    assert table.upgraded == 1
    assert [(g, r, str(ts)[:19]) for g, r, ts in rows] == [
        ("OLDREP", 4567, OLD_ROW_TS[:19]),
        ("REP1", 1234, OLD_ROW_TS[:19]),
    ]
    assert CheckpointTable(target, "upg.chkpt", "rep1", 7, str(tmp_path)).upgraded is None
    target.close()
    home = Home(tmp_path / "home")
    home.create_subdirs()
    shell = Shell(home)
    shell.run(f"DBLOGIN SOURCEDB {pg_url}")
    out = shell.run("ADD CHECKPOINTTABLE upg2.chkpt")
    assert "Checkpoint table upg2.chkpt upgraded" in out, out
    with psycopg.connect(pg_url) as conn:
        default = ct.create_ts_default(ct.connection_io(conn)[0], ct.TableName("upg2", "chkpt"),
                                       "postgresql")  # fmt: skip
    assert default is not None and OLD_ROW_TS[:19] in default
