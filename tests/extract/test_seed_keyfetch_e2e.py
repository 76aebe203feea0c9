"""Seed 002 end to end: the Extract on Spark, with the updated rows in the source, writes
the seed's update records with their key (fetched by ROWID), at the seed's lengths."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from engine.extract.engine import ExtractRun
from engine.home import Home
from engine.source.database import Database
from engine.source.ids import RowId
from engine.trail.reader import TrailReader
from params.check import check_text

from .test_keyfetch import UPDATED
from .test_miner import import_seed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "trail"))
from trail_seed002 import EXAMPLES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def test_seed_002_trail_with_fetched_keys(tmp_path: Path, spark: SparkSession) -> None:
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root = import_seed(home.dirdb)
    with Database(root) as db:
        table = db.table("US03", "STUDENT")
        for rowid, key in UPDATED.items():
            r = RowId.parse(rowid)
            db.conn.execute(
                f'INSERT INTO "{table.sqlite_name}" ("_rid", "STUDENT_KEY") VALUES (?, ?)',
                ((r.block << 16) | r.slot, key),
            )
        db.conn.commit()
    model = check_text(
        "EXTRACT seedx\nSOURCEDB seed\nEXTTRAIL ./dirdat/sx, NOCHECKSUM\nTABLE US03.STUDENT;\n"
    ).model
    run = ExtractRun(home, model, None, lambda *_: None, spark=spark, durable=False)
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    got = [(rec, entry) for entry, rec in TrailReader(str(home.root / "dirdat" / "sx")).records()]
    expected = [e for name in EXAMPLES for e in EXAMPLES[name]]
    fieldcomp = [(r, e) for (r, e), x in zip(got, expected, strict=True) if x.record.io_type == 15]
    want = [x for x in expected if x.record.io_type == 15]
    assert [r.columns for r, _ in fieldcomp] == [x.record.columns for x in want]
    assert [e.length for _, e in fieldcomp] == [x.length for x in want]
