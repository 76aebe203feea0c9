"""Continued records (seed 003: Continued, RecCount, IOType 161 RecordFragment): a row too
large for one record is split into pieces and joined again by every reader; Logdump shows
the pieces; a truncated or damaged continuation is a clear error (engine/trail/continued.py)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.logdump import DisplayOptions
from engine.logdump.dump import dump_files
from engine.trail import (
    CorruptRecordError,
    IncompleteRecordError,
    RecordStream,
    TrailReader,
    TrailRecord,
    TrailWriter,
    decode_any,
    decode_exact,
    encode_record,
)
from engine.trail.codec import decode_piece, summarize
from engine.trail.continued import span
from engine.trail.errors import TrailError
from engine.trail.layout import MAX_PIECE_LENGTH, MAX_SEGMENT_LENGTH, IOType, TransInd
from engine.trail.recovery import scan_file
from engine.trail.txreader import TransactionReader
from engine.trail.writer import count_records, split_records
from tests.harness import golden

GOLDEN = Path(__file__).parent / "golden"
CREATED = 1_364_774_400_000_000  # 2013-04-01 00:00:00

# values around the limits: a segment, a piece, and well past both; multi-byte UTF-8 too
_sizes = st.sampled_from([0, 1, 100, MAX_SEGMENT_LENGTH - 1, MAX_SEGMENT_LENGTH,
                          MAX_SEGMENT_LENGTH + 1, 70_000, 140_000])  # fmt: skip
_value = st.one_of(
    st.none(),
    st.builds(lambda n, c: c * n, _sizes, st.sampled_from(["x", "é", "€", "\U0001f600"])),
)
_columns = st.lists(_value, min_size=1, max_size=4).map(
    lambda vs: tuple((i * 2, v) for i, v in enumerate(vs))
)
large_records = st.builds(
    TrailRecord,
    io_type=st.sampled_from([3, 5, 15, 115, 134, 135]),
    table=st.sampled_from(["HR.BIG", "S" * 300]),
    columns=_columns,
    trans_ind=st.integers(0, 3),
    before_after=st.sampled_from("AB"),
    io_time_us=st.integers(0, 2**62),
    audit_rba=st.integers(0, 2**32 - 1),
    audit_pos=st.integers(0, 2**64 - 1),
    rowid=st.none() | st.just("AAASrPAAEAAAAQ2AAK"),
    logcsn=st.none() | st.just("1234567"),
    tranid=st.none() | st.just("10.2.999"),
    before_columns=st.one_of(st.just(()), _columns),
    extra_tokens=st.lists(
        st.tuples(st.just(b"U"), st.integers(0, 1), st.binary(max_size=3000)), max_size=3
    ).map(tuple),
)


def _pieces(data: bytes) -> list[TrailRecord]:
    out, pos = [], 0
    while pos < len(data):
        record, length = decode_piece(data, pos)
        assert isinstance(record, TrailRecord) and length <= MAX_PIECE_LENGTH
        out.append(record)
        pos += length
    return out


@settings(max_examples=60, deadline=None)
@given(large_records)
def test_split_and_join_round_trip(record: TrailRecord) -> None:
    """Any row, however large: pieces of at most MAX_PIECE_LENGTH, numbered and flagged as
    seed 003 says, joined back to the same row, encoded again to the same bytes."""
    data = encode_record(record)
    assert decode_exact(data) == record
    assert encode_record(decode_exact(data)) == data
    pieces = _pieces(data)
    assert count_records(data) == len(pieces) and count_records(data, rows=True) == 1
    assert split_records(data + data) == [data, data]
    if len(pieces) == 1:
        assert pieces[0].segment is None and not pieces[0].continued
        return
    assert pieces[0].io_type == record.io_type and pieces[0].logcsn == record.logcsn
    assert [p.io_type for p in pieces[1:]] == [IOType.RECORD_FRAGMENT] * (len(pieces) - 1)
    assert [p.rec_count for p in pieces] == list(range(1, len(pieces) + 1))
    assert [p.continued for p in pieces] == [True] * (len(pieces) - 1) + [False]
    assert {(p.table, p.trans_ind, p.io_time_us, p.audit_pos) for p in pieces} == {
        (record.table, record.trans_ind, record.io_time_us, record.audit_pos)
    }
    assert b"".join(encode_record(p) for p in pieces) == data  # Logdump SAVE's copy
    summary = summarize(data)
    assert summary is not None and summary.length == len(data)


@settings(max_examples=15, deadline=None)
@given(st.lists(large_records, min_size=1, max_size=3), st.sampled_from([7, 4096, 65536]))
def test_a_stream_joins_rows_fed_in_any_chunking(batch: list[TrailRecord], chunk: int) -> None:
    blob = b"".join(encode_record(r) for r in batch)
    stream = RecordStream()
    got: list[object] = []
    for start in range(0, len(blob), chunk):
        stream.feed(blob[start : start + chunk])
        got.extend(d.record for d in stream)
    assert got == batch and stream.pending == 0


BIG = TrailRecord(
    io_type=IOType.INSERT,
    table="HR.BIG",
    columns=((0, "1"), (1, "v"), (2, "x" * 80_000)),
    rowid="AAASrPAAEAAAAQ2AAK",
    logcsn="4711",
    tranid="3.7.120",
    io_time_us=CREATED,
    audit_rba=3,
    audit_pos=1024,
)


def test_truncated_continuation_waits_and_a_missing_piece_is_named() -> None:
    data = encode_record(BIG)
    first = decode_piece(data)[1]
    for cut in (first - 1, first, first + 4, len(data) - 1):
        with pytest.raises(IncompleteRecordError):
            decode_any(data[:cut])
    # the second piece gone: the third stands where it must be
    second = first + decode_piece(data, first)[1]
    damaged = data[:first] + data[second:] + encode_record(BIG)
    with pytest.raises(CorruptRecordError, match="record 2 of it is missing"):
        decode_any(damaged)
    # another row where the base record's continuation must be
    small = encode_record(TrailRecord(io_type=5, table="HR.BIG", columns=((0, "1"),)))
    with pytest.raises(CorruptRecordError, match=r"RecCount 1 .* where a RecordFragment"):
        decode_any(data[:first] + small)
    # a fragment met first (a position inside a row)
    with pytest.raises(CorruptRecordError, match="without its base record"):
        decode_any(data, first)
    with pytest.raises(CorruptRecordError, match="without its base record"):
        summarize(data, first)
    # a piece's bytes changed inside a column entry: the joined area says so
    bad = bytearray(data)
    bad[first - 200 : first - 4] = b"\xff" * 196  # the end of the base record's D area
    with pytest.raises(CorruptRecordError):
        decode_any(bytes(bad))


def _write(root: Path, records: list[bytes], checksum: bool = True) -> Path:
    with TrailWriter.open(
        root / "dirdat" / "aa", clock=lambda: CREATED, durable=False, checksum=checksum,
        header_info={"Producer": "ggsci extract"},
    ) as writer:  # fmt: skip
        for data in records:
            writer.append(data)
    return root / "dirdat" / "aa000000000"


def test_trail_round_trip_with_checksums_and_a_torn_row_is_recovered(tmp_path: Path) -> None:
    """Written sealed (a checksum in every piece), read back joined by the reader and the
    transaction reader; a row torn by a crash is cut by the writer's recovery; a piece
    with a changed byte fails its checksum, naming the RBA."""
    small = TrailRecord(io_type=5, table="HR.BIG", columns=((0, "2"),), trans_ind=TransInd.END)
    first = replace(BIG, trans_ind=TransInd.BEGIN)
    path = _write(tmp_path, [encode_record(first), encode_record(small)])
    rows = [r for _, r in TrailReader(tmp_path / "dirdat" / "aa").records()]
    assert rows == [first, small]
    (txn,) = TransactionReader(tmp_path / "dirdat" / "aa").poll()
    assert txn.records == (first, small)
    # torn: the trail ends inside the third piece of a new row
    whole = path.read_bytes()
    torn = encode_record(replace(BIG, trans_ind=TransInd.WHOLE))
    path.write_bytes(whole + torn[: len(torn) - 100])
    assert scan_file(path, 0).valid_end == len(whole)
    with TrailWriter.open(tmp_path / "dirdat" / "aa", durable=False) as writer:
        assert writer.recovery is not None and writer.recovery.action == "none"
        assert writer.recovery.last_transaction is not None
        assert writer.recovery.last_transaction.logcsn == "4711"
    assert len(path.read_bytes()) == len(whole)  # the torn row's bytes cut
    assert [r for _, r in TrailReader(tmp_path / "dirdat" / "aa").records()] == [first, small]
    # a changed byte in the second piece: its checksum says so
    damaged = bytearray(whole)
    at = whole.index(b"x" * 100, whole.index(b"HR.BIG") + 70_000 // 2)
    damaged[at] = ord("y")
    path.write_bytes(bytes(damaged))
    with pytest.raises(Exception, match="Checksum mismatch"):
        list(TrailReader(tmp_path / "dirdat" / "aa").records())


def test_logdump_shows_each_piece_golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _write(Path(), [encode_record(BIG)], checksum=False)
    out = io.StringIO()
    count = dump_files([Path("dirdat/aa000000000")], out, options=DisplayOptions())
    assert count == 1 + 2  # the file header and the row's two pieces
    golden.check(GOLDEN / "logdump_continued.txt", out.getvalue())
    assert "RecordFragment" in out.getvalue() and "Continued row, piece 2" in out.getvalue()


def test_logdump_count_takes_a_continued_row_as_one_transaction(tmp_path: Path) -> None:
    from engine.logdump.views import count_lines
    from engine.trail.reader import FileCursor

    path = _write(tmp_path, [encode_record(BIG)])
    with FileCursor(path, 0, verify=False, pieces=True) as cursor:
        text = "\n".join(count_lines(str(path), cursor))
    assert "RecordFragment                1" in text and "Average of 1 Transactions" in text, text


_ROW = encode_record(BIG)
_STARTS = [0, decode_piece(_ROW)[1], len(_ROW), len(_ROW) + decode_piece(_ROW)[1]]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_STARTS), st.integers(-8, 120), st.integers(0, 255)),
        min_size=1,
        max_size=4,
    ),
    st.integers(0, 2 * len(_ROW)),
)
def test_damaged_continued_rows_are_trail_errors(
    flips: list[tuple[int, int, int]], cut: int
) -> None:
    """Bytes changed in and near the pieces' headers, any length: a trail error (or a row),
    never another exception."""
    data = bytearray(_ROW + _ROW)
    for start, delta, value in flips:
        data[max(0, start + delta)] = value
    damaged = bytes(data[:cut])
    for look in (decode_any, summarize, span, split_records):
        with contextlib.suppress(TrailError):
            look(damaged)


def test_a_missing_piece_is_the_one_line_pump_and_replicat_abend_with(tmp_path: Path) -> None:
    """A trail whose continued row lost a piece (a copy gone wrong): the transaction reader
    (pump, Replicat, lakehouse Replicat) stops with one line naming the file and the RBA."""
    from engine.trail.reader import read_error_text

    whole = encode_record(BIG)
    first = decode_piece(whole)[1]
    later = encode_record(replace(BIG, tranid="3.7.121"))
    path = _write(tmp_path, [whole, later], checksum=False)
    data = path.read_bytes()
    at = data.index(whole[:first])
    path.write_bytes(data[: at + first] + data[at + len(whole) :])  # piece 2 of 2 gone
    with pytest.raises(CorruptRecordError) as info:
        list(TransactionReader(tmp_path / "dirdat" / "aa").poll())
    line = read_error_text(info.value)
    assert "\n" not in line and "record 2 of it is missing" in line, line
    assert str(path) in line and f"RBA {at}" in line, line
