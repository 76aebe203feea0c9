"""The Extract as a real group process under a real Manager, killed with SIGKILL mid-stream
and restarted: every committed transaction reaches the trail exactly once, in order."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.home.layout import Home
from engine.home.status import MANAGER, State, read_process_file
from engine.trail.reader import TrailReader

pytestmark = pytest.mark.e2e
TIMEOUT = 120.0


def ggsci(home: Home, *commands: str) -> str:
    env = {**os.environ, "GGHOME": str(home.root)}
    env.pop("GGSCI_RUNNER_EXTRACT", None)
    out = subprocess.run(
        [sys.executable, "-m", "ggsci", "run", *commands],
        env=env,
        cwd=home.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return out.stdout + out.stderr


def keys_in_trail(home: Home) -> list[str]:
    base = home.root / "dirdat" / "lt"
    if not list(base.parent.glob("lt*")):
        return []
    return [dict(rec.columns)[0] or "" for _, rec in TrailReader(str(base)).records()]


def wait_until(predicate: object, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def commit_batch(root: Path, start: int, count: int) -> list[str]:
    keys = []
    with Database(root) as db:
        s = db.session("load")
        for i in range(start, start + count):
            execute(db, s, f"INSERT INTO hr.emp VALUES ({i}, 'n{i}', {i})")
            execute(db, s, f"UPDATE hr.emp SET sal = sal + 1 WHERE id = {i}")
            execute(db, s, "COMMIT")
            keys += [str(i), str(i)]
        execute(db, s, f"INSERT INTO hr.emp VALUES ({start + 10_000}, 'rolled back', 0)")
        execute(db, s, "ROLLBACK")
    return keys


def test_extract_process_killed_and_restarted_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root = create_database(home.dirdb, "src")
    with Database(root) as db:
        execute(
            db,
            db.session("ddl"),
            "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20), sal NUMBER)",
        )
    (home.dirprm / "mgr.prm").write_text("PORT 0\n")
    (home.dirprm / "ext1.prm").write_text(
        "EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nCHECKPOINTSECS 1\nWARNLONGTRANS 2S\n"
        "TABLE hr.emp;\n"
    )
    out = ggsci(
        home,
        "START MANAGER",
        "ADD EXTRACT ext1, TRANLOG, EXTSEQNO 1, EXTRBA 0",
        "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1",
        "START EXTRACT ext1",
    )
    assert "EXTRACT added." in out and "EXTRACT EXT1 starting" in out, out
    try:
        expected = commit_batch(root, 1, 30)
        wait_until(
            lambda: len(keys_in_trail(home)) >= len(expected), "the first batch in the trail"
        )
        pf = read_process_file(home, "EXTRACT", "EXT1")
        assert pf is not None and pf.state == State.RUNNING
        expected += commit_batch(root, 100, 20)
        os.kill(pf.pid, signal.SIGKILL)  # mid-stream: the second batch may be partly written
        expected += commit_batch(root, 200, 20)
        assert "EXTRACT EXT1 starting" in ggsci(home, "START EXTRACT ext1")
        wait_until(lambda: len(keys_in_trail(home)) >= len(expected), "all batches in the trail")
        time.sleep(1.0)  # nothing more may arrive
        assert keys_in_trail(home) == expected
        info = ggsci(home, "INFO ALL")
        assert "EXTRACT     RUNNING     EXT1" in info, info
        status = ggsci(home, "SEND EXTRACT ext1, STATUS")
        assert "Open transactions: 0" in status, status
        before = sorted(p.name for p in (home.root / "dirdat").glob("lt*"))
        out = ggsci(home, "SEND EXTRACT ext1, ROLLOVER")
        assert "Rollover performed" in out, out
        expected += commit_batch(root, 300, 5)
        wait_until(lambda: len(keys_in_trail(home)) >= len(expected), "the batch after ROLLOVER")
        after = sorted(p.name for p in (home.root / "dirdat").glob("lt*"))
        assert len(after) == len(before) + 1
        assert keys_in_trail(home) == expected

        # A long-running transaction: SHOWTRANS, STOP refused, SKIPTRANS (confirmed by FORCE).
        with Database(root) as db:
            execute(db, db.session("longone"), "INSERT INTO hr.emp VALUES (9999, 'open', 0)")
        time.sleep(3.5)  # past WARNLONGTRANS 2S on the redo clock, whose times are whole seconds
        expected += commit_batch(root, 400, 1)
        wait_until(
            lambda: len(keys_in_trail(home)) >= len(expected), "the batch after the open one"
        )
        shown = ggsci(home, "SEND EXTRACT ext1, SHOWTRANS")
        assert (
            "Sending SHOWTRANS request to EXTRACT EXT1 ..." in shown
            and "Items:                1" in shown
        ), shown
        xid = next(ln.split()[1] for ln in shown.splitlines() if ln.startswith("XID:"))
        refused = ggsci(home, "STOP EXTRACT ext1")
        assert "There are open, long-running transactions." in refused, refused
        assert "SKIPTRANS cancelled." in ggsci(home, f"SEND EXTRACT ext1, SKIPTRANS {xid}")
        skipped = ggsci(home, f"SEND EXTRACT ext1, SKIPTRANS {xid} FORCE")
        assert f"Transaction [XID {xid}, Redo Thread 1" in skipped and "skipped." in skipped, (
            skipped
        )
        assert "No transactions found." in ggsci(home, "SEND EXTRACT ext1, SHOWTRANS")
    finally:
        ggsci(home, "STOP EXTRACT ext1", "STOP MANAGER !")
        for kind, name in (("EXTRACT", "EXT1"), (MANAGER, MANAGER)):
            pf = read_process_file(home, kind, name)
            if pf is not None and pf.state in (State.STARTING, State.RUNNING):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pf.pid, signal.SIGKILL)
