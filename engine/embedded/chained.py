"""The records of an UPDATE or DELETE of a chained row (a row stored in several pieces:
:func:`engine.embedded.rows.row_pieces`, written by ``dml._redo_insert``), as Oracle writes
them: a record per piece the statement touches, head first (docs/redo_format.md, "Rows
larger than a block are chained").

- DELETE: ``[5.2] 5.1 (11.1 undo: IRP of the piece, its row flags and next-piece ROWID)
  + 11.3 DRP [+ 5.20]`` per piece, head first; the 5.1s' supplemental flags ``----F---`` on
  the head's, ``--------`` between, ``-----L--`` on the last piece's (:data:`SUPP_FB`),
  its ``before`` field the table column (from 1) of the piece's first column; the key
  columns in the head's record.
- UPDATE: the head's record first, then a record per other piece whose columns change,
  in the row's order: ``5.1 (URP undo: the old values) + 11.5 URP`` on a piece that
  changes (column numbers the piece's own, row flags the piece's, supplemental ``before``
  / ``after`` the table column of its first changed column), an 11.4 LKR of the head when
  none of its columns change (as Oracle 19c locks it); supplemental flags ``----F---`` on
  the first record and ``-C---L--`` on the last (:data:`SUPP_FB_UPDATE`), the key columns
  in the first. One record (only the head changes): the flags of a whole row.

The pieces keep the column ranges the insert gave them (the last piece takes any column
after it), a column the insert cut (:func:`engine.embedded.rows.row_pieces`: flags N, then
P) cut where it was; an UPDATE that sets a cut column writes its new value's parts cut at
the same offsets (a URP on each piece holding one); an UPDATE that a piece's block would no
longer hold, or that sets a cut column to a value that does not reach its last part, and
one that grows a row in one piece past a block, re-chain the row (:func:`rechain`: the
row laid anew, as Oracle migrates one) unless its new values fit one piece (then the caller
writes it whole, on the head).

A rollback of a change written a record per piece (an insert's, an update's, a delete's)
compensates each piece, newest first, as Oracle applies each piece's undo record:
``5.6 (that record's undo address) + the undo's row operation`` on the piece
(:func:`compensations`; the index operation in the head's record).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from engine.embedded import redogen as rg
from engine.embedded.dictionary import TableDef
from engine.embedded.rows import (
    PIECE_ROOM,
    Part,
    cols_data,
    encode_row,
    piece_bytes,
    piece_fb,
    piece_values,
    rid_block,
    rid_slot,
    row_pieces,
    supp_columns,
)
from engine.embedded.state import Engine, Pieces, PieceUndos, Txn, UndoEntry, Writer
from engine.redo.codecs import encode_value
from engine.redo.ids import Uba, make_dba
from engine.redo.model import ChangeVector, Column, Kdo, Ktb, Undo
from engine.redo.rowid import fb_value

#: supplemental flags of a chained row's DELETE records by (first record, last record):
#: the insert's (the head is the first record here)
SUPP_FB: Final = rg.SUPP_FB
#: the same for an UPDATE: Oracle 19c marks its last record ``-C---L--`` (oracdc
#: ``Ops_URP_LMN_BindingTest`` / ``Ops_URP_IRP_DRP_CFA_BindingTest``: every 19c URP + URP
#: and URP + LMN change)
SUPP_FB_UPDATE: Final = {**rg.SUPP_FB, (False, True): "-C---L--"}


def ranges(table: TableDef, pieces: Pieces) -> list[tuple[int, int, int, int, int]]:
    """``pieces`` with the last one's range reaching the table's last column (the insert
    cut trailing NULLs; a column set later goes in the last piece)."""
    out = list(pieces)
    rid, lo, _, skip, end = out[-1]
    out[-1] = (rid, lo, len(table.columns), skip, end)
    return out


def cut_columns(pieces: Pieces) -> set[int]:
    """The columns the row's pieces cut (a part in each of two pieces or more)."""
    return {hi - 1 for _, _, hi, _, end in pieces if end}


