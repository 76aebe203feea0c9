"""End-to-end soak: workload -> Extract -> pump -> Replicat (real processes under a real
Manager with AUTORESTART, SQLite target by default) while the Extract, the pump, the
Replicat and the Manager are killed with SIGKILL, one at a time, until enough kills have
landed mid-stream; then everything drains and is checked (engine/soak, docs/replicat.md
"Soaks"): both trails against the source's committed transactions (every one exactly
once, whole, in commit order, every column), the apply audit by trigger (every change
applied exactly once, in commit order) and the tables row for row.

Prints ``name=value`` lines; the last holds the key figures:
``kills_effective=N lost=L dup=D audit_mismatches=A mismatched_rows=M verdict=V``. Above it,
``sufficiency_*`` lines: the committed transactions, effective kills and what they interrupted
against the minimums that make a 1% loss visible with probability 0.99, with the
computation (tests/harness/soak/sufficiency.py). Progress (one line per kill) goes to
stderr. Exits 1 when a check failed, 2 when every check passed on too little to mean it
(``verdict=insufficient``: no success is reported), 0 on a pass.

    python benchmarks/e2e_soak.py [--effective-kills N] [--max-kills N] [--minutes M]
                                  [--tps T] [--tables N] [--seed S]
                                  [--target tgt.db | postgresql://...]
                                  [--weights EXT1=0.5,PMP1=2,REP1=3,MANAGER=1] [--arm-seconds S]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/harness

from engine.home.layout import Home
from tests.harness.soak.pipeline import KINDS, SoakSpec, run_soak
from tests.harness.soak.sufficiency import exit_status


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--effective-kills", type=int, default=100)
    ap.add_argument("--max-kills", type=int, default=400)
    ap.add_argument("--minutes", type=float, default=40.0, help="for the kills at most")
    ap.add_argument("--tps", type=float, default=30.0, help="workload transactions a second")
    ap.add_argument("--tables", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", default="tgt.db", help="SQLite file (in the home) or URL")
    ap.add_argument(
        "--weights",
        default=",".join(f"{p}={w:g}" for p, w in SoakSpec().weights),
        help="how often each process is drawn for a kill",
    )
    ap.add_argument("--arm-seconds", type=float, default=SoakSpec().arm_seconds)
    args = ap.parse_args()
    pairs = (x.partition("=") for x in args.weights.split(","))
    try:
        weights = tuple((p.upper(), float(w)) for p, _, w in pairs)
    except ValueError:
        ap.error(f"--weights: expected NAME=number,..., not {args.weights!r}")
    unknown = sorted({p for p, _ in weights} - set(KINDS))
    if unknown:
        ap.error(f"--weights: no process {', '.join(unknown)} (one of {', '.join(KINDS)})")
    spec = SoakSpec(
        target=args.target, tables=args.tables, effective_kills=args.effective_kills,
        max_kills=args.max_kills, kill_seconds=args.minutes * 60, seed=args.seed, tps=args.tps,
        weights=weights, arm_seconds=args.arm_seconds,
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="ggsci-soak-") as tmp:
        result = run_soak(Home(Path(tmp) / "home"), spec, lambda s: print(s, file=sys.stderr))
    for line in result.lines():
        print(line)
    sys.exit(exit_status(result.ok, result.enough))


if __name__ == "__main__":
    main()
