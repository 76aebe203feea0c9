"""Issues 15 and 29, fast start: a started Extract answers its socket from its first second,
captures before its Spark session is up (the session starts in the background and takes the
batches over), says what Spark waits for, and a STOP during the Spark start stops it cleanly.

A real Manager and the real Extract engine (Spark) in a temporary home; the Spark start takes
seconds, so the process is reliably caught with its session starting.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.home.layout import Home
from engine.home.status import MANAGER, State, read_process_file
from engine.runtime.control import wait_for_state
from engine.trail.reader import TrailReader
from tests.extract.test_process import ggsci

pytestmark = pytest.mark.e2e
TIMEOUT = 120.0


def children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root = create_database(home.dirdb, "src")
    with Database(root) as db:
        execute(db, db.session("ddl"), "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, n NUMBER)")
    (home.dirprm / "mgr.prm").write_text("PORT 0\n")
    (home.dirprm / "ext1.prm").write_text(
        "EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nTABLE hr.emp;\n"
    )
    out = ggsci(
        home,
        "START MANAGER",
        "ADD EXTRACT ext1, TRANLOG, EXTSEQNO 1, EXTRBA 0",
        "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1",
    )
    assert "EXTRACT added." in out, out
    try:
        yield home
    finally:
        ggsci(home, "STOP MANAGER !")
        for kind, name in (("EXTRACT", "EXT1"), (MANAGER, MANAGER)):
            pf = read_process_file(home, kind, name)
            if pf is not None and pf.state in (State.STARTING, State.RUNNING):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pf.pid, signal.SIGKILL)


def _trail_has_rows(home: Home) -> bool:
    if not (home.root / "dirdat" / "lt000000000").exists():
        return False
    return any(True for _ in TrailReader(str(home.root / "dirdat" / "lt")).records())


def test_started_extract_captures_while_spark_starts_and_stops_cleanly(home: Home) -> None:
    # START, then at once SEND STATUS in the same ggsci: the process answers (the request
    # waits for its socket while it is STARTING).
    out = ggsci(home, "START EXTRACT ext1", "SEND EXTRACT ext1, STATUS")
    assert "EXTRACT EXT1 starting" in out, out
    assert "Sending STATUS request to EXTRACT EXT1 ..." in out, out
    assert "EXTRACT EXT1: RUNNING" in out, out
    assert ".sock" not in out and "dirpcs" not in out, out  # no internal file named
    assert wait_for_state(home, "EXTRACT", "EXT1", {State.RUNNING}, 10) == State.RUNNING
    # A change committed now reaches the trail before the Spark session is up: the run mines
    # in its own process meanwhile (the report has no "Spark master" line yet).
    with Database(next(home.dirdb.iterdir())) as db:
        session = db.session("app")
        execute(db, session, "INSERT INTO hr.emp VALUES (1, 10)")
        execute(db, session, "COMMIT")
    deadline = time.monotonic() + 30
    while not _trail_has_rows(home) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _trail_has_rows(home)
    report = (home.dirrpt / "EXT1.rpt").read_text()
    assert "Spark master" not in report, report
    status = ggsci(home, "SEND EXTRACT ext1, STATUS")
    assert "Current status: Recovery complete" in status, status
    assert "  Spark: starting the Spark session (" in status, status
    # The engine's own requests are answered at once.
    shown = ggsci(home, "SEND EXTRACT ext1, SHOWTRANS")
    assert "is starting" not in shown, shown
    lag = ggsci(home, "LAG EXTRACT ext1")
    assert "Sending GETLAG request to EXTRACT EXT1 ..." in lag, lag
    assert "not currently running" not in lag, lag
    # STOP during start-up: stopped within seconds, not after the Spark start, and the JVM
    # being launched (if it is yet) ends with the process.
    pf = read_process_file(home, "EXTRACT", "EXT1")
    assert pf is not None
    jvms = children(pf.pid)
    began = time.monotonic()
    stopped = ggsci(home, "STOP EXTRACT ext1")
    assert "Request processed." in stopped, stopped
    assert wait_for_state(home, "EXTRACT", "EXT1", {State.STOPPED, State.ABENDED}, 15) == (
        State.STOPPED
    )
    assert time.monotonic() - began < 15
    deadline = time.monotonic() + 30
    while any(alive(p) for p in jvms) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in jvms), jvms
    report = (home.dirrpt / "EXT1.rpt").read_text()
    assert "Stopped while starting (Spark session)." in report, report
    assert "OGG-00991" in report and "ABENDING" not in report, report
