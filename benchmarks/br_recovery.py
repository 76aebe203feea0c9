"""Bounded Recovery under crashes: a day of redo with long-running transactions, an Extract
killed with SIGKILL at random points and restarted, with BR (BRINTERVAL 1H) and with BROFF.

For each restart it measures the span of redo time re-read: from where the restart begins
reading to where the killed run had read (its last published read position), in BR
intervals. The trails of both crash runs are compared with a run that never crashed.
Last line: ``max_reread_intervals=X nobr_reread_intervals=Y lost=N dup=N``.

    python benchmarks/br_recovery.py [--crashes N] [--hours H] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from engine.embedded.database import Database, create_database
from engine.embedded.logfile import read_records
from engine.embedded.logs import log_path
from engine.embedded.workload import WorkloadSpec, run_workload
from engine.extract.br import BoundedRecovery, BrError
from engine.home.layout import Home
from engine.trail.reader import TrailReader

INTERVAL_S = 3600
PRM = "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nCHECKPOINTSECS 1\n{br}\nTABLE WL.*;\n"


def trail_rows(home: Home) -> list[tuple[str, str, str]]:
    base = home.root / "dirdat" / "lt"
    return [
        (r.tranid or "", r.op_name, str(dict(r.columns).get(0)))
        for _, r in TrailReader(str(base)).records()
    ]


def time_at(home: Home, thread: int, seq: int, offset: int) -> float:
    """Redo time (seconds) of the first record at or after ``offset`` in log ``seq``."""
    path = log_path(home.dirdb / "SRC" / "redo", thread, seq)
    for lr in read_records(path, offset):
        return lr.record.timestamp.timestamp()
    following = log_path(home.dirdb / "SRC" / "redo", thread, seq + 1)
    if following.exists():
        for lr in read_records(following, 0):
            return lr.record.timestamp.timestamp()
    last = float("nan")
    for lr in read_records(path, 0):  # at the end of the redo: the last record's time
        last = lr.record.timestamp.timestamp()
    return last


def read_and_restart(home: Home, br: bool) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """(furthest position the stopped run had published, where a restart begins reading):
    the newest valid BR checkpoint's restart point with BR, the normal checkpoint's recovery
    point (start of the oldest open transaction) without. Thread 1 (one redo thread here)."""
    path = home.dirchk / "E1.cpe"
    if not path.exists():
        return None  # nothing published yet: a restart starts from the beginning again
    state = json.loads(path.read_text())["extra"]["capture"]
    cur = state["current"]["1"]
    read = (cur["sequence"], cur["offset"])
    if br:
        brdir = home.root / "BR" / "E1"
        try:
            restored = BoundedRecovery(brdir, "E1", INTERVAL_S).load()
        except BrError:
            restored = None
        if restored is not None and restored.checkpoint.objects:
            p = restored.checkpoint.restart[1]
            c = restored.checkpoint.current[1]
            read = max(read, (c.sequence, c.offset))
            return read, (p.sequence, p.offset)
    rec = state["recovery"]["1"]
    return read, (rec["sequence"], rec["offset"])


def read_time_us(home: Home) -> int:
    path = home.dirchk / "E1.cpe"
    if not path.exists():
        return 0
    try:
        return int(json.loads(path.read_text())["extra"]["capture"]["last_time_us"])
    except (ValueError, KeyError):
        return 0  # being replaced


def crash_run(
    home: Home,
    br: bool,
    crashes: int,
    rnd: random.Random,
    env: dict[str, str],
    start_us: int,
    hours: float,
) -> list[float]:
    cmd = [sys.executable, "-m", "ggsci", "extract", "paramfile", str(home.dirprm / "e1.prm")]
    spans: list[float] = []
    for _ in range(crashes):
        where = read_and_restart(home, br)
        if where is not None:
            (rs, ro), (ss, so) = where
            spans.append(
                max(0.0, (time_at(home, 1, rs, ro) - time_at(home, 1, ss, so)) / INTERVAL_S)
            )
        proc = subprocess.Popen(
            cmd, env=env, cwd=home.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        # Kill once the run has published progress to a random point of the day of redo,
        # so that every crash lands mid-stream with the long transactions open.
        progress = max(read_time_us(home), start_us)
        target = progress + int(rnd.uniform(0.1, 0.3) * hours * 3600e6)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if read_time_us(home) >= target:
                break
            time.sleep(0.2)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    where = read_and_restart(home, br)
    if where is not None:
        (rs, ro), (ss, so) = where
        spans.append(max(0.0, (time_at(home, 1, rs, ro) - time_at(home, 1, ss, so)) / INTERVAL_S))
    subprocess.run([*cmd, "--stop-at-eof"], env=env, cwd=home.root, check=True, capture_output=True)
    return spans


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--crashes", type=int, default=4)
    ap.add_argument("--hours", type=float, default=24.0)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        base = Home(Path(tmp) / "base")
        base.create_subdirs()
        root = create_database(base.dirdb, "src", log_bytes=64 << 20)
        t0 = time.perf_counter()
        with Database(root, clock_rate=3600.0) as db:  # an hour of redo per wall second
            run_workload(
                db,
                WorkloadSpec(
                    tables=2,
                    rows_per_txn=20,
                    tps=300.0,
                    transactions=int(args.hours * 300),
                    duration=None,
                    long_txns=3,
                    long_age=args.hours * 3600 * 0.8,
                    rollback_ratio=0.05,
                    sessions=8,
                    seed=args.seed,
                ),
            )
        build_s = time.perf_counter() - t0
        homes = {}
        for name, br in (
            ("clean", "BR BRINTERVAL 1H"),
            ("br", "BR BRINTERVAL 1H"),
            ("nobr", "BR BROFF"),
        ):
            home = Home(Path(tmp) / name)
            shutil.copytree(base.root, home.root)
            (home.dirprm / "e1.prm").write_text(PRM.format(br=br))
            homes[name] = home
        env = {**os.environ, "GGSCI_EXTRACT_SPLIT_MB": "1"}  # many small batches
        reference = homes["clean"]
        subprocess.run(
            [
                sys.executable,
                "-m",
                "ggsci",
                "extract",
                "paramfile",
                str(reference.dirprm / "e1.prm"),
                "--stop-at-eof",
            ],
            env={**env, "GGHOME": str(reference.root)},
            cwd=reference.root,
            check=True,
            capture_output=True,
        )
        want = trail_rows(reference)
        first_us = int(time_at(base, 1, 1, 0) * 1e6)
        results = {}
        for name in ("br", "nobr"):
            home = homes[name]
            spans = crash_run(
                home,
                name == "br",
                args.crashes,
                rnd,
                {**env, "GGHOME": str(home.root)},
                first_us,
                args.hours,
            )
            got = trail_rows(home)
            have, need = Counter(got), Counter(want)
            dup = sum(max(0, have[k] - need[k]) for k in have)
            lost = sum(max(0, need[k] - have[k]) for k in need)
            results[name] = (max(spans, default=0.0), lost, dup, got == want)
            print(f"{name}_restarts_measured={len(spans)}")
            print(f"{name}_spans_intervals={','.join(f'{s:.2f}' for s in spans)}")
            print(f"{name}_same_trail_as_clean_run={got == want}")
        print(f"redo_hours={args.hours}")
        print(f"build_s={build_s:.1f}")
        print(f"reference_rows={len(want)}")
        lost = results["br"][1] + results["nobr"][1]
        dup = results["br"][2] + results["nobr"][2]
        print(
            f"max_reread_intervals={results['br'][0]:.2f} "
            f"nobr_reread_intervals={results['nobr'][0]:.2f} lost={lost} dup={dup}"
        )


if __name__ == "__main__":
    main()
