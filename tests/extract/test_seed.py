"""Seed 002 acceptance: its seven real Oracle redo dumps, imported and captured on Spark,
give the trail records its TrailAnalyzer listings show.

Two differences come from the dumps themselves, not from capture, and are asserted as such:
- the update dumps carry no supplemental key columns, so FieldComp records hold the changed
  columns only (each 12 bytes shorter than the seed's, which has the key too);
- the direct-path block dump omits ``col 4`` of its third row, so that row's UNIVERSITY is
  NULL here (and its record 10 bytes shorter).
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typer.testing import CliRunner

from engine.extract.keyfetch import KEY_FETCH_TOKEN
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from engine.trail.codec import pack_tokens, user_token, user_tokens
from engine.trail.layout import IOType
from engine.trail.reader import TrailReader
from ggsci.cli import build_app
from params.check import check_text

from .test_keyfetch import plant_updated_rows
from .test_miner import import_seed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "trail"))
from trail_seed002 import EXAMPLES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

VECTORS = Path(__file__).resolve().parents[1] / "source" / "vectors"
KEY_ENTRY = 12  # 2+2+2+2 bytes of entry header + "1010"


def _captured(root: Path, home: Home, spark: SparkSession) -> tuple[list[Any], ExtractRun]:
    """(record, trail entry) of the Spark Extract capturing the seed database ``root``,
    and the run."""
    model = check_text(
        # NOCHECKSUM: the seed's record sizes (a checksum adds 8 bytes to each record)
        "EXTRACT seedx\nSOURCEDB seed\nEXTTRAIL ./dirdat/sx, NOCHECKSUM\nTABLE US03.STUDENT;\n"
    ).model
    run = ExtractRun(home, model, None, lambda *_: None, spark=spark, durable=False)
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    reader = TrailReader(str(home.root / "dirdat" / "sx"))
    return [(rec, entry) for entry, rec in reader.records()], run


def test_seed_dumps_captured_match_the_seed_trail(tmp_path: Path, spark: SparkSession) -> None:
    home = Home(tmp_path / "home")
    home.create_subdirs()
    got, run = _captured(import_seed(home.dirdb), home, spark)
    expected = [e for name in EXAMPLES for e in EXAMPLES[name]]
    assert len(got) == len(expected) == 15
    for (rec, _), exp in zip(got, expected, strict=True):
        want = exp.record
        assert (rec.io_type, rec.table, rec.trans_ind) == (want.io_type, want.table, want.trans_ind)
        assert (rec.rowid, rec.logcsn, rec.tranid) == (want.rowid, want.logcsn, want.tranid)
        if want.io_type == IOType.FIELDCOMP:
            # no row to fetch the key from in this source: the record says so (a token)
            assert rec.columns == tuple(c for c in want.columns if c[0] != 0)
            assert user_tokens(rec) == [(KEY_FETCH_TOKEN, "MISSINGROW")]
        elif rec.rowid == "AAASrPAAEAAAARgAAC":
            assert dict(rec.columns) == {**dict(want.columns), 4: None}
        else:
            assert rec.columns == want.columns
    # Record lengths, from the trail itself (next record at rba + length).
    lengths = [entry.length for _, entry in got]
    want_lengths = []
    for exp in expected:
        n = exp.length
        if exp.record.io_type == IOType.FIELDCOMP:
            n -= KEY_ENTRY
            n += len(pack_tokens([user_token(KEY_FETCH_TOKEN, "MISSINGROW")]))
        if exp.record.rowid == "AAASrPAAEAAAARgAAC":
            n -= len("Manchester")
        want_lengths.append(n)
    assert lengths == want_lengths
    assert json.dumps(run.capture.stats.by_op, sort_keys=True) == (
        '{"Delete": 4, "FieldComp": 4, "Insert": 7}'
    )
    # The same through `ggsci logdump FILE --json`, as a user or a script reads it.
    result = CliRunner().invoke(
        build_app(), ["logdump", str(home.root / "dirdat" / "sx000000000"), "--json"]
    )
    assert result.exit_code == 0, result.output
    dumped = [json.loads(ln) for ln in result.output.splitlines() if ln.strip()]
    rows = [d for d in dumped if d["op"] not in ("FileHeader", "Metadata")]
    assert [d["length"] for d in rows] == want_lengths
    assert [d["tokens"]["ORAROWID"] for d in rows] == [e.record.rowid for e in expected]
    assert [d["tokens"].get("LOGCSN") for d in rows] == [e.record.logcsn for e in expected]
    assert [d["trans_ind"] for d in rows] == [e.record.trans_ind for e in expected]
    assert rows[0]["columns"]["STUDENT_KEY"] == "1011" and rows[0]["table"] == "US03.STUDENT"


def test_seed_002_trail_with_fetched_keys(tmp_path: Path, spark: SparkSession) -> None:
    """With the updated rows in the source, the Extract on Spark writes seed 002's update
    records with their key fetched by ROWID, at the seed's lengths."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    got, _ = _captured(plant_updated_rows(import_seed(home.dirdb)), home, spark)
    expected = [e for name in EXAMPLES for e in EXAMPLES[name]]
    fieldcomp = [(r, e) for (r, e), x in zip(got, expected, strict=True) if x.record.io_type == 15]
    want = [x for x in expected if x.record.io_type == 15]
    assert [r.columns for r, _ in fieldcomp] == [x.record.columns for x in want]
    assert [e.length for _, e in fieldcomp] == [x.length for x in want]
    assert all(user_tokens(r) == [] for r, _ in fieldcomp)  # fetched: no GGS_KEY_FETCH
