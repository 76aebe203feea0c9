"""Rollback: putting rows back and writing the compensation redo.

Used for ROLLBACK, ROLLBACK TO SAVEPOINT and a failing statement (statement-level
atomicity): undo entries newer than a mark are applied newest first; for each, a record
``[5.6 undo applied (the entry's UBA), inverse row op (+ index ops)]`` is written, so a
reader can drop the undone change from the transaction. An instance crash uses
:func:`apply_undo` alone (no redo: orphaned transactions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine.embedded import chained
from engine.embedded import redogen as rg
from engine.embedded.dictionary import IndexDef, TableDef
from engine.embedded.errors import STATEMENT_ERRORS, SqlError
from engine.embedded.rows import (
    Row,
    by_block,
    cols_data,
    encode_row,
    index_cols,
    rid_block,
    rid_slot,
    rows_of,
    store_rows,
)
from engine.embedded.values import to_sqlite
from engine.redo.codecs import encode_value
from engine.redo.ids import Uba, make_dba
from engine.redo.model import ChangeVector, Column, IndexOp, Ktb, UndoApplied

if TYPE_CHECKING:
    from engine.embedded.state import Engine, OnThread, Txn, UndoEntry


def statement_failed(s: OnThread, db: Engine, txn: Txn, mark: int, exc: Exception) -> None:
    undo_to(s, db, txn, mark, db.next_scn())
    if isinstance(exc, STATEMENT_ERRORS):
        raise exc
    raise SqlError(f"statement failed: {exc}") from exc


def undo_to(s: OnThread, db: Engine, txn: Txn, mark: int, scn: int) -> None:
    """Undo entries past ``mark`` newest first, writing compensation redo."""
    while len(txn.entries) > mark:
        undo_entry(s, db, txn, txn.entries.pop(), scn)
    for kl, taken in list(txn.keys.items()):
        if taken >= mark:
            del txn.keys[kl]
            db.key_locks.pop(kl, None)
    keep = {(db.dictionary.tables[e.table].obj, rid) for e in txn.entries for rid in e.rids}
    for key in list(txn.locked):
        if key not in keep:
            txn.locked.discard(key)
            db.locks.pop(key, None)


def undo_entry(s: OnThread, db: Engine, txn: Txn, entry: UndoEntry, scn: int) -> None:
    """Put one entry's rows back and write its compensation record."""
    table = db.dictionary.tables[entry.table]
    before_rows = rows_of(db, table, entry.rids) if entry.kind in ("ins", "load") else {}
    apply_undo(db, table, entry)
    compensate(s, db, txn, table, scn, entry, before_rows)


def apply_undo(db: Engine, table: TableDef, entry: UndoEntry) -> None:
    name = table.sqlite_name
    if entry.kind in ("ins", "load"):
        db.conn.executemany(f'DELETE FROM "{name}" WHERE "_rid" = ?', [(r,) for r in entry.rids])
    elif entry.kind == "del":
        store_rows(db, table, list(entry.rids), [entry.before])
    else:
        assign = ", ".join(f'"{table.columns[i].name}" = ?' for i in entry.cols)
        db.conn.execute(
            f'UPDATE "{name}" SET {assign} WHERE "_rid" = ?',
            [
                *(
                    to_sqlite(table.columns[i], v)
                    for i, v in zip(entry.cols, entry.before, strict=True)
                ),
                entry.rids[0],
            ],
        )
        if entry.moved:  # a re-chain: the row's old pieces (one: not chained)
            db.keep_pieces(table, entry.rids[0], entry.pieces if len(entry.pieces) > 1 else ())


