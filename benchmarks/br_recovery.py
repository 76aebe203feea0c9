"""Bounded Recovery measured as the seed defines it (seed 000; issue 29): the bound is in
BR intervals of Extract *processing* time, so the Extract must keep up with a live source.

One injected clock drives both sides: the source database writes redo stamped
``t0 + (wall - w0) * rate`` while it runs a workload in wall time (short transactions
throughout, ``--long`` transactions opened at the start and committed near the end, open
across many BR intervals), and the Extract (a child process: ``ExtractRun`` with that clock
as its processing clock, the local miner, no Spark) keeps up with it, taking a BR checkpoint
every BRINTERVAL of that clock. The Extract is killed with SIGKILL at random points and
restarted at once; when the source stops it runs to the end of the redo.

After each restart it prints the redo re-read: from where the restarted Extract begins
reading (the restart position of the newest BR checkpoint; without BR the recovery
checkpoint, the start of the oldest open transaction) to the furthest redo the killed run
had read (its last batch before the kill), in BR intervals. The Extract keeps up (the lag
at each kill is printed), so redo time and processing time advance together and the span
is the re-read in BR intervals of processing time. The same run with BROFF is the contrast.

Lost and duplicated transactions: each crash run's trail, read as whole transactions
(TransactionReader: a transaction cut by a kill and closed by a RestartAbend marker is not
one), against a run that never crashed over a copy of the same redo (:func:`audit`,
proven by a deliberate mutation in tests/extract/test_br_benchmark_audit.py).

Last line: ``max_reread_intervals=X`` (goal <= 2); before it the BROFF figure, lost, dup.

    python benchmarks/br_recovery.py [--seconds S] [--rate R] [--crashes N] [--seed S]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

INTERVAL = "20M"  # the smallest BRINTERVAL the reference allows
INTERVAL_S = 20 * 60
PRM = "EXTRACT E1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nCHECKPOINTSECS 1\n{br}\nTABLE WL.*;\n"
_EPOCH = datetime(1970, 1, 1)


# -- the one clock ---------------------------------------------------------------------------
@dataclass
class RateClock:
    """Redo (and Extract processing) time ``t0 + (monotonic - w0) * rate``: the same in every
    process given the same numbers (CLOCK_MONOTONIC is system-wide)."""

    t0_us: int
    w0: float
    rate: float
    _offset_us: int = field(default=0)

    def now_us(self) -> int:
        return self.t0_us + int((time.monotonic() - self.w0) * self.rate * 1e6) + self._offset_us

    def now(self) -> datetime:
        return _EPOCH + timedelta(microseconds=self.now_us())

    def advance(self, seconds: float) -> None:  # (the workload's forced commit only)
        self._offset_us += int(seconds * 1e6)


# -- the Extract child -----------------------------------------------------------------------
def child(root: Path, clock: RateClock, stop_at_eof: bool) -> None:
    """Run E1 in ``root`` on ``clock``; report ``start <time_us>`` (the redo time where it
    begins reading) and, after each batch, the redo time read so far (files ``start`` and
    ``read`` in ``root``, replaced whole)."""
    from engine.extract.run import ExtractRun
    from engine.home.layout import Home
    from params.check import check_text

    home = Home(root)
    model = check_text((home.dirprm / "e1.prm").read_text()).model
    log = (root / "events.log").open("a")

    def emit(code: str, _severity: object, text: str) -> None:
        log.write(f"{code} {text}\n")
        log.flush()

    run = ExtractRun(home, model, None, emit, spark=None, clock=clock.now)
    first = min(run.capture.positions.values())
    _publish(root / "start", f"{first.sequence} {first.offset}")

    def progress() -> None:
        _publish(root / "read", f"{run.capture.last_time_us} {clock.now_us()}")

    run.after_batch = progress
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        run.run(stop, stop_at_eof=stop_at_eof)
    finally:
        run.close()


def _publish(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _child_cmd(root: Path, clock: RateClock, stop_at_eof: bool = False) -> list[str]:
    cmd = [sys.executable, __file__, "--child", str(root), "--t0-us", str(clock.t0_us),
           "--w0", repr(clock.w0), "--rate", repr(clock.rate)]  # fmt: skip
    return [*cmd, "--stop-at-eof"] if stop_at_eof else cmd


# -- measuring -------------------------------------------------------------------------------
def redo_time_at(root: Path, seq: int, offset: int) -> float:
    """Redo time (s) of the first record at or after ``offset`` of log ``seq`` (thread 1)."""
    from engine.embedded.logfile import read_records
    from engine.embedded.logs import log_path

    redo = root / "dirdb" / "SRC" / "redo"
    for s, off in ((seq, offset), (seq + 1, 0)):
        path = log_path(redo, 1, s)
        if path.exists():
            for lr in read_records(path, off):
                return lr.record.timestamp.replace(tzinfo=UTC).timestamp()
    return float("nan")


def _read_pair(path: Path) -> tuple[int, int] | None:
    try:
        a, b = path.read_text().split()
    except (OSError, ValueError):
        return None
    return int(a), int(b)


Txn = tuple[str, tuple[str, ...]]


def audit(want: list[Txn], got: list[Txn]) -> tuple[int, int]:
    """(lost, duplicated) transactions of ``got`` against ``want`` (a run that never
    crashed), each a list of (TRANID, its records in order): a transaction of ``want``
    that ``got`` lacks, or holds with other records, is lost; each extra copy of one, and
    a transaction ``want`` does not have, is a duplicate."""
    need = dict(want)
    have = Counter(t for t, _ in got)
    same = {t for t, recs in got if need.get(t) == recs}
    lost = sum(1 for t in need if t not in same)
    dup = sum(n - 1 for n in have.values() if n > 1) + sum(1 for t in have if t not in need)
    return lost, dup


def transactions(root: Path) -> list[Txn]:
    """The whole transactions of E1's trail: (TRANID, records as 'op table key')."""
    from engine.trail.txreader import TransactionReader

    out = []
    reader = TransactionReader(root / "dirdat" / "lt")
    for txn in reader.poll():
        recs = tuple(f"{r.op_name} {r.table} {dict(r.columns).get(0)}" for r in txn.records)
        out.append((txn.tranid or "", recs))
    reader.close()
    return out


