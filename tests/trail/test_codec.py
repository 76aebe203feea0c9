"""Codec properties: round trips, incremental feeding, truncation, corruption, limits."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trail_seed002 import ALL_RECORDS, EXAMPLES

from engine.trail import (
    CorruptRecordError,
    FileVersionError,
    IncompleteRecordError,
    RecordLimitError,
    RecordStream,
    TrailingBytesError,
    TrailRecord,
    decode_any,
    decode_exact,
    decode_file_header,
    decode_record,
    encode_file_header,
    encode_record,
    encode_row,
)
from engine.trail.fileheader import new_file_header
from engine.trail.layout import (
    COMPATIBILITY_LEVEL,
    MAX_PIECE_LENGTH,
    MAX_TABLE_NAME_LENGTH,
)
from engine.trail.model import FileHeader
from engine.trail.writer import count_records

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
columns = st.dictionaries(
    st.integers(min_value=0, max_value=0xFFFF), st.none() | text, max_size=12
).map(lambda d: tuple(sorted(d.items())))
rowids = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    min_size=18,
    max_size=18,
)
digits = st.text(alphabet="0123456789.", min_size=1, max_size=20)

records = st.builds(
    TrailRecord,
    io_type=st.sampled_from([3, 5, 10, 15, 100, 115, 170, 211]),
    table=st.text(min_size=1, max_size=60),
    columns=columns,
    trans_ind=st.integers(0, 3),
    before_after=st.sampled_from("AB"),
    io_time_us=st.integers(-(2**62), 2**62),
    audit_rba=st.integers(0, 2**32 - 1),
    audit_pos=st.integers(0, 2**64 - 1),
    format_type=st.sampled_from("RF"),
    partition=st.integers(0, 255),
    rec_count=st.integers(0, 0xFFFF),
    orig_node=st.integers(0, 255),
    undo_flag=st.integers(0, 255),
    syskey_len=st.integers(0, 255),
    continued=st.just(False),  # Continued is the writer's: Y only on a split row's pieces
    incomplete=st.integers(0, 255),
    rowid=st.none() | rowids,
    logcsn=st.none() | digits,
    tranid=st.none() | digits,
    before_columns=columns,
    extra_tokens=st.lists(
        st.tuples(st.sampled_from([b"a", b"U", b"x"]), st.integers(0, 255), st.binary(max_size=30)),
        max_size=3,
    ).map(tuple),
)


@given(records)
@settings(max_examples=300)
def test_round_trip(record: TrailRecord) -> None:
    data = encode_record(record)
    assert decode_exact(data) == record
    assert encode_record(decode_exact(data)) == data


@given(records)
@settings(max_examples=100)
def test_encode_row_is_encode_record_without_the_dataclass(record: TrailRecord) -> None:
    fields = {f: getattr(record, f) for f in TrailRecord.__dataclass_fields__}
    del fields["segment"]  # (a piece read by itself: encode_record only)
    io_type, table, columns = fields.pop("io_type"), fields.pop("table"), fields.pop("columns")
    assert encode_row(io_type, table, columns, **fields) == encode_record(record)


def test_records_pickle() -> None:
    record = EXAMPLES["multi_update"][0].record
    assert pickle.loads(pickle.dumps(record)) == record


@given(st.lists(records, min_size=1, max_size=5), st.integers(1, 50))
@settings(max_examples=60)
def test_stream_any_chunking(batch: list[TrailRecord], chunk: int) -> None:
    blob = b"".join(encode_record(r) for r in batch)
    stream = RecordStream()
    got = []
    for start in range(0, len(blob), chunk):
        stream.feed(blob[start : start + chunk])
        got.extend(stream)
    assert [d.record for d in got] == batch
    assert stream.pending == 0
    rbas = [d.rba for d in got]
    assert rbas == [sum(d.length for d in got[:i]) for i in range(len(got))]


def test_feeding_one_byte_at_a_time() -> None:
    header = encode_file_header(
        new_file_header(seqno=0, file_name="aa000000000", creation_time_us=0)
    )
    blob = header + b"".join(encode_record(e.record) for _, _, e in ALL_RECORDS)
    stream = RecordStream()
    completed: list[int] = []
    for i in range(len(blob)):
        stream.feed(blob[i : i + 1])
        completed.extend(d.rba + d.length for d in stream)
    assert isinstance(decode_any(blob)[0], FileHeader)
    ends, total = [], len(header)
    ends.append(total)
    for _, _, e in ALL_RECORDS:
        total += e.length
        ends.append(total)
    assert completed == ends  # each record appears exactly when its last byte arrives


@pytest.mark.parametrize(("name", "index", "expected"), ALL_RECORDS[:3])
def test_every_truncation_needs_more_data(name: str, index: int, expected: object) -> None:
    data = encode_record(EXAMPLES[name][index].record)
    for cut in range(len(data)):
        with pytest.raises(IncompleteRecordError) as info:
            decode_record(data[:cut])
        assert info.value.needed >= 1
        assert cut + info.value.needed <= len(data)
        assert info.value.code == "TRAIL-001"


def test_trailing_bytes() -> None:
    data = encode_record(EXAMPLES["single_delete"][0].record)
    with pytest.raises(TrailingBytesError) as info:
        decode_exact(data + b"\x00")
    assert info.value.code == "TRAIL-003"
    assert info.value.offset == len(data)


def _patch(data: bytes, offset: int, new: bytes) -> bytes:
    return data[:offset] + new + data[offset + len(new) :]


SINGLE_INSERT = encode_record(EXAMPLES["single_insert"][0].record)
D_START = 4 + 4 + 47  # G, H section header and row header: the D section header


@pytest.mark.parametrize(
    ("offset", "new", "why"),
    [
        (0, b"X", "G tag"),
        (1, b"\x00", "G flag"),
        (2, b"\x00\x05", "length below minimum"),
        (len(SINGLE_INSERT) - 4, b"Y", "Z tag"),
        (len(SINGLE_INSERT) - 2, b"\x00\xdf", "Z length"),
        (4, b"Q", "first section tag"),
        (8, b"X", "Hdr-Ind"),
        (8 + 3, b"\x07", "TransInd"),
        (8 + 5, b"Q", "Continued"),
        (8 + 7, b"C", "BeforeAfter"),
        (8 + 33, b"\x00\x0d", "table name length"),
        (D_START + 4 + 2, b"\x00\x09", "column length vs value length"),
        (D_START + 4 + 4, b"\x12\x34", "null indicator"),
        (D_START + 4 + 8, b"\xff", "value not UTF-8"),
        (D_START + 4 + 8 + 4, b"\x00\x00", "column index not ascending"),
        (D_START + 2, b"\x01\x00", "D section overruns"),
    ],
)
def test_corruption_is_detected(offset: int, new: bytes, why: str) -> None:
    with pytest.raises(CorruptRecordError) as info:
        decode_record(_patch(SINGLE_INSERT, offset, new))
    assert info.value.code == "TRAIL-002", why


def test_null_values_round_trip_and_cost_eight_bytes() -> None:
    record = TrailRecord(io_type=5, table="T", columns=((0, "1"), (1, None), (2, "")))
    data = encode_record(record)
    assert decode_exact(data).columns == ((0, "1"), (1, None), (2, ""))
    assert data.count(b"\x00\x01\x00\x04\xff\xff\x00\x00") == 1


@pytest.mark.parametrize(
    "record",
    [
        TrailRecord(io_type=5, table="T" * (MAX_TABLE_NAME_LENGTH + 1)),
        TrailRecord(io_type=5, table="T", columns=((1, "a"), (0, "b"))),
        TrailRecord(io_type=5, table="T", columns=((1, "a"), (1, "b"))),
        TrailRecord(io_type=300, table="T"),
        TrailRecord(io_type=5, table="T", trans_ind=-1),
        TrailRecord(io_type=5, table="T", before_after="X"),
        TrailRecord(io_type=5, table="T", audit_rba=2**32),
        TrailRecord(io_type=5, table="T", rowid="AAASrPAAEAAAAQ2AAé"),
        TrailRecord(io_type=5, table="T", extra_tokens=((b"x", 0, b"v" * 5000),)),
    ],
)
def test_limits_are_checked(record: TrailRecord) -> None:
    with pytest.raises(RecordLimitError) as info:
        encode_record(record)
    assert info.value.code == "TRAIL-004"


def test_largest_record_fits_exactly() -> None:
    """One record up to MAX_PIECE_LENGTH (room for its checksum below the 2-byte length);
    a byte more and the row is written as a base record and a RecordFragment."""
    base = len(encode_record(TrailRecord(io_type=5, table="T", columns=((0, ""),))))
    value = "v" * (MAX_PIECE_LENGTH - base)
    data = encode_record(TrailRecord(io_type=5, table="T", columns=((0, value),)))
    assert len(data) == MAX_PIECE_LENGTH
    assert decode_exact(data).columns == ((0, value),)
    longer = encode_record(TrailRecord(io_type=5, table="T", columns=((0, value + "v"),)))
    assert count_records(longer) == 2 and count_records(longer, rows=True) == 1
    assert decode_exact(longer).columns == ((0, value + "v"),)


def test_file_header_round_trip_and_fixed_length() -> None:
    tokens = new_file_header(
        seqno=7, file_name="dirdat/aa000000007", creation_time_us=123, info={"Producer": "ggsci"}
    )
    data = encode_file_header(tokens)
    header, length = decode_file_header(data)
    assert length == len(data)
    assert dict(header.tokens) == tokens
    assert header.seqno == 7 and header.compatibility == COMPATIBILITY_LEVEL
    finished = dict(
        tokens,
        FileSize=10**9,
        FirstCSN="1621215",
        LastCSN="99999999999",
        LastIOTime=5,
        RecordCount=3,
    )
    assert len(encode_file_header(finished)) == len(data)


def test_file_header_skips_unknown_tokens() -> None:
    data = encode_file_header(new_file_header(seqno=0, file_name="f", creation_time_us=0))
    # Add a token with an id this code does not know: id "~", 3 bytes.
    body = data[8:-4] + b"~\x00\x00\x03abc"
    from engine.trail.envelope import section, wrap

    header, _ = decode_file_header(wrap([section(b"F", body)]))
    assert header.unknown == ((b"~", b"abc"),)
    assert header.get("Signature") == "GGSCI-TRAIL"


def test_newer_file_format_is_refused() -> None:
    tokens = new_file_header(seqno=0, file_name="f", creation_time_us=0)
    tokens["Compatibility"] = COMPATIBILITY_LEVEL + 1
    with pytest.raises(FileVersionError) as info:
        decode_file_header(encode_file_header(tokens))
    assert info.value.code == "TRAIL-005"
