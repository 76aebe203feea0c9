"""The Manager's watches (mgr.prm LAG*, DOWNREPORT*, DOWNCRITICAL, STARTUPVALIDATIONDELAY) on
real group processes and process files: what they write to ggserr.log, and when."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from engine.home.checkpoints import Checkpoints, save_checkpoints
from engine.home.layout import Home
from engine.home.status import MANAGER, State, read_process_file
from engine.manager.params import parse_manager_params
from engine.manager.watch import ManagerWatch, hms
from engine.runtime.control import wait_for_state
from engine.runtime.events import Severity

from .conftest import Shell
from .test_processes import builtin_runners  # noqa: F401 (autouse: the built-in runner)

pytestmark = pytest.mark.e2e
NOW = datetime(2026, 11, 28, 12, 0, 0)


@pytest.fixture
def two_groups(home: Home) -> Iterator[Shell]:
    """EXT1 running, EXT2 stopped, EXT3 abended (process files as the processes left them)."""
    (home.dirprm / "mgr.prm").write_text("PORT 0\n")
    shell = Shell(home)
    for name in ("ext1", "ext2"):
        (home.dirprm / f"{name}.prm").write_text(f"EXTRACT {name}\nEXTTRAIL ./dirdat/{name[-1]}t\n")
        shell.run(f"ADD EXTRACT {name}, TRANLOG, BEGIN NOW")
    (home.dirprm / "ext3.prm").write_text("EXTRACT ext3\nNOSUCHPARAM\n")
    shell.run("ADD EXTRACT ext3, TRANLOG, BEGIN NOW")
    assert shell.run("START MANAGER") == "Manager started.\n"
    shell.run("START EXTRACT ext1")
    shell.run("START EXTRACT ext2")
    shell.run("START EXTRACT ext3")
    assert wait_for_state(home, "EXTRACT", "EXT1", {State.RUNNING}, 30) == State.RUNNING
    assert wait_for_state(home, "EXTRACT", "EXT3", {State.ABENDED}, 30) == State.ABENDED
    assert wait_for_state(home, "EXTRACT", "EXT2", {State.RUNNING}, 30) == State.RUNNING
    shell.run("STOP EXTRACT ext2")
    assert wait_for_state(home, "EXTRACT", "EXT2", {State.STOPPED}, 30) == State.STOPPED
    try:
        yield shell
    finally:
        for kind, name in (("EXTRACT", "EXT1"), ("EXTRACT", "EXT2"), (MANAGER, MANAGER)):
            pf = read_process_file(home, kind, name)
            if pf is not None and pf.state in (State.STARTING, State.RUNNING):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pf.pid, signal.SIGKILL)


def _lagging(home: Home, name: str, seconds: float) -> None:
    updated = (NOW - timedelta(seconds=7)).isoformat(" ", "seconds")
    save_checkpoints(home, Checkpoints(name, "EXTRACT", updated=updated, lag_seconds=seconds))


def _watch(home: Home, text: str) -> tuple[ManagerWatch, list[tuple[str, Severity, str]]]:
    said: list[tuple[str, Severity, str]] = []
    params = parse_manager_params(text)
    return ManagerWatch(home, params, lambda *a: said.append(a), lambda: NOW), said


def test_lag_over_laginfo_and_lagcritical(two_groups: Shell) -> None:
    home = two_groups.session.home
    text = "PORT 0\nLAGREPORTMINUTES 1\nLAGINFOSECONDS 30\nLAGCRITICALMINUTES 2\n"
    watch, said = _watch(home, text)
    for name in ("EXT1", "EXT2"):  # EXT2 is stopped: not checked, whatever its lag
        _lagging(home, name, 3600)
    watch.tick(0.0)
    watch.tick(59.0)
    assert said == []  # the first check is one LAGREPORT interval after the start
    watch.tick(60.0)
    text1 = "Lag for EXTRACT EXT1 is 01:00:00 (checkpoint updated 00:00:07 ago)."
    assert said == [("OGG-00947", Severity.WARNING, text1)]
    _lagging(home, "EXT1", 45)
    watch.tick(119.0)
    watch.tick(120.5)
    assert said[1:] == [
        (
            "OGG-00946",
            Severity.INFO,
            "Lag for EXTRACT EXT1 is 00:00:45 (checkpoint updated 00:00:07 ago).",
        )
    ]
    _lagging(home, "EXT1", 29)
    watch.tick(181.0)
    assert len(said) == 2  # under LAGINFO: nothing


def test_laginfo_zero_reports_every_interval_and_lagreport_alone_too(two_groups: Shell) -> None:
    home = two_groups.session.home
    _lagging(home, "EXT1", 0)
    for text in ("PORT 0\nLAGINFOSECONDS 0\nLAGREPORTHOURS 1\n", "PORT 0\nLAGREPORTMINUTES 5\n"):
        watch, said = _watch(home, text)
        assert watch.params.lag is not None
        every = watch.params.lag.every_seconds
        watch.tick(0.0)
        watch.tick(every)
        watch.tick(2 * every)
        assert [s[0] for s in said] == ["OGG-00946", "OGG-00946"], said


def test_downreport_and_downcritical(two_groups: Shell) -> None:
    home = two_groups.session.home
    watch, said = _watch(home, "PORT 0\nDOWNREPORTMINUTES 10\n")
    watch.tick(0.0)
    watch.tick(600.0)
    assert [(c, s.value, t.split(" since ")[0]) for c, s, t in said] == [
        ("OGG-01148", "WARNING", "EXTRACT EXT3 is down (ABENDED")
    ]
    watch, said = _watch(home, "PORT 0\nDOWNREPORTHOURS 1\nDOWNCRITICAL\n")
    watch.tick(0.0)
    watch.tick(3600.0)
    assert sorted(t.split(" is down")[0] for _, _, t in said) == ["EXTRACT EXT2", "EXTRACT EXT3"]


def test_startupvalidationdelay_reports_a_group_that_did_not_stay_up(two_groups: Shell) -> None:
    home = two_groups.session.home
    watch, said = _watch(home, "PORT 0\nSTARTUPVALIDATIONDELAY 5\n")
    watch.started("EXTRACT", "EXT1", 0.0)
    watch.started("EXTRACT", "EXT3", 0.0)
    watch.tick(4.9)
    assert said == []
    watch.tick(5.0)
    assert said == [
        (
            "OGG-01153",
            Severity.ERROR,
            "EXTRACT EXT3 did not stay up: ABENDED 5 seconds after it was started.",
        )
    ]


def test_the_manager_logs_lag_from_mgr_prm(two_groups: Shell) -> None:
    """The running Manager acts on its file: LAGREPORT is read in minutes, so this one runs
    its check directly (one interval would be a minute) through the Manager's own watch."""
    from engine.manager.main import Manager
    from engine.manager.params import check_manager_params

    home = two_groups.session.home
    (home.dirprm / "mgr.prm").write_text("PORT 0\nLAGREPORTMINUTES 1\nLAGCRITICALSECONDS 10\n")
    _lagging(home, "EXT1", 11)
    manager = Manager(home, check_manager_params(home.dirprm / "mgr.prm", home.root))
    manager.watches.check_lag()
    assert (
        "WARNING OGG-00947  Oracle GoldenGate Manager for Oracle, mgr.prm:  Lag for EXTRACT EXT1 is 00:00:11"
        in home.ggserr_log.read_text()
    )


def test_hms() -> None:
    assert hms(0) == "00:00:00" and hms(3661.4) == "01:01:01" and hms(-5) == "00:00:00"