def piece_irp(
    ktb: Ktb,
    table: TableDef,
    dba: int,
    slot: int,
    cols: tuple[Column, ...],
    fb: str,
    lb: int,
    nrid: tuple[int, int] | None,
    name: str = "IRP",
) -> Kdo:
    """An IRP (or ``name`` ORP) of one row piece: its columns (numbered from the piece's
    first), its flags ``fb`` (:func:`engine.embedded.rows.piece_fb`), the next piece's
    address ``nrid``: an insert's redo (dml._redo_insert), a delete's undo
    (:func:`delete`), a re-chained row's pieces (:func:`rechain`)."""
    return rg.kdo(name, ktb, table, dba, slot=slot, size=rg.row_size(cols_data(cols)),
                  fb=fb, lb=lb, cc=len(cols), columns=cols, nrid=nrid)  # fmt: skip


def piece_row(enc: rg.Row, part: Part, last: bool) -> rg.Row:
    """A piece's values (a cut column's part), the last piece's trailing NULLs cut, as the
    insert stored it."""
    vals = piece_values(enc, part)
    return rg.columns_of_row(vals) if last else vals


def delete(
    s: Writer, db: Engine, txn: Txn, table: TableDef, scn: int, pieces: Pieces, enc: rg.Row
) -> PieceUndos:
    """The records of a DELETE of the chained row ``enc`` (all its columns encoded), head
    first (its index records are the caller's: dml._redo_delete); returns each record's
    piece and undo address (what a rollback names), head first."""
    parts = ranges(table, pieces)
    last = len(parts) - 1
    addr = [(make_dba(table.file_no, rid_block(r)), rid_slot(r)) for r, *_ in parts]
    undos: list[tuple[int, Uba]] = []
    for n, (_, lo, hi, skip, end) in enumerate(parts):
        dba, slot = addr[n]
        pre, _ = s.first_cvs(txn, scn)
        p = (lo, hi, skip, end)
        cols = tuple(Column(i, v) for i, v in enumerate(piece_row(enc, p, n == last)))
        nrid = addr[n + 1] if n < last else None
        fb = piece_fb(n == 0, n == last, p)
        undo_kdo = piece_irp(rg.UNDO_KTB, table, dba, slot, cols, fb, 0, nrid)
        supp = supp_columns(table, enc) if n == 0 else ()
        undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, supp)
        undo_cv = _with_supp(undo_cv, SUPP_FB[(n == 0, n == last)], lo + 1, 0)
        undos.append((n, uba))
        txn.ids.started = True
        ktb, _ = rg.ktb_for(txn.ids, dba, uba, db.dirty_blocks, scn)
        redo = rg.kdo("DRP", ktb, table, dba, slot=slot)
        cvs = [*pre, undo_cv, rg.row_redo(txn.ids, table, scn, dba, 3, redo), *s.session_cv(txn)]
        db.emit(s.thread, scn, cvs, switch=n == last)  # no log switch inside the row
    return tuple(undos)


def fits(table: TableDef, pieces: Pieces, enc: rg.Row, set_cols: Sequence[int] = ()) -> bool:
    """Whether each piece of the chained row still holds its columns of ``enc``, and each
    cut column of ``set_cols`` (the ones an update sets) still reaches the last piece
    that holds a part of it (its new value is cut where the old one was: every part of it
    in the piece it was in)."""
    for c in cut_columns(pieces).intersection(set_cols):
        v = enc[c]
        if v is None or len(v) <= max(skip for _, lo, _, skip, _ in pieces if lo == c):
            return False
    parts = ranges(table, pieces)
    last = len(parts) - 1
    return all(
        piece_bytes(piece_row(enc, (lo, hi, skip, end), n == last), n == last) <= PIECE_ROOM
        for n, (_, lo, hi, skip, end) in enumerate(parts)
    )


