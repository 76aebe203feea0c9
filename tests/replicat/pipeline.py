"""An end-to-end pipeline in a real home: embedded source + workload, Extract, pump and
Replicat as real group processes under a real Manager, driven through ``ggsci run``."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from engine.home import Home
from engine.source.database import Database, create_database
from engine.source.workload import WorkloadSpec, run_workload
from engine.status import MANAGER, State, read_process_file

TABLES = ("WL_T01", "WL_T02")
COLUMNS = "ID, NAME, AMOUNT, CREATED, STATUS"
TIMEOUT = 120.0
GROUPS = (("EXTRACT", "EXT1"), ("EXTRACT", "PMP1"), ("REPLICAT", "REP1"))


def ggsci(home: Home, *commands: str) -> str:
    env = {**os.environ, "GGHOME": str(home.root)}
    for kind in ("EXTRACT", "REPLICAT"):
        env.pop(f"GGSCI_RUNNER_{kind}", None)
    out = subprocess.run(
        [sys.executable, "-m", "ggsci", "run", *commands],
        env=env,
        cwd=home.root,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    return out.stdout + out.stderr


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def norm(value: Any) -> str | None:
    """One spelling per value across SQLite and PostgreSQL (numbers, timestamps, text)."""
    if value is None:
        return None
    if isinstance(value, int | float | Decimal):
        d = Decimal(str(value)).normalize()
        return format(d, "f")
    return str(value)


def source_rows(home: Home, table: str) -> list[tuple[str | None, ...]]:
    path = home.dirdb / "SRC" / "data.sqlite"
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute(f'SELECT {COLUMNS} FROM "WL${table}" ORDER BY ID').fetchall()
    finally:
        conn.close()
    return [tuple(norm(v) for v in r) for r in rows]


def new_home(tmp_path: Path, target_db: str) -> Home:
    home = Home(tmp_path / "home")
    home.create_subdirs()
    create_database(home.dirdb, "src")
    (home.dirprm / "mgr.prm").write_text("PORT 0\n")
    (home.dirprm / "ext1.prm").write_text(
        "EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nCHECKPOINTSECS 1\nTABLE wl.*;\n"
    )
    (home.dirprm / "pmp1.prm").write_text(
        "EXTRACT pmp1\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/rt\nPASSTHRU\n"
        "CHECKPOINTSECS 1\nTABLE wl.*;\n"
    )
    (home.dirprm / "rep1.prm").write_text(
        f"REPLICAT rep1\nTARGETDB {target_db}\nASSUMETARGETDEFS\nCHECKPOINTSECS 1\n"
        "GROUPTRANSOPS 200\nMAP wl.*, TARGET wl.*;\n"
    )
    return home


def workload(home: Home, seed: int, transactions: int) -> None:
    spec = WorkloadSpec(
        tables=len(TABLES),
        transactions=transactions,
        rows_per_txn=6,
        sessions=4,
        seed=seed,
        initial_rows=60,
        rollback_ratio=0.1,
    )
    with Database(home.dirdb / "SRC") as db:
        run_workload(db, spec)


def add_and_start(home: Home) -> str:
    return ggsci(
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


def kill9(home: Home, kind: str, name: str) -> None:
    pf = read_process_file(home, kind, name)
    assert pf is not None and pf.state == State.RUNNING, (kind, name, pf)
    os.kill(pf.pid, signal.SIGKILL)
    wait_until(lambda: not _alive(pf.pid), f"{name} to die")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child of the Manager is a zombie until reaped.
    with contextlib.suppress(OSError):
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        return state != "Z"
    return False


def running(home: Home, kind: str, name: str) -> bool:
    pf = read_process_file(home, kind, name)
    return pf is not None and pf.state == State.RUNNING


def shutdown(home: Home) -> None:
    ggsci(home, "STOP REPLICAT rep1", "STOP EXTRACT pmp1", "STOP EXTRACT ext1")
    with contextlib.suppress(AssertionError):
        wait_until(lambda: not any(running(home, k, n) for k, n in GROUPS), "groups to stop", 20)
    ggsci(home, "STOP MANAGER !")
    for kind, name in (*GROUPS, (MANAGER, MANAGER)):
        pf = read_process_file(home, kind, name)
        if pf is not None and pf.state in (State.STARTING, State.RUNNING):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pf.pid, signal.SIGKILL)


def report(home: Home, name: str) -> str:
    path = home.dirrpt / f"{name}.rpt"
    return path.read_text() if path.exists() else "(no report)"
