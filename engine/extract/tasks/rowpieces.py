"""A row change written over several records (a chained row's insert, update or delete, a
migrated row, an update that re-chains its row: the embedded database's
``engine/embedded/chained.py`` and Oracle's own, as oracdc's binding vectors show them), bound
into one row change for the task miner (:meth:`engine.extract.tasks.miner.Miner.record`)
exactly as the redo miner binds it: each record read into a piece by
``engine.redo.capture.row_piece`` (:mod:`engine.redo.vectors` reads the 5.1 and its
level-11 redo: IRP, DRP, LKR, URP, ORP, CFA, LMN) and the pieces bound by the rules of
``engine/redo/pieces.py`` (docs/redo_format.md "Rows in pieces"), stated there once.

:func:`engine.redo.pieces.record_whole` says, from a record's raw fields, whether it is a
row change by itself (its supplemental flags and row flags both first and last): the task
miner reads those through the redo model as ever, and the others through this module. The
helpers the reference decoder shares (``tests/harness/logical.py``) read the redo model:
:func:`supp_flags`, :func:`placed`, :func:`row_flags`.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from engine.redo import pieces as P
from engine.redo import vectors as V
from engine.redo.capture import row_piece  # (the redo miner's reading of a piece)
from engine.redo.framing import Record, Vector
from engine.redo.model import Column, Kdo, Undo
from engine.redo.rowid import FB_F, FB_H, FB_L, fb_value, rowid

Raw = dict[int, bytes | None]
WHOLE: Final = FB_F | FB_L
#: the level-11 codes of the operations whose records may be an update's or delete's piece
CODES: Final = {"DRP": 3, "URP": 5, "LKR": 4}
#: level-11 codes of the operations a row change in pieces is made of
PIECE_CODES: Final = frozenset({2, 3, 4, 5, 6, 8, 16})
#: of those, the ones only ever a piece of a change (lock, migrate, forward, no-op)
ONLY_PIECES: Final = frozenset({4, 6, 8, 16})


def supp_flags(undo: Undo | None) -> int:
    """The F / L flags of an undo's supplemental header (a whole row's when there is none)."""
    if undo is None or undo.kdo is None:
        return WHOLE
    fb = undo.supp_fb if undo.supp_fb is not None else undo.kdo.fb
    return fb_value(fb) & WHOLE


def placed(cols: Sequence[Column], at: int) -> Raw:
    """Columns numbered from their piece's first, in the table's numbering: ``at`` is the
    table column (from 1) of the first of them (0: not given, the head's: as they are)."""
    if not cols or not at:
        return {c.no: c.data for c in cols}
    off = at - 1 - min(c.no for c in cols)
    return {c.no + off: c.data for c in cols}


def row_flags(kdo: Kdo) -> int:
    """A KDO's row flags: a URP's are its flag byte (the redo model's ``flag``), the other
    operations' their ``fb`` letters."""
    return kdo.flag if kdo.name == "URP" else fb_value(kdo.fb)


def ref_of(redo: Vector, offset: int) -> str:
    """A piece's reference: its undo address, as the task miner names a change (the KTB's,
    the embedded database's layout), else its record's offset and vector's number."""
    ktb = redo.fields[0] if redo.fields else b""
    if len(ktb) >= V.KTB_SIZE:
        o = redo.order
        dba = struct.unpack_from(o + V.KTB_AT["uba_dba"][1], ktb, V.KTB_AT["uba_dba"][0])[0]
        if dba:
            seq = struct.unpack_from(o + V.KTB_AT["uba_seq"][1], ktb, V.KTB_AT["uba_seq"][0])[0]
            rec = ktb[V.KTB_AT["uba_rec"][0]]
            return f"{dba:x}.{seq:x}.{rec:x}"
    return f"{offset}:{redo.seq}"


@dataclass(frozen=True, slots=True)
class Piece:
    """One record's part of a row change, with where the task miner places its event."""

    p: P.Piece  # as the redo miner reads it
    ref: str  # its undo record's address (what a rollback names)
    head: tuple[int, int, int, int, int, int]  # its record's (thread, offset, ...)

    @property
    def rowid(self) -> str:
        return self.p.rowid


def piece(
    redo: Vector,
    undo: Vector | None,
    rec: Record,
    offset: int,
    head: tuple[int, int, int, int, int, int],
) -> tuple[Piece, V.Xid | None] | None:
    """The piece of level-11 ``redo`` (None: not a row operation a change is made of), and
    the transaction its undo (else its KTB) names."""
    d = V.decode(redo)
    if not isinstance(d, V.Redo) or d.row.compressed:
        return None
    u = V.decode(undo) if undo is not None else None
    uu = u if isinstance(u, V.Undo) else None
    row = d.row
    got = row_piece(redo, row, uu, rec, rowid(redo.obj, redo.dba, row.slot))
    return Piece(got, ref_of(redo, offset), head), (uu.xid if uu else None) or d.xid


@dataclass(frozen=True, slots=True)
class Bound:
    op: str  # INSERT, UPDATE, DELETE
    rowid: str  # the head's (engine/redo/pieces.py)
    before: Raw
    after: Raw  # an update's: the columns its pieces set
    first: Piece  # where the change is: its undo address and record


def bind(pieces: Sequence[Piece]) -> Bound | None:
    """The row change of a run of pieces (:func:`engine.redo.pieces.bind`), None while it is
    not complete; placed on the piece of the head's ROWID that carries data (the head's
    undo record is the one a rollback of the change names first), else the first that
    does."""
    b = P.bind([q.p for q in pieces])
    if b is None:
        return None
    carrying = [q for q in pieces if q.p.carries]
    first = next(
        (q for q in carrying if q.p.rowid == b.rowid and (b.op != "INSERT" or q.p.fb & FB_H)),
        carrying[0],
    )
    after = dict(b.after)
    if b.op == "UPDATE":  # the columns set (the supplemental copies stay in the before image)
        changed = {n for q in pieces for n, _ in q.p.after}
        after = {n: v for n, v in after.items() if n in changed}
    return Bound(b.op, b.rowid, dict(b.before), after, first)
