"""Crash soak: a foreground Extract is SIGKILLed at random moments while transactions
commit, restarted each time, and finally drained; the trail must hold every committed
transaction exactly once, in commit order.

Prints ``name=value`` lines; the last is ``crashes=N lost=L dup=D`` (all three on one line,
as the issue asks). Each crash costs a JVM start (several seconds).

    python benchmarks/crash_soak.py [--crashes N] [--seed S]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from engine.home import Home
from engine.source.database import Database, create_database
from engine.source.sql import execute
from engine.trail.reader import TrailReader


def trail_keys(home: Home) -> list[str]:
    base = home.root / "dirdat" / "lt"
    if not list(base.parent.glob("lt*")):
        return []
    return [dict(rec.columns)[0] or "" for _, rec in TrailReader(str(base)).records()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--crashes", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp))
        home.create_subdirs()
        root = create_database(home.dirdb, "src")
        with Database(root) as db:
            execute(db, db.session("ddl"), "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, v NUMBER)")
        prm = home.dirprm / "ext1.prm"
        prm.write_text(
            "EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nCHECKPOINTSECS 1\nTABLE hr.emp;\n"
        )
        env = {**os.environ, "GGHOME": str(home.root)}
        cmd = [sys.executable, "-m", "ggsci", "extract", "paramfile", str(prm)]
        expected: list[str] = []
        key = 0
        for _ in range(args.crashes):
            proc = subprocess.Popen(
                cmd, env=env, cwd=home.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            deadline = time.monotonic() + rnd.uniform(8.0, 25.0)
            with Database(root) as db:
                s = db.session("load")
                while time.monotonic() < deadline:
                    txn = []
                    for _ in range(rnd.randint(1, 4)):
                        key += 1
                        execute(db, s, f"INSERT INTO hr.emp VALUES ({key}, {key})")
                        txn.append(str(key))
                    if rnd.random() < 0.2:
                        execute(db, s, "ROLLBACK")
                    else:
                        execute(db, s, "COMMIT")
                        expected.extend(txn)
                    time.sleep(rnd.uniform(0.0, 0.05))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        drain = subprocess.run(
            [*cmd, "--stop-at-eof"],
            env=env,
            cwd=home.root,
            capture_output=True,
            text=True,
            check=False,
        )
        got = trail_keys(home)
        counts = Counter(got)
        dup = sum(c - 1 for c in counts.values() if c > 1)
        lost = len(set(expected) - set(got))
        in_order = got == expected
        print(f"drain_exit={drain.returncode}")
        print(f"committed_rows={len(expected)}")
        print(f"trail_rows={len(got)}")
        print(f"in_commit_order={in_order}")
        print(f"crashes={args.crashes} lost={lost} dup={dup}")


if __name__ == "__main__":
    main()