def update(
    s: Writer,
    db: Engine,
    txn: Txn,
    table: TableDef,
    scn: int,
    pieces: Pieces,
    old: rg.Row,
    new: rg.Row,
    set_cols: list[int],
) -> PieceUndos | None:
    """The records of an UPDATE of columns ``set_cols`` of the chained row ``old`` (all its
    columns encoded) to ``new``: returns each record's piece and undo address, head first,
    or None (nothing written) when a piece would no longer hold its columns."""
    if not fits(table, pieces, new, set_cols):
        return None
    parts = ranges(table, pieces)
    last = len(parts) - 1
    changed = [sorted(c for c in set_cols if lo <= c < hi) for _, lo, hi, _, _ in parts]
    written = [n for n in range(len(parts)) if n == 0 or changed[n]]
    undos: list[tuple[int, Uba]] = []
    for k, n in enumerate(written):
        rid, lo, hi, skip, end = parts[n]
        dba, slot = make_dba(table.file_no, rid_block(rid)), rid_slot(rid)
        first, final = k == 0, k == len(written) - 1
        pre, _ = s.first_cvs(txn, scn)
        part = (lo, hi, skip, end)
        fb = piece_fb(n == 0, n == last, part)
        cols = changed[n]
        supp = supp_columns(table, old) if first else ()

        if cols:
            undo_kdo = _urp(rg.UNDO_KTB, table, dba, slot, fb, 0, part, cols, old)
        else:  # the head, none of its columns changed: locked (11.4 LKR)
            undo_kdo = rg.kdo("LKR", rg.UNDO_KTB, table, dba, slot=slot, fb=fb)
        undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, supp)
        at = cols[0] + 1 if cols else 0
        undo_cv = _with_supp(undo_cv, SUPP_FB_UPDATE[(first, final)], at, at)
        undos.append((n, uba))
        txn.ids.started = True
        ktb, _ = rg.ktb_for(txn.ids, dba, uba, db.dirty_blocks, scn)
        if cols:
            redo = _urp(ktb, table, dba, slot, fb, 1, part, cols, new)
            cv = rg.row_redo(txn.ids, table, scn, dba, 5, redo)
        else:
            lkr = rg.kdo("LKR", ktb, table, dba, slot=slot, lock=1)
            cv = rg.row_redo(txn.ids, table, scn, dba, 4, lkr)
        db.emit(s.thread, scn, [*pre, undo_cv, cv, *s.session_cv(txn)], switch=final)
    return tuple(undos)


def rechain(
    s: Writer,
    db: Engine,
    txn: Txn,
    table: TableDef,
    scn: int,
    rid: int,
    pieces: Pieces | None,
    old: rg.Row,
    new: rg.Row,
) -> tuple[Pieces, Pieces, PieceUndos] | None:
    """The records of an UPDATE that the row's pieces (``pieces``; None: a row in one piece)
    no longer hold (:func:`fits`; a row grown past a block) and that makes more than one
    piece (else None, nothing written: the caller writes it whole): the row is laid anew
    (:func:`engine.embedded.rows.row_pieces` of ``new``, all its columns encoded; the head
    stays at ``rid``, the other pieces in new blocks), a record per piece, as Oracle
    migrates a row (oracdc's ``IRP + ORP``, generalized):

    - the new layout's pieces other than the head, the last first: ``5.1 (DRP undo) + 11.2
      IRP`` (row flags and next-piece ROWID as an insert's);
    - the old layout's pieces other than the head, the last first: ``5.1 (IRP undo: the
      piece as it was) + 11.3 DRP``;
    - the head: ``5.1 (ORP undo: the head as it was) + 11.6 ORP`` (the new head);

    the 5.1s' supplemental flags ``----F---`` on the first record, ``-----L--`` on the head's
    (the last), ``--------`` between, the key columns in the first, ``before`` / ``after``
    the table column (from 1) of each piece's first column. Every reader binds it into one
    UPDATE on the head's ROWID with the whole row in both images. Returns the old pieces
    (one for a row in one piece), the new ones, and each record's piece (counting the old
    pieces, then the new) and undo address."""
    laid = relaid(db, table, rid, pieces, new)
    if laid is None:
        return None
    was, now = laid
    olds, news = ranges(table, was), list(now)
    order = rechain_order(len(olds), len(news))
    undos: list[tuple[int, Uba]] = []
    for k, (index, is_old, n) in enumerate(order):
        first, last = k == 0, k == len(order) - 1
        dba, slot = _address(table, (olds if is_old else news)[n][0])
        pre, _ = s.first_cvs(txn, scn)
        if is_old:  # an old piece removed (the head overwritten): its undo puts it back
            ocols, ofb, onrid = _piece(table, olds, n, old)
            name = "ORP" if n == 0 else "IRP"
            undo_kdo = piece_irp(rg.UNDO_KTB, table, dba, slot, ocols, ofb, 0, onrid, name)
            at = (1, 1) if n == 0 else (olds[n][1] + 1, 0)
        else:  # a new piece: its undo removes it
            undo_kdo = rg.kdo("DRP", rg.UNDO_KTB, table, dba, slot=slot)
            at = (0, news[n][1] + 1)
        supp = supp_columns(table, old) if first else ()
        undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, supp)
        undo_cv = _with_supp(undo_cv, SUPP_FB[(first, last)], *at)
        undos.append((index, uba))
        txn.ids.started = True
        ktb, _ = rg.ktb_for(txn.ids, dba, uba, db.dirty_blocks, scn)
        if is_old and n:
            cv = rg.row_redo(txn.ids, table, scn, dba, 3, rg.kdo("DRP", ktb, table, dba, slot=slot))
        else:  # a new piece, or the new head over the old
            cols, fb, nrid = _piece(table, news, n, new)
            kdo = piece_irp(ktb, table, dba, slot, cols, fb, 2, nrid, "ORP" if n == 0 else "IRP")
            cv = rg.row_redo(txn.ids, table, scn, dba, 6 if n == 0 else 2, kdo)
        db.emit(s.thread, scn, [*pre, undo_cv, cv, *s.session_cv(txn)], switch=last)
    return was, now, tuple(undos)


