"""DML statements and the redo they write (single-row, array, direct path).

Each function runs one statement for a session: checks and takes locks, changes SQLite,
writes the statement's redo records (shapes in :mod:`engine.embedded.redogen`) and keeps an
undo entry per change in the session's transaction; on any error the statement alone is
rolled back (:func:`engine.embedded.undo.statement_failed`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from engine.embedded import chained
from engine.embedded import redogen as rg
from engine.embedded.dictionary import TableDef
from engine.embedded.errors import STATEMENT_ERRORS, ConstraintError, RowLockedError, SqlError
from engine.embedded.rows import (
    FIELD_ROOM,
    PIECE_ROOM,
    Row,
    by_block,
    cols_data,
    constraint_error,
    encode_row,
    index_cols,
    piece_bytes,
    piece_fb,
    piece_values,
    rid_block,
    rid_slot,
    row_bytes,
    row_pieces,
    store_rows,
    supp_columns,
)
from engine.embedded.session import Engine, Session, Txn, UndoEntry
from engine.embedded.undo import statement_failed
from engine.embedded.values import to_python, to_sqlite
from engine.redo.ids import Uba, make_dba
from engine.redo.model import ChangeVector, Column, DirectLoad


def insert(s: Session, db: Engine, table: TableDef, rows: Sequence[Row], *, array: bool) -> int:
    """Conventional insert: one row = 11.2; ``array`` (INSERT ... SELECT) = 11.11 per block."""
    if not rows:
        return 0
    s.check_direct(s.txn, table)
    scn = db.next_scn()
    txn = s.begin(db, scn)
    mark = len(txn.entries)
    try:
        # encoded (and judged loggable) before anything changes: the statement fails whole
        encoded = [encode_row(table, r) for r in rows]
        # (issue 29) a row larger than one KDO's 16-bit size goes as an 11.2 all the same:
        # each column is a field of its own, the size saturates (redogen.kdo); a value no
        # field holds was refused above (encode_row)
        # an array insert's rows go in one field per block (11.11), each whole: a statement
        # with a row larger than a block (which is chained) goes as single-row inserts
        as_array = (
            array
            and len(rows) > 1
            and all(piece_bytes(rg.columns_of_row(e)) <= PIECE_ROOM for e in encoded)
        )
        s.lock_keys(db, txn, table, rows)
        rids = db.allocate(table, len(rows))
        store_rows(db, table, rids, rows)
        s.lock_rows(db, txn, table, rids)
        if as_array:
            _redo_array(s, db, txn, table, scn, rids, encoded)
        else:
            for rid, enc in zip(rids, encoded, strict=True):
                _redo_insert(s, db, txn, table, scn, rid, enc)
    except (*STATEMENT_ERRORS, sqlite3.Error) as exc:
        statement_failed(s, db, txn, mark, exc)
    return len(rows)


def _redo_insert(
    s: Session, db: Engine, txn: Txn, table: TableDef, scn: int, rid: int, enc: rg.Row
) -> None:
    """``[5.1 (DRP undo), 11.2 IRP]`` of a row stored at ``rid``, then its index records.
    A row larger than a block (:data:`~engine.embedded.rows.PIECE_ROOM`) as Oracle chains
    it: a record per piece, the last piece first and the head (at ``rid``) last; the head's
    flags ``--H-F---``, a middle piece's ``--------``, the last's ``-----L--``; every piece
    but the last names the next one (nrid); the 5.1s' supplemental flags F on the first
    record and L on the last, as Oracle 19c logs it (:data:`redogen.SUPP_FB`; the key
    columns in the first record). The other pieces' ROWIDs
    are allocated in new blocks; the index entries point at the head; no log switch falls
    inside the row."""
    pieces = row_pieces(rg.columns_of_row(enc))
    rids = [rid, *(db.allocate(table, 1, fresh_block=True)[0] for _ in pieces[1:])]
    addr = [(make_dba(table.file_no, rid_block(r)), rid_slot(r)) for r in rids]
    last = len(pieces) - 1
    uba: Uba | None = None
    undos: list[tuple[int, Uba]] = []
    for n in range(last, -1, -1):  # the last piece first, the head last
        part = pieces[n]
        dba, slot = addr[n]
        pre, _ = s.first_cvs(txn, scn)
        supp_fb = rg.SUPP_FB[(n == last, n == 0)]
        undo_kdo = rg.kdo("DRP", rg.UNDO_KTB, table, dba, slot=slot, fb=supp_fb)
        supp = supp_columns(table, enc) if n == last else ()
        undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, supp)
        undos.append((n, uba))
        txn.ids.started = True
        ktb, _ = rg.ktb_for(txn.ids, dba, uba, db.dirty_blocks, scn)
        vals = tuple(Column(i, v) for i, v in enumerate(piece_values(enc, part)))
        nrid = addr[n + 1] if n < last else None
        fb = piece_fb(n == 0, n == last, part)
        redo = chained.piece_irp(ktb, table, dba, slot, vals, fb, 2, nrid)
        cvs = [*pre, undo_cv, rg.row_redo(txn.ids, table, scn, dba, 2, redo), *s.session_cv(txn)]
        db.emit(s.thread, scn, cvs, switch=n == 0)  # no log switch inside the row
    assert uba is not None
    if not last:
        txn.entries.append(UndoEntry("ins", table.qualified, (rid,), uba))
    else:  # where the pieces are, for its UPDATEs and DELETEs and a rollback (chained.py)
        kept = tuple((r, *part) for r, part in zip(rids, pieces, strict=True))
        db.keep_pieces(table, rid, kept)
        txn.entries.append(
            UndoEntry("ins", table.qualified, (rid,), uba, pieces=kept, undos=tuple(undos))
        )
    for index in table.indexes:
        key = rg.index_key(index_cols(table, index), enc)
        dba, slot = addr[0]
        db.emit(
            s.thread,
            scn,
            rg.index_change(txn.ids, table, index, scn, True, [(key, rg.keydata(dba, slot), slot)]),
        )


def _redo_array(
    s: Session,
    db: Engine,
    txn: Txn,
    table: TableDef,
    scn: int,
    rids: list[int],
    encoded: list[rg.Row],
) -> None:
    for block, group in by_block(rids, encoded, row_bytes):
        dba = make_dba(table.file_no, block)
        slots = tuple(rid_slot(r) for r, _ in group)
        pre, _ = s.first_cvs(txn, scn)
        undo_kdo = rg.kdo("QMD", rg.UNDO_KTB, table, dba, slots=slots)
        undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, ())
        txn.ids.started = True
        ktb, _ = rg.ktb_for(txn.ids, dba, uba, db.dirty_blocks, scn)
        rows = rg.rows_image([(rid_slot(r), e) for r, e in group])
        redo = rg.kdo("QMI", ktb, table, dba, lock=1, rows=rows)
        cvs = [
            *pre,
            undo_cv,
            rg.row_redo(txn.ids, table, scn, dba, 11, redo),
            *s.session_cv(txn),
        ]
        db.emit(s.thread, scn, cvs)
        txn.entries.append(UndoEntry("ins", table.qualified, tuple(r for r, _ in group), uba))
        _index_array(s, db, txn, table, scn, dba, group)


def _index_array(
    s: Session,
    db: Engine,
    txn: Txn,
    table: TableDef,
    scn: int,
    dba: int,
    group: list[tuple[int, rg.Row]],
) -> None:
    for index in table.indexes:
        cols = index_cols(table, index)
        keys = sorted(
            (rg.index_key(cols, e), rg.keydata(dba, rid_slot(r)), rid_slot(r)) for r, e in group
        )
        db.emit(s.thread, scn, rg.index_change(txn.ids, table, index, scn, True, keys))


def direct_insert(s: Session, db: Engine, table: TableDef, rows: Sequence[Row]) -> int:
    """INSERT /*+ APPEND */: new blocks above the high-water mark, 19.1 per block."""
    if not rows:
        return 0
    s.check_direct(s.txn, table)
    scn = db.next_scn()
    txn = s.begin(db, scn)
    mark = len(txn.entries)
    try:
        s.lock_rows(db, txn, table, ())
        holders = {h for (obj, _), h in db.locks.items() if obj == table.obj}
        if holders - {s.name}:
            raise RowLockedError(
                f"resource busy: {table.qualified} has rows locked by another session"
            )
        encoded = [encode_row(table, r) for r in rows]  # before anything changes
        for e in encoded:  # a block image is one field (19.1): each row must fit it
            if row_bytes(e) > FIELD_ROOM:
                raise SqlError(
                    f"row of {row_bytes(e)} bytes for {table.qualified} is larger than a "
                    f"direct load's block image holds ({FIELD_ROOM} bytes)",
                    "GGS-SRC-0203",
                )
        s.lock_keys(db, txn, table, rows)
        rids = db.allocate(table, len(rows), fresh_block=True)
        store_rows(db, table, rids, rows)
        db.table_locks[table.obj] = s.name
        txn.direct_tables.add(table.obj)
        pre, _ = s.first_cvs(txn, scn)
        begin = not txn.ids.started
        uba = txn.ids.next_uba()
        from engine.redo.model import Undo

        undo = Undo(
            xid=txn.xid,
            opc=(5, 7),
            objn=0,
            objd=0,
            tsn=0,
            slt=txn.xid.slot,
            flg=0x10,
            seq=uba.seq,
            rec=uba.rec,
            begin=begin,
            logon_user=txn.ids.logon_user if begin else 0,
        )
        txn.ids.started = True
        undo_cv = ChangeVector(
            5,
            1,
            undo,
            typ=0,
            cls=txn.ids.header_cls + 1,
            afn=3,
            dba=txn.ids.undo_dba,
            scn=scn,
            seq=2 if begin else 1,
        )
        db.emit(s.thread, scn, [*pre, undo_cv, *s.session_cv(txn)])
        for block, group in by_block(rids, encoded, row_bytes):
            dba = make_dba(table.file_no, block)
            body = DirectLoad(
                xid=txn.xid,
                seg_obj=table.dataobj,
                csc=scn,
                bdba=dba,
                rows=rg.rows_image([(rid_slot(r), e) for r, e in group]),
            )
            db.emit(
                s.thread,
                scn,
                [
                    ChangeVector(24, 6, None, marker=True),
                    ChangeVector(
                        19,
                        1,
                        body,
                        typ=1,
                        cls=1,
                        afn=table.file_no,
                        dba=dba,
                        obj=table.dataobj,
                        scn=scn,
                    ),
                ],
            )
            _index_array(s, db, txn, table, scn, dba, group)
        txn.entries.append(UndoEntry("load", table.qualified, tuple(rids), uba))
    except (*STATEMENT_ERRORS, sqlite3.Error) as exc:
        statement_failed(s, db, txn, mark, exc)
    return len(rows)


def update(
    s: Session,
    db: Engine,
    table: TableDef,
    set_cols: list[int],
    set_sql: list[str],
    where_sql: str,
    params: Sequence[object] = (),
) -> int:
    s.check_direct(s.txn, table)
    names = ", ".join(f'"{c.name}"' for c in table.columns)
    exprs = "".join(f", {e}" for e in set_sql)
    sql = f'SELECT "_rid", {names}{exprs} FROM "{table.sqlite_name}"{where_sql} ORDER BY "_rid"'
    try:
        found = db.conn.execute(sql, params).fetchall()
    except sqlite3.Error as exc:
        raise SqlError(f"cannot evaluate statement: {exc}") from exc
    if not found:
        return 0
    scn = db.next_scn()
    txn = s.begin(db, scn)
    mark = len(txn.entries)
    ncol = len(table.columns)
    try:
        s.lock_rows(db, txn, table, [r[0] for r in found])
        if table.indexes:
            images: list[Row] = []
            for r in found:
                old_img = [
                    to_python(c, v) for c, v in zip(table.columns, r[1 : 1 + ncol], strict=True)
                ]
                images.append(tuple(old_img))
                for i, v in zip(set_cols, r[1 + ncol :], strict=True):
                    old_img[i] = to_python(table.columns[i], v)
                images.append(tuple(old_img))
            s.lock_keys(db, txn, table, images, set(set_cols))
        assign = ", ".join(f'"{table.columns[i].name}" = ?' for i in set_cols)
        for r in found:
            rid = r[0]
            old = tuple(
                to_python(c, v) for c, v in zip(table.columns, r[1 : 1 + ncol], strict=True)
            )
            new_vals = [
                to_python(table.columns[i], v) for i, v in zip(set_cols, r[1 + ncol :], strict=True)
            ]
            for i, v in zip(set_cols, new_vals, strict=True):
                if v is None and not table.columns[i].nullable:
                    raise ConstraintError(
                        f'cannot update ("{table.owner}"."{table.name}".'
                        f'"{table.columns[i].name}") to NULL',
                        "ORA-01407",
                    )
            new = list(old)
            for i, v in zip(set_cols, new_vals, strict=True):
                new[i] = v
            encode_row(table, tuple(new))  # a value no redo field holds: before any change
            try:
                db.conn.execute(
                    f'UPDATE "{table.sqlite_name}" SET {assign} WHERE "_rid" = ?',
                    [
                        *(
                            to_sqlite(table.columns[i], v)
                            for i, v in zip(set_cols, new_vals, strict=True)
                        ),
                        rid,
                    ],
                )
            except sqlite3.IntegrityError as exc:
                raise constraint_error(table, exc) from exc
            _redo_update(s, db, txn, table, scn, rid, old, tuple(new), set_cols)
    except (*STATEMENT_ERRORS, sqlite3.Error) as exc:
        statement_failed(s, db, txn, mark, exc)
    return len(found)


def _redo_update(
    s: Session,
    db: Engine,
    txn: Txn,
    table: TableDef,
    scn: int,
    rid: int,
    old: Row,
    new: Row,
    set_cols: list[int],
) -> None:
    dba = make_dba(table.file_no, rid_block(rid))
    slot = rid_slot(rid)
    old_enc = encode_row(table, old)
    new_enc = encode_row(table, new)
    chain = db.chained.get(table.obj)
    pieces = chain.get(rid) if chain else None
    undos = None
    if pieces is not None:  # a record per piece changed (and the head's)
        undos = chained.update(s, db, txn, table, scn, pieces, old_enc, new_enc, set_cols)
    moved = None
    if undos is None and (pieces or piece_bytes(rg.columns_of_row(new_enc)) > PIECE_ROOM):
        moved = chained.rechain(s, db, txn, table, scn, rid, pieces, old_enc, new_enc)
    before = tuple(old[i] for i in set_cols)
    if moved is not None:  # the row laid anew in pieces (the head's record last)
        was, now, undos = moved
        db.keep_pieces(table, rid, now)
        every = tuple(range(len(table.columns)))
        entry = UndoEntry("upd", table.qualified, (rid,), undos[-1][1], old, every, was, undos, now)
    elif undos is None:
        uba = _update_whole(s, db, txn, table, scn, dba, slot, old_enc, new_enc, set_cols)
        entry = UndoEntry("upd", table.qualified, (rid,), uba, before, tuple(set_cols))
    else:
        assert pieces is not None
        entry = UndoEntry(
            "upd", table.qualified, (rid,), undos[0][1], before, tuple(set_cols), pieces, undos
        )
    txn.entries.append(entry)
    for index in table.indexes:
        cols = index_cols(table, index)
        if not set(cols) & set(set_cols):
            continue
        old_key, new_key = rg.index_key(cols, old_enc), rg.index_key(cols, new_enc)
        if old_key == new_key:
            continue
        kd = rg.keydata(dba, slot)
        db.emit(
            s.thread,
            scn,
            rg.index_change(txn.ids, table, index, scn, False, [(old_key, kd, slot)]),
        )
        db.emit(
            s.thread,
            scn,
            rg.index_change(txn.ids, table, index, scn, True, [(new_key, kd, slot)]),
        )


def _update_whole(
    s: Session,
    db: Engine,
    txn: Txn,
    table: TableDef,
    scn: int,
    dba: int,
    slot: int,
    old_enc: rg.Row,
    new_enc: rg.Row,
    set_cols: list[int],
) -> Uba:
    """``[5.1 (URP undo: the old values), 11.5 URP]`` of a row in one piece (or a chained
    row whose pieces would no longer hold it and whose new values fit one piece: written
    whole on the head)."""
    pre, _ = s.first_cvs(txn, scn)
    undo_kdo = rg.kdo(
        "URP",
        rg.UNDO_KTB,
        table,
        dba,
        slot=slot,
        lock=0,
        cc=len(table.columns),
        nnew=len(set_cols),
        columns=tuple(Column(i, old_enc[i]) for i in set_cols),
    )
    undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, supp_columns(table, old_enc))
    txn.ids.started = True
    ktb, _ = rg.ktb_for(txn.ids, dba, uba, db.dirty_blocks, scn)
    redo = rg.kdo(
        "URP",
        ktb,
        table,
        dba,
        slot=slot,
        lock=1,
        cc=len(table.columns),
        nnew=len(set_cols),
        columns=tuple(Column(i, new_enc[i]) for i in set_cols),
    )
    db.emit(
        s.thread,
        scn,
        [*pre, undo_cv, rg.row_redo(txn.ids, table, scn, dba, 5, redo), *s.session_cv(txn)],
    )
    return uba


def delete(
    s: Session, db: Engine, table: TableDef, where_sql: str, params: Sequence[object] = ()
) -> int:
    s.check_direct(s.txn, table)
    names = ", ".join(f'"{c.name}"' for c in table.columns)
    try:
        found = db.conn.execute(
            f'SELECT "_rid", {names} FROM "{table.sqlite_name}"{where_sql} ORDER BY "_rid"',
            params,
        ).fetchall()
    except sqlite3.Error as exc:
        raise SqlError(f"cannot evaluate statement: {exc}") from exc
    if not found:
        return 0
    scn = db.next_scn()
    txn = s.begin(db, scn)
    mark = len(txn.entries)
    try:
        s.lock_rows(db, txn, table, [r[0] for r in found])
        if table.indexes:
            s.lock_keys(
                db,
                txn,
                table,
                [
                    tuple(to_python(c, v) for c, v in zip(table.columns, r[1:], strict=True))
                    for r in found
                ],
            )
        for r in found:
            rid = r[0]
            old = tuple(to_python(c, v) for c, v in zip(table.columns, r[1:], strict=True))
            db.conn.execute(f'DELETE FROM "{table.sqlite_name}" WHERE "_rid" = ?', (rid,))
            _redo_delete(s, db, txn, table, scn, rid, old)
    except (*STATEMENT_ERRORS, sqlite3.Error) as exc:
        statement_failed(s, db, txn, mark, exc)
    return len(found)


def _redo_delete(
    s: Session, db: Engine, txn: Txn, table: TableDef, scn: int, rid: int, old: Row
) -> None:
    dba = make_dba(table.file_no, rid_block(rid))
    slot = rid_slot(rid)
    enc = encode_row(table, old)
    chain = db.chained.get(table.obj)
    pieces = chain.get(rid) if chain else None
    if pieces is not None:  # a record per piece, head first
        undos = chained.delete(s, db, txn, table, scn, pieces, enc)
        entry = UndoEntry("del", table.qualified, (rid,), undos[0][1], old, (), pieces, undos)
    else:
        entry = UndoEntry(
            "del",
            table.qualified,
            (rid,),
            _delete_whole(s, db, txn, table, scn, dba, slot, enc),
            old,
        )
    txn.entries.append(entry)
    for index in table.indexes:
        key = rg.index_key(index_cols(table, index), enc)
        db.emit(
            s.thread,
            scn,
            rg.index_change(
                txn.ids, table, index, scn, False, [(key, rg.keydata(dba, slot), slot)]
            ),
        )


def _delete_whole(
    s: Session, db: Engine, txn: Txn, table: TableDef, scn: int, dba: int, slot: int, enc: rg.Row
) -> Uba:
    """``[5.1 (IRP undo: the row), 11.3 DRP]`` of a row in one piece."""
    cols = rg.columns_of(enc)
    pre, _ = s.first_cvs(txn, scn)
    undo_kdo = rg.kdo(
        "IRP",
        rg.UNDO_KTB,
        table,
        dba,
        slot=slot,
        size=rg.row_size(cols_data(cols)),
        lb=0,
        cc=len(cols),
        columns=cols,
    )
    undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, supp_columns(table, enc))
    txn.ids.started = True
    ktb, _ = rg.ktb_for(txn.ids, dba, uba, db.dirty_blocks, scn)
    redo = rg.kdo("DRP", ktb, table, dba, slot=slot)
    db.emit(
        s.thread,
        scn,
        [*pre, undo_cv, rg.row_redo(txn.ids, table, scn, dba, 3, redo), *s.session_cv(txn)],
    )
    return uba
