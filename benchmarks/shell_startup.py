"""How fast ``ggsci`` answers: wall time of a fresh process until a command is answered.

Two measurements, median of N runs each, in a temporary home:
- ``ggsci run "INFO ALL"`` (start, answer one command, exit);
- ``ggsci`` with ``EXIT`` on standard input (start the session, answer, exit).
The requirement (issue 4) is under half a second.
Run: ``.venv/bin/python benchmarks/shell_startup.py``.
"""

from __future__ import annotations

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


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        base = [sys.executable, "-m", "ggsci", "--home", str(home)]
        subprocess.run([*base, "run", "CREATE SUBDIRS"], check=True, capture_output=True)
        one = measure([*base, "run", "INFO ALL"], "")
        stdin = measure(base, "EXIT\n")
    print(f'ggsci run "INFO ALL": median {one * 1000:.0f} ms over {RUNS} runs')
    print(f"ggsci < EXIT:          median {stdin * 1000:.0f} ms over {RUNS} runs")
    worst = max(one, stdin)
    print(f"limit {LIMIT * 1000:.0f} ms: {'ok' if worst < LIMIT else 'TOO SLOW'}")
    return 0 if worst < LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