# -- one mode ----------------------------------------------------------------------------------
@dataclass
class Outcome:
    spans: list[float]
    lags: list[float]
    lost: int
    dup: int
    transactions: int
    brcheckpoints: int


def crash_run(base: Path, name: str, br: str, args: argparse.Namespace) -> Outcome:
    from engine.embedded.database import Database, create_database
    from engine.embedded.workload import WorkloadSpec, run_workload
    from engine.home.layout import Home

    rnd = random.Random(f"{args.seed}-{name}")
    root = base / name
    home = Home(root)
    home.create_subdirs()
    create_database(home.dirdb, "src", log_bytes=64 << 20)
    (home.dirprm / "e1.prm").write_text(PRM.format(br=br))
    t0 = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
    clock = RateClock((t0 - _EPOCH) // timedelta(microseconds=1), time.monotonic(), args.rate)
    with Database(home.dirdb / "SRC", clock=clock) as db:  # the tables, before the Extract
        run_workload(db, WorkloadSpec(tables=2, transactions=1, initial_rows=50, seed=args.seed))
    spec = WorkloadSpec(
        tables=2, tps=args.tps, rows_per_txn=8, duration=args.seconds, transactions=None,
        long_txns=args.long, long_age=args.seconds * args.rate * 0.85, rollback_ratio=0.05,
        sessions=4, seed=args.seed, initial_rows=0,
    )  # fmt: skip
    done = threading.Event()

    def source() -> None:
        with Database(home.dirdb / "SRC", clock=clock) as db:
            run_workload(db, spec)
        done.set()

    producer = threading.Thread(target=source)
    env = {**os.environ, "GGHOME": str(root)}
    proc = subprocess.Popen(_child_cmd(root, clock), env=env, cwd=root)
    producer.start()
    spans: list[float] = []
    lags: list[float] = []
    for _ in range(args.crashes):
        time.sleep(rnd.uniform(0.5, 1.5) * args.seconds / (args.crashes + 1))
        if done.is_set():
            break
        read = _read_pair(root / "read")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        (root / "start").unlink(missing_ok=True)
        proc = subprocess.Popen(_child_cmd(root, clock), env=env, cwd=root)
        while not (root / "start").exists() and proc.poll() is None:
            time.sleep(0.05)
        start = _read_pair(root / "start")
        if read is None or start is None:
            continue
        lags.append((read[1] - read[0]) / 1e6 / INTERVAL_S)
        begin = redo_time_at(root, *start)
        spans.append(max(0.0, (read[0] / 1e6 - begin) / INTERVAL_S))
        print(f"{name}_restart={len(spans)} reread_intervals={spans[-1]:.2f} "
              f"lag_at_kill_intervals={lags[-1]:.2f}", flush=True)  # fmt: skip
    producer.join()
    os.kill(proc.pid, signal.SIGTERM)  # the source stopped: let it finish the redo
    proc.wait()
    subprocess.run(_child_cmd(root, clock, stop_at_eof=True), env=env, cwd=root, check=True)
    # the run that never crashed: the same redo, a new home
    ref = base / f"{name}_clean"
    Home(ref).create_subdirs()
    shutil.copytree(home.dirdb, ref / "dirdb", dirs_exist_ok=True)
    (ref / "dirprm" / "e1.prm").write_text(PRM.format(br=br))
    subprocess.run(_child_cmd(ref, clock, stop_at_eof=True), env={**env, "GGHOME": str(ref)},
                   cwd=ref, check=True)  # fmt: skip
    want, got = transactions(ref), transactions(root)
    lost, dup = audit(want, got)
    events = (root / "events.log").read_text()
    return Outcome(spans, lags, lost, dup, len(want), events.count("OGG-01631"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0, help="wall seconds of workload")
    ap.add_argument("--rate", type=float, default=600.0, help="redo seconds per wall second")
    ap.add_argument("--tps", type=float, default=15.0, help="short transactions per wall second")
    ap.add_argument("--long", type=int, default=3, help="long-running transactions")
    ap.add_argument("--crashes", type=int, default=5)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--child", type=Path)
    ap.add_argument("--t0-us", type=int)
    ap.add_argument("--w0", type=float)
    ap.add_argument("--stop-at-eof", action="store_true")
    args = ap.parse_args()
    if args.child is not None:
        child(args.child, RateClock(args.t0_us, args.w0, args.rate), args.stop_at_eof)
        return
    redo_s = args.seconds * args.rate
    print(
        f"br_interval={INTERVAL} rate={args.rate:g} redo_hours={redo_s / 3600:.1f} "
        f"intervals_of_redo={redo_s / INTERVAL_S:.1f} long_txns={args.long}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        results = {
            name: crash_run(Path(tmp), name, br, args)
            for name, br in (("br", f"BR BRINTERVAL {INTERVAL}"), ("nobr", "BR BROFF"))
        }
    for name, r in results.items():
        print(f"{name}_spans_intervals={','.join(f'{s:.2f}' for s in r.spans)}")
        print(f"{name}_max_lag_at_kill_intervals={max(r.lags, default=0.0):.2f}")
        print(f"{name}_transactions={r.transactions} {name}_lost={r.lost} {name}_dup={r.dup}")
        print(f"{name}_br_checkpoints={r.brcheckpoints}")
    br, nobr = results["br"], results["nobr"]
    print(f"nobr_reread_intervals={max(nobr.spans, default=0.0):.2f}")
    print(f"lost={br.lost + nobr.lost} dup={br.dup + nobr.dup}")
    print(f"max_reread_intervals={max(br.spans, default=0.0):.2f}")


if __name__ == "__main__":
    main()
