"""How fast ``ggsci`` answers: wall time of a fresh process until a command is answered.

Three measurements, median of N runs each, in a temporary home:
- ``ggsci run "INFO ALL"`` (start, answer one command, exit);
- ``ggsci`` with ``EXIT`` on standard input (start the session, answer, exit);
- ``ggsci`` on a pseudo-terminal until the interactive prompt is drawn.
The requirement (issue 4) is under half a second.

With ``--process`` it measures a group process instead (issue 15), median of ``--runs`` starts
of a real Extract under a real Manager in a temporary home, one committed transaction in its
source: START → RUNNING (the process answers SEND; goal ≤ 3 s on a quiet machine), START → the
engine up (SEND STATUS no longer says ``starting:``) and START → the first record in the trail.
Run: ``.venv/bin/python benchmarks/shell_startup.py [--process [--runs N]]``.
"""

from __future__ import annotations

import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 10
LIMIT = 0.5


def measure(argv: list[str], stdin: str) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(argv, input=stdin, text=True, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure_prompt(argv: list[str]) -> float:
    times = []
    env = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
    for _ in range(RUNS):
        master, slave = pty.openpty()
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env)
        os.close(slave)
        seen = b""
        while b") 1>" not in seen:
            ready, _, _ = select.select([master], [], [], 10)
            if not ready:
                raise RuntimeError("no prompt within 10 s")
            seen += os.read(master, 4096)
        times.append(time.perf_counter() - start)
        os.write(master, b"EXIT\r")
        proc.wait(timeout=10)
        os.close(master)
    return statistics.median(times)


PROCESS_LIMIT = 3.0


def _process_home(root: Path) -> Path:
    from engine.embedded.database import Database, create_database
    from engine.embedded.sql import execute
    from engine.home.layout import Home

    home = Home(root / "home")
    home.create_subdirs()
    db_root = create_database(home.dirdb, "src")
    with Database(db_root) as db:
        s = db.session("app")
        execute(db, s, "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, n NUMBER)")
        execute(db, s, "INSERT INTO hr.emp VALUES (1, 1)")
        execute(db, s, "COMMIT")
    (home.dirprm / "mgr.prm").write_text("PORT 0\n")
    (home.dirprm / "ext1.prm").write_text(
        "EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nTABLE hr.emp;\n"
    )
    return home.root


def _trail_records(home: Path) -> int:
    from engine.trail.reader import TrailReader

    if not list((home / "dirdat").glob("lt*")):
        return 0
    return sum(1 for _ in TrailReader(str(home / "dirdat" / "lt")).records())


def measure_process(runs: int) -> tuple[float, float, float]:
    """Median seconds from START to RUNNING, to the engine up, to the first trail record."""
    from engine.home.layout import Home
    from engine.home.status import State, process_state
    from engine.runtime.control import group_request, manager_request, start_manager, stop_manager

    running, up, first = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            home = Home(_process_home(Path(tmp)))
            subprocess.run(
                [sys.executable, "-m", "ggsci", "--home", str(home.root), "run",
                 "ADD EXTRACT ext1, TRANLOG, EXTSEQNO 1, EXTRBA 0",
                 "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1"],
                check=True, capture_output=True,
            )  # fmt: skip
            start_manager(home)
            try:
                began = time.perf_counter()
                manager_request(home, "START EXTRACT EXT1")
                marks: dict[str, float] = {}
                while len(marks) < 3 and time.perf_counter() - began < 300:
                    now = time.perf_counter() - began
                    if "running" not in marks and (
                        process_state(home, "EXTRACT", "EXT1")[1] == State.RUNNING
                    ):
                        marks["running"] = now
                    if "running" in marks and "up" not in marks:
                        reply = group_request(home, "EXTRACT", "EXT1", "STATUS")
                        if not any("starting:" in ln for ln in reply.lines):
                            marks["up"] = time.perf_counter() - began
                    if "first" not in marks and _trail_records(home.root):
                        marks["first"] = time.perf_counter() - began
                    time.sleep(0.02)
                running.append(marks["running"])
                up.append(marks["up"])
                first.append(marks["first"])
                group_request(home, "EXTRACT", "EXT1", "STOP")
            finally:
                stop_manager(home)
                time.sleep(1.0)
    return statistics.median(running), statistics.median(up), statistics.median(first)


def main_process(runs: int) -> int:
    load = os.getloadavg()
    running, up, first = measure_process(runs)
    after = os.getloadavg()
    cores = os.cpu_count()
    print(f"load average (1 min) before/after: {load[0]:.2f} / {after[0]:.2f} on {cores} cores")
    print(f"START -> RUNNING (answers SEND):   median {running:.2f} s over {runs} runs")
    print(f"START -> engine up (Spark ready): median {up:.2f} s")
    print(f"START -> first record in trail:   median {first:.2f} s")
    verdict = "ok" if running <= PROCESS_LIMIT else "TOO SLOW"
    print(f"limit {PROCESS_LIMIT:.0f} s to RUNNING: {verdict}")
    return 0 if running <= PROCESS_LIMIT else 1


def main() -> int:
    if "--process" in sys.argv[1:]:
        args = sys.argv[1:]
        runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 3
        return main_process(runs)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        base = [sys.executable, "-m", "ggsci", "--home", str(home)]
        subprocess.run([*base, "run", "CREATE SUBDIRS"], check=True, capture_output=True)
        one = measure([*base, "run", "INFO ALL"], "")
        stdin = measure(base, "EXIT\n")
        prompt = measure_prompt(base)
    print(f'ggsci run "INFO ALL": median {one * 1000:.0f} ms over {RUNS} runs')
    print(f"ggsci < EXIT:          median {stdin * 1000:.0f} ms over {RUNS} runs")
    print(f"ggsci on a terminal:   median {prompt * 1000:.0f} ms until the prompt is drawn")
    worst = max(one, stdin, prompt)
    print(f"limit {LIMIT * 1000:.0f} ms: {'ok' if worst < LIMIT else 'TOO SLOW'}")
    return 0 if worst < LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
