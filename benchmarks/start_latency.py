"""START -> capturing: how long a started Extract takes to put its first change in the trail.

A real Extract under a real Manager in a temporary home, one committed transaction in its
source, started ``--runs`` times (default five); the medians of START -> RUNNING (the process
answers SEND), START -> engine up (SEND STATUS no longer says ``starting:``) and START -> the
first record in the trail (``start_to_capture_s``, the key figure, printed last; goal <= 5 s on
a quiet machine, issue 29). The group's report says where the time went (``Start-up phase:
...`` lines).

Run: ``.venv/bin/python benchmarks/start_latency.py [--runs N]``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from shell_startup import measure_process  # the measurement itself, shared


def main() -> int:
    args = sys.argv[1:]
    runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 5
    before = os.getloadavg()[0]
    running, up, first = measure_process(runs)
    after = os.getloadavg()[0]
    print(f"runs={runs}")
    print(f"load_before={before:.2f}")
    print(f"load_after={after:.2f}")
    print(f"cores={os.cpu_count()}")
    print(f"start_to_running_s={running:.2f}")
    print(f"start_to_engine_up_s={up:.2f}")
    print(f"start_to_capture_s={first:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
