"""The soak's apply audit on PostgreSQL (tests/harness/soak/audit.py): the PL/pgSQL trigger records
every applied change, whole, and a change applied twice shows although the table is right."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.embedded.database import Database
from engine.embedded.workload import WorkloadSpec, parse_mix, run_workload
from engine.home.layout import Home
from tests.harness import pipeline_home as ph
from tests.harness.soak.audit import check_audit, install_audit, table_mismatches
from tests.harness.soak.expected import read_source

pytestmark = pytest.mark.postgres


def test_postgres_audit_counts_each_apply(tmp_path: Path, pg_url: str) -> None:
    spec = ph.PipelineSpec(pg_url, ph.workload_tables(1))
    home = Home(tmp_path / "home")
    ph.prepare_home(home, spec)
    install_audit(home, spec)
    with Database(home.dirdb / "SRC") as db:
        run_workload(
            db,
            WorkloadSpec(
                tables=1, transactions=30, rows_per_txn=4, sessions=2, initial_rows=5,
                mix=parse_mix("insert=40,update=40,delete=20"),
            ),
        )  # fmt: skip
    source = read_source(home.dirdb / "SRC", ["WL"])
    table = spec.tables[0].target("postgresql")
    names = [c for c, _ in spec.tables[0].columns]
    with ph.target_connection(home, spec) as conn:
        for change in (c for t in source.txns for c in t.changes):  # as a Replicat would
            row = dict(change.row)
            if change.op == "INSERT":
                marks = ", ".join("%s" for _ in names)
                conn.execute(
                    f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})",
                    [row[n] for n in names],
                )
            elif change.op == "UPDATE":
                conn.execute(
                    f"UPDATE {table} SET amount = %s, status = %s WHERE id = %s",
                    (row["AMOUNT"], row["STATUS"], row["ID"]),
                )
            else:
                conn.execute(f"DELETE FROM {table} WHERE id = %s", (row["ID"],))
    verdict = check_audit(home, spec, source)
    assert verdict.mismatches == 0 and verdict.applied == source.changes > 0, verdict
    assert table_mismatches(home, spec) == 0
    last = {(c.table, c.row[0][1]): c for t in source.txns for c in t.changes}
    update = next(c for c in last.values() if c.op == "UPDATE")  # a row it leaves behind
    row = dict(update.row)
    with ph.target_connection(home, spec) as conn:  # the same update once more
        conn.execute(
            f"UPDATE {table} SET amount = %s, status = %s WHERE id = %s",
            (row["AMOUNT"], row["STATUS"], row["ID"]),
        )
    verdict = check_audit(home, spec, source)
    assert (verdict.dup, verdict.lost) == (1, 0), verdict
