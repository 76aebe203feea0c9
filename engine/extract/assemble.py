"""A committed transaction to trail records, as seed 002 shows them.

Records keep the order the changes were made; the first carries the LOGCSN (commit SCN)
and TRANID tokens; TransInd marks begin / middle / end, or whole for a one-record
transaction. IO time is the commit's timestamp (GoldenGate writes the commit time of the
transaction on each of its records).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from engine.extract.lcr import Lcr
from engine.trail.layout import IOType, TransInd
from engine.trail.model import TrailRecord


def trans_ind(i: int, n: int) -> int:
    if n == 1:
        return int(TransInd.WHOLE)
    if i == 0:
        return int(TransInd.BEGIN)
    if i == n - 1:
        return int(TransInd.END)
    return int(TransInd.MIDDLE)


def stream_records(
    xid: str, commit_scn: int, commit_time_us: int, rows: Iterable[Lcr]
) -> Iterator[TrailRecord]:
    """:func:`to_records` over an iterator, holding one row back to know which is last."""
    it = iter(rows)
    prev = next(it, None)
    if prev is None:
        return
    i = 0
    for row in it:
        yield _record(
            xid,
            commit_scn,
            commit_time_us,
            prev,
            TransInd.BEGIN if i == 0 else TransInd.MIDDLE,
            i == 0,
        )
        prev = row
        i += 1
    yield _record(
        xid, commit_scn, commit_time_us, prev, TransInd.WHOLE if i == 0 else TransInd.END, i == 0
    )


def _record(
    xid: str, commit_scn: int, commit_time_us: int, r: Lcr, ind: int, first: bool
) -> TrailRecord:
    return TrailRecord(
        io_type=r.io_type,
        table=r.table,
        columns=r.columns,
        before_columns=r.before_columns,
        trans_ind=int(ind),
        before_after="B" if r.io_type == IOType.DELETE else "A",
        io_time_us=commit_time_us,
        audit_rba=r.pos.sequence,
        audit_pos=r.pos.offset,
        rowid=r.rowid,
        logcsn=str(commit_scn) if first else None,
        tranid=xid if first else None,
    )


def to_records(
    xid: str, commit_scn: int, commit_time_us: int, rows: Sequence[Lcr]
) -> list[TrailRecord]:
    out: list[TrailRecord] = []
    n = len(rows)
    for i, r in enumerate(rows):
        first = i == 0
        out.append(
            TrailRecord(
                io_type=r.io_type,
                table=r.table,
                columns=r.columns,
                before_columns=r.before_columns,
                trans_ind=trans_ind(i, n),
                before_after="B" if r.io_type == IOType.DELETE else "A",
                io_time_us=commit_time_us,
                audit_rba=r.pos.sequence,
                audit_pos=r.pos.offset,
                rowid=r.rowid,
                logcsn=str(commit_scn) if first else None,
                tranid=xid if first else None,
            )
        )
    return out