def compensate(
    s: OnThread,
    db: Engine,
    txn: Txn,
    table: TableDef,
    scn: int,
    entry: UndoEntry,
    removed: dict[int, Row],
) -> None:
    """Redo of applying one undo entry: ``5.6`` then the inverse row (and index) ops; a
    change written a record per piece of a chained row: a record per piece, newest first
    (:func:`engine.embedded.chained.compensations`), the index ops in the head's."""
    if entry.undos:
        for uba, dba, _slot, code, kdo, head in chained.compensations(table, entry):
            cv = ChangeVector(11, code, kdo, afn=table.file_no, dba=dba, obj=table.dataobj, scn=scn)
            idx: list[ChangeVector | None] = []
            if head and entry.kind in ("ins", "del"):
                row = removed.get(entry.rids[0], ()) if entry.kind == "ins" else entry.before
                idx = [
                    index_cv(table, index, scn, entry.kind == "del", dba, [(entry.rids[0], row)],
                             kdo.ktb)
                    for index in table.indexes
                ]  # fmt: skip
            db.emit(s.thread, scn, [_applied(txn, table, scn, uba), cv, *[c for c in idx if c]])
        return
    marker = _applied(txn, table, scn, entry.uba)
    ktb = Ktb(op=0x02, kind="C", uba=entry.uba)
    if entry.kind in ("ins", "load"):
        for block, group in by_block(list(entry.rids), [removed.get(r, ()) for r in entry.rids]):
            dba = make_dba(table.file_no, block)
            slots = tuple(rid_slot(r) for r, _ in group)
            if len(slots) == 1:
                body = rg.kdo("DRP", ktb, table, dba, slot=slots[0])
                cv = ChangeVector(
                    11, 3, body, afn=table.file_no, dba=dba, obj=table.dataobj, scn=scn
                )
            else:
                body = rg.kdo("QMD", ktb, table, dba, slots=slots)
                cv = ChangeVector(
                    11, 12, body, afn=table.file_no, dba=dba, obj=table.dataobj, scn=scn
                )
            idx = [index_cv(table, index, scn, False, dba, group, ktb) for index in table.indexes]
            db.emit(s.thread, scn, [marker, cv, *[c for c in idx if c is not None]])
        return
    rid = entry.rids[0]
    dba = make_dba(table.file_no, rid_block(rid))
    slot = rid_slot(rid)
    if entry.kind == "del":
        enc = encode_row(table, entry.before)
        cols = rg.columns_of(enc)
        body = rg.kdo(
            "IRP",
            ktb,
            table,
            dba,
            slot=slot,
            size=rg.row_size(cols_data(cols)),
            lb=0,
            cc=len(cols),
            columns=cols,
        )
        idx = [
            index_cv(table, index, scn, True, dba, [(rid, entry.before)], ktb)
            for index in table.indexes
        ]
        db.emit(
            s.thread,
            scn,
            [
                marker,
                ChangeVector(11, 2, body, afn=table.file_no, dba=dba, obj=table.dataobj, scn=scn),
                *[c for c in idx if c is not None],
            ],
        )
        return
    enc_cols = tuple(
        Column(i, encode_value(table.columns[i].type, v))
        for i, v in zip(entry.cols, entry.before, strict=True)
    )
    body = rg.kdo(
        "URP",
        ktb,
        table,
        dba,
        slot=slot,
        lock=0,
        cc=len(table.columns),
        nnew=len(enc_cols),
        columns=enc_cols,
    )
    db.emit(
        s.thread,
        scn,
        [
            marker,
            ChangeVector(11, 5, body, afn=table.file_no, dba=dba, obj=table.dataobj, scn=scn),
        ],
    )


def _applied(txn: Txn, table: TableDef, scn: int, uba: Uba) -> ChangeVector:
    """5.6: the undo record at ``uba`` (of a change of ``table``) applied."""
    return ChangeVector(
        5,
        6,
        UndoApplied(txn.xid, uba, table.obj, table.dataobj),
        typ=0,
        cls=txn.ids.header_cls + 1,
        afn=3,
        dba=uba.dba,
        scn=scn,
    )


def index_cv(
    table: TableDef,
    index: IndexDef,
    scn: int,
    insert: bool,
    dba: int,
    group: Sequence[tuple[int, Row]],
    ktb: Ktb,
) -> ChangeVector | None:
    cols = index_cols(table, index)
    keys = []
    for rid, row in group:
        if not row:
            continue
        enc = encode_row(table, row)
        keys.append((rg.index_key(cols, enc), rg.keydata(dba, rid_slot(rid)), rid_slot(rid)))
    if not keys:
        return None
    array = len(keys) > 1
    body = IndexOp(
        action="insert leaf row" if insert else "delete leaf row",
        ktb=ktb,
        array=array,
        itl=2,
        sno=keys[0][2],
        row_size=sum(len(k) + len(d) + 4 for k, d, _ in keys),
        keys=b"".join(k for k, _, _ in keys) if insert else b"",
        key_sizes=tuple(len(k) + len(d) for k, d, _ in keys) if insert and array else (),
        slots=tuple(s for _, _, s in keys) if array else (),
        keydata=b"".join(d for _, d, _ in keys) if insert else b"",
    )
    leaf = make_dba(table.file_no, index.block)
    return ChangeVector(
        10, 2 if insert else 4, body, afn=table.file_no, dba=leaf, obj=index.dataobj, scn=scn
    )
