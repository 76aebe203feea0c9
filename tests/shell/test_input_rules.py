"""Bad input gets one line, never a traceback (issue 12): undecodable bytes wherever GGSCI reads
commands, files with stray Latin-1 bytes, over-long commands. The fuzz tests are in
``test_fuzz_input.py``; these are the cases the issue names, one by one."""

from __future__ import annotations

import io
import logging
import os
import pty
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from typer.testing import CliRunner

from engine.home.layout import Home
from engine.manager.params import load_manager_params
from ggsci import launch
from ggsci.cli import build_app
from ggsci.dispatch.cptable import default_table
from ggsci.runner import run_commands, syntax_errors
from ggsci.shell.session import interactive
from ggsci.textin import MAX_COMMAND_LENGTH, clean, too_long

from .conftest import Shell
from .test_repl import _read_until, _Screen

ROOT = Path(__file__).resolve().parents[2]
LATIN1_PARAMS = b"EXTRACT e1\n-- caf\xe9 au lait\nEXTTRAIL ./dirdat/aa\nTABLE hr.*;\n"


def _ggsci(
    home: Home, *args: str | bytes, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    """A real ``ggsci`` process: its standard streams strict UTF-8, as under en_US.UTF-8."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "GGHOME": str(home.root)}
    return subprocess.run(
        [sys.executable, "-c", "from ggsci.cli import main; main()", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=60,
        check=False,
    )


def _events(home: Home) -> list[str]:
    return home.ggserr_log.read_text().splitlines()


def test_bytes_typed_in_the_shell_are_one_error_and_the_shell_goes_on(home: Home) -> None:
    out = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_bytes(b"INFO \xff\xfe\rINFO ALL\rEXIT\r")
        rc = interactive(home, out, input=pipe, output=DummyOutput(), history=InMemoryHistory())
    text = out.getvalue()
    assert rc == 1
    assert "ERROR: Expected" in text and "found '\ufffd\ufffd'" in text
    assert "MANAGER     STOPPED" in text and "Traceback" not in text
    assert _events(home)[0].endswith("): INFO \ufffd\ufffd.")  # logged, the bytes replaced


def test_bytes_piped_to_stdin_are_one_error_then_the_next_command_runs(home: Home) -> None:
    result = _ggsci(home, "--count-failures", stdin=b"INFO \xff\nINFO ALL\n")
    out = result.stdout.decode()
    assert result.returncode == 1, result.stderr
    assert result.stderr == b""
    assert "1> INFO \ufffd\nERROR: Expected" in out
    assert "2> INFO ALL" in out and "MANAGER     STOPPED" in out


def test_bytes_given_to_run_are_one_error(home: Home) -> None:
    result = _ggsci(home, "run", b"INFO \xff\xfe", "INFO ALL")
    assert result.returncode == 1 and result.stderr == b"", result.stderr
    assert "found '\ufffd\ufffd'" in result.stdout.decode()
    assert "MANAGER     STOPPED" in result.stdout.decode()


def test_bytes_in_an_obey_file_fail_that_line_only(home: Home, tmp_path: Path) -> None:
    script = tmp_path / "bad.oby"
    script.write_bytes(b"INFO \xff\nADD EXTRACT e1, TRANLOG, BEGIN NOW\n")
    result = _ggsci(home, "obey", str(script))
    out = result.stdout.decode()
    assert result.returncode == 1 and result.stderr == b"", result.stderr
    assert "INFO \ufffd" in out and "EXTRACT added." in out
    assert syntax_errors(script) == [f"{script}:1:6: " + out.split("ERROR: ")[1].split(" (col")[0]]
    checked = _ggsci(home, "obey", "--syntax-only", str(script))
    assert checked.returncode == 1 and checked.stderr == b""
    assert checked.stdout.decode().startswith(f"{script}:1:6: Expected")


def test_control_characters_and_surrogates_read_as_replacement() -> None:
    assert clean("INFO \udcff\x1b[2J\tALL\x00") == "INFO \ufffd\ufffd[2J\tALL\ufffd"


def test_a_command_over_the_limit_is_refused_in_one_line(shell: Shell, home: Home) -> None:
    long = "INFO " + "x" * 100_000
    out = shell.run(long)
    assert out == f"ERROR: {too_long(long)}\n"
    assert out.startswith("ERROR: Command too long: 100005 characters, at most 4096")
    assert not shell.ok and shell.session.history == []
    assert not home.ggserr_log.exists()  # not logged either
    just = "INFO " + "x" * (MAX_COMMAND_LENGTH - 5)
    assert "too long" not in shell.run(just)  # the limit itself is accepted


def test_a_long_command_in_run_and_obey_is_refused_and_echoed_short(
    home: Home, tmp_path: Path
) -> None:
    out = io.StringIO()
    assert run_commands(home, ["INFO " + "x" * 5000, "INFO ALL"], out, stdin=[]) == 1
    assert out.getvalue().startswith("ERROR: Command too long: 5005 characters")
    script = tmp_path / "long.oby"
    script.write_text("INFO " + "y" * 5000 + "\nINFO ALL\n")
    result = CliRunner().invoke(build_app(), ["--home", str(home.root), "obey", str(script)])
    assert result.exit_code == 1
    assert "... (5005 characters)\nERROR: Command too long" in result.output
    assert "y" * 200 not in result.output
    assert syntax_errors(script) == [
        f"{script}:1:4097: Command too long: 5005 characters, at most 4096 are accepted."
    ]


def test_view_params_report_and_ggsevt_read_latin1_bytes(shell: Shell, home: Home) -> None:
    (home.dirprm / "e1.prm").write_bytes(LATIN1_PARAMS)
    (home.dirrpt / "E1.rpt").write_bytes(b"report \xe9\xff line\n")
    home.ggserr_log.write_bytes(b"2026-01-01 00:00:00  INFO    OGG-00001  x:  \xe9t\xe9.\n")
    assert "-- caf\ufffd au lait" in shell.run("VIEW PARAMS e1") and shell.ok
    assert "report \ufffd\ufffd line" in shell.run("VIEW REPORT e1") and shell.ok
    assert "\ufffdt\ufffd." in shell.run("VIEW GGSEVT") and shell.ok


def test_params_check_reads_any_bytes(tmp_path: Path) -> None:
    prm = tmp_path / "e1.prm"
    prm.write_bytes(LATIN1_PARAMS)
    result = CliRunner().invoke(build_app(), ["params", "check", str(prm)])
    assert result.exit_code == 0, result.output
    assert result.output.endswith("OK (extract, 0 error(s), 0 warning(s))\n")
    prm.write_bytes(b"EXTRACT \xe9\x00\n")
    result = CliRunner().invoke(build_app(), ["params", "check", str(prm)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_globals_and_mgr_prm_read_latin1_bytes(shell: Shell, home: Home) -> None:
    home.globals_file.write_bytes(b"-- caf\xe9\nCHECKPOINTTABLE gg.chkpt\n")
    assert default_table(shell.session) == "gg.chkpt"
    (home.dirprm / "mgr.prm").write_bytes(b"-- caf\xe9\nPORT 7809\n")
    assert load_manager_params(home.dirprm / "mgr.prm").port == 7809


def test_a_second_debug_log_set_up_closes_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each front-end sets the debug log up; in one process (CliRunner tests) the earlier
    handler's file was left open (a ResourceWarning, an error under the test settings)."""
    monkeypatch.setattr(launch, "debug_log_path", lambda: tmp_path / "debug.log")
    logger = logging.getLogger("ggsci")
    launch.setup_debug_log()
    logger.error("written")
    first = logger.handlers[0]
    assert isinstance(first, logging.FileHandler) and first.stream is not None
    launch.setup_debug_log()
    assert first.stream is None and logger.handlers[0] is not first
    logger.handlers[0].close()


def test_real_terminal_survives_bytes_that_are_not_utf8(home: Home, tmp_path: Path) -> None:
    """The shell on a pseudo-terminal (where it used to die): one error, then the next command."""
    master, slave = pty.openpty()
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "XDG_STATE_HOME": str(tmp_path / "xdg"),
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "ggsci", "--home", str(home.root)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=ROOT,
        close_fds=True,
    )
    os.close(slave)
    try:
        host = socket.gethostname()
        screen = _Screen()
        _read_until(master, f"GGSCI ({host}) 1>".encode(), screen)
        os.write(master, b"INFO \xff\xfe\x00\r")
        _read_until(master, b"ERROR: Expected", screen)
        _read_until(master, f"GGSCI ({host}) 2>".encode(), screen)
        os.write(master, b"INFO ALL\r")
        _read_until(master, b"MANAGER", screen)
        _read_until(master, f"GGSCI ({host}) 3>".encode(), screen)
        os.write(master, b"EXIT\r")
        assert proc.wait(timeout=60) == 0  # GGSCI exits 0 after EXIT, even after a failure
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert b"Traceback" not in screen.data
