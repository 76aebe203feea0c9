"""The 23ai archived logs through the Extract's own parts: Oracle records -> the Extract's
logical change records (engine/extract/oracle_source.py) -> its transaction cache -> its
trail encoding and writer -> a trail that Logdump reads. The trail holds exactly the one
transaction OpenLogReplicator and LogMiner report."""

from __future__ import annotations

import io
import json
from pathlib import Path

from engine.changes import Kind
from engine.extract.cache import TransactionCache
from engine.extract.oracle_source import OracleLcrs, record_end, table_def
from engine.extract.tasks.assemble import stream_encoded
from engine.logdump.dump import dump_files
from engine.logdump.views import DisplayOptions
from engine.redo import dictionary, framing
from engine.trail.writer import TrailWriter
from tests.redo.corpus import CHECKPOINT, LOG15, LOG16, need


def _trail(tmp_path: Path) -> tuple[Path, list[str], int]:
    dic = dictionary.load(need(CHECKPOINT))
    warns: list[str] = []
    src = OracleLcrs(
        dic, lambda t: t.owner == "OLR_TEST", thread=1, block_size=512, warn=warns.append
    )
    cache = TransactionCache(tmp_path / "tmp")
    writer = TrailWriter.open(tmp_path / "dirdat" / "lt", durable=False)
    for t in src.miner.tables.values():
        writer.define_table(table_def(t))
    written = 0
    for log in (LOG15, LOG16):
        data = need(log).read_bytes()
        for rec in framing.iter_records(data):
            assert record_end(rec, 512) > rec.rba.block * 512 + rec.rba.offset
            for lcr in src.lcrs(rec):
                if lcr.kind != Kind.COMMIT:
                    cache.hold(lcr)
                else:
                    done = cache.commit(lcr.xid)
                    if done is None or not done[1]:
                        continue
                    _txn, rows = done
                    out = [d for d, _io in stream_encoded(lcr.xid, lcr.scn, lcr.time_us, rows)]
                    writer.append_transaction(
                        b"".join(out), len(out), {r.table for r in rows}, lcr.time_us, str(lcr.scn)
                    )
                    written += 1
    writer.close()
    return tmp_path / "dirdat", warns, written


def test_the_fixture_through_the_extracts_parts_to_a_trail(tmp_path: Path) -> None:
    dirdat, warns, written = _trail(tmp_path)
    assert warns == [] and written == 1
    files = sorted(dirdat.iterdir())
    buf = io.StringIO()
    dump_files(
        files, buf, as_json=True, options=DisplayOptions(ghdr=True, detail="ON", fileheader="OFF")
    )
    recs = [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]
    rows = [r for r in recs if r["io_type"] not in (None, 170)]  # not the header, not metadata
    assert len(rows) == 1, recs
    row = rows[0]
    assert (row["op"], row["table"], row["trans_ind"], row["checksum"]) == (
        "Insert",
        "OLR_TEST.TEST_CDC",
        3,
        "ok",
    )
    assert row["columns"] == {"ID": "1", "NAME": "hello world"}
    assert row["tokens"] == {
        "ORAROWID": "AAARwWAAYAAAAAOAAA",
        "LOGCSN": "2267707",
        "TRANID": "10.12.572",
    }
    assert row["io_time"] == "2026-03-07 01:44:40.000000"
