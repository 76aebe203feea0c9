"""The fast path's row-change kernel: one call per single-row change gives its framed records.

A :class:`Table` method takes one row change (the transaction, where its records land in
the log, its SCN, time, block and slot, and the row's values) and does all of its per-row
work: it takes the undo record addresses (advancing ``ids`` as ``TxnIds.next_rec`` does),
chooses each block's redo KTB (a transaction's first change in a block carries the
cleanout of committed transactions' ITL entries, taken from ``dirty``), encodes the column
values that come from SQLite (:func:`stored_number`, :func:`stored_date`,
:func:`stored_text`), packs the change vectors (:mod:`engine.embedded.bulkpack`) and frames
the records as :meth:`LogWriter.add_native` does, for stream position ``logical``: record
head with the RBA where each lands, length and CRC. The caller appends the frames with
:meth:`LogWriter.add_frames`.

This module is the readable statement of that work and the fallback of its compiled twin,
``engine/_native/redopack.c`` (same classes, methods and bytes; :data:`engine.embedded.bulk`
picks the compiled one when it is built). ``tests/source/test_source_redopack.py`` holds
the two to the same bytes for arbitrary values; the workload's golden hashes hold both to
the generic path's.

A log switch may fall between two records of one row change (it is due once the stream
reaches ``switch_at``): the records after it must go to the next log, so a method then
returns the frames written so far and the rest unframed, ``(frames, [(n_changes,
change vectors), ...])``, for the caller to append after the switch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Final, NamedTuple

from engine.embedded import bulkpack as bp
from engine.embedded import redogen as rg
from engine.embedded.dictionary import TableDef
from engine.embedded.logfile import native_frame
from engine.redo.codecs import encode_date, encode_number, encode_scaled, encode_text

Stored = Callable[[object], bytes | None]  # a column's Oracle bytes from its SQLite value
Dirty = dict[int, list[tuple[int, int, int]]]  # block -> ITL entries left by commits
# framed records, or (the frames written before a log switch fell due, the records left)
Records = bytes | tuple[bytes, list[tuple[int, bytes]]]


def stored_number(value: object) -> bytes | None:
    """Oracle bytes of a NUMBER as SQLite stores it (INTEGER or REAL); the same bytes the
    generic path gets through ``values.to_python`` and ``codecs.encode_value``."""
    if type(value) is int:
        return encode_scaled(value)
    if type(value) is float:
        if -1e12 < value < 1e12:  # at most two decimals (amounts): no repr needed
            cents = round(value * 100)  # a decimal of at most 15 digits that reads back
            if cents / 100 == value:  # as the float is what repr shows (DBL_DIG)
                return encode_scaled(cents, 1)
        text = repr(value)
        if "e" not in text and "n" not in text:
            ip, _, fp = text.partition(".")
            fp = fp.rstrip("0")
            if len(fp) % 2:
                fp += "0"
            return encode_scaled(int(ip + fp), len(fp) // 2)
        return encode_number(Decimal(text))
    if value is None or value == "":
        return None
    return encode_number(Decimal(str(value)))


def stored_date(value: object) -> bytes | None:
    if value is None or value == "":
        return None
    text = value if type(value) is str else str(value)
    raw = _DATES.get(text)
    if raw is None:
        if len(_DATES) > 4096:
            _DATES.clear()
        raw = _DATES[text] = encode_date(datetime.fromisoformat(text))
    return raw


def stored_text(value: object) -> bytes | None:
    if type(value) is str:
        return value.encode() if value else None  # as encode_text
    if value is None:
        return None
    return encode_text(str(value))


_DATES: dict[str, bytes] = {}  # workload dates repeat (one per second of redo time)
# a column's kind (N number, D date, T text: how the compiled kernel encodes it) by type
_KINDS: Final = {"NUMBER": "N", "DATE": "D"}  # any other type: T (VARCHAR2, CHAR, ...)
STORED: Final[dict[str, Stored]] = {"N": stored_number, "D": stored_date, "T": stored_text}


def codecs_of(table: TableDef) -> tuple[str, tuple[Stored, ...]]:
    """The kinds of ``table``'s columns (one letter each) and their encoders."""
    kinds = "".join(_KINDS.get(c.type, "T") for c in table.columns)
    return kinds, tuple(STORED[k] for k in kinds)


