"""End to end: a real Manager daemon and real group processes in a temporary home.

No fixed sleeps: every wait polls the process files with a timeout.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
from collections.abc import Iterator

import pytest

from engine.home.layout import Home
from engine.home.status import MANAGER, State, read_process_file, socket_path
from engine.runtime.control import manager_info, wait_for, wait_for_state

from .conftest import Shell

pytestmark = pytest.mark.e2e
TIMEOUT = 20.0
GOOD_PRM = "EXTRACT ext1\nEXTTRAIL ./dirdat/lt\nTABLE hr.*;\n"


@pytest.fixture(autouse=True)
def builtin_runners(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the process model, not the engines: run the built-in runner."""
    for kind in ("EXTRACT", "REPLICAT"):
        monkeypatch.setenv(f"GGSCI_RUNNER_{kind}", "tests.harness.runners:ParameterCheckRunner")


@pytest.fixture
def live(home: Home) -> Iterator[Shell]:
    """A shell on a home with mgr.prm; afterwards every process it started is stopped."""
    (home.dirprm / "mgr.prm").write_text("PORT 0\n")
    (home.dirprm / "ext1.prm").write_text(GOOD_PRM)
    shell = Shell(home)
    shell.run("ADD EXTRACT ext1, TRANLOG, BEGIN NOW")
    shell.run("ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1")
    try:
        yield shell
    finally:
        for kind, name in (("EXTRACT", "EXT1"), ("REPLICAT", "REP1"), (MANAGER, MANAGER)):
            pf = read_process_file(home, kind, name)
            if pf is not None and pf.state in (State.STARTING, State.RUNNING):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pf.pid, signal.SIGKILL)


def start_ext1(shell: Shell) -> int:
    home = shell.session.home
    if manager_info(home) is None:
        assert shell.run("START MANAGER") == "Manager started.\n"
    out = shell.run("START EXTRACT ext1")
    assert out == "\nSending START request to MANAGER ...\nEXTRACT EXT1 starting\n", out
    assert (
        wait_for_state(home, "EXTRACT", "EXT1", {State.RUNNING, State.ABENDED}, TIMEOUT)
        == State.RUNNING
    )
    pf = read_process_file(home, "EXTRACT", "EXT1")
    assert pf is not None
    return pf.pid


def test_manager_start_info_stop(live: Shell) -> None:
    home = live.session.home
    assert live.run("INFO MANAGER") == "Manager is DOWN!\n"
    assert live.run("START MANAGER") == "Manager started.\n"
    info = manager_info(home)
    assert info is not None and info.port
    assert live.run("STATUS MGR") == (
        f"Manager is running (IP port testhost.{info.port}, Process ID {info.pid}).\n"
    )
    assert live.run("START MANAGER") == "ERROR: Manager is already running.\n"
    assert stat.S_IMODE(socket_path(home, MANAGER, MANAGER).stat().st_mode) == 0o600
    assert "Manager listening on port" in live.run("SEND MANAGER GETPORTINFO")
    assert "OGG-00983" in home.ggserr_log.read_text()
    assert live.run("STOP MANAGER !") == (
        "Sending STOP request to MANAGER ...\nRequest processed.\nManager stopped.\n"
    )
    assert manager_info(home) is None
    assert "MANAGER     STOPPED" in live.run("INFO ALL")


def test_stop_manager_asks_first(home: Home) -> None:
    (home.dirprm / "mgr.prm").write_text("PORT 0\n")
    shell = Shell(home, answers=["n", "y"])
    try:
        shell.run("START MGR")
        assert shell.run("STOP MGR") == ""
        assert manager_info(home) is not None
        assert shell.run("STOP MGR").endswith("Manager stopped.\n")
        assert shell.prompts[0].startswith("Manager process is required by other GGS processes.")
    finally:
        info = manager_info(home)
        if info is not None:
            os.kill(info.pid, signal.SIGKILL)


