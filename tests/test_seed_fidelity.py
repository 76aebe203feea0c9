"""Seed statements held by tests here (the rest are listed in docs/seeds.md with their tests).

Seed 004: CREATE_TS is "the date and time when the checkpoint table was created".
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from engine import checkpoint_table as ct
from engine.replicat.progress import CheckpointTable, Progress
from engine.targets.sqlite import SqliteTarget
from engine.trail.model import TrailPosition


def test_seed_004_create_ts_is_when_the_table_was_created(tmp_path: Path) -> None:
    db = tmp_path / "tgt.db"
    conn = sqlite3.connect(db)
    ct.create(conn, ct.TableName.parse("gg.chkpt"), "sqlite", created=datetime(2026, 1, 2, 3, 4))
    conn.close()
    target = SqliteTarget(db)
    table = CheckpointTable(target, "gg.chkpt", "rep", 7, str(tmp_path))
    target.begin()
    table.save(Progress(TrailPosition(0, 1234), 42, ("1.2.3",), None), datetime(2026, 5, 6))
    target.commit()
    later = datetime(2026, 6, 7, 8, 9)
    target.begin()
    table.save(Progress(TrailPosition(0, 2345), 43, ("1.2.4",), None), later)
    target.commit()
    target.close()
    conn = sqlite3.connect(db)
    [(create_ts, last_update_ts, rba)] = conn.execute(
        "SELECT create_ts, last_update_ts, rba FROM chkpt"
    ).fetchall()
    conn.close()
    assert create_ts == "2026-01-02 03:04:00.000000"  # not the row's first write (May 6)
    assert last_update_ts == later.strftime("%Y-%m-%d %H:%M:%S.%f") and rba == 2345
