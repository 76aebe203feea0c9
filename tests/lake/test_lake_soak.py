"""kill -9 of the lakehouse Replicat between every two steps, with an independent audit.

A trail of random transactions on two tables (inserts, compressed updates, deletes) is
applied by a Replicat process that kills itself right after its 1st, 2nd, ... table commit
(each batch makes four: two tables applied by key, two kept as history), then by processes
killed from outside at random moments, then by one that runs to the end. The audit is the
history tables, held to the trail's operations counted one by one (lost 0, duplicated 0),
and the applied tables, held to a replay of the operations in this test. The same run with
the mutation that commits the data without the position must show duplicates.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from lakehelp import CKPT_DB, lake_home, read_delta, read_iceberg
from replicat_helpers import add_group, txn_records, write_trail

from engine.home.groups import GroupKind, GroupStore, SourceType
from engine.home.layout import Home
from engine.trail.layout import IOType
from engine.trail.model import TableDef

CHILD = Path(__file__).resolve().parent / "soak_child.py"
TABLES = (TableDef("HR.EMP", ("ID", "NAME", "SAL")), TableDef("HR.DEPT", ("ID", "NAME", "SAL")))
MAPS = "MAP hr.*, TARGET hr.*, KEYCOLS (ID);\nMAP hr.*, TARGET hist.*, INSERTALLRECORDS;\n"
Op = tuple[str, str, str, tuple[tuple[str, str | None], ...]]  # table, op, key, carried


def make_trail(home: Home, seed: int, count: int) -> tuple[list[Op], dict[str, dict[str, Any]]]:
    """``count`` random transactions written to the trail; every operation as the history must
    show it (csn and tranid kept apart), and the rows the tables must hold at the end."""
    rnd = random.Random(seed)
    rows: dict[str, dict[str, dict[str, str | None]]] = {t.table: {} for t in TABLES}
    ops: list[Op] = []
    txns = []
    for n in range(count):
        csn = 1000 + n
        records = []
        for _ in range(rnd.randint(1, 4)):
            t = rnd.choice(TABLES).table
            live = rows[t]
            choice = rnd.random()
            if not live or choice < 0.5:
                k = str(rnd.randint(1, 60))
                if k in live:
                    continue
                row = {"ID": k, "NAME": f"n{rnd.randint(0, 99)}", "SAL": str(rnd.randint(1, 9))}
                live[k] = row
                cols = ((0, k), (1, row["NAME"]), (2, row["SAL"]))
                records.append((IOType.INSERT, t, cols))
                ops.append((t, "I", f"{csn}", tuple(row.items())))
            elif choice < 0.8:
                k = rnd.choice(sorted(live))
                sal = str(rnd.randint(10, 99))
                live[k]["SAL"] = sal
                records.append((IOType.FIELDCOMP, t, ((0, k), (2, sal))))
                ops.append((t, "U", f"{csn}", (("ID", k), ("SAL", sal))))
            else:
                k = rnd.choice(sorted(live))
                del live[k]
                records.append((IOType.DELETE, t, ((0, k),)))
                ops.append((t, "D", f"{csn}", (("ID", k),)))
        if records:
            txns.append(txn_records(csn, records))
    write_trail(home.root / "dirrmt" / "bb", txns, tables=TABLES)
    return ops, rows


def read(home: Home, kind: str, owner: str, name: str) -> list[dict[str, Any]]:
    if kind == "deltalake":
        return read_delta(home.root / "lake" / owner / name)
    return read_iceberg(home, f"{owner}.{name}")


def audit(home: Home, kind: str, ops: list[Op], rows: dict[str, Any]) -> dict[str, int]:
    want = Counter(ops)
    got: Counter[Op] = Counter()
    for t in TABLES:
        name = t.table.split(".")[1].lower()
        for r in read(home, kind, "hist", name):
            carried = tuple((c, r[c]) for c in ("ID", "NAME", "SAL") if r[c] is not None)
            got[(t.table, str(r["OP_TYPE"]), str(r["CSN"]), carried)] += 1
    lost = sum((want - got).values())
    dup = sum((got - want).values())
    mismatched = 0
    for t in TABLES:
        name = t.table.split(".")[1].lower()
        have = {r["ID"]: r for r in read(home, kind, "hr", name)}
        mismatched += sum(have.get(k) != v for k, v in rows[t.table].items())
        mismatched += len(have.keys() - rows[t.table].keys())
    return {"lost": lost, "dup": dup, "mismatched_rows": mismatched}


def child(home: Home, kind: str, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path.cwd())}
    return subprocess.Popen([sys.executable, str(CHILD), str(home.root), kind, *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip


def soak(tmp_path: Path, kind: str, *extra: str) -> dict[str, int]:
    home = lake_home(tmp_path / "home")
    (home.root / "maps.txt").write_text(MAPS)
    ops, rows = make_trail(home, seed=5, count=60)
    group = add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, "./dirrmt/bb")
    from dataclasses import replace

    GroupStore(home).save(replace(group, checkpoint_table="gg.chkpt"))
    assert (home.root / CKPT_DB).exists()
    for n in range(1, 6):  # killed right after its n-th table commit
        p = child(home, kind, "--die-after", str(n), *extra)
        out = p.communicate(timeout=240)[0].decode()
        assert p.returncode == -signal.SIGKILL, out
    rnd = random.Random(1)
    for _ in range(3):  # killed from outside while it applies
        p = child(home, kind, *extra)
        time.sleep(rnd.uniform(1.5, 3.0))
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=60)
    p = child(home, kind, *extra)
    out = p.communicate(timeout=300)[0].decode()
    assert p.returncode == 0, out
    return audit(home, kind, ops, rows)


@pytest.mark.parametrize("kind", ["deltalake", "iceberg"])
def test_kill9_between_every_two_steps_loses_and_repeats_nothing(tmp_path: Path, kind: str) -> None:
    assert soak(tmp_path, kind) == {"lost": 0, "dup": 0, "mismatched_rows": 0}


def test_the_audit_catches_commits_without_the_position(tmp_path: Path) -> None:
    verdict = soak(tmp_path, "deltalake", "--mutate")
    assert verdict["dup"] > 0 and verdict["lost"] == 0, verdict