def test_group_runs_answers_send_and_stops_gracefully(live: Shell) -> None:
    home = live.session.home
    pid = start_ext1(live)
    assert stat.S_IMODE(socket_path(home, "EXTRACT", "EXT1").stat().st_mode) == 0o600
    assert f"Process ID           {pid}" in live.run("INFO EXTRACT ext1")
    out = live.run("send ext1, status")
    assert out.startswith("\nSending status request to EXTRACT EXT1 ...\nEXTRACT EXT1: RUNNING\n")
    assert live.run("LAG EXTRACT *") == (
        "\nSending GETLAG request to EXTRACT EXT1 ...\nNo records yet processed.\n"
    )
    # RUNNING comes before the engine is loaded (issue 15): wait until it is up.
    assert wait_for(lambda: "starting:" not in live.run("send ext1, status"), TIMEOUT)
    out = live.run("SEND EXTRACT ext1, FROBNICATE")
    assert "FROBNICATE is not a valid request" in out and not live.ok
    assert live.run("STOP EXTRACT ext1") == (
        "\nSending STOP request to EXTRACT EXT1 ...\nRequest processed.\n"
    )
    assert wait_for_state(home, "EXTRACT", "EXT1", {State.STOPPED}, TIMEOUT) == State.STOPPED
    assert live.run("STOP EXTRACT ext1") == "EXTRACT EXT1 is already stopped.\n"
    report = (home.dirrpt / "EXT1.rpt").read_text()
    assert "Running with the following parameters" in report and "TABLE hr.*;" in report
    assert "OGG-00991" in report
    log = home.ggserr_log.read_text()
    for code in ("OGG-00963", "OGG-00975", "OGG-00992", "OGG-00993", "OGG-00991"):
        assert code in log


def test_getparaminfo_answers_what_the_process_read_at_start_up(live: Shell) -> None:
    """SEND ... GETPARAMINFO (issue 15): the parameters the running process read, all or
    one's, to the screen or a file; an edit after the start is not what it runs with."""
    home = live.session.home
    start_ext1(live)
    assert wait_for(lambda: "starting:" not in live.run("send ext1, status"), TIMEOUT)
    (home.dirprm / "ext1.prm").write_text(GOOD_PRM.replace("hr.*", "edited.*"))
    out = live.run("SEND EXTRACT ext1, GETPARAMINFO")
    assert out == (
        "\nSending GETPARAMINFO request to EXTRACT EXT1 ...\n"
        "Parameters EXTRACT EXT1 runs with (read at start-up from dirprm/ext1.prm):\n\n"
        "EXTRACT ext1\nEXTTRAIL ./dirdat/lt\nTABLE hr.*;\n"
    ), out
    assert live.run("SEND EXTRACT ext1, GETPARAMINFO table").endswith(
        "(read at start-up from dirprm/ext1.prm):\n\nTABLE hr.*;\n"
    )
    assert "BR is not set in the parameters EXTRACT EXT1 runs with" in live.run(
        "SEND EXTRACT ext1, GETPARAMINFO BR"
    )
    assert live.run("SEND EXTRACT ext1, GETPARAMINFO, FILE dirrpt/e.txt").endswith(
        "Parameter information written to dirrpt/e.txt.\n"
    )
    assert (
        (home.dirrpt / "e.txt")
        .read_text()
        .endswith("EXTRACT ext1\nEXTTRAIL ./dirdat/lt\nTABLE hr.*;\n")
    )
    out = live.run("SEND MANAGER, GETPARAMINFO")
    assert "Parameters MANAGER runs with (read at start-up from dirprm/mgr.prm):" in out
    assert out.endswith("\nPORT 0\n"), out


def test_kill_9_from_outside_is_abended_and_status_survives_restarts(live: Shell) -> None:
    home = live.session.home
    pid = start_ext1(live)
    live.run("STOP MANAGER !")
    assert (
        live.run("STATUS EXTRACT ext1") == "EXTRACT EXT1: RUNNING\n"
    )  # groups outlive the Manager
    os.kill(pid, signal.SIGKILL)
    assert wait_for_state(home, "EXTRACT", "EXT1", {State.ABENDED}, TIMEOUT) == State.ABENDED
    assert live.run("START MANAGER") == "Manager started.\n"
    fresh = Shell(home)  # a new GGSCI session sees the same
    assert "EXTRACT     ABENDED     EXT1" in fresh.run("INFO ALL")
    assert fresh.run("SEND EXTRACT ext1, STATUS") == "ERROR: EXTRACT EXT1 not currently running.\n"
    start_ext1(fresh)


def test_start_options_reach_the_group_process(live: Shell) -> None:
    home = live.session.home
    live.run("START MANAGER")
    out = live.run("START EXTRACT ext1 ATCSN 4711")
    assert out.endswith("EXTRACT EXT1 starting\n"), out
    assert wait_for_state(home, "EXTRACT", "EXT1", {State.RUNNING}, TIMEOUT) == State.RUNNING
    assert "Start option: ATCSN 4711" in (home.dirrpt / "EXT1.rpt").read_text()


