"""The binary record payload: round-trips, truncation and corruption handling."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.embedded.dump_parse import parse_dump
from engine.embedded.errors import RedoCorruptError
from engine.embedded.redo_codec import decode_record, encode_record
from engine.redo.model import RedoRecord

VECTORS = Path(__file__).parent / "vectors"
RECORDS: list[RedoRecord] = [
    r
    for p in sorted(VECTORS.glob("*.dump"))
    for r in parse_dump(p.read_text().splitlines()).records
]
PAYLOADS = [encode_record(r) for r in RECORDS]


def test_every_seed_record_round_trips() -> None:
    assert [decode_record(p) for p in PAYLOADS] == RECORDS


def test_every_truncation_is_corrupt() -> None:
    payload = PAYLOADS[0]
    for cut in range(len(payload)):
        with pytest.raises(RedoCorruptError):
            decode_record(payload[:cut])


def test_trailing_bytes_and_ranges() -> None:
    payload = PAYLOADS[1]
    with pytest.raises(RedoCorruptError):
        decode_record(payload + b"\0")
    framed = b"xx" + payload + b"yy"
    assert decode_record(framed, 2, 2 + len(payload)) == RECORDS[1]
    with pytest.raises(RedoCorruptError):
        decode_record(framed, 2, len(framed) + 5)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(PAYLOADS))), st.data())
def test_corrupted_payloads_fail_cleanly(i: int, data: st.DataObject) -> None:
    payload = bytearray(PAYLOADS[i])
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(payload) - 1))
        payload[at] = data.draw(st.integers(0, 255))
    """Damaged bytes either still decode to a record or raise RedoCorruptError, never
    another exception (a reader must not crash with a Python error on a bad log)."""
    try:
        rec = decode_record(bytes(payload))
    except RedoCorruptError as exc:
        assert exc.code == "GGS-SRC-0302"
    else:
        assert isinstance(rec, RedoRecord)


def test_records_pickle_for_spark_tasks() -> None:
    import pickle

    from engine.redo.model import LocatedRecord

    located = [
        LocatedRecord(r, 7, 512 * (i + 1) + 16, 512 * (i + 2)) for i, r in enumerate(RECORDS)
    ]
    assert pickle.loads(pickle.dumps(located)) == located
