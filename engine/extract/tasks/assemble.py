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
from collections.abc import Set as AbstractSet

from engine._native import load as load_native
from engine.changes import Entry, Fragment, Kind, Lcr
from engine.trail.codec import commit_tokens, encode_record, finalize, pack_tokens, summarize
from engine.trail.layout import (
    IO_TYPE_NAMES,
    OFF_BEFORE_AFTER,
    SECTION_SIZE,
    TransInd,
    event_io_type,
    wire_io_type,
)
from engine.trail.model import TrailRecord
from engine.trail.writer import split_records


def op_name(io_type: int) -> str:
    """The operation's name as Logdump and the report count it (``TrailRecord.op_name``);
    a before image (layout.BEFORE_IMAGE) is no operation of its own: ``IOType271``, which
    STATS does not count (as ``miner._closed`` names it)."""
    return IO_TYPE_NAMES.get(io_type, f"IOType{io_type}")


#: The C finishing of fragments (engine/_native/trailkit.c ``finish``), when built.
_KIT = load_native("trailkit")
_INDS = (int(TransInd.BEGIN), int(TransInd.MIDDLE), int(TransInd.END), int(TransInd.WHOLE))


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
        if row.record:  # (a fragment's row of a table with TOKENS: its user tokens)
            user = pack_tokens(row.tokens) if row.tokens else b""
            data = finalize(
                row.record, ind, commit_time_us, csn if first else None, xid if first else None,
                user,
            )  # fmt: skip
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


def finish_fragments(
    blobs: list[bytes],
    xid: str,
    commit_scn: int,
    commit_time_us: int,
    first: int,
    total: int,
    user: list[bytes] | None = None,
) -> bytes:
    """The trail records of a committed transaction from its fragments' templates
    (:class:`~engine.changes.Fragment` ``records``, in change order), finished and
    concatenated: record ``first + i`` of ``total`` gets its TransInd, every one the
    commit time, record 0 the LOGCSN and TRANID tokens, and ``user[i]`` (None: none) the
    user token entries of TABLE TOKENS after them. In C when the kernel is built (one
    pass, no per-record Python); :func:`finish_fragments_py` is the same in Python and the
    reference the tests hold the kernel to."""
    if _KIT is not None:
        tokens = commit_tokens(str(commit_scn), xid) if first == 0 else b""
        done = _KIT.finish(blobs, tokens, commit_time_us, _INDS, first, total, user)
        if done is not None:
            return bytes(done)
    return finish_fragments_py(blobs, xid, commit_scn, commit_time_us, first, total, user)


def finish_fragments_py(
    blobs: list[bytes],
    xid: str,
    commit_scn: int,
    commit_time_us: int,
    first: int,
    total: int,
    user: list[bytes] | None = None,
) -> bytes:
    """:func:`finish_fragments` record by record with :func:`finalize` (which raises
    :class:`~engine.trail.errors.RecordLimitError` for a record that would pass a limit)."""
    csn = str(commit_scn)
    out: list[bytes] = []
    k = first
    for blob in blobs:
        for template in split_records(blob):
            head = k == 0
            out.append(
                finalize(
                    template, trans_ind(k, total), commit_time_us,
                    csn if head else None, xid if head else None,
                    user[k - first] if user is not None else b"",
                )
            )  # fmt: skip
            k += 1
    if user is not None and len(user) != k - first:
        raise ValueError(f"user: {len(user)} token areas for {k - first} records")
    return b"".join(out)


def surviving(entries: Iterable[Entry], undone: AbstractSet[str]) -> Iterator[Lcr]:
    """The rows of a committed transaction's cache entries that no rollback to savepoint
    undid, one by one, fragments opened into their rows (:func:`fragment_rows`)."""
    for e in entries:
        if isinstance(e, Fragment):
            yield from fragment_rows(e, undone)
        elif e.ref not in undone:
            yield e


def fragment_rows(f: Fragment, undone: AbstractSet[str] = frozenset()) -> Iterator[Lcr]:
    """The rows of a fragment as changes with their record templates (the path of a
    transaction that is not finished from fragments alone: TABLE row options, heartbeat
    rows, a rollback to savepoint, FORCETRANS). Their position is the fragment's."""
    for template, ref in zip(split_records(f.records), f.refs, strict=True):
        if ref in undone:
            continue
        s = summarize(template)
        assert s is not None
        ba = chr(template[2 * SECTION_SIZE + OFF_BEFORE_AFTER])  # a before image: its flag
        yield Lcr(
            Kind.ROW, f.xid, f.pos, f.end, f.scn, f.subscn, f.time_us,
            event_io_type(s.io_type, ba), s.table, ref=ref, record=template,
        )  # fmt: skip