def test_kill_command_and_reports_age(live: Shell) -> None:
    home = live.session.home
    pid = start_ext1(live)
    out = live.run("KILL EXTRACT ext1")
    assert (
        out == f"\nSending KILL request to MANAGER ...\nKilled process ({pid}) for EXTRACT EXT1\n"
    )
    assert live.run("STATUS EXTRACT ext1") == "EXTRACT EXT1: ABENDED\n"
    start_ext1(live)
    assert (home.dirrpt / "EXT10.rpt").exists()


def test_autostart_and_autorestart(live: Shell) -> None:
    home = live.session.home
    (home.dirprm / "mgr.prm").write_text(
        "PORT 0\nAUTOSTART ER *\nAUTORESTART EXTRACT *, RETRIES 1, WAITMINUTES 0, RESETMINUTES 60\n"
    )
    live.run("START MANAGER")
    assert wait_for_state(home, "EXTRACT", "EXT1", {State.RUNNING}, TIMEOUT) == State.RUNNING
    first = read_process_file(home, "EXTRACT", "EXT1")
    assert first is not None
    os.kill(first.pid, signal.SIGKILL)

    def restarted() -> bool:
        pf = read_process_file(home, "EXTRACT", "EXT1")
        return pf is not None and pf.pid != first.pid and pf.state == State.RUNNING

    assert wait_for(restarted, TIMEOUT)
    second = read_process_file(home, "EXTRACT", "EXT1")
    assert second is not None
    os.kill(second.pid, signal.SIGKILL)
    assert wait_for(lambda: "retries exhausted" in home.ggserr_log.read_text(), TIMEOUT)
    assert live.run("STATUS EXTRACT ext1") == "EXTRACT EXT1: ABENDED\n"


def test_bad_parameter_file_abends_with_its_diagnostics(live: Shell) -> None:
    home = live.session.home
    (home.dirprm / "ext1.prm").write_text("EXTRACT ext1\nNOSUCHPARAMETER 1\n")
    live.run("START MANAGER")
    live.run("START EXTRACT ext1")
    assert wait_for_state(home, "EXTRACT", "EXT1", {State.ABENDED}, TIMEOUT) == State.ABENDED
    report = (home.dirrpt / "EXT1.rpt").read_text()
    assert "ext1.prm:2:" in report and "OGG-01668" in report
    assert "PROCESS ABENDING" in home.ggserr_log.read_text()


def test_manager_purges_old_trail_files(live: Shell) -> None:
    home = live.session.home
    (home.dirprm / "mgr.prm").write_text(
        "PORT 0\nPURGEOLDEXTRACTS ./dirdat/lt*, NOUSECHECKPOINTS, MINKEEPFILES 2\n"
    )
    files = [home.dirdat / f"lt{seq:09d}" for seq in range(4)]
    for path in files:
        path.write_bytes(b"trail")
    live.run("START MANAGER")
    assert wait_for(lambda: not files[1].exists(), TIMEOUT)
    assert not files[0].exists() and files[2].exists() and files[3].exists()
    assert "Purged old extract file 'dirdat/lt000000000'" in home.ggserr_log.read_text()
    out = live.run("SEND MANAGER GETPURGEOLDEXTRACTS")
    assert "./dirdat/lt*  NOUSECHECKPOINTS  MINKEEPHOURS 0  MINKEEPFILES 2" in out


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("PORT seven\n", "dirprm/mgr.prm:1:6: error: PORT: expected a whole number, found 'seven'"),
        ("PORT 70000\n", "dirprm/mgr.prm:1:6: error: PORT must be 0 to 65535 (got 70000)"),
        (
            "PORTX 7809\n",
            "dirprm/mgr.prm:1:1: error: unknown parameter 'PORTX'; did you mean PORT?",
        ),
    ],
)
def test_bad_mgr_prm_fails_start_manager_quickly(live: Shell, text: str, why: str) -> None:
    """mgr.prm is checked by the checker every process uses; the Manager that cannot start
    says why in ggserr.log and START MANAGER shows that line (no traceback anywhere)."""
    home = live.session.home
    (home.dirprm / "mgr.prm").write_text(text)
    out = live.run("START MANAGER")
    line = (
        "OGG-00303  Oracle GoldenGate Manager for Oracle, mgr.prm:  "
        f"Problem in param file [mgr.prm]: {why}."
    )
    assert out.startswith("ERROR: Manager failed to start:\n") and out.endswith(f"{line}\n"), out
    assert len(out.splitlines()) == 2, out
    assert line in home.ggserr_log.read_text()
    assert "Traceback" not in (home.sub("dirout") / "MGR.out").read_text()
    assert live.run("INFO MANAGER") == "Manager is DOWN!\n"
