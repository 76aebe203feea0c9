"""Extract catch-up scaling: the same backlog captured without Spark (the miner on the
driver), on ``local[1]``, ``local[2]``, and on a standalone cluster of this machine with one
and with two one-core workers (tests/extract/standalone.py; needs root for ``unshare``).

Each run is a fresh process (one SparkSession per process), as an Extract is. Per run it
prints throughput (row changes captured per second of catch-up; the start of Spark and of its
workers excluded, as in extract_throughput.py) and the total CPU seconds of the catch-up:
the driver and every process under it (the JVM, local Python workers) plus, on the cluster,
everything under the workers (executor JVMs and their Python workers), read from /proc. The
trails of all runs must be equal after their file header (``trails_equal``). The last line is
``speedup_2v1``: two workers' throughput over one worker's.

The machine's speed drifts by ±25% over tens of seconds, so one run's CPU against another's
is noisy: ``--rounds N`` runs the list N times, alternating, and gives each ratio as the
median of its rounds (every round's value beside it).

On this 2-core machine two one-core workers leave the driver (its Python and JVM, about
0.8 P of CPU where P is the workers') no core of its own, and the speedup cannot pass
2P/(P + 0.8P) ≈ 1.1. ``--worker-quota 0.5`` caps each worker at half a core (a cgroup's CFS
quota, tests/extract/standalone.py): the two workers together then take one core and the
driver the other, which is how a cluster of one-core workers with a driver host of its
own is shaped; ``worker_quota_cores=`` is printed first so the figures are not mistaken
for one-core workers'.

    python benchmarks/extract_scaling.py [--transactions N] [--split-mb M] [--backlog DIR]
                                         [--runs inproc,local1,local2,cluster1,cluster2]
                                         [--rounds N] [--threads] [--worker-quota CORES]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from extract_throughput import SHAPES, Shape, _backlog  # noqa: E402

from engine.extract.redo_source import MINER_MODULES  # noqa: E402
from engine.extract.run import ExtractRun  # noqa: E402
from engine.home.layout import Home  # noqa: E402
from engine.trail.layout import SECTION  # noqa: E402
from params.check import check_text  # noqa: E402

RUNS = ("inproc", "local1", "local2", "cluster1", "cluster2")
TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu(roots: list[int]) -> dict[str, float]:
    """CPU seconds (user + system, reaped children included) of ``roots`` and every process
    under them, now, by ``<root's index>/<command>`` (0: the driver; java, python...); and,
    by the same keys with ``:sys`` and ``:kfaults`` after them, the system CPU seconds and
    the thousands of page faults (minor and major) within it."""
    parent: dict[int, int] = {}
    figures: dict[int, tuple[float, float, float]] = {}
    comm: dict[int, str] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        pid = int(d.name)
        # from the state on: ppid 1, minflt cminflt majflt cmajflt 7-10, utime stime cutime
        # cstime 11-14
        f = [0, *map(int, stat[stat.rindex(")") + 2 :].split()[1:15])]
        parent[pid] = f[1]
        figures[pid] = (
            sum(f[11:15]) / TICKS,
            (f[12] + f[14]) / TICKS,
            sum(f[7:11]) / 1000,
        )
        comm[pid] = stat[stat.index("(") + 1 : stat.rindex(")")].split(".")[0].rstrip("0123456789")
    owner = {r: i for i, r in enumerate(roots)}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parent.items():
            if ppid in owner and pid not in owner:
                owner[pid] = owner[ppid]
                grew = True
    out: dict[str, float] = {}
    for pid, i in owner.items():
        name = comm.get(pid, "?")
        if name == "python" and pid not in roots:
            name = "python-workers"  # Spark's Python workers (the driver's own: "python")
        key = f"{'driver' if i == 0 else 'workers'}/{name}"
        for suffix, value in zip(
            ("", ":sys", ":kfaults"), figures.get(pid, (0.0, 0.0, 0.0)), strict=True
        ):
            out[key + suffix] = out.get(key + suffix, 0.0) + value
    return out


def java_threads(roots: list[int]) -> dict[str, float]:
    """CPU seconds of the JVMs' threads under ``roots``, by thread name (digits dropped:
    a pool's threads together), for ``--threads``."""
    tree = set(roots)
    grew = True
    procs: dict[int, tuple[int, str]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            procs[int(d.name)] = (int(fields[1]), stat[stat.index("(") + 1 : stat.rindex(")")])
    while grew:
        grew = False
        for pid, (ppid, _) in procs.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grew = True
    out: dict[str, float] = {}
    for pid in tree:
        if procs.get(pid, (0, ""))[1] != "java":
            continue
        for t in Path(f"/proc/{pid}/task").glob("*"):
            try:
                stat = (t / "stat").read_text()
            except OSError:
                continue
            name = stat[stat.index("(") + 1 : stat.rindex(")")].rstrip("0123456789-# ")
            fields = stat[stat.rindex(")") + 2 :].split()
            out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / TICKS
    return out


def own_threads() -> dict[str, float]:
    """CPU seconds of this process's live threads by Python thread name (digits dropped),
    for ``--threads``: the driver's capture loop against its mining threads."""
    names = {t.native_id: t.name.rstrip("0123456789_") for t in threading.enumerate()}
    out: dict[str, float] = {}
    for t in Path("/proc/self/task").iterdir():
        try:
            stat = (t / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        name = names.get(int(t.name), "other")
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / TICKS
    return out


def _minus(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {k: round(v - before.get(k, 0.0), 2) for k, v in sorted(after.items())}


def child(args: argparse.Namespace) -> None:
    """One run, in this process: print a JSON line of its figures."""
    from engine.cluster.spark import get_session, settings_for, warm_workers

    workers = [int(p) for p in args.worker_pids.split(",") if p]
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp))
        home.create_subdirs()
        (home.dirdb / args.source.name).symlink_to(args.source)
        model = check_text(
            f"EXTRACT bench\nSOURCEDB {args.source.name}\nEXTTRAIL ./dirdat/bt\nTABLE US03.*;\n"
        ).model
        t0 = time.perf_counter()
        spark = None
        if args.master != "none":
            # the share, held from the start: throughput with every executor up
            extra = (
                {"spark.cores.max": args.cores, "spark.dynamicAllocation.minExecutors": args.cores}
                if args.cores
                else {}
            )
            settings = settings_for(
                [],
                home.root,
                cli_master=args.master,
                app_name="ggsci-scaling",
                log_file=home.dirrpt / "spark.log",
                ship_dir=home.dirtmp / "ship",
            )
            spark = get_session(replace(settings, extra={**settings.extra, **extra}))
            if args.cores:
                _wait_executors(spark, int(args.cores))
            warm_workers(spark, MINER_MODULES)
        start_s = time.perf_counter() - t0
        run = ExtractRun(home, model, None, lambda *_: None, spark=spark, durable=True)
        run.capture.split_bytes = args.split_mb << 20
        roots = [os.getpid(), *workers]
        cpu0, threads0 = tree_cpu(roots), java_threads(roots) if args.threads else {}
        own0 = own_threads() if args.threads else {}
        t1 = time.perf_counter()
        run.run(threading.Event(), stop_at_eof=True)
        catchup = time.perf_counter() - t1
        cpu = _minus(tree_cpu(roots), cpu0)
        threads = _minus(java_threads(roots), threads0) if args.threads else {}
        own = _minus(own_threads(), own0) if args.threads else {}
        run.close()
        trail = sorted(home.dirdat.glob("bt[0-9]*"))
        body = b"".join(_body(p) for p in trail)
        args.trail_out.write_bytes(body)
        s = run.capture.stats
        print(
            json.dumps(
                {
                    "trail_records": s.trail_records,
                    "catchup_s": catchup,
                    "cpu_s": sum(v for k, v in cpu.items() if ":" not in k),
                    "cpu_by": {k: v for k, v in cpu.items() if abs(v) >= 0.01},
                    "start_s": start_s,
                    "batches": int(run.capture.timing["batches"]),
                    "driver_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10,
                    "java_threads": {k: v for k, v in threads.items() if v >= 0.02},
                    "python_threads": {k: v for k, v in own.items() if v >= 0.02},
                }
            )
        )


def _wait_executors(spark: object, n: int, timeout: float = 120.0) -> None:
    sc = spark.sparkContext  # type: ignore[attr-defined]
    deadline = time.monotonic() + timeout
    while sc._jsc.sc().getExecutorMemoryStatus().size() - 1 < n:  # the driver is one
        if time.monotonic() > deadline:
            raise SystemExit(f"fewer than {n} executors after {timeout:.0f} s")
        time.sleep(0.2)


def _body(path: Path) -> bytes:
    """A trail file after its header record."""
    data = path.read_bytes()
    return data[SECTION.unpack_from(data)[2] :]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--transactions", type=int, default=3000)
    ap.add_argument("--split-mb", type=int, default=16)
    ap.add_argument("--backlog", type=Path, help="keep (and reuse) the source database here")
    ap.add_argument("--runs", default=",".join(RUNS))
    ap.add_argument("--threads", action="store_true", help="the JVMs' CPU by thread too")
    ap.add_argument(
        "--worker-quota", type=float, metavar="CORES",
        help="cap each cluster worker's CPU at this many cores (a cgroup's CFS quota)",
    )  # fmt: skip
    ap.add_argument(
        "--rounds", type=int, default=1,
        help="run the list this many times, alternating; the ratios are the rounds' median",
    )  # fmt: skip
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--master", default="none", help=argparse.SUPPRESS)
    ap.add_argument("--cores", default="", help=argparse.SUPPRESS)
    ap.add_argument("--worker-pids", default="", help=argparse.SUPPRESS)
    ap.add_argument("--source", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--trail-out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "build")
        home.create_subdirs()
        keep = args.backlog or Path(tmp) / "backlog"
        base = SHAPES["default"]
        shape = Shape(args.transactions, base.rows, base.sessions)
        source = _backlog(home, keep, shape).resolve()
        redo_mb = sum(p.stat().st_size for p in (source / "redo").rglob("*.log")) / 1e6
        print(f"transactions={args.transactions} redo_mb={redo_mb:.0f} split_mb={args.split_mb}")
        if args.worker_quota is not None:
            print(f"worker_quota_cores={args.worker_quota}")
        print(f"load_before={os.getloadavg()[0]:.2f}")
        results: dict[str, list[dict[str, Any]]] = {}
        bodies: set[bytes] = set()
        for _ in range(args.rounds):
            for name in args.runs.split(","):
                r, body = _run(name, args, source, Path(tmp))
                results.setdefault(name, []).append(r)
                bodies.add(body)
        print(f"trails_equal={len(bodies) == 1}")
        if "inproc" in results:
            for name, rs in results.items():
                if name != "inproc":
                    ratios = [
                        r["cpu_s"] / b["cpu_s"] for r, b in zip(rs, results["inproc"], strict=True)
                    ]
                    _median_line(f"cpu_vs_inproc_{name}", ratios)
        if {"cluster1", "cluster2"} <= results.keys():
            pairs = zip(results["cluster1"], results["cluster2"], strict=True)
            _median_line("speedup_2v1", [one["catchup_s"] / two["catchup_s"] for one, two in pairs])


def _median_line(name: str, values: list[float]) -> None:
    """``name=median``, with every round's value after it when there are several."""
    each = f" rounds={','.join(f'{v:.2f}' for v in values)}" if len(values) > 1 else ""
    print(f"{name}={statistics.median(values):.2f}{each}", flush=True)


def _run(
    name: str, args: argparse.Namespace, source: Path, tmp: Path
) -> tuple[dict[str, Any], bytes]:
    """One run in a fresh process (a cluster started for it and stopped after): its figures,
    printed, and its trail after the file header."""
    from tests.extract import standalone

    cluster = None
    master, cores = (
        {"inproc": "none", "local1": "local[1]", "local2": "local[2]"}.get(name, ""),
        "",
    )
    if name.startswith("cluster"):
        n = int(name[len("cluster") :])
        cluster = standalone.start(n, cpu_quota=args.worker_quota)
        master, cores = cluster.url, str(n)
    out = tmp / f"{name}.trail"
    try:
        argv = [sys.executable, __file__, "--child", "--master", master,
                "--cores", cores, "--source", str(source), "--trail-out", str(out),
                "--split-mb", str(args.split_mb), *(["--threads"] if args.threads else []),
                "--worker-pids",
                ",".join(map(str, cluster.worker_pids())) if cluster else ""]  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    finally:
        if cluster is not None:
            cluster.stop()
    if done.returncode != 0:
        print(f"{name}: failed\n{done.stderr[-3000:]}", file=sys.stderr)
        raise SystemExit(1)
    r: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    rate = r["trail_records"] / r["catchup_s"]
    print(
        f"{name}: lcr_per_s={rate:.0f} catchup_s={r['catchup_s']:.2f} "
        f"cpu_s={r['cpu_s']:.2f} start_s={r['start_s']:.1f} batches={r['batches']} "
        f"driver_rss_mb={r['driver_rss_mb']} "
        f"load={os.getloadavg()[0]:.2f} cpu_by={json.dumps(r['cpu_by'])}",
        flush=True,
    )
    if args.threads:
        print(f"{name}: java_threads={json.dumps(r['java_threads'])}", flush=True)
        print(f"{name}: driver_threads={json.dumps(r['python_threads'])}", flush=True)
    return r, out.read_bytes()


if __name__ == "__main__":
    main()
