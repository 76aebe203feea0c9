"""A committed PostgreSQL transaction held as runs of record templates (what
:mod:`engine.postgres.fastpath` makes) finished and appended to the trail: in one pass per
chunk of records (:func:`~engine.extract.tasks.assemble.finish_fragments`, in C when the
trailkit kernel is built), never record by record, and a huge one chunk by chunk as the cache
reads it back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from engine.extract.tasks.assemble import finish_fragments, op_name
from engine.trail.writer import TrailWriter

#: records finished and appended at a time
APPEND_CHUNK = 10_000

#: (templates, records, ((table, io type, rows), ...))
Run = tuple[bytes, int, tuple[tuple[str, int, int], ...]]


def write_runs(
    writer: TrailWriter,
    runs: Iterable[Run],
    xid: str,
    lsn: int,
    time_us: int,
    total: int,
    per_table: Counter[tuple[str, str]],
) -> int:
    """Append the transaction ``xid`` (commit ``lsn``, its CSN, at ``time_us``) of ``total``
    records (0: count them) held in ``runs``; count them in ``per_table`` by (table,
    operation name). Returns the records written."""
    if not total:
        runs = list(runs)
        total = sum(count for _, count, _ in runs)
    first = 0
    blobs: list[bytes] = []
    tables: dict[str, None] = {}
    held = 0
    for blob, count, ops in runs:
        blobs.append(blob)
        held += count
        for table, io_type, m in ops:
            per_table[(table, op_name(io_type))] += m
            tables[table] = None
        if held >= APPEND_CHUNK:
            _append(writer, blobs, xid, lsn, time_us, (first, held, total), tables)
            first += held
            held = 0
            blobs = []
    if held:
        _append(writer, blobs, xid, lsn, time_us, (first, held, total), tables)
    return total


def _append(
    writer: TrailWriter,
    blobs: list[bytes],
    xid: str,
    lsn: int,
    time_us: int,
    place: tuple[int, int, int],
    tables: dict[str, None],
) -> None:
    """Records ``place`` = (first, count, total) of the transaction, finished and appended."""
    first, held, total = place
    data = finish_fragments(blobs, xid, lsn, time_us, first, total)
    writer.append_transaction(data, held, tables, time_us, str(lsn) if first == 0 else None)