class Txn(NamedTuple):
    """A fast-path transaction as the kernel sees it (made once, when it begins)."""

    head: bp.TxHead
    ids: rg.TxnIds  # its undo record address and the blocks it changed: advanced here
    dirty: Dirty  # the database's ITL entries left by commits (``Database.dirty_blocks``)
    session: bytes  # its 5.20 session information, written with its first change


def index_key(key: bytes | None) -> bytes:
    """A one-column key as the index stores it (as :func:`redogen.index_key`)."""
    return b"\xff" if key is None else bytes((len(key),)) + key


def first_ktb(tx: Txn, dba: int, uba: bp.Uba3, scn: int = 0) -> bytes:
    """The KTB of the transaction's first change in block ``dba`` (:func:`redogen.ktb_for`;
    index leaves pass no SCN: no cleanout)."""
    tx.ids.blocks.add(dba)
    entries = tx.dirty.pop(dba, None) if scn else None
    if entries:
        return bp.ktb_first(tx.head, uba, entries, scn)
    return bp.ktb_first(tx.head, uba)


def change(tx: Txn, scn: int, dba: int, slot: int) -> tuple[bp.Change, bytes]:
    """The :data:`bulkpack.Change` of a row change about to be packed (its undo record
    address taken), and the 5.2 slot allocation that precedes a transaction's first."""
    ids = tx.ids
    x = tx.head
    pre = b""
    begin = not ids.started
    if begin:
        pre = bp.slot_cv(x, scn, (ids.undo_dba, ids.undo_seq, ids.rec + 1))
        ids.started = True
    uba = udba, useq, urec = ids.next_rec()
    if dba in ids.blocks:
        return (x, begin, scn, uba, dba, slot, bp.ktb_continue(udba, useq, urec), 0), pre
    return (x, begin, scn, uba, dba, slot, first_ktb(tx, dba, uba, scn), 2), pre


def commit(
    head: bp.TxHead, logical: int, rec_ids: bytes, scn: int, ts: int, uba: bp.Uba3, rollback: bool
) -> bytes:
    """The frame of the 5.4 that ends a transaction (a commit, or with ``rollback`` the end
    of a rollback), for stream position ``logical``; ``uba``: its last undo record."""
    return native_frame(rec_ids, logical, scn, ts, 1, bp.commit_cv(head, scn, uba, rollback))


