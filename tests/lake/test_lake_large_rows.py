"""The lakehouse Replicat reads a row too large for one trail record (continued records,
seed 003) joined from its pieces, like every trail reader (issue 29)."""

from __future__ import annotations

from pathlib import Path

from lakehelp import drain, lake_home, lake_run, read_delta
from replicat_helpers import ins, txn_records, upd, write_trail

from engine.trail.layout import IOType
from engine.trail.reader import FileCursor


def test_a_continued_row_reaches_a_delta_table(tmp_path: Path) -> None:
    home = lake_home(tmp_path / "home")
    trail = home.root / "dirrmt" / "bb"
    big = "é" * 90_000  # 180 KB of UTF-8: three pieces
    write_trail(trail, [txn_records(100, [ins(1, big), ins(2)]), txn_records(101, [upd(2, 9)])])
    with FileCursor(next(trail.parent.glob("bb*")), pieces=True) as cursor:
        kinds = [e.record.io_type for e in cursor if hasattr(e.record, "io_type")]
    assert kinds.count(IOType.RECORD_FRAGMENT) == 2
    r, _seen = lake_run(home, "deltalake", "MAP hr.emp, TARGET hr.emp, KEYCOLS (ID);", ops=4)
    drain(r)
    rows = read_delta(home.root / "lake" / "hr" / "emp")
    assert rows == [
        {"ID": "1", "NAME": big + "1", "SAL": "1"},
        {"ID": "2", "NAME": "n2", "SAL": "9"},
    ]
