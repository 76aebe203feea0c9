"""Trail codec throughput: encode and decode records like seed 002's STUDENT rows.

``encode_row`` is the executor-side path Extract should use (no TrailRecord built).

Prints ``name=value`` lines; the key figure (encode + decode round trips per second,
one core) is last. Also times appending through TrailWriter (no fsync) and reading back
with TrailReader. Usage: ``python benchmarks/trail_codec.py [records]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from engine.trail import (
    TableDef,
    TrailReader,
    TrailRecord,
    TrailWriter,
    decode_record,
    encode_record,
    encode_row,
)
from engine.trail.layout import IOType, TransInd

COLUMNS = (
    "STUDENT_KEY",
    "FIRST_NAME",
    "SURNAME",
    "GENDER",
    "UNIVERSITY",
    "SUBJECT",
    "ENTRY_YEAR",
    "TUITION_FEE",
)


def make_records(n: int) -> list[TrailRecord]:
    """Transactions of 100 rows: 50% inserts (all columns), 30% updates (key + fee),
    20% deletes (key), as the extract throughput workload."""
    out = []
    for i in range(n):
        kind = (i // 100) % 10
        pos = i % 100
        ind = TransInd.BEGIN if pos == 0 else TransInd.END if pos == 99 else TransInd.MIDDLE
        key = str(100_000 + i)
        if kind < 5:
            io_type, columns = (
                IOType.INSERT,
                tuple(
                    enumerate((key, "Victoria", "Evans", "F", "Oxford", "Theology", "2013", "9000"))
                ),
            )
        elif kind < 8:
            io_type, columns = IOType.FIELDCOMP, ((0, key), (7, "7500"))
        else:
            io_type, columns = IOType.DELETE, ((0, key),)
        out.append(
            TrailRecord(
                io_type=io_type,
                table="US03.STUDENT",
                columns=columns,
                trans_ind=ind,
                before_after="B" if io_type == IOType.DELETE else "A",
                io_time_us=1_364_774_398_000_000 + i,
                audit_rba=68,
                audit_pos=i * 512,
                rowid="AAASrPAAEAAAAQ2AAK",
                logcsn=str(1_621_215 + i) if pos == 0 else None,
                tranid=f"4.11.{i // 100}" if pos == 0 else None,
            )
        )
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    records = make_records(n)

    t0 = time.perf_counter()
    encoded = [encode_record(r) for r in records]
    t_encode = time.perf_counter() - t0

    rows = [
        (
            r.io_type,
            r.table,
            r.columns,
            r.trans_ind,
            r.before_after,
            r.io_time_us,
            r.audit_pos,
            r.rowid,
            r.logcsn,
            r.tranid,
        )
        for r in records
    ]
    t0 = time.perf_counter()
    for io_type, table, columns, ind, ba, io_time, pos, rowid, csn, xid in rows:
        encode_row(
            io_type,
            table,
            columns,
            trans_ind=ind,
            before_after=ba,
            io_time_us=io_time,
            audit_rba=68,
            audit_pos=pos,
            rowid=rowid,
            logcsn=csn,
            tranid=xid,
        )
    t_encode_row = time.perf_counter() - t0

    blob = b"".join(encoded)
    t0 = time.perf_counter()
    offset, decoded = 0, 0
    while offset < len(blob):
        _, length = decode_record(blob, offset)
        offset += length
        decoded += 1
    t_decode = time.perf_counter() - t0
    assert decoded == n

    # The writer and the reader with per-record checksums (the default) and without.
    t_write: dict[bool, float] = {}
    t_read: dict[bool, float] = {}
    for checksum in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            trail = Path(tmp) / "aa"
            t0 = time.perf_counter()
            with TrailWriter.open(trail, durable=False, megabytes=100, checksum=checksum) as writer:
                writer.define_table(TableDef("US03.STUDENT", COLUMNS))
                for start in range(0, n, 1000):
                    writer.append_many(encoded[start : start + 1000])
                writer.sync()
            t_write[checksum] = time.perf_counter() - t0
            t0 = time.perf_counter()
            with TrailReader(trail) as reader:
                read = sum(1 for _ in reader.records())
            t_read[checksum] = time.perf_counter() - t0
            assert read == n, read

    print(f"records={n}")
    print(f"avg_record_bytes={len(blob) / n:.1f}")
    print(f"encode_records_per_s={n / t_encode:.0f}")
    print(f"encode_row_records_per_s={n / t_encode_row:.0f}")
    print(f"decode_records_per_s={n / t_decode:.0f}")
    for checksum, tag in ((False, "_nochecksum"), (True, "")):
        print(f"writer_append_records_per_s{tag}={n / t_write[checksum]:.0f}")
        print(f"reader_records_per_s{tag}={n / t_read[checksum]:.0f}")
    print(f"codec_roundtrip_records_per_s={n / (t_encode + t_decode):.0f}")


if __name__ == "__main__":
    main()
