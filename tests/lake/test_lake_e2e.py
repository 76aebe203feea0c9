"""End to end from the embedded source: workload ==> Extract ==> pump ==> Replicat into Delta
and Iceberg tables as real processes under a Manager, each source table applied by key and
kept as history; both compared row by row with the source (read back with deltalake /
pyiceberg), the history holding every committed change exactly once (engine/soak's audit
comparison); heartbeats in the checkpoint database so that LAG ... GLOBAL shows the path."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
from lakepipe import (
    canonical,
    history_verdict,
    lake_rows,
    lake_spec,
    prepare_lake_home,
    source_canonical,
)
from pipeline import add_and_start, ggsci, report, shutdown, wait_until, workload

from tests.harness import pipeline_home as ph

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("kind", ["deltalake", "iceberg"])
def test_pipeline_into_lakehouse_tables_row_by_row(tmp_path: Path, kind: str) -> None:
    spec = lake_spec(heartbeat=True)
    location = "./lake"
    home = prepare_lake_home(tmp_path / "home", spec, kind, location)
    out = ggsci(home, *ph.target_commands(spec))
    assert "Successfully created checkpoint table gg.chkpt." in out, out
    try:
        out = add_and_start(home, spec)
        assert "REPLICAT REP1 starting" in out, out
        workload(home, seed=7, transactions=120)

        def in_sync() -> bool:
            for t in spec.tables:
                got = lake_rows(home, kind, location, t.schema, t.name)
                if got is None or canonical(got) != source_canonical(home, spec, t):
                    return False
            return True

        try:
            wait_until(in_sync, "the lakehouse tables to equal the source")
        except AssertionError:
            raise AssertionError(report(home, "REP1")) from None
        with contextlib.suppress(AssertionError):  # its table commit may be the batch's last
            wait_until(lambda: history_verdict(home, kind, location, spec).mismatches == 0,
                       "the history to hold every change", 20)  # fmt: skip
        verdict = history_verdict(home, kind, location, spec)
        assert (verdict.lost, verdict.dup, verdict.out_of_order) == (0, 0, 0), verdict
        out = ggsci(home, "DBLOGIN USERID gg@./dirchk/lake.db", "LAG REPLICAT rep1, GLOBAL",
                    "SEND REPLICAT rep1, STATUS")  # fmt: skip
        lines = out.splitlines()
        at = lines.index("Lag Information From Heartbeat Table")
        assert re.fullmatch(r"-?\d+\.\d\ds +\S.* +SRC +\S+ +EXT1 ==> PMP1 ==> REP1",
                            lines[at + 2]), out  # fmt: skip
        assert f"Handler lake ({kind})" in out, out
        request = "OPTIMIZE" if kind == "deltalake" else "EXPIRESNAPSHOTS RETAINHOURS 0"
        out = ggsci(home, f"SEND REPLICAT rep1, {request}")
        done = "optimized" if kind == "deltalake" else "snapshots expired"
        assert out.count(done) == 4 and "WL.WL_T01: " in out and "HIST.WL_T02: " in out, out
        assert in_sync()
    finally:
        shutdown(home, spec)
