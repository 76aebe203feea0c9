"""The prompt-toolkit REPL: pipe input and dummy output, then one real terminal (a pty)."""

from __future__ import annotations

import io
import os
import pty
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from engine.home.layout import Home
from ggsci.shell.session import interactive, make_history


def run_repl(home: Home, keys: str, history: object | None = None) -> tuple[int, str]:
    out = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        rc = interactive(
            home, out, input=pipe, output=DummyOutput(), history=history or InMemoryHistory()
        )  # type: ignore[arg-type]
    return rc, out.getvalue()


def test_commands_then_ctrl_d(home: Home) -> None:
    rc, out = run_repl(home, "ADD EXTRACT e1, TRANLOG, BEGIN NOW\rINFO ALL\r\x04")
    assert rc == 0
    assert "EXTRACT added." in out and "EXTRACT     STOPPED     E1" in out


def test_ctrl_c_cancels_the_line_and_the_session_goes_on(home: Home) -> None:
    rc, out = run_repl(home, "ADD EXTRACT e1, TRANLOG, BEGIN NOW\x03INFO ALL\rEXIT\r")
    assert rc == 0
    assert "EXTRACT added." not in out and "MANAGER     STOPPED" in out


def test_failure_sets_exit_status_and_prints_one_line(home: Home) -> None:
    rc, out = run_repl(home, "INFO EXTRACT nosuch\rEXIT\r")
    assert rc == 1
    assert "ERROR: EXTRACT NOSUCH does not exist.\n" in out and "Traceback" not in out


def test_history_is_kept_in_a_file_across_sessions(home: Home, tmp_path: Path) -> None:
    path = tmp_path / "data" / "history"
    run_repl(home, "INFO ALL\rEXIT\r", make_history(path))
    assert [s for s in FileHistory(str(path)).load_history_strings()] == ["EXIT", "INFO ALL"]
    _rc, out = run_repl(home, "\x1b[A\x1b[A\r\x04", make_history(path))  # Up, Up: INFO ALL again
    assert "MANAGER     STOPPED" in out


class _Screen:
    """Everything the terminal printed, and how far the test has looked: a marker that
    arrived in the same chunk as an earlier one is not lost."""

    def __init__(self) -> None:
        self.data = b""
        self.pos = 0


def _read_until(fd: int, marker: bytes, screen: _Screen, timeout: float = 60.0) -> bytes:
    data = screen.data
    deadline = time.monotonic() + timeout
    while marker not in data[screen.pos :]:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"timed out waiting for {marker!r}; got {data[-400:]!r}"
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
    screen.data = data
    found = data.find(marker, screen.pos)
    if found >= 0:
        screen.pos = found + len(marker)
    return data


def test_real_terminal_prompt_completion_and_exit(home: Home, tmp_path: Path) -> None:
    """The installed entry point on a pseudo-terminal: prompt, Tab completion, a command, EXIT."""
    master, slave = pty.openpty()
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "TERM": "xterm",
        "XDG_STATE_HOME": str(tmp_path / "xdg"),
        "PROMPT_TOOLKIT_NO_CPR": "1",
        "GGSCI_HISTORY": "on",  # history across sessions is off unless asked for
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "ggsci", "--home", str(home.root)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    try:
        host = socket.gethostname()
        screen = _Screen()
        _read_until(master, f"GGSCI ({host}) 1>".encode(), screen)
        os.write(master, b"INFO AL\t")
        _read_until(master, b"ALL", screen)
        os.write(master, b"\r")
        _read_until(master, b"MANAGER", screen)
        _read_until(master, f"GGSCI ({host}) 2>".encode(), screen)
        os.write(master, b"EXIT\r")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert (tmp_path / "xdg" / "ggsci" / "history").stat().st_mode & 0o777 == 0o600


def test_the_shell_counts_its_failures(home: Home) -> None:
    """On a terminal too, the status is the number of failed commands (``ggsci
    --count-failures`` passes it on; plain ``ggsci`` exits 0 after EXIT)."""
    rc, _ = run_repl(home, "INFO EXTRACT a\rINFO EXTRACT b\rINFO ALL\rBOGUS\rEXIT\r")
    assert rc == 3
