"""Logical change records: what decoding redo yields, per redo record, in log order.

An :class:`Lcr` is small, frozen and picklable: Spark tasks produce them from redo byte
ranges and the driver consumes them in SCN order. Positions are kept on every LCR so that
the driver can tell where a transaction started (its recovery position) and where reading
can resume.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from engine.trail.model import Columns


class Kind(enum.IntEnum):
    BEGIN = 1  # 5.2: a transaction takes an undo slot
    ROW = 2  # 11.x / 19.1: one row change of a captured table
    COMMIT = 3  # 5.4 commit
    ROLLBACK = 4  # 5.4 with the rollback flag
    SESSION = 5  # 5.20: user and transaction name
    UNDO = 6  # 5.6: a change of this transaction was undone (rollback to savepoint)
    DDL = 7  # 24.1


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """Where a redo record is: thread, log sequence, byte offset in that log; ordered."""

    thread: int
    sequence: int
    offset: int

    def to_json(self) -> dict[str, int]:
        return {"thread": self.thread, "sequence": self.sequence, "offset": self.offset}

    @classmethod
    def from_json(cls, d: dict[str, int]) -> Position:
        return cls(int(d["thread"]), int(d["sequence"]), int(d["offset"]))


@dataclass(frozen=True, slots=True)
class Lcr:
    """One logical change. Fields beyond the position apply to some kinds only.

    ``ref`` identifies the undo record of a ROW so that an UNDO with the same ``ref``
    (a rollback to savepoint) can cancel it. ``end`` is the byte offset just past the
    redo record, where reading resumes. ``record`` is the ROW's trail record already
    encoded by the miner (a template: :func:`engine.trail.codec.finalize` completes it at
    commit); then ``columns`` and ``before_columns`` are empty, and when it is empty the
    record is encoded from them.
    """

    kind: Kind
    xid: str
    pos: Position
    end: int
    scn: int
    subscn: int = 0
    time_us: int = 0
    io_type: int = 0
    table: str = ""
    rowid: str | None = None
    columns: Columns = ()
    before_columns: Columns = ()
    ref: str = ""
    user: str = ""
    txn_name: str = ""
    text: str = ""
    record: bytes = b""
    # user token entries (TABLE ... TOKENS), set at commit by engine.extract.tasks.tablerules
    tokens: tuple[tuple[bytes, int, bytes], ...] = ()

    @property
    def order_key(self) -> tuple[int, int, int, int, int]:
        """Merge order across threads: SCN, SUBSCN, then log position."""
        return (self.scn, self.subscn, self.pos.thread, self.pos.sequence, self.pos.offset)

    def weight(self) -> int:
        """Approximate bytes of memory this LCR holds (for the cache budget): CPython's
        object overheads included (the LCR, its position, tuples, strings), measured with
        ``sys.getsizeof`` on typical rows."""
        size = 420 + len(self.rowid or "") + len(self.ref)
        if self.record:
            size += 33 + len(self.record)
        for cols in (self.columns, self.before_columns):
            for _, v in cols:
                size += 120 + (len(v) if v else 0)
        return size


@dataclass(frozen=True, slots=True)
class Fragment:
    """The changes of one open transaction in one redo range, assembled in the Spark task
    that mined the range (parallel assembly, docs/extract.md): the driver caches it as one
    item and, at commit, finishes the records of all of the transaction's fragments in one
    pass (:func:`engine.extract.tasks.assemble.finish_fragments`) instead of change by change.

    ``records`` are the row records' templates (:func:`engine.trail.codec.row_record` with
    its defaults) concatenated in change order, ``refs`` the undo reference of each (a
    rollback to savepoint cancels one), ``undone`` the references the range's own undo
    records cancel. ``pos`` is the first change, ``end`` / ``scn`` / ``subscn`` /
    ``time_us`` are those of the last: the fragment takes the last change's place in the
    thread merge, and re-reading from ``pos`` finds all of it again.

    Rows of a table whose TABLE row options the task can apply (WHERE of integer
    comparisons, COLS / COLSEXCEPT, TOKENS of the table and operation only:
    :func:`engine.extract.tasks.tablerules.fragment_tables`) come selected and cut already:
    ``records`` holds only the rows WHERE kept. Their user tokens may read the commit, so
    they are added at commit: ``marks`` (empty when no record gets any) gives a byte per
    record, 0 for none, ``1 + i`` for the tokens of ``table_ops[i]``'s table and operation.
    """

    xid: str
    pos: Position
    end: int
    scn: int
    subscn: int
    time_us: int
    first_scn: int
    first_time_us: int
    sessions: tuple[tuple[str, str], ...]  # (user, transaction name) of its 5.20s
    records: bytes
    count: int
    refs: tuple[str, ...]
    undone: tuple[str, ...]
    table_ops: tuple[tuple[str, int, int], ...]  # (table, io type, rows): STATS and counts
    lcrs: int  # the logical changes it stands for
    marks: bytes = b""  # per record: 0, or 1 + the table_ops index of its user tokens

    @property
    def order_key(self) -> tuple[int, int, int, int, int]:
        return (self.scn, self.subscn, self.pos.thread, self.pos.sequence, self.pos.offset)

    def weight(self) -> int:
        """Approximate bytes of memory held (the cache budget), as :meth:`Lcr.weight`."""
        return (
            400 + len(self.records) + len(self.marks) + 60 * len(self.refs)
            + 80 * len(self.table_ops)
        )  # fmt: skip


#: What the transaction cache holds for an open transaction, in change order.
Entry = Lcr | Fragment