def relaid(
    db: Engine, table: TableDef, rid: int, pieces: Pieces | None, new: rg.Row
) -> tuple[Pieces, Pieces] | None:
    """Where a re-chain puts row ``rid`` (its pieces ``pieces``; None: a row in one piece)
    whose new values ``new`` (every column encoded) make more than one piece (else None):
    its old pieces (one for a row in one piece) and its new ones, cut as an insert of
    ``new`` would be (:func:`engine.embedded.rows.row_pieces`), the head at ``rid`` and
    the others in new blocks (allocated here)."""
    layout = row_pieces(rg.columns_of_row(new))
    if len(layout) < 2:
        return None
    was: Pieces = tuple(pieces) if pieces else ((rid, 0, len(table.columns), 0, 0),)
    rids = [rid, *(db.allocate(table, 1, fresh_block=True)[0] for _ in layout[1:])]
    return was, tuple((r, *part) for r, part in zip(rids, layout, strict=True))


def rechain_order(olds: int, news: int) -> list[tuple[int, bool, int]]:
    """A re-chain's records in log order (:func:`rechain`), for ``olds`` old pieces and
    ``news`` new ones: (the piece's index as the undo addresses count it, the old pieces
    then the new; whether it is an old piece; its index in its layout): the new pieces but
    the head, the last first; the old pieces but the head, the last first; the head."""
    order = [(olds + n, False, n) for n in range(news - 1, 0, -1)]
    order += [(n, True, n) for n in range(olds - 1, 0, -1)]
    return [*order, (0, True, 0)]


def _address(table: TableDef, rid: int) -> tuple[int, int]:
    """The block address and slot of row piece ``rid``."""
    return make_dba(table.file_no, rid_block(rid)), rid_slot(rid)


def _piece(
    table: TableDef, parts: Sequence[tuple[int, int, int, int, int]], n: int, row: rg.Row
) -> tuple[tuple[Column, ...], str, tuple[int, int] | None]:
    """Piece ``n`` of ``parts`` (:func:`ranges`) of ``row``: its columns (numbered from its
    first), its row flags and the next piece's address."""
    _, lo, hi, skip, end = parts[n]
    part, final = (lo, hi, skip, end), n == len(parts) - 1
    cols = tuple(Column(i, v) for i, v in enumerate(piece_row(row, part, final)))
    nrid = None if final else _address(table, parts[n + 1][0])
    return cols, piece_fb(n == 0, final, part), nrid


