"""A committed transaction to trail records, as seed 002 shows them.

Records keep the order the changes were made; the first carries the LOGCSN (commit SCN)
and TRANID tokens; TransInd marks begin / middle / end, or whole for a one-record
transaction. IO time is the commit's timestamp (GoldenGate writes the commit time of the
transaction on each of its records).

A row the miner encoded already (``Lcr.record``, a template) is finished with
:func:`engine.trail.codec.finalize`; other rows are encoded from their columns. The miner
assembles the transactions it sees whole with the same :func:`trans_ind` and ``finalize``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from engine.extract.lcr import Lcr
from engine.trail.codec import encode_record, finalize
from engine.trail.layout import IO_TYPE_NAMES, TransInd, wire_io_type
from engine.trail.model import TrailRecord


def op_name(io_type: int) -> str:
    """The operation's name as Logdump and the report count it (``TrailRecord.op_name``);
    a before image (layout.BEFORE_IMAGE) is no operation of its own: ``IOType271``, which
    STATS does not count (as ``miner._closed`` names it)."""
    return IO_TYPE_NAMES.get(io_type, f"IOType{io_type}")


def trans_ind(i: int, n: int) -> int:
    if n == 1:
        return int(TransInd.WHOLE)
    if i == 0:
        return int(TransInd.BEGIN)
    if i == n - 1:
        return int(TransInd.END)
    return int(TransInd.MIDDLE)


def _placed(rows: Iterable[Lcr]) -> Iterator[tuple[Lcr, int, bool]]:
    """Each row with its TransInd and whether it is first, holding one row back to know
    which is last (the rows may come from an iterator: a commit read back from disk)."""
    it = iter(rows)
    prev = next(it, None)
    if prev is None:
        return
    i = 0
    for row in it:
        yield prev, TransInd.BEGIN if i == 0 else TransInd.MIDDLE, i == 0
        prev = row
        i += 1
    yield prev, TransInd.WHOLE if i == 0 else TransInd.END, i == 0


def stream_records(
    xid: str, commit_scn: int, commit_time_us: int, rows: Iterable[Lcr]
) -> Iterator[TrailRecord]:
    """:func:`to_records` over an iterator."""
    for row, ind, first in _placed(rows):
        yield _record(xid, commit_scn, commit_time_us, row, ind, first)


def stream_encoded(
    xid: str, commit_scn: int, commit_time_us: int, rows: Iterable[Lcr]
) -> Iterator[tuple[bytes, int]]:
    """The records of a committed transaction encoded: ``(bytes, io_type)`` in order."""
    csn = str(commit_scn)
    for row, ind, first in _placed(rows):
        if row.record:
            data = finalize(
                row.record, ind, commit_time_us, csn if first else None, xid if first else None
            )
        else:
            data = encode_record(_record(xid, commit_scn, commit_time_us, row, ind, first))
        yield data, row.io_type


def _record(
    xid: str, commit_scn: int, commit_time_us: int, r: Lcr, ind: int, first: bool
) -> TrailRecord:
    io_type, before_after = wire_io_type(r.io_type)
    return TrailRecord(
        io_type=io_type,
        table=r.table,
        columns=r.columns,
        before_columns=r.before_columns,
        trans_ind=int(ind),
        before_after=before_after.decode("ascii"),
        io_time_us=commit_time_us,
        audit_rba=r.pos.sequence,
        audit_pos=r.pos.offset,
        rowid=r.rowid,
        logcsn=str(commit_scn) if first else None,
        tranid=xid if first else None,
        extra_tokens=r.tokens,
    )


def to_records(
    xid: str, commit_scn: int, commit_time_us: int, rows: Sequence[Lcr]
) -> list[TrailRecord]:
    n = len(rows)
    return [
        _record(xid, commit_scn, commit_time_us, r, trans_ind(i, n), i == 0)
        for i, r in enumerate(rows)
    ]
