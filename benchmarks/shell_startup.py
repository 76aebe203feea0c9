"""How fast ``ggsci`` answers: wall time of a fresh process until a command is answered.

Three measurements, median of N runs each, in a temporary home:
- ``ggsci run "INFO ALL"`` (start, answer one command, exit);
- ``ggsci`` with ``EXIT`` on standard input (start the session, answer, exit);
- ``ggsci`` on a pseudo-terminal until the interactive prompt is drawn.
The requirement (issue 4) is under half a second.
Run: ``.venv/bin/python benchmarks/shell_startup.py``.
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


def main() -> int:
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
