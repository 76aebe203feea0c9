"""The workload's redo and tables, byte for byte, against recorded hashes.

The fast path (:mod:`engine.embedded.bulk`) was rewritten for speed with these hashes, recorded
before the rewrite, held fixed: they pin what a seed produces, every log file's bytes
(records, RBAs, block headers, switches) and every table's rows. The generic path (change
vector dataclasses, :mod:`engine.embedded.dml`) gives the same bytes. A deliberate change of
what the workload writes regenerates them with ``--regen-golden`` and says why in its
commit. The clock is manual: it stands still, or (``clock``) moves at each reading.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.workload import WorkloadSpec, parse_mix, run_workload
from tests.harness import golden

GOLDEN = Path(__file__).parent / "golden" / "workload_redo.json"

SCENARIOS: dict[str, dict[str, Any]] = {
    "oltp": {"transactions": 300, "initial_rows": 300},
    "rollbacks": {
        "transactions": 250,
        "rows_per_txn": 6,
        "initial_rows": 60,
        "rollback_ratio": 0.2,
    },
    "array": {
        "transactions": 120,
        "rows_per_txn": 30,
        "initial_rows": 60,
        "array": 7,
        "rollback_ratio": 0.1,
    },
    "long": {
        "transactions": 150,
        "rows_per_txn": 5,
        "initial_rows": 40,
        "long_txns": 3,
        "long_age": 60,
    },
    "deletes": {
        "transactions": 200,
        "rows_per_txn": 12,
        "initial_rows": 100,
        "mix": parse_mix("insert=20,update=40,delete=40"),
        "seed": 7,
        "sessions": 5,
        "tables": 3,
    },
    "switches": {"transactions": 400, "initial_rows": 200, "seed": 3, "log_bytes": 1 << 20},
    # a clock that moves at each reading pins where records and rows read it
    "clock": {"transactions": 200, "initial_rows": 100, "rollback_ratio": 0.2, "clock_step": 0.001},
}


def _fingerprint(tmp: Path, scenario: dict[str, Any]) -> dict[str, Any]:
    spec = dict(scenario)
    log_bytes = spec.pop("log_bytes", 64 * 1024 * 1024)
    step = spec.pop("clock_step", 0.0)
    root = create_database(tmp, "WL", threads=2, log_bytes=log_bytes)
    db = Database(root, clock=ManualClock(datetime(2024, 1, 1), step=step))
    try:
        run_workload(
            db, WorkloadSpec(**spec), wall=iter(range(10**9)).__next__, sleep=lambda s: None
        )
        redo = hashlib.sha256()
        logs = db.list_logs()
        for info in logs:
            redo.update(f"{info.thread}/{info.sequence}/{info.size}\n".encode())
            redo.update(info.path.read_bytes())
        rows = hashlib.sha256()
        for t in sorted(db.dictionary.tables.values(), key=lambda t: t.qualified):
            rows.update(repr(db.rows(t)).encode())
        return {"logs": len(logs), "redo": redo.hexdigest(), "rows": rows.hexdigest()}
    finally:
        db.close()


def test_workload_redo_matches_the_recorded_hashes(tmp_path: Path) -> None:
    got = {name: _fingerprint(tmp_path / name, s) for name, s in SCENARIOS.items()}
    if golden.regenerating():
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    want = json.loads(GOLDEN.read_text())
    bad = [name for name in SCENARIOS if got[name] != want.get(name)]
    assert not bad, f"workload output changed for {bad} (--regen-golden if on purpose)"


@pytest.mark.parametrize("name", sorted(set(SCENARIOS) - {"clock"}))
def test_generic_path_matches_the_recorded_hashes(tmp_path: Path, name: str) -> None:
    """The change-vector path gives the same bytes: the hashes are not the fast path's own
    (not with a moving clock: the generic path reads the clock at other points)."""
    want = json.loads(GOLDEN.read_text())[name]
    assert _fingerprint(tmp_path, {**SCENARIOS[name], "bulk": False}) == want
