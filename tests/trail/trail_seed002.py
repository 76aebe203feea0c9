"""Seed 002's trail listings as test vectors: the records Extract must produce for each
example, with the record sizes the seed's TrailAnalyzer output shows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from engine.trail import IOType, TableDef, TrailRecord, TransInd
from engine.trail.model import datetime_to_micros

TABLE = "US03.STUDENT"
STUDENT = TableDef(
    TABLE,
    (
        "STUDENT_KEY",
        "FIRST_NAME",
        "SURNAME",
        "GENDER",
        "UNIVERSITY",
        "SUBJECT",
        "ENTRY_YEAR",
        "TUITION_FEE",
    ),
)


@dataclass(frozen=True)
class Expected:
    """One seed record: what it says and the sizes the seed lists."""

    record: TrailRecord
    length: int  # G Len: the whole record
    data_length: int  # D Len
    token_length: int  # T Len


def _us(text: str) -> int:
    return datetime_to_micros(datetime.strptime(text, "%Y-%m-%d %H:%M:%S"))


def _txn(
    io_type: int,
    when: str,
    rows: list[tuple[tuple[tuple[int, str], ...], str, int, int, int]],
    logcsn: str,
    tranid: str,
) -> list[Expected]:
    out = []
    for i, (columns, rowid, length, dlen, tlen) in enumerate(rows):
        ind = TransInd.of(i, len(rows))
        record = TrailRecord(
            io_type=io_type,
            table=TABLE,
            columns=columns,
            trans_ind=ind,
            before_after="B" if io_type == IOType.DELETE else "A",
            io_time_us=_us(when),
            rowid=rowid,
            logcsn=logcsn if i == 0 else None,
            tranid=tranid if i == 0 else None,
        )
        out.append(Expected(record, length, dlen, tlen))
    return out


def _row(*values: str) -> tuple[tuple[int, str], ...]:
    return tuple(enumerate(values))


R = "AAASrPAAEAAAAQ2AA"
EXAMPLES: dict[str, list[Expected]] = {
    "single_insert": _txn(
        IOType.INSERT,
        "2013-03-31 23:59:58",
        [
            (
                _row("1011", "Jordan", "Sherwood", "M", "Manchester", "Chemistry", "2013", "9000"),
                R + "K",
                224,
                110,
                47,
            )
        ],
        "1621215",
        "4.11.854",
    ),
    "single_update": _txn(
        IOType.FIELDCOMP,
        "2013-04-01 00:55:00",
        [(((0, "1010"), (7, "6000")), R + "J", 138, 24, 47)],
        "1622900",
        "3.6.1012",
    ),
    "single_delete": _txn(
        IOType.DELETE,
        "2013-04-01 02:35:47",
        [(((0, "1004"),), R + "D", 126, 12, 47)],
        "1625893",
        "1.33.830",
    ),
    "multi_update": _txn(
        IOType.FIELDCOMP,
        "2013-04-01 05:14:37",
        [
            (((0, "1007"), (7, "7500")), R + "G", 139, 24, 48),
            (((0, "1008"), (7, "7500")), R + "H", 115, 24, 24),
            (((0, "1009"), (7, "7500")), R + "I", 115, 24, 24),
        ],
        "1630607",
        "6.27.1204",
    ),
    "multi_delete": _txn(
        IOType.DELETE,
        "2013-04-01 09:49:28",
        [
            (((0, "1007"),), R + "D", 127, 12, 48),
            (((0, "1008"),), R + "L", 103, 12, 24),
            (((0, "1009"),), R + "M", 103, 12, 24),
        ],
        "1638367",
        "3.23.1016",
    ),
}

_ARRAY_ROWS = [
    _row("1007", "Victoria", "Evans", "F", "Oxford", "Theology", "2013", "9000"),
    _row("1008", "Katy", "Pierce", "F", "Oxford", "Theology", "2013", "9000"),
    _row("1009", "Shane", "Thomas", "M", "Manchester", "Media Studies", "2013", "9000"),
]
EXAMPLES["array_insert"] = _txn(
    IOType.INSERT,
    "2013-04-01 11:38:17",
    [
        (_ARRAY_ROWS[0], R + "G", 218, 104, 47),
        (_ARRAY_ROWS[1], R + "H", 192, 101, 24),
        (_ARRAY_ROWS[2], R + "I", 202, 111, 24),
    ],
    "1641683",
    "7.13.846",
)
EXAMPLES["direct_path_insert"] = _txn(
    IOType.INSERT,
    "2013-04-01 18:04:53",
    [
        (_ARRAY_ROWS[0], "AAASrPAAEAAAARgAAA", 218, 104, 47),
        (_ARRAY_ROWS[1], "AAASrPAAEAAAARgAAB", 192, 101, 24),
        (_ARRAY_ROWS[2], "AAASrPAAEAAAARgAAC", 202, 111, 24),
    ],
    "1652769",
    "4.21.865",
)

ALL_RECORDS: list[tuple[str, int, Expected]] = [
    (name, i, e) for name, records in EXAMPLES.items() for i, e in enumerate(records)
]
