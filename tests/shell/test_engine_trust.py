"""Engine events stay one line each in ggserr.log, and a group process whose report cannot be
written at start says so there (issue 12)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.home.groups import GroupStore
from engine.home.layout import Home
from engine.runtime import process
from engine.runtime.events import DELIVERY_COMPONENT, Event, Severity, log_event, one_line
from engine.runtime.process import GroupContext
from engine.runtime.report import ReportWriter

from .conftest import FIXED_NOW, Shell

SPARK_ERROR = (
    "Py4JJavaError: An error occurred while calling o71.save.\n"
    ": org.apache.spark.SparkException: Job aborted due to stage failure: disk full\n"
    "\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2672)\n"
    "\tat org.apache.spark.scheduler.DAGScheduler.abortStage(DAGScheduler.scala:2608)\n"
    "Caused by: java.io.IOException: No space left on device\n"
    "\t... 42 more\n"
)
PY_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "engine/replicat/apply.py", line 10, in apply\n'
    "    target.execute(sql)\n"
    "sqlite3.OperationalError: database is locked\n"
)


def test_one_line_keeps_what_went_wrong() -> None:
    assert one_line(SPARK_ERROR) == (
        "Py4JJavaError: An error occurred while calling o71.save. "
        "org.apache.spark.SparkException: Job aborted due to stage failure: disk full "
        "[4 more line(s)]"
    )
    assert one_line(PY_TRACEBACK) == "sqlite3.OperationalError: database is locked [3 more line(s)]"
    assert one_line("REPLICAT REP1 started.") == "REPLICAT REP1 started."
    assert one_line("a\x1b[2Jb\x00c\td") == "a?[2Jb?c\td"
    assert one_line("first\r\nsecond") == "first [1 more line(s)]"


def test_a_spark_traceback_is_one_event_in_ggserr_and_whole_in_the_report(
    shell: Shell, home: Home
) -> None:
    shell.run("ADD REPLICAT rep1, EXTTRAIL ./dirdat/rt")
    group = GroupStore(home).get("REP1")
    assert group is not None
    report = ReportWriter(home.dirrpt / "REP1.rpt", lambda: FIXED_NOW)
    ctx = GroupContext(home, group, lambda: FIXED_NOW, report)
    ctx.event("OGG-01668", Severity.ERROR, SPARK_ERROR)
    ctx.event("OGG-01668", Severity.ERROR, "PROCESS ABENDING.")
    logged = home.ggserr_log.read_text().splitlines()[1:]  # after ADD REPLICAT's OGG-00987
    assert len(logged) == 2
    assert logged[0].endswith("rep1.prm:  " + one_line(SPARK_ERROR))
    assert "at org.apache.spark.scheduler.DAGScheduler.abortStage" in report.path.read_text()
    line = log_event(home.ggserr_log, Event("X-1", Severity.INFO, "\udcff", DELIVERY_COMPONENT))
    assert line.endswith("\udcff") and home.ggserr_log.read_bytes().endswith(b"?\n")


def _full_dirrpt(dirrpt: Path) -> Iterator[str]:
    """Make writes to ``dirrpt`` fail: as root, a 16 KiB tmpfs filled up (ENOSPC, a really
    full disk); else, or where mounting is not allowed, ``dirrpt`` is a file (so the report
    cannot be created). Yields which."""
    if os.geteuid() == 0:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(dirrpt)],
            capture_output=True,
            check=False,
        )
        if mounted.returncode == 0:
            try:
                fd = os.open(dirrpt / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
                try:
                    while os.write(fd, b"\0" * 4096):
                        pass
                except OSError:  # ENOSPC: full
                    pass
                finally:
                    os.close(fd)
                yield "full"
            finally:
                subprocess.run(["umount", str(dirrpt)], check=True)
            return
    dirrpt.rmdir()
    dirrpt.write_text("not a directory")
    yield "file"


@pytest.fixture
def unwritable_dirrpt(home: Home) -> Iterator[str]:
    yield from _full_dirrpt(home.dirrpt)


def test_replicat_start_with_a_full_dirrpt_logs_an_event_and_exits(
    shell: Shell,
    home: Home,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    unwritable_dirrpt: str,
) -> None:
    assert "REPLICAT added." in shell.run("ADD REPLICAT rep1, EXTTRAIL ./dirdat/rt")
    (home.dirprm / "rep1.prm").write_text("REPLICAT rep1\nMAP src.*, TARGET src.*;\n")
    monkeypatch.chdir(home.root)  # the process chdirs to its home; come back after
    status = process.main(["REPLICAT", "rep1", "--home", str(home.root)])
    assert status == 1
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""  # nothing for dirout, no traceback
    logged = [ln for ln in home.ggserr_log.read_text().splitlines() if "OGG-00987" not in ln]
    assert len(logged) == 2, logged
    assert "ERROR   OGG-01091  Oracle GoldenGate Delivery for Oracle, rep1.prm:  " in logged[0]
    error = "error 28, No space left on device" if unwritable_dirrpt == "full" else "error"
    assert f'Unable to open file "{home.dirrpt}' in logged[0] and error in logged[0]
    assert logged[1].endswith(
        "OGG-01668  Oracle GoldenGate Delivery for Oracle, rep1.prm:  PROCESS ABENDING."
    )
    assert '"state": "ABENDED"' in (home.root / "dirpcs" / "REP1.pcr").read_text()
