"""End-to-end soak: workload -> Extract -> pump -> Replicat (real processes under a real
Manager, SQLite target by default), with SIGKILL of a random group at a random moment in
every round and a restart; at the end everything drains and every target table is compared
with its source table row for row.

Prints ``name=value`` lines; the last is ``mismatched_rows=N`` (0 is the only good answer).

    python benchmarks/e2e_soak.py [--rounds N] [--transactions T] [--seed S]
                                  [--target postgresql://...]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from engine import checkpoint_table as ct
from engine.home import Home
from engine.source.database import Database, create_database
from engine.source.workload import WorkloadSpec, run_workload
from engine.status import MANAGER, State, read_process_file

TABLES = ("WL_T01", "WL_T02", "WL_T03")
COLUMNS = "ID, NAME, AMOUNT, CREATED, STATUS"
GROUPS = (("EXTRACT", "EXT1"), ("EXTRACT", "PMP1"), ("REPLICAT", "REP1"))


def ggsci(home: Home, *commands: str) -> str:
    env = {**os.environ, "GGHOME": str(home.root)}
    out = subprocess.run(
        [sys.executable, "-m", "ggsci", "run", *commands],
        env=env, cwd=home.root, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return out.stdout + out.stderr


def norm(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, int | float | Decimal):
        return format(Decimal(str(value)).normalize(), "f")
    return str(value)


def source_rows(home: Home, table: str) -> list[tuple[str | None, ...]]:
    conn = sqlite3.connect(f"file:{home.dirdb / 'SRC' / 'data.sqlite'}?mode=ro", uri=True)
    try:
        rows = conn.execute(f'SELECT {COLUMNS} FROM "WL${table}" ORDER BY ID').fetchall()
    finally:
        conn.close()
    return [tuple(norm(v) for v in r) for r in rows]


def target_rows(target: str, home: Home, table: str) -> list[tuple[str | None, ...]]:
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target) as conn:
            rows = conn.execute(f"SELECT {COLUMNS} FROM wl.{table.lower()} ORDER BY id").fetchall()
    else:
        conn = sqlite3.connect(home.root / target)
        try:
            rows = conn.execute(f"SELECT {COLUMNS} FROM {table} ORDER BY ID").fetchall()
        finally:
            conn.close()
    return [tuple(norm(v) for v in r) for r in rows]


def mismatches(target: str, home: Home) -> int:
    bad = 0
    for t in TABLES:
        src, tgt = source_rows(home, t), target_rows(target, home, t)
        bad += len(set(src) ^ set(tgt)) + abs(len(src) - len(tgt))
    return bad


def create_targets(target: str, home: Home) -> None:
    ddl = "(ID NUMERIC PRIMARY KEY, NAME VARCHAR(40), AMOUNT NUMERIC, CREATED {}, STATUS CHAR(1))"
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS wl CASCADE")
            conn.execute("DROP SCHEMA IF EXISTS gg CASCADE")
            conn.execute("CREATE SCHEMA wl")
            for t in TABLES:
                conn.execute(f"CREATE TABLE wl.{t.lower()} {ddl.format('TIMESTAMP')}")
        with psycopg.connect(target) as pg:
            ct.create(pg, ct.TableName.parse("gg.chkpt"), "postgresql")
        return
    conn = sqlite3.connect(home.root / target)
    for t in TABLES:
        conn.execute(f"CREATE TABLE {t} {ddl.format('DATE')}")
    ct.create(conn, ct.TableName.parse("gg.chkpt"), "sqlite")
    conn.close()


def running(home: Home, kind: str, name: str) -> int | None:
    pf = read_process_file(home, kind, name)
    return pf.pid if pf is not None and pf.state == State.RUNNING else None


def wait(predicate: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.25)
    return False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--transactions", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", default="tgt.db", help="SQLite file (in the home) or URL")
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="ggsci-soak-") as tmp:
        home = Home(Path(tmp) / "home")
        home.create_subdirs()
        create_database(home.dirdb, "src")
        create_targets(args.target, home)
        prm = home.dirprm
        (prm / "mgr.prm").write_text("PORT 0\n")
        (prm / "ext1.prm").write_text(
            "EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nCHECKPOINTSECS 1\nTABLE wl.*;\n"
        )
        (prm / "pmp1.prm").write_text(
            "EXTRACT pmp1\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/rt\nPASSTHRU\n"
            "CHECKPOINTSECS 1\nTABLE wl.*;\n"
        )
        (prm / "rep1.prm").write_text(
            f"REPLICAT rep1\nTARGETDB {args.target}\nASSUMETARGETDEFS\nCHECKPOINTSECS 1\n"
            "MAP wl.*, TARGET wl.*;\n"
        )
        ggsci(
            home,
            "START MANAGER",
            "ADD EXTRACT ext1, TRANLOG, EXTSEQNO 1, EXTRBA 0",
            "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1",
            "ADD EXTRACT pmp1, EXTTRAILSOURCE ./dirdat/lt",
            "ADD RMTTRAIL ./dirrmt/rt, EXTRACT pmp1",
            "ADD REPLICAT rep1, EXTTRAIL ./dirrmt/rt, CHECKPOINTTABLE gg.chkpt",
            "START EXTRACT ext1",
            "START EXTRACT pmp1",
            "START REPLICAT rep1",
        )
        started = time.monotonic()
        kills = {name: 0 for _, name in GROUPS}
        committed = 0
        try:
            for r in range(args.rounds):
                for kind, name in GROUPS:
                    if not wait(lambda k=kind, n=name: running(home, k, n), 90):
                        raise SystemExit(f"{name} did not start: see {home.dirrpt}")
                spec = WorkloadSpec(
                    tables=len(TABLES), transactions=args.transactions, rows_per_txn=8,
                    sessions=6, seed=args.seed * 1000 + r, initial_rows=200,
                )  # fmt: skip
                with Database(home.dirdb / "SRC") as db:
                    committed += run_workload(db, spec).commits
                kind, name = rnd.choice(GROUPS)
                time.sleep(rnd.uniform(0.0, 1.5))
                pid = running(home, kind, name)
                if pid is not None:
                    os.kill(pid, signal.SIGKILL)
                    kills[name] += 1
                    time.sleep(0.3)
                    ggsci(home, f"START {kind} {name.lower()}")
            drained = wait(lambda: mismatches(args.target, home) == 0, 300)
            bad = mismatches(args.target, home)
            rows = sum(len(source_rows(home, t)) for t in TABLES)
        finally:
            ggsci(home, "STOP REPLICAT rep1", "STOP EXTRACT pmp1", "STOP EXTRACT ext1")
            wait(lambda: not any(running(home, k, n) for k, n in GROUPS), 20)
            ggsci(home, "STOP MANAGER !")
            for kind, name in (*GROUPS, (MANAGER, MANAGER)):
                pid = running(home, kind, name)
                if pid is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
        print(f"rounds={args.rounds}")
        print(f"committed_transactions={committed}")
        print("kills=" + ",".join(f"{n}:{c}" for n, c in kills.items()))
        print(f"source_rows={rows}")
        print(f"drained={drained}")
        print(f"seconds={time.monotonic() - started:.1f}")
        print(f"mismatched_rows={bad}")


if __name__ == "__main__":
    main()