class Table:
    """One table's row changes (one key column, at most one index: the workload's shape).

    Values are SQLite's (the Oracle bytes are what the generic path encodes from them) and
    are encoded before anything else is done: ``kinds`` gives each column's kind
    (:func:`codecs_of`), the compiled kernel encodes the values it knows by kind and hands
    the others to ``encoders``; this one always uses ``encoders``. Each method's first
    arguments say where the records go: the transaction, the writer's stream position
    (``LogWriter.logical``), its record head prefix (``LogWriter.rec_ids``), the position
    at which its log switches; then the change: SCN, time (microseconds), block address
    and slot."""

    def __init__(self, pack: bp.TablePack, kinds: str, encoders: Sequence[Stored]) -> None:
        if len(kinds) != pack.ncols or len(encoders) != pack.ncols:
            raise ValueError(f"{pack.ncols} columns, {len(kinds)} kinds, {len(encoders)} encoders")
        self.pack = pack
        self.encoders = tuple(encoders)

    def encode(self, values: Sequence[object]) -> tuple[bytes | None, ...]:
        """A row's SQLite values (all columns) as Oracle bytes."""
        return tuple([f(v) for f, v in zip(self.encoders, values, strict=True)])

    def insert(
        self,
        tx: Txn,
        logical: int,
        rec_ids: bytes,
        switch_at: int,
        scn: int,
        ts: int,
        dba: int,
        slot: int,
        row: Sequence[object],
    ) -> Records:
        """An inserted row: ``row`` is what SQLite is given, ``(_rid, values...)``: ``[5.1
        DRP undo, 11.2 IRP]``, then the index record."""
        pack = self.pack
        enc = self.encode(row[1:])
        c, pre = change(tx, scn, dba, slot)
        key = enc[pack.key_col]
        cvs = pack.insert(c, bp.columns(enc), key)
        return self._records(tx, c, pre, cvs, key, True, logical, rec_ids, switch_at, ts)

    def update(
        self,
        tx: Txn,
        logical: int,
        rec_ids: bytes,
        switch_at: int,
        scn: int,
        ts: int,
        dba: int,
        slot: int,
        set_cols: Sequence[int],
        row: Sequence[object],
        new: Sequence[object],
    ) -> Records:
        """An updated row: ``row`` is SQLite's ``(_rid, key, old values of set_cols...)``,
        ``new`` the values set: ``[5.1 URP undo, 11.5 URP]``."""
        pack = self.pack
        enc = self.encoders
        old = [enc[i](v) for i, v in zip(set_cols, row[2:], strict=True)]
        values = [enc[i](v) for i, v in zip(set_cols, new, strict=True)]
        key = enc[pack.key_col](row[1])
        c, pre = change(tx, scn, dba, slot)
        old_cols = bp.some_columns(set_cols, old)
        cvs = pack.update(c, len(set_cols), old_cols, bp.some_columns(set_cols, values), key)
        return self._records(tx, c, pre, cvs, key, None, logical, rec_ids, switch_at, ts)

    def delete(
        self,
        tx: Txn,
        logical: int,
        rec_ids: bytes,
        switch_at: int,
        scn: int,
        ts: int,
        dba: int,
        slot: int,
        row: Sequence[object],
    ) -> Records:
        """A deleted row: ``row`` is SQLite's ``(_rid, values...)``: ``[5.1 IRP undo,
        11.3 DRP]``, then the index record."""
        pack = self.pack
        enc = self.encode(row[1:])
        c, pre = change(tx, scn, dba, slot)
        key = enc[pack.key_col]
        cvs = pack.delete(c, bp.columns(enc), key)
        return self._records(tx, c, pre, cvs, key, False, logical, rec_ids, switch_at, ts)

    def _records(
        self,
        tx: Txn,
        c: bp.Change,
        pre: bytes,
        cvs: bytes,
        key: bytes | None,
        insert: bool | None,
        logical: int,
        rec_ids: bytes,
        switch_at: int,
        ts: int,
    ) -> Records:
        """The records of a row change whose row change vectors are ``cvs``: the row's (a
        transaction's first between its 5.2 slot allocation ``pre`` and its 5.20 session
        information) and, after an insert or a delete (``insert`` not None) in a table with
        an index, the index record ``[5.1 10.22 undo, 10.2 | 10.4]`` for the row's ``key``
        (same SCN, block and slot), framed from stream position ``logical`` on."""
        scn = c[2]
        if pre:
            first = native_frame(rec_ids, logical, scn, ts, 4, b"".join((pre, cvs, tx.session)))
        else:
            first = native_frame(rec_ids, logical, scn, ts, 2, cvs)
        pack = self.pack
        if insert is None or pack.index is None:
            return first
        leaf = pack.index[2]
        ids = tx.ids
        uba = udba, useq, urec = ids.next_rec()
        ktb = bp.ktb_continue(udba, useq, urec) if leaf in ids.blocks else first_ktb(tx, leaf, uba)
        ic = (c[0], False, scn, uba, c[4], c[5], ktb, 0)
        index = pack.index_change(ic, insert, index_key(key))
        logical += len(first)
        if logical >= switch_at:  # the index record goes to the next log
            return first, [(2, index)]
        return first + native_frame(rec_ids, logical, scn, ts, 2, index)
