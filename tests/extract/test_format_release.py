"""The Extract writes its EXTTRAIL's FORMAT RELEASE: 12.1's file header and no DDR/TDR
records, on real Spark (the capture path: append_transaction after define_table)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from engine.extract.run import ExtractRun
from engine.home.layout import Home
from engine.trail.metadata import metadata_kind
from engine.trail.model import TrailRecord
from engine.trail.reader import TrailReader
from engine.trail.releases import RELEASES
from params.check import check_text

from .conftest import run_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRM = "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa, FORMAT RELEASE 12.1\nTABLE hr.*;\n"


def test_extract_writes_its_format_release(home: Home, source: Any, spark: SparkSession) -> None:
    _, open_db = source
    with open_db() as db:
        run_sql(
            db,
            [
                ("s1", "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20))"),
                ("s1", "INSERT INTO hr.emp VALUES (1, 'ann')"),
                ("s1", "INSERT INTO hr.emp VALUES (2, 'bob')"),
                ("s1", "COMMIT"),
            ],
        )
    result = check_text(PRM)
    assert not result.errors, result.errors
    run = ExtractRun(home, result.model, None, lambda c, s, t: None, spark=spark, durable=False)
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    levels, kinds = [], []
    for e in TrailReader(str(home.root / "dirdat" / "aa")):
        if isinstance(e.record, TrailRecord):
            kinds.append(metadata_kind(e.record) or e.record.op_name)
        else:
            levels.append(e.record.compatibility)
    assert set(levels) == {RELEASES["12.1"].level}
    assert kinds.count("Insert") == 2 and "TDR" not in kinds and "DDR" not in kinds
