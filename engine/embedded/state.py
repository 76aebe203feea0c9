"""What a session's statements work on: the database, seen through a small protocol, and the
open transaction with its undo entries. Shared by sessions (:mod:`engine.embedded.session`),
row helpers (:mod:`engine.embedded.rows`), DML and undo, which import this and not each other.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from engine.embedded import redogen as rg
from engine.embedded.dictionary import Dictionary, TableDef
from engine.redo.codecs import Value
from engine.redo.ids import Uba, Xid
from engine.redo.model import ChangeVector

Row = tuple[Value, ...]
#: where a chained row's pieces are, head first: (rid, first column, column past the last,
#: bytes of the first column in the pieces before, where the last column's part ends: 0, 0
#: for whole columns; :data:`engine.embedded.rows.Part`)
Pieces = tuple[tuple[int, int, int, int, int], ...]


class OnThread(Protocol):
    """A session as undo sees it: the redo thread its compensation is written to."""

    @property
    def thread(self) -> int: ...


class Engine(Protocol):
    """What a session needs from its database."""

    conn: sqlite3.Connection
    dictionary: Dictionary
    locks: dict[tuple[int, int], str]
    table_locks: dict[int, str]
    key_locks: dict[tuple[int, str, tuple[bytes | None, ...]], str]
    #: the chained rows of each table (object number): head rid -> :data:`Pieces`
    chained: dict[int, dict[int, Pieces]]

    def keep_pieces(self, table: TableDef, rid: int, pieces: Pieces) -> None: ...

    def next_scn(self) -> int: ...

    def note_commit(self, blocks: set[int], scn: int) -> None: ...

    @property
    def dirty_blocks(self) -> dict[int, list[tuple[int, int, int]]]: ...

    def now(self) -> datetime: ...

    def new_xid(self) -> Xid: ...

    def release_xid(self, xid: Xid) -> None: ...

    def allocate(self, table: TableDef, n: int, fresh_block: bool = False) -> list[int]: ...

    def emit(
        self, thread: int, scn: int, changes: Sequence[ChangeVector], *, switch: bool = True
    ) -> None: ...

    def end_transaction(self, thread: int) -> None: ...


@dataclass
class UndoEntry:
    """How to undo one change: ``ins``/``load`` (rows ``rids`` were added), ``del`` (row
    ``rids[0]`` had values ``before``), ``upd`` (columns ``cols`` had values ``before``)."""

    kind: str
    table: str
    rids: tuple[int, ...]
    uba: Uba
    before: Row = ()
    cols: tuple[int, ...] = ()


@dataclass
class Txn:
    ids: rg.TxnIds
    start_scn: int
    start_time: datetime
    entries: list[UndoEntry] = field(default_factory=list)
    savepoints: dict[str, int] = field(default_factory=dict)
    locked: set[tuple[int, int]] = field(default_factory=set)
    # unique-key locks, each with the number of undo entries when it was first taken
    keys: dict[tuple[int, str, tuple[bytes | None, ...]], int] = field(default_factory=dict)
    direct_tables: set[int] = field(default_factory=set)
    info_written: bool = False

    @property
    def xid(self) -> Xid:
        return self.ids.xid
