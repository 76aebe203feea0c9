"""docs/quickstart.md cannot rot: its commands, taken from the page, run in a fresh directory
with real processes (Manager, Extract on Spark, pump, Replicat), and the output the page shows
must be what they print.

How the page is read:
- a ```` ```console ```` block holds commands (lines starting ``$ ``) each followed by the
  output shown for it; every shown output line must appear in what the command printed, in
  order (other lines may come between); ``…`` in a shown line stands for any text (a time,
  a process id, a path);
- ``<!-- file: PATH -->`` before a ```` ```text ```` block: the block is that file's content
  (the page tells the reader to write it with EDIT PARAMS);
- ``<!-- wait -->`` before a console block: the processes work in the background, so the block
  is run again (every 2 s, up to :data:`WAIT` seconds) until its output is the one shown.

The page's Manager port, 7809, is GoldenGate's default: another program on the machine may hold
it while the test runs, so the test writes a free port in its place (in mgr.prm's PORT and the
pump's MGRPORT alike). Every parameter file of the page passes ``params check`` with no error,
as its processes check it.

Commands: ``mkdir D && cd D``, ``ggsci ...`` (this interpreter's ``-m ggsci``) and
``sqlite3 FILE "SQL"`` (run with Python's sqlite3 module, rows printed as the sqlite3 tool
prints them: ``|`` between columns), nothing else.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.home.layout import Home
from engine.home.status import MANAGER, State, read_process_file
from params.check import check_file
from tests.harness.pipeline_home import free_port

pytestmark = pytest.mark.e2e
PAGE = Path(__file__).resolve().parents[2] / "docs" / "quickstart.md"
PAGE_PORT = "7809"
WAIT = 240.0


@dataclass(frozen=True)
class Step:
    kind: str  # "console" or "file"
    text: str  # the block's text
    target: str = ""  # file: its path
    wait: bool = False


def steps(page: str) -> list[Step]:
    out: list[Step] = []
    pending_file, pending_wait = "", False
    for m in re.finditer(r"<!-- (file: (\S+)|wait) -->|```(\w+)\n(.*?)```", page, re.S):
        if m.group(1) == "wait":
            pending_wait = True
        elif m.group(2):
            pending_file = m.group(2)
        elif m.group(3) == "text" and pending_file:
            out.append(Step("file", m.group(4), pending_file))
            pending_file = ""
        elif m.group(3) == "console":
            out.append(Step("console", m.group(4), wait=pending_wait))
            pending_wait = False
    return out


def commands(block: str) -> list[tuple[str, list[str]]]:
    """(command, shown output lines) per ``$ `` line of a console block."""
    out: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out and line.strip():
            out[-1][1].append(line)
    return out


def matches(shown: list[str], printed: str) -> str | None:
    """None when every shown line is in ``printed`` in order; else the first one missing."""
    lines = [ln.rstrip() for ln in printed.splitlines()]
    i = 0
    for want in shown:
        pattern = re.compile(".*".join(re.escape(p) for p in want.rstrip().split("…")) + "$")
        while i < len(lines) and not pattern.match(lines[i]):
            i += 1
        if i == len(lines):
            return want
        i += 1
    return None


def sqlite3_tool(cwd: Path, args: list[str]) -> str:
    conn = sqlite3.connect(cwd / args[0])
    try:
        rows = (
            conn.execute(args[1]).fetchall()
            if args[1].lstrip().upper().startswith("SELECT")
            else (conn.executescript(args[1]) and [])
        )
        conn.commit()
    finally:
        conn.close()
    return "".join("|".join("" if v is None else str(v) for v in r) + "\n" for r in rows)


def run(cwd: Path, command: str) -> tuple[Path, str]:
    if m := re.fullmatch(r"mkdir (\S+) && cd \1", command):
        new = cwd / m.group(1)
        new.mkdir()
        return new, ""
    argv = shlex.split(command)
    if argv[0] == "sqlite3":
        return cwd, sqlite3_tool(cwd, argv[1:])
    assert argv[0] == "ggsci", f"the quickstart runs only ggsci and sqlite3, not {command!r}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GGHOME", "GGSCI_RUNNER"))}
    done = subprocess.run(
        [sys.executable, "-m", "ggsci", *argv[1:]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return cwd, done.stdout + done.stderr


def kill_leftovers(home: Path) -> None:
    h = Home(home)
    for kind, name in (("REPLICAT", "REP1"), ("EXTRACT", "PMP1"), ("EXTRACT", "EXT1"),
                       (MANAGER, MANAGER)):  # fmt: skip
        pf = read_process_file(h, kind, name)
        if pf is not None and pf.state in (State.STARTING, State.RUNNING):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pf.pid, signal.SIGKILL)


def test_the_page_has_the_whole_pipeline() -> None:
    page = PAGE.read_text()
    every = [c for s in steps(page) if s.kind == "console" for c, _ in commands(s.text)]
    files = [s.target for s in steps(page) if s.kind == "file"]
    assert files == ["dirprm/mgr.prm", "dirprm/ext1.prm", "dirprm/pmp1.prm", "dirprm/rep1.prm"]
    joined = "\n".join(every)
    for needed in ("START MANAGER", "START EXTRACT ext1", "START EXTRACT pmp1",
                   "START REPLICAT rep1", "ADD HEARTBEATTABLE", "LAG REPLICAT rep1, GLOBAL"):  # fmt: skip
        assert needed in joined, needed
    readme = (PAGE.parents[1] / "README.md").read_text()
    first_link = re.search(r"\]\((docs/[^)]+)\)", readme)
    assert first_link is not None and first_link.group(1) == "docs/quickstart.md"


def test_quickstart_runs_as_written(tmp_path: Path) -> None:
    cwd = tmp_path
    port = str(free_port())
    try:
        for step in steps(PAGE.read_text()):
            if step.kind == "file":
                (cwd / step.target).write_text(step.text.replace(PAGE_PORT, port))
                continue
            deadline = time.monotonic() + (WAIT if step.wait else 0)
            while True:
                printed: list[tuple[str, str, str | None]] = []
                here = cwd
                for command, shown in commands(step.text):
                    here, out = run(here, command)
                    printed.append((command, out, matches(shown, out)))
                missing = [(c, o, m) for c, o, m in printed if m is not None]
                if not missing or time.monotonic() >= deadline:
                    break
                time.sleep(2)
            cwd = here
            for command, out, miss in missing:
                raise AssertionError(f"$ {command}\n{out}\n--- shown but not printed: {miss!r}")
    finally:
        kill_leftovers(cwd)


def test_the_pages_parameter_files_pass_params_check(tmp_path: Path) -> None:
    """The page and ``params check`` agree: no file it tells the reader to write has an error."""
    for step in steps(PAGE.read_text()):
        if step.kind != "file":
            continue
        path = tmp_path / step.target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(step.text)
        result = check_file(path, cwd=tmp_path)
        assert not result.errors, (step.target, [d.message for d in result.errors])


def test_shown_lines_must_be_printed_in_order() -> None:
    printed = "Manager started.\n\nEXTRACT added.\n1.22s    0.14s        SRC    TARGET\n"
    assert matches(["Manager started.", "EXTRACT added."], printed) is None
    assert matches(["…s        SRC    TARGET"], printed) is None  # … is any text
    assert matches(["EXTRACT added.", "Manager started."], printed) == "Manager started."
    assert matches(["Manager started"], printed) == "Manager started"  # whole lines only
    assert matches(["REPLICAT added."], printed) == "REPLICAT added."