#: a piece's compensation: its undo address, block address, slot, the row operation's
#: code (11.x) and KDO, and whether it is the head's (whose record takes the index ops)
Compensation = tuple[Uba, int, int, int, Kdo, bool]


def compensations(table: TableDef, entry: UndoEntry) -> list[Compensation]:
    """What rolling back ``entry`` (a change written a record per piece: its ``undos``)
    writes, newest record first: per piece, the undo of that piece's change, as Oracle
    applies each undo record: an insert's piece deleted (DRP), a delete's piece put back
    (IRP, its flags and next-piece ROWID), an update's piece's columns set back (URP, its
    flags, its columns numbered the piece's way), a locked head unlocked (LKR); a
    re-chain's (:func:`rechain`) head overwritten back (ORP), its old pieces put back (IRP)
    and its new ones removed (DRP)."""
    parts = ranges(table, entry.pieces)
    last = len(parts) - 1
    if entry.kind == "del":
        old = encode_row(table, entry.before)
    else:
        old = encode_row_values(table, entry.cols, entry.before)
    out: list[Compensation] = []
    for n, uba in reversed(entry.undos):
        ktb = Ktb(op=0x02, kind="C", uba=uba)
        if entry.moved and n > last:  # a re-chain's new piece: removed
            dba, slot = _address(table, entry.moved[n - len(parts)][0])
            out.append((uba, dba, slot, 3, rg.kdo("DRP", ktb, table, dba, slot=slot), False))
            continue
        rid, lo, hi, skip, end = parts[n]
        dba, slot = make_dba(table.file_no, rid_block(rid)), rid_slot(rid)
        part = (lo, hi, skip, end)
        fb = piece_fb(n == 0, n == last, part)
        if entry.kind == "ins":
            kdo, code = rg.kdo("DRP", ktb, table, dba, slot=slot), 3
        elif entry.kind == "del" or entry.moved:  # (a re-chain: the old piece put back)
            cols, _, nrid = _piece(table, parts, n, old)
            orp = bool(entry.moved) and n == 0  # (the head overwritten back)
            kdo = piece_irp(ktb, table, dba, slot, cols, fb, 0, nrid, "ORP" if orp else "IRP")
            code = 6 if orp else 2
        else:
            set_cols = sorted(c for c in entry.cols if lo <= c < hi)
            if set_cols:
                kdo, code = _urp(ktb, table, dba, slot, fb, 0, part, set_cols, old), 5
            else:  # the head, locked
                kdo, code = rg.kdo("LKR", ktb, table, dba, slot=slot, fb=fb), 4
        out.append((uba, dba, slot, code, kdo, n == 0))
    return out


def encode_row_values(table: TableDef, cols: Sequence[int], values: Sequence[object]) -> rg.Row:
    """A row of ``table``'s width holding ``values`` (Python values) encoded at columns
    ``cols`` (the others NULL)."""
    out: list[bytes | None] = [None] * len(table.columns)
    for i, v in zip(cols, values, strict=True):
        out[i] = encode_value(table.columns[i].type, v)
    return tuple(out)


def _urp(
    ktb: Ktb,
    table: TableDef,
    dba: int,
    slot: int,
    fb: str,
    lock: int,
    part: Part,
    cols: list[int],
    row: rg.Row,
) -> Kdo:
    """A URP of one row piece ``part`` (flags ``fb``) setting table columns ``cols`` to
    their values in ``row`` (a cut column: the piece's part of it), numbered the piece's
    way."""
    lo, hi = part[0], part[1]
    vals = piece_values(row, part)
    columns = tuple(Column(i - lo, vals[i - lo]) for i in cols)
    return rg.kdo("URP", ktb, table, dba, slot=slot, flag=fb_value(fb), lock=lock, cc=hi - lo,
                  nnew=len(cols), columns=columns)  # fmt: skip


def _with_supp(cv: ChangeVector, fb: str, before: int, after: int) -> ChangeVector:
    """A 5.1 change vector whose supplemental header says ``fb``, ``before``, ``after``."""
    body = cv.body
    assert isinstance(body, Undo)
    return replace(cv, body=replace(body, supp_fb=fb, supp_before=before, supp_after=after))
