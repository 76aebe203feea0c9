"""Crash soak of the Extract alone: a foreground Extract (``ggsci extract paramfile``) is
killed with SIGKILL while the workload commits inserts, updates and deletes (with
rollbacks, from several sessions), restarted each time, and finally drained with
``--stop-at-eof``; the trail must then hold every committed transaction of the source
exactly once, whole, in commit order, every column as committed (tests/harness/soak/trailcheck).

A kill counts as effective only when the Extract had written to the trail since its
previous kill and the source had committed transactions it had not written yet
(tests/harness/soak/kills); the soak waits for that (at most ``--arm-seconds``) before each kill
and reports requested and effective kills. Each kill costs a JVM start.

Prints ``name=value`` lines; the last is ``kills_effective=N lost=L dup=D verdict=V`` (with the
requested kills, the other trail figures and the ``sufficiency_*`` lines above it: what the
soak did against the minimums that make a 1% loss visible with probability 0.99,
tests/harness/soak/sufficiency.py). Exits 1 when a check failed, 2 when the checks passed
on too little to mean it (``verdict=insufficient``), 0 on a pass.

    python benchmarks/crash_soak.py [--kills N] [--seed S] [--tps T]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/harness

from engine.embedded.database import Database, create_database
from engine.embedded.workload import run_workload
from engine.home.layout import Home
from tests.harness import pipeline_home as ph
from tests.harness.soak.expected import read_source
from tests.harness.soak.kills import Kill, KillLog
from tests.harness.soak.pipeline import EXTRACT, SoakSpec, Workload, wait_for
from tests.harness.soak.sufficiency import MIN_KILLS, Sufficiency, exit_status
from tests.harness.soak.sufficiency import verdict as outcome
from tests.harness.soak.trailcheck import TrailTally, check_trail


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--kills", type=int, default=2 * MIN_KILLS, help="requested kills (some land idle)"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tps", type=float, default=30.0)
    ap.add_argument("--arm-seconds", type=float, default=90.0)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    spec = SoakSpec(tables=2, seed=args.seed, tps=args.tps)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ggsci-crash-") as tmp:
        home = Home(Path(tmp))
        home.create_subdirs()
        root = create_database(home.dirdb, "src")
        workload = Workload(root, spec)
        with Database(root) as db:
            run_workload(db, workload.batch(0, 0))
        setup = len(read_source(root, ["WL"]).txns)
        prm = home.dirprm / "ext1.prm"
        prm.write_text(
            "EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nCHECKPOINTSECS 1\nTABLE wl.*;\n"
        )
        env = {**os.environ, "GGHOME": str(home.root)}
        cmd = [sys.executable, "-m", "ggsci", "extract", "paramfile", str(prm)]
        trail = TrailTally(home.root / ph.LOCAL_TRAIL)
        log = KillLog()
        workload.start()
        try:
            for n in range(args.kills):
                proc = subprocess.Popen(
                    cmd, env=env, cwd=home.root, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
                before = log.last_output(EXTRACT)
                wait_for(
                    lambda b=before: (
                        trail.poll().txns > b and setup + workload.committed > trail.tally.txns
                    ),
                    args.arm_seconds,
                )
                time.sleep(rnd.uniform(0.0, 0.5))
                given = setup + workload.committed
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                output = trail.poll().txns
                kill = log.add(
                    Kill(EXTRACT, before, output, given - output, time.monotonic() - started)
                )
                print(
                    f"kill {n + 1}: trail {before}->{output} txns, backlog {kill.backlog}, "
                    f"{'effective' if kill.effective else 'not effective'}",
                    file=sys.stderr,
                )
        finally:
            workload.finish()
        drain = subprocess.run(
            [*cmd, "--stop-at-eof"], env=env, cwd=home.root, capture_output=True, check=False
        )
        source = read_source(root, ["WL"])
        verdict = check_trail(home.root / ph.LOCAL_TRAIL, source)
    print(f"drain_exit={drain.returncode}")
    print(f"committed_transactions={len(source.txns)}")
    print(f"committed_changes={source.changes}")
    for line in (*log.lines(), *verdict.lines("trail")):
        print(line)
    print(f"seconds={time.monotonic() - started:.1f}")
    exposed = sum(k.backlog for k in log.kills if k.effective)
    enough = Sufficiency(len(source.txns), log.effective, exposed)
    for line in enough.lines():
        print(line)
    ok = verdict.ok and drain.returncode == 0
    print(
        f"kills_effective={log.effective} lost={verdict.lost} dup={verdict.dup} "
        f"verdict={outcome(ok, enough)}"
    )
    sys.exit(exit_status(ok, enough))


if __name__ == "__main__":
    main()
