"""Seed statements held by tests here (the rest are listed in docs/seeds.md with their tests).

Seed 004: CREATE_TS is "the date and time when the checkpoint table was created"; LOG_BSN is
where Extract could be set back to, not the commit CSN.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from engine.heartbeat.flow import RESTART_CSN
from engine.replicat import checkpoint_table as ct
from engine.replicat.progress import CheckpointTable, Progress
from engine.targets.sqlite import SqliteTarget
from engine.trail.codec import user_token
from engine.trail.layout import IOType
from engine.trail.model import TrailPosition, TrailRecord
from engine.trail.txreader import Transaction


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


def _txn(csn: int, rba: int, restart: str | None) -> Transaction:
    tokens = () if restart is None else (user_token(RESTART_CSN, restart),)
    hb = TrailRecord(IOType.FIELDCOMP, "GG.GG_HEARTBEAT_SEED", logcsn=str(csn),
                     tranid=f"1.{csn}", extra_tokens=tokens)  # fmt: skip
    return Transaction((hb,), TrailPosition(0, rba - 100), TrailPosition(0, rba))


def test_seed_004_log_bsn_is_where_extract_could_restart_not_the_commit_csn(
    tmp_path: Path,
) -> None:
    """Seed 004: LOG_BSN 'provides information needed to set Extract back in time'. It is the
    restart CSN (begin of the oldest open transaction) of the last heartbeat applied, kept
    across transactions without one and across a restart of Replicat."""
    db = tmp_path / "tgt.db"
    conn = sqlite3.connect(db)
    ct.create(conn, ct.TableName.parse("chkpt"), "sqlite")
    conn.close()
    target = SqliteTarget(db)
    table = CheckpointTable(target, "chkpt", "rep", 7, str(tmp_path))

    def save(progress: Progress) -> str:
        target.begin()
        table.save(progress, datetime(2026, 5, 6))
        target.commit()
        [(bsn,)] = target.query("SELECT log_bsn FROM chkpt")
        target.rollback()
        return str(bsn)

    start = Progress(TrailPosition(0, 0))
    p1 = start.after(_txn(500, 200, None), "")
    assert save(p1) == "500"  # no heartbeat yet: the commit CSN
    p2 = p1.after(_txn(600, 300, "450"), "")
    assert save(p2) == "450"  # the heartbeat's restart CSN, older than its commit
    p3 = p2.after(_txn(700, 400, None), "")
    assert save(p3) == "450"  # kept until the next heartbeat
    loaded = CheckpointTable(target, "chkpt", "rep", 7, str(tmp_path)).load()
    assert loaded is not None and loaded.bsn == 450 and loaded.csn == 700
    target.close()
