"""The layout reproduces seed 002's trail listings byte for byte in size, and the
single-row insert byte for byte in content."""

from __future__ import annotations

import struct

import pytest
from trail_seed002 import ALL_RECORDS, EXAMPLES, Expected

from engine.trail import decode_exact, encode_record
from engine.trail.envelope import sections

# Seed 002, "Single Row Insertion": the slots of the D area as TrailAnalyzer prints them
# (null indicator, value length, value); our entries prefix each with index and length.
SEED_INSERT_SLOTS = [
    "00 00 00 04 31 30 31 31",
    "00 00 00 06 4A 6F 72 64 61 6E",
    "00 00 00 08 53 68 65 72 77 6F 6F 64",
    "00 00 00 01 4D",
    "00 00 00 0A 4D 61 6E 63 68 65 73 74 65 72",
    "00 00 00 09 43 68 65 6D 69 73 74 72 79",
    "00 00 00 04 32 30 31 33",
    "00 00 00 04 39 30 30 30",
]

# The whole single-row insert record (golden bytes; layout.py documents every field).
SINGLE_INSERT_HEX = (
    "4701 00e0"  # G, flag 1, length 224
    "4800 002f"  # H, length 47
    # Hdr-Ind E, UndoFlag, IOType 5, TransInd 3, SyskeyLen, Continued N, Partition 4,
    # BeforeAfter A, OrigNode, FormatType R, Incomplete
    "45 00 05 03 00 4e 04 41 00 52 00"
    "0004 d941 4d30 fb80"  # IO time: 2013-03-31 23:59:58 in microseconds
    "0000 0000"  # AuditRBA
    "0000 0000 0000 0000"  # AuditPos
    "0001"  # RecCount
    "000c"  # name length 12
    "5553 3033 2e53 5455 4445 4e54"  # US03.STUDENT
    "4400 006e"  # D, length 110
    + "".join(
        f"{i:04x}{len(bytes.fromhex(s)):04x}" + s.replace(" ", "")
        for i, s in enumerate(SEED_INSERT_SLOTS)
    )
    + "5400 002f"  # T, length 47
    "5200 0014 4141 4153 7250 4141 4541 4141 4151 3241 414b 0001"  # R ORAROWID, 20 bytes
    "4c00 0007 3136 3231 3231 35"  # L LOGCSN 1621215
    "3600 0008 342e 3131 2e38 3534"  # 6 TRANID 4.11.854
    "5a01 00e0"  # Z, flag 1, length 224
)


@pytest.mark.parametrize(("example", "index", "expected"), ALL_RECORDS)
def test_record_sizes_match_seed(example: str, index: int, expected: Expected) -> None:
    data = encode_record(expected.record)
    assert len(data) == expected.length
    by_tag = {tag: size for tag, _start, size in sections(data, 0, len(data))}
    table = expected.record.table.encode()
    assert by_tag == {
        b"H": 35 + len(table),
        b"D": expected.data_length,
        b"T": expected.token_length,
    }
    assert decode_exact(data) == expected.record


def test_transaction_totals_match_seed() -> None:
    totals = {
        name: sum(len(encode_record(e.record)) for e in records)
        for name, records in EXAMPLES.items()
    }
    # The seed's "total number of bytes ... for the above change" (its 225 for the single
    # insert counts one byte more than the record it lists, whose G and Z say 224).
    assert totals == {
        "single_insert": 224,
        "single_update": 138,
        "single_delete": 126,
        "multi_update": 369,
        "multi_delete": 333,
        "array_insert": 612,
        "direct_path_insert": 612,
    }


def test_single_insert_golden_bytes() -> None:
    record = EXAMPLES["single_insert"][0].record
    assert encode_record(record) == bytes.fromhex(SINGLE_INSERT_HEX)


def test_data_area_slots_are_the_seed_bytes() -> None:
    data = encode_record(EXAMPLES["single_insert"][0].record)
    (_, start, size) = next(s for s in sections(data, 0, len(data)) if s[0] == b"D")
    pos, slots = start, []
    while pos < start + size:
        index, length = struct.unpack_from(">HH", data, pos)
        assert index == len(slots)
        slots.append(data[pos + 4 : pos + 4 + length])
        pos += 4 + length
    assert [s.hex(" ").upper() for s in slots] == SEED_INSERT_SLOTS


def test_only_first_record_of_a_transaction_has_logcsn_and_tranid() -> None:
    for records in EXAMPLES.values():
        decoded = [decode_exact(encode_record(e.record)) for e in records]
        assert decoded[0].logcsn and decoded[0].tranid
        assert all(r.logcsn is None and r.tranid is None for r in decoded[1:])
        assert all(r.rowid is not None and len(r.rowid) == 18 for r in decoded)
        assert [r.trans_ind for r in decoded] == ([3] if len(decoded) == 1 else [0, 1, 2])
