"""End-to-end soak: workload -> Extract -> pump -> Replicat (real processes under a real
Manager, SQLite target by default), with SIGKILL of a random group at a random moment in
every round and a restart; at the end everything drains and every target table is compared
with its source table row for row.

Prints ``name=value`` lines; the last is ``mismatched_rows=N`` (0 is the only good answer).

    python benchmarks/e2e_soak.py [--rounds N] [--transactions T] [--seed S]
                                  [--target postgresql://...]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engine import pipeline_home as ph
from engine.home import Home
from engine.source.database import Database
from engine.source.workload import WorkloadSpec, run_workload
from engine.status import State, read_process_file


def mismatches(home: Home, spec: ph.PipelineSpec) -> int:
    bad = 0
    for t in spec.tables:
        src, tgt = ph.source_rows(home, spec, t), ph.target_rows(home, spec, t)
        bad += len(set(src) ^ set(tgt)) + abs(len(src) - len(tgt))
    return bad


def running(home: Home, kind: str, name: str) -> int | None:
    pf = read_process_file(home, kind, name)
    return pf.pid if pf is not None and pf.state == State.RUNNING else None


def wait(predicate: Callable[[], object], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.25)
    return False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--transactions", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", default="tgt.db", help="SQLite file (in the home) or URL")
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="ggsci-soak-") as tmp:
        home = Home(Path(tmp) / "home")
        pipe = ph.PipelineSpec(args.target, ph.workload_tables(3))
        ph.prepare_home(home, pipe)
        ph.run_ggsci(home, *ph.target_commands(pipe), *ph.add_and_start_commands(pipe))
        started = time.monotonic()
        kills = {name: 0 for _, name in pipe.groups}
        committed = 0
        try:
            for r in range(args.rounds):
                for kind, name in pipe.groups:
                    if not wait(lambda k=kind, n=name: running(home, k, n), 90):
                        raise SystemExit(f"{name} did not start: see {home.dirrpt}")
                spec = WorkloadSpec(
                    tables=len(pipe.tables), transactions=args.transactions, rows_per_txn=8,
                    sessions=6, seed=args.seed * 1000 + r, initial_rows=200,
                )  # fmt: skip
                with Database(home.dirdb / "SRC") as db:
                    committed += run_workload(db, spec).commits
                kind, name = rnd.choice(pipe.groups)
                time.sleep(rnd.uniform(0.0, 1.5))
                pid = running(home, kind, name)
                if pid is not None:
                    os.kill(pid, signal.SIGKILL)
                    kills[name] += 1
                    time.sleep(0.3)
                    ph.run_ggsci(home, f"START {kind} {name.lower()}")
            drained = wait(lambda: mismatches(home, pipe) == 0, 300)
            bad = mismatches(home, pipe)
            rows = sum(len(ph.source_rows(home, pipe, t)) for t in pipe.tables)
        finally:
            ph.run_ggsci(home, *ph.stop_commands(pipe))
            wait(lambda: not any(running(home, k, n) for k, n in pipe.groups), 20)
            ph.run_ggsci(home, "STOP MANAGER !")
            ph.kill_leftovers(home, pipe)
        print(f"rounds={args.rounds}")
        print(f"committed_transactions={committed}")
        print("kills=" + ",".join(f"{n}:{c}" for n, c in kills.items()))
        print(f"source_rows={rows}")
        print(f"drained={drained}")
        print(f"seconds={time.monotonic() - started:.1f}")
        print(f"mismatched_rows={bad}")


if __name__ == "__main__":
    main()
