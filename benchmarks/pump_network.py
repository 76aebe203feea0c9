"""Pump throughput through the Collector over loopback, beside the local pump in the same run.

Backlog (the default shape of benchmarks/extract_throughput.py, written straight into a trail):
transactions of 100 row changes of an 8-column STUDENT table (NUMBER key, five VARCHAR2, two
NUMBER), 50% insert, 30% update (TUITION_FEE), 20% delete transactions. The same pump copy loop
(engine.pump.pump.Pump, durable: fsync at each checkpoint) copies it

- to a local trail (the pump as it ran before the Collector: ``local_lcr_per_s``);
- through a static Collector (``python -m engine.manager.collector``, its own process) on
  127.0.0.1: plain, with ``COMPRESS`` and with ``ENCRYPT AES256`` (``*_lcr_per_s``).

Each run starts from an empty checkpoint and an empty output trail; the four runs alternate,
``--rounds`` times, and each figure is its best round. Prints ``name=value`` lines; the last is
``ratio_vs_local`` (plain Collector / local; goal >= 0.8).

    python benchmarks/pump_network.py [--transactions N] [--rows R] [--rounds K]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from engine.home.groups import GroupDef, GroupKind, GroupStore, SourceType, TrailDef, TrailKind
from engine.home.layout import Home
from engine.pump.pump import Pump
from engine.pump.remote import remote_opener
from engine.trail.codec import encode_record
from engine.trail.layout import IOType, TransInd
from engine.trail.model import TableDef, TrailRecord
from engine.trail.writer import TrailWriter
from params.check import check_text

TABLE = "US03.STUDENT"
COLUMNS = ("STUDENT_KEY", "FIRST_NAME", "LAST_NAME", "GENDER", "UNIVERSITY", "SUBJECT",
           "YEAR", "TUITION_FEE")  # fmt: skip
KEY = "b1  0x" + "5A" * 32


def student(key: int) -> tuple[tuple[int, str | None], ...]:
    values = (str(key), "Ada", f"Lovelace{key}", "MF"[key % 2], "Oxford", "Biology",
              str(2013 + key % 3), str(9000 + key % 250))  # fmt: skip
    return tuple(enumerate(values))


def backlog(path: Path, transactions: int, rows: int) -> int:
    """The source trail; returns the row changes written."""
    writer = TrailWriter.open(path, durable=False, roll_on_restart=False)
    writer.define_table(TableDef(TABLE, COLUMNS))
    inserts, updates = transactions // 2, transactions * 3 // 10
    n = 0
    for t in range(transactions):
        kind = (
            IOType.INSERT
            if t < inserts
            else IOType.FIELDCOMP
            if t < inserts + updates
            else IOType.DELETE
        )
        records = []
        for r in range(rows):
            key = 1 + (t * rows + r) % (inserts * rows)
            if kind == IOType.INSERT:
                cols = student(key)
            elif kind == IOType.FIELDCOMP:
                cols = ((0, str(key)), (7, str(10_000 + key % 500)))
            else:
                cols = ((0, str(key)),)
            records.append(
                encode_record(
                    TrailRecord(
                        io_type=kind,
                        table=TABLE,
                        columns=cols,
                        before_after="B" if kind == IOType.DELETE else "A",
                        trans_ind=TransInd.of(r, rows),
                        io_time_us=1_700_000_000_000_000 + t,
                        logcsn=str(1000 + t) if r == 0 else None,
                        tranid=f"1.{t % 48}.{t}" if r == 0 else None,
                    )
                )
            )
            n += 1
        writer.append_many(records)
    writer.close()
    return n


def fresh_pump(source: Home, target: Home, options: str, port: int | None) -> Pump:
    shutil.rmtree(source.dirchk, ignore_errors=True)  # no checkpoint: from the start
    source.dirchk.mkdir()
    GroupStore(source).save(
        GroupDef(
            kind=GroupKind.EXTRACT,
            name="PMP",
            source=SourceType.EXTTRAILSOURCE,
            created="2026-01-01 00:00:00",
            source_path="./dirdat/aa",
            trails=(TrailDef("./dirrmt/bb", TrailKind.RMTTRAIL, 500),),
        )
    )
    for home in (source, target):
        shutil.rmtree(home.root / "dirrmt", ignore_errors=True)
    rmthost = f"RMTHOST 127.0.0.1, PORT {port}{options}" if port else "RMTHOST 127.0.0.1, MGRPORT 1"
    text = f"EXTRACT pmp\n{rmthost}\nRMTTRAIL ./dirrmt/bb\nCHECKPOINTSECS 1\nTABLE us03.*;\n"
    result = check_text(text, "pmp.prm")
    assert result.ok, [d.message for d in result.errors]
    model = result.model
    group = GroupStore(source).get("PMP")
    assert group is not None
    opener = remote_opener(source, model.rmthost) if port and model.rmthost else None
    return Pump(source, model, group, lambda *a: None, opener=opener)


def timed(make: Callable[[], Pump]) -> float:
    pump = make()
    start = time.perf_counter()
    pump.run(lambda: False, stop_at_eof=True, idle=0.0)
    seconds = time.perf_counter() - start
    pump.close()
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--transactions", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2, help="each run's best of this many")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pump-net-") as tmp:
        source, target = Home(Path(tmp) / "source"), Home(Path(tmp) / "target")
        for home in (source, target):
            home.create_subdirs()
            (home.root / "ENCKEYS").write_text(KEY + "\n")
            (home.root / "ENCKEYS").chmod(0o600)
        (target.dirprm / "mgr.prm").write_text(
            "PORT 0\nACCESSRULE, PROG COLLECTOR, IPADDR 127.0.0.1, ALLOW\n"
        )
        t0 = time.perf_counter()
        changes = backlog(source.root / "dirdat" / "aa", args.transactions, args.rows)
        print(f"backlog_s={time.perf_counter() - t0:.1f}")
        print(f"transactions={args.transactions}")
        print(f"row_changes={changes}")
        with socket.create_server(("127.0.0.1", 0)) as probe:
            port = int(probe.getsockname()[1])
        collector = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "engine.manager.collector",
                "--home",
                str(target.root),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            stdout=subprocess.PIPE,
        )
        try:
            assert collector.stdout is not None
            collector.stdout.readline()  # listening
            figures: dict[str, float] = {}
            runs = (
                ("local", "", None),
                ("remote_plain", "", port),
                ("remote_compress", ", COMPRESS", port),
                ("remote_encrypt", ", ENCRYPT AES256, KEYNAME b1", port),
            )
            best: dict[str, float] = {}
            for _ in range(args.rounds):  # alternating: the machine's speed drifts
                for name, options, at in runs:
                    seconds = timed(partial(fresh_pump, source, target, options, at))
                    best[name] = min(seconds, best.get(name, seconds))
            for name, _, _ in runs:
                figures[name] = changes / best[name]
                print(f"{name}_s={best[name]:.2f}")
                print(f"{name}_lcr_per_s={figures[name]:.0f}")
        finally:
            collector.terminate()
            collector.wait(10)
        print(f"ratio_compress={figures['remote_compress'] / figures['local']:.2f}")
        print(f"ratio_encrypt={figures['remote_encrypt'] / figures['local']:.2f}")
        print(f"ratio_vs_local={figures['remote_plain'] / figures['local']:.2f}")


if __name__ == "__main__":
    main()
