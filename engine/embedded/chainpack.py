"""The fast path's records of an UPDATE or DELETE of a chained row, and of an UPDATE that
lays a row anew in pieces (:func:`rechain`: a chained row its pieces no longer hold, a row
grown past a block): the same bytes as the generic path's (:mod:`engine.embedded.chained`,
which states the shapes), packed with the row-change kernel's primitives
(:mod:`engine.embedded.redopack`), as ``redopack.Table.insert_pieces`` packs a chained
insert. Python only (the compiled kernel writes rows in one piece; a chained row is rare):
:class:`engine.embedded.bulk.BulkSession` calls these when the row it changes is chained
(``Database.chained``) or grows past a block.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.embedded import chained
from engine.embedded import redopack as rp
from engine.embedded import rows as R
from engine.redo.rowid import fb_value

KDO_LKR = 4  # vectors.KDO_OPS
#: per piece, head first: dba, slot, and its :data:`engine.embedded.rows.Part`
Parts = Sequence[tuple[int, int, int, int, int, int]]
#: per record written, in log order: its piece (index in :data:`Parts`) and undo address
Undos = tuple[tuple[int, rp.Uba3], ...]


def delete(
    t: rp.Table, tx: rp.Txn, scn: int, parts: Parts, enc: tuple[bytes | None, ...]
) -> tuple[tuple[bytes, ...], Undos]:
    """The records of a DELETE of the chained row ``enc`` (its columns' Oracle bytes) whose
    pieces are ``parts`` (:func:`chained.ranges`): a record per piece, head first, then the
    index record (chained.delete); and each record's piece and undo address."""
    s = t.shape
    key = enc[s.key_col]
    last = len(parts) - 1
    out: list[bytes] = []
    undos: list[tuple[int, rp.Uba3]] = []
    for n, (dba, slot, lo, hi, skip, end) in enumerate(parts):
        part = (lo, hi, skip, end)
        vals = chained.piece_row(enc, part, n == last)
        fb = fb_value(R.piece_fb(n == 0, n == last, part))
        nrid = (parts[n + 1][0], parts[n + 1][1]) if n < last else None
        undo = [rp.UNDO_KTB, *rp.kdo_irp(dba, s.hdba, slot, 0, vals, fb, nrid)]
        supp_fb = fb_value(chained.SUPP_FB[(n == 0, n == last)])
        nos, keys = ((s.key_col,), (key,)) if n == 0 else ((), ())
        undo += rp.supplemental(nos, keys, supp_fb, lo + 1, 0)

        def redo(k: bytes, dba: int = dba, slot: int = slot) -> list[bytes]:
            return [k, *rp.kdo_drp(dba, s.hdba, slot)]

        undos.append((n, tx.ids.peek_rec()))
        out += t._row(tx, scn, dba, rp.KDO_DRP, undo, redo)
    if s.key_index is not None:
        out.append(t._index(tx, scn, parts[0][0], parts[0][1], key, False))
    return tuple(out), tuple(undos)


def update(
    t: rp.Table,
    tx: rp.Txn,
    scn: int,
    parts: Parts,
    old: tuple[bytes | None, ...],
    new: tuple[bytes | None, ...],
    set_cols: Sequence[int],
) -> tuple[tuple[bytes, ...], Undos]:
    """The records of an UPDATE of columns ``set_cols`` of the chained row ``old`` to
    ``new`` (every column's Oracle bytes) whose pieces are ``parts`` and still hold it
    (:func:`chained.fits`): the head's record, then one per other piece that changes
    (chained.update); and each record's piece and undo address."""
    s = t.shape
    last = len(parts) - 1
    changed = [sorted(c for c in set_cols if lo <= c < hi) for _, _, lo, hi, _, _ in parts]
    written = [n for n in range(len(parts)) if n == 0 or changed[n]]
    out: list[bytes] = []
    undos: list[tuple[int, rp.Uba3]] = []
    for k, n in enumerate(written):
        dba, slot, lo, hi, skip, end = parts[n]
        first, final = k == 0, k == len(written) - 1
        fb = fb_value(R.piece_fb(n == 0, n == last, (lo, hi, skip, end)))
        cols = changed[n]
        nos = [i - lo for i in cols]
        part = (lo, hi, skip, end)
        olds = R.piece_values(old, part)  # (a cut column's part)
        news = R.piece_values(new, part)
        if cols:
            undo = [rp.UNDO_KTB, *rp.kdo_urp(dba, s.hdba, slot, 0, hi - lo, nos,
                                             [olds[i] for i in nos], fb)]  # fmt: skip
        else:
            undo = [rp.UNDO_KTB, *rp.kdo_drp(dba, s.hdba, slot, KDO_LKR)]
        supp_fb = fb_value(chained.SUPP_FB_UPDATE[(first, final)])
        at = cols[0] + 1 if cols else 0
        knos, keys = ((s.key_col,), (old[s.key_col],)) if first else ((), ())
        undo += rp.supplemental(knos, keys, supp_fb, at, at)
        values = [news[i] for i in nos]

        def redo(
            kb: bytes,
            dba: int = dba,
            slot: int = slot,
            n: int = hi - lo,
            fb: int = fb,
            nos: list[int] = nos,
            values: list[bytes | None] = values,
        ) -> list[bytes]:
            if not nos:
                return [kb, *rp.kdo_drp(dba, s.hdba, slot, KDO_LKR)]
            return [kb, *rp.kdo_urp(dba, s.hdba, slot, 1, n, nos, values, fb)]

        undos.append((n, tx.ids.peek_rec()))
        out += t._row(tx, scn, dba, rp.KDO_URP if cols else KDO_LKR, undo, redo)
    return tuple(out), tuple(undos)


def rechain(
    t: rp.Table,
    tx: rp.Txn,
    scn: int,
    olds: Parts,
    news: Parts,
    old: tuple[bytes | None, ...],
    new: tuple[bytes | None, ...],
) -> tuple[tuple[bytes, ...], Undos]:
    """The records of an UPDATE that lays the row ``old`` (every column's Oracle bytes;
    its pieces ``olds``, :func:`chained.ranges`, one for a row in one piece) anew as
    ``new`` in the pieces ``news`` (``rows.row_pieces`` of it, two or more, the head at the
    old head's address): the new layout's pieces but the head (IRP, the last first), the
    old layout's pieces but the head (DRP, the last first), the head (ORP), as
    :func:`chained.rechain` (which states the records); and each record's piece (counting
    ``olds``, then ``news``) and undo address."""
    s = t.shape
    order = chained.rechain_order(len(olds), len(news))
    out: list[bytes] = []
    undos: list[tuple[int, rp.Uba3]] = []
    for k, (index, is_old, n) in enumerate(order):
        first, last = k == 0, k == len(order) - 1
        dba, slot, lo = (olds if is_old else news)[n][:3]
        if is_old:  # an old piece removed (the head overwritten): its undo puts it back
            vals, fb, nrid = _piece(olds, n, old)
            op = rp.KDO_ORP if n == 0 else rp.KDO_IRP
            undo = [rp.UNDO_KTB, *rp.kdo_irp(dba, s.hdba, slot, 0, vals, fb, nrid, op)]
            before, after = (1, 1) if n == 0 else (lo + 1, 0)
        else:  # a new piece: its undo removes it
            undo = [rp.UNDO_KTB, *rp.kdo_drp(dba, s.hdba, slot)]
            before, after = 0, lo + 1
        supp_fb = fb_value(chained.SUPP_FB[(first, last)])
        nos, keys = ((s.key_col,), (old[s.key_col],)) if first else ((), ())
        undo += rp.supplemental(nos, keys, supp_fb, before, after)
        if is_old and n:
            op, redo = rp.KDO_DRP, rp.kdo_drp(dba, s.hdba, slot)
        else:  # a new piece, or the new head over the old
            vals, fb, nrid = _piece(news, n, new)
            op = rp.KDO_ORP if n == 0 else rp.KDO_IRP
            redo = rp.kdo_irp(dba, s.hdba, slot, rp.LB_REDO, vals, fb, nrid, op)

        def fields(kb: bytes, redo: list[bytes] = redo) -> list[bytes]:
            return [kb, *redo]

        undos.append((index, tx.ids.peek_rec()))
        out += t._row(tx, scn, dba, op, undo, fields)
    return tuple(out), tuple(undos)


def _piece(
    parts: Parts, n: int, row: Sequence[bytes | None]
) -> tuple[tuple[bytes | None, ...], int, tuple[int, int] | None]:
    """Piece ``n`` of ``parts`` of ``row``: its values (a cut column's part; the last
    piece's trailing NULLs cut), its row flags and the next piece's address."""
    _, _, lo, hi, skip, end = parts[n]
    part, final = (lo, hi, skip, end), n == len(parts) - 1
    nrid = None if final else (parts[n + 1][0], parts[n + 1][1])
    vals = chained.piece_row(tuple(row), part, final)
    return vals, fb_value(R.piece_fb(n == 0, final, part)), nrid


def undone(
    t: rp.Table,
    x: rp.TxHead,
    scn: int,
    kind: str,
    parts: Parts,
    undos: Undos,
    old: Sequence[bytes | None],
    key: bytes | None,
    set_cols: Sequence[int] = (),
    moved: Parts = (),
) -> tuple[bytes, ...]:
    """The compensation records of a chained row's change rolled back, a record per piece
    newest first (``undos``: the change's records, :func:`delete` / :func:`update` /
    :func:`rechain` / ``redopack.Table.insert_pieces``), the index operation in the head's:
    the same bytes as the generic path's (``chained.compensations``, ``undo.compensate``).
    ``kind``: ``ins`` (``key``: the row's key), ``del`` (``old``: the row's columns' Oracle
    bytes) or ``upd`` (``old``: the row's width, the old value of each of ``set_cols``; a
    re-chain's, ``moved`` its new pieces: the whole old row, its old pieces put back, the
    head by an ORP, its new pieces removed)."""
    s = t.shape
    last = len(parts) - 1
    out: list[bytes] = []
    for n, uba in reversed(undos):
        k = rp.ktb(rp.OP_C, rp.NO_XID, uba)
        rec = [rp.applied_cv(x, scn, uba, s.obj, s.dataobj)]
        if moved and n > last:  # a re-chain's new piece: removed
            dba, slot = moved[n - len(parts)][:2]
            at: dict[str, int] = {"cls": 1, "afn": s.afn, "dba": dba, "obj": s.dataobj,
                                  "scn": scn}  # fmt: skip
            rec.append(rp.vector(11, rp.KDO_DRP, [k, *rp.kdo_drp(dba, s.hdba, slot)], **at))
            out.append(b"".join(rec))
            continue
        dba, slot, lo, hi, skip, end = parts[n]
        part = (lo, hi, skip, end)
        fb = fb_value(R.piece_fb(n == 0, n == last, part))
        at = {"cls": 1, "afn": s.afn, "dba": dba, "obj": s.dataobj, "scn": scn}
        if kind == "ins":
            rec.append(rp.vector(11, rp.KDO_DRP, [k, *rp.kdo_drp(dba, s.hdba, slot)], **at))
        elif kind == "del" or moved:  # (a re-chain: the old piece put back)
            vals, _, nrid = _piece(parts, n, old)
            op = rp.KDO_ORP if moved and n == 0 else rp.KDO_IRP  # (the head overwritten back)
            irp = rp.kdo_irp(dba, s.hdba, slot, 0, vals, fb, nrid, op)
            rec.append(rp.vector(11, op, [k, *irp], **at))
        else:
            cols = sorted(c for c in set_cols if lo <= c < hi)
            if cols:
                olds = R.piece_values(tuple(old), part)  # (a cut column's part)
                urp = rp.kdo_urp(dba, s.hdba, slot, 0, hi - lo, [i - lo for i in cols],
                                 [olds[i - lo] for i in cols], fb)  # fmt: skip
                rec.append(rp.vector(11, rp.KDO_URP, [k, *urp], **at))
            else:  # the head, locked
                lkr = rp.kdo_drp(dba, s.hdba, slot, KDO_LKR)
                rec.append(rp.vector(11, KDO_LKR, [k, *lkr], **at))
        if n == 0 and kind != "upd" and s.key_index is not None:
            rec.append(rp.leaf_cv(s, k, kind == "del", dba, slot, key, scn))
        out.append(b"".join(rec))
    return tuple(out)
