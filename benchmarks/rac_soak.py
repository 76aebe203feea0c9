"""Live capture of a two-thread (RAC) source, soaked: does the live run lose or repeat a
commit that a catch-up of the same redo has? (issue 13)

Each run (:func:`tests.harness.livecheck.one_run`): a fresh two-thread database, a
workload in another process while this process's capture loop polls the redo as it is
written, then a catch-up of the same redo; the trails compared transaction by transaction
(``lost``, ``dup``) and byte for byte. Kinds of run, in turn: ``busy`` (both threads),
``idle`` (thread 2 writes nothing), ``switch`` (both threads switch logs many times).
``--no-watermark`` applies every item as soon as it is read, as the capture did before
the fix, to show what the soak catches. ``--ggsci``: the issue's setup in real processes
instead, ``ggsci extract`` on Spark while ``ggsci db workload`` writes (a JVM start each
Extract: minutes per run).

    python benchmarks/rac_soak.py [--runs N] [--transactions N] [--tps R] [--no-watermark]
                                  [--ggsci]

The last line is ``lost_total=L verdict=V``: ``pass`` when nothing was lost or repeated over
at least the transactions that make a 1% loss visible with probability 0.99 (the
``sufficiency_transactions`` line above it says the computation,
tests/harness/soak/sufficiency.py), ``insufficient`` (exit 2) below that, ``fail`` (exit 1)
on a loss or a repeat.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/harness

from engine.embedded.workload import WorkloadSpec
from engine.extract.capture import Capture
from engine.home.layout import Home
from tests.harness.livecheck import KINDS, compare, one_run
from tests.harness.soak.sufficiency import Sufficiency, exit_status, verdict


def ggsci_run(tmp: Path, seed: int, transactions: int, tps: float) -> dict[str, object]:
    """The issue's own setup, all real processes: ``ggsci extract`` (on Spark) running
    while ``ggsci db workload`` writes to a ``db create --threads 2`` database, stopped
    (SIGINT) once the workload is done and read, then a ``--stop-at-eof`` catch-up."""
    ggsci = str(Path(sys.executable).parent / "ggsci")
    home = ["--home", str(tmp)]

    def run(*words: str) -> None:
        subprocess.run([ggsci, *words, *home], check=True, capture_output=True, cwd=tmp)

    run("db", "create", "RAC", "--threads", "2")
    (tmp / "dirprm").mkdir(exist_ok=True)
    for group, trail in (("r1", "lv"), ("r2", "cu")):
        (tmp / "dirprm" / f"{group}.prm").write_text(
            f"EXTRACT {group}\nSOURCEDB RAC\nEXTTRAIL ./dirdat/{trail}\nTABLE wl.*;\n"
        )
    run("db", "workload", "RAC", "--transactions", "1")  # the tables
    live = subprocess.Popen(
        [ggsci, "extract", "paramfile", "dirprm/r1.prm", *home],
        cwd=tmp,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while not list((tmp / "dirdat").glob("lv0*")):  # the Extract has started (JVM and all)
        time.sleep(1)
    began = time.perf_counter()
    run("db", "workload", "RAC", "--transactions", str(transactions), "--tps", str(tps),
        "--sessions", "8", "--rows-per-txn", "5", "--seed", str(seed))  # fmt: skip
    time.sleep(20)  # let the live Extract read the end
    live.send_signal(signal.SIGINT)
    live.wait()
    seconds = time.perf_counter() - began
    run("extract", "paramfile", "dirprm/r2.prm", "--stop-at-eof")
    return {"kind": "ggsci", "seconds": round(seconds, 1), **compare(Home(tmp), "lv", "cu")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--transactions", type=int, default=3000)
    ap.add_argument("--tps", type=float, default=0.0, help="0: as fast as the source goes")
    ap.add_argument("--poll-ms", type=float, default=20.0)
    ap.add_argument("--no-watermark", action="store_true", help="the capture before the fix")
    ap.add_argument(
        "--ggsci", action="store_true", help="real processes: ggsci extract + ggsci db workload"
    )
    args = ap.parse_args()
    if args.no_watermark:
        Capture._low = lambda self, batch, results: None  # type: ignore[method-assign]
    spec = WorkloadSpec(
        tables=4, rows_per_txn=5, transactions=args.transactions, tps=args.tps, sessions=8
    )
    lost_total = dup_total = differ = transactions = 0
    for i in range(args.runs):
        kind = KINDS[i % len(KINDS)]
        with tempfile.TemporaryDirectory() as tmp:
            if args.ggsci:
                r = ggsci_run(Path(tmp), i + 1, args.transactions, args.tps or 300)
            else:
                r = one_run(Path(tmp), kind, replace(spec, seed=i + 1), args.poll_ms / 1000)
        print(" ".join(f"{k}={v}" for k, v in r.items()), flush=True)
        lost_total += int(str(r["lost"]))
        dup_total += int(str(r["dup"]))
        differ += not r["same_bytes"]
        transactions += int(str(r["transactions"]))
    print(f"runs={args.runs}")
    print(f"watermark={'off' if args.no_watermark else 'on'}")
    print(f"runs_differing={differ}")
    print(f"dup_total={dup_total}")
    enough = Sufficiency(transactions)  # no kills: every transaction is a chance to lose one
    for line in enough.lines():
        print(line)
    ok = lost_total == 0 and dup_total == 0
    print(f"lost_total={lost_total} verdict={verdict(ok, enough)}")
    sys.exit(exit_status(ok, enough))


if __name__ == "__main__":
    main()
