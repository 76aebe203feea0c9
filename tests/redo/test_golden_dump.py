"""The dump text and JSON of a log written with the framing writer and the vector tables:
seed 002's single-row insert (US03.STUDENT 1011 'Jordan' ...) and its commit, in both byte
orders and both vector header layouts. Golden files: tests/redo/golden/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.redo import framing as F
from engine.redo import layout as L
from engine.redo import vectors as V
from engine.redo.codecs import encode_number
from engine.redo.dumptext import dump_lines, record_json
from tests.harness.golden import check
from tests.redo import build

GOLDEN = Path(__file__).parent / "golden"
XID = V.Xid(4, 0x0B, 0x356)  # seed 002: xid 0x0004.00b.00000356


def seed_log(order: L.Order, layout: str) -> bytes:
    con = 3 if layout == "12c" else 0
    cols = [encode_number(1011), b"Jordan", b"Sherwood", b"M", b"Manchester", b"Chemistry",
            encode_number(2013), encode_number(9000)]  # fmt: skip
    time = L.to_redo_time(2013, 3, 31, 23, 59, 58)
    insert = F.build_record(
        order, 0x18BCDE, 1,
        [build.begin(order, XID, con, layout), build.insert_undo(order, XID, 76495, 0x01000436, 10, con, layout),
         build.irp(order, XID, 76495, 0x01000436, 10, cols, con, layout), build.session(order, "US03", con, layout)],
        F.Lwn(0, 1, 0, 0x18BCDE, time),
    )  # fmt: skip
    end = F.build_record(order, 0x18BCDF, 1, [build.commit(order, XID, False, con, layout)])
    version = 0x13000000 if layout == "12c" else 0x0B200300
    header = F.LogHeader(
        order, 512, 0, version, 1, "ORCL", 1, 0x44, 810000000, 1, 0x18BC00, 0x18BD00, time, time, 0
    )
    return F.build_log(header, [[insert, end]])


@pytest.mark.parametrize(("order", "layout"), [("<", "12c"), (">", "12c"), ("<", "11g")])
def test_dump_of_a_written_log(order: L.Order, layout: str) -> None:
    data = seed_log(order, layout)
    h = F.read_header(data)
    assert (h.order, h.layout, h.sequence) == (order, layout, 0x44)
    recs = list(F.iter_records(data))
    text = "\n".join(dump_lines(recs, layout)) + "\n"
    js = "".join(json.dumps(record_json(r)) + "\n" for r in recs)
    name = f"seed_insert_{'le' if order == '<' else 'be'}_{layout}"
    check(GOLDEN / f"{name}.txt", text)
    check(GOLDEN / f"{name}.json", js)
    assert "fb: --H-FL-- cc: 8" in text and "login   username = US03" in text
    ch = [c for r in recs for c in V.row_changes(r)]
    assert [(c.op, c.xid, c.rowid, c.fb, c.supp_fb) for c in ch] == [
        ("11.2", XID, "AAASrPAAEAAAAQ2AAK", 0x2C, 0x1C)
    ]
