"""Rows in several pieces bound into one row change: the rules, stated once, as pure
functions of the pieces a reader has (no state of their own).

Oracle writes a row change as several redo records when the row is chained (longer than a
block: pieces in several blocks, each naming the next) or migrated (moved to another block,
its head left behind as a pointer), and when the supplemental data of one change does not
fit one record. Each record is a piece: a 5.1 (undo, with the supplemental data) and its
level-11 redo. Sources: oracdc's 19c binding tests (``Ops_*_BindingTest.java`` in the
corpus, real records with their authors' statements), Oracle's dump notation
(``supp fb``); docs/redo_format.md "Rows in pieces".

The rules (:func:`ends` and :func:`bind`):

- A piece's ends are the supplemental data's F (first) and L (last) flags when that data
  carries either: they mark the first and the last *record* of the change in log order,
  whatever the row pieces' own flags (Oracle 19c logs a chained insert's last piece first,
  row `-----L--` with supp `----F---`, and its head last, row `--H-F---` with supp
  `-----L--`: oracdc's ``Op11_2_Test.java``); else (no supplemental data, or flags without
  F and L in a piece whose transaction has nothing open) the row piece's own F and L (the
  redo's row flags, the undo's for a DRP).
- A row change runs from its first piece to the piece where both an F and an L have been
  seen: by supplemental flags F ... L in log order; by row flags alone an update's pieces go
  F ... L, a chained insert's L ... F (Oracle writes the last piece first). Pieces in between
  carry neither.
- A piece marking a first end while a change that carries data is open: two changes
  overlap, which Oracle does not write; a reader stops (:func:`clashes`). An open change
  that carries nothing yet (a lock) is replaced by it.
- A piece that carries nothing (no column, before, after or supplemental: a lock, an LMN
  without supplemental data) never starts a change on its own flags unless they say F; it
  is dropped when nothing is open for its transaction.
- The bound change is an INSERT when its pieces that carry data are all IRPs, a DELETE when
  they are all DRPs, an UPDATE otherwise (URP, ORP, or a migration's IRP with its DRP).
  Its ROWID is the head's: for an insert the piece with the H flag (the supplemental header
  of a chained insert names the piece logged first, the last one: ``Op11_2_Test.java``),
  else the row the supplemental data names (an update's head, the piece a migrated row
  left behind), else the piece with the H flag, else the first piece's own. Its RBA and
  SCN are those of its first piece that carries data.
- Columns: a piece's column numbers are its own (from its first column); the supplemental
  header's ``before`` / ``after`` fields give the table column (from 1) of the first column
  of the undo / redo image (for a URP, of its first changed column), so a piece is placed by
  them. A head piece (H) without them starts at column 1. Unplaced pieces of an insert or
  a delete are laid end to end in the row's order (row flags F ... L); an update with an
  unplaced piece beyond the head cannot be bound (:class:`Unplaced`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.redo import vectors as V
from engine.redo.framing import Rba, Vector
from engine.redo.frozen import quick_init
from engine.redo.rowid import FB_F, FB_H, FB_L, FB_N, FB_P

Cols = tuple[tuple[int, bytes | None], ...]  # (table column from 0, value or NULL)

#: Redo operations whose pieces carry the row's values (the others: lock, migrate, forward)
DATA_OPS = frozenset({"IRP", "DRP", "URP", "ORP"})


@quick_init
@dataclass(frozen=True)
class Piece:
    """One record's part of a row change, as read (columns already placed where known)."""

    kind: str  # the redo's KDO operation: IRP, DRP, URP, ORP, LMN, CFA, LKR
    con_id: int
    obj: int  # the data object (the vector header's)
    rba: Rba  # the record's
    scn: int
    rowid: str  # the row piece this record changes
    head: str | None  # the head ROWID the supplemental data names (None: not named)
    fb: int  # row flags: the redo's, the undo's for DRP / URP (0: none)
    supp_fb: int | None  # flags of the supplemental data (None: no supplemental data)
    before: Cols  # the undo's row image
    after: Cols  # the redo's row image
    supp: Cols  # the supplemental columns (absolute numbers)
    placed: bool  # before / after are numbered as the table's columns
    ufb: int = 0  # the undo row's flags (its P / N say whether ``before``'s ends are cut)

    @property
    def carries(self) -> bool:
        """Whether the piece holds anything of the row (values, or a removed piece)."""
        return bool(self.before or self.after or self.supp) or self.kind in DATA_OPS


@dataclass(frozen=True)
class Bound:
    """A row change bound from its pieces."""

    op: str  # INSERT, UPDATE, DELETE
    rowid: str
    rba: Rba
    scn: int
    before: Cols
    after: Cols


class Unplaced(ValueError):
    """An update's piece whose columns cannot be placed (no supplemental column numbers)."""


def ends(p: Piece, open_: bool = True) -> tuple[bool, bool]:
    """(first, last): the ends a piece marks (module docstring, first rule). ``open_``:
    whether its transaction has pieces waiting (a piece's supplemental data without F or L
    is a middle piece then; with nothing open, its row flags decide)."""
    s = p.supp_fb
    row = bool(p.fb & FB_F), bool(p.fb & FB_L)
    if s is not None and (s & (FB_F | FB_L) or open_):
        return bool(s & FB_F), bool(s & FB_L)
    return row


def whole(p: Piece) -> bool:
    """A piece that is a whole row change by itself."""
    first, last = ends(p, open_=False)
    return first and last


# From the raw fields, before any decoding: which records the fast readers (the task
# miner's walks, the attached Extract's fast path) leave to the binding above. The C walk's
# ``undo_whole`` is their twin (engine/_native/redomine.c).
_WHOLE = FB_F | FB_L
_ROW_FB_OPS = frozenset({2, 5, 6})  # IRP, URP, ORP: row flags in their KDO (@ KDO_ROW_AT fb)
_ORP = 6


def kdo_whole(kdo: bytes) -> bool:
    """Whether a level-11 KDO field is a whole row's as far as it says: not an ORP (only
    ever a piece of a migrated or re-chained row), and an IRP's or URP's row flags mark both
    first and last. A field too short to say: True (the decoder says what is wrong)."""
    fb = V.KDO_ROW_AT["fb"][0]  # (a URP's flag byte is at the same offset)
    if len(kdo) <= fb:
        return True
    op = kdo[V.KDO_AT["op"][0]] & V.KDO_OP_MASK
    return op != _ORP and (op not in _ROW_FB_OPS or kdo[fb] & _WHOLE == _WHOLE)


def undo_whole(undo: Vector) -> bool:
    """Whether a 5.1 is a whole row's: its supplemental flags (when it has them) mark both
    first and last, and the row it restores (a DRP's undo: an IRP) is a whole piece."""
    if len(undo.fields) <= 4:
        return True
    ukdo = undo.fields[3]
    fb = V.KDO_ROW_AT["fb"][0]
    restores_irp = len(ukdo) > fb and ukdo[V.KDO_AT["op"][0]] & V.KDO_OP_MASK == 2
    if restores_irp and ukdo[fb] & _WHOLE != _WHOLE:
        return False
    at = V._supp_at(undo, 4)
    return at >= len(undo.fields) or undo.fields[at][V.SUPP_AT["fb"][0]] & _WHOLE == _WHOLE


def record_whole(redo: Vector, undo: Vector | None) -> bool:
    """Whether level-11 ``redo`` (with its 5.1 ``undo``) is a row change by itself."""
    kdo = redo.fields[1] if len(redo.fields) > 1 else b""
    return kdo_whole(kdo) and (undo is None or undo_whole(undo))


def complete(pieces: Sequence[Piece]) -> bool:
    """Whether ``pieces`` (one transaction's, in log order) hold a first and a last."""
    f = la = False
    for i, p in enumerate(pieces):
        a, b = ends(p, open_=i > 0)
        f, la = f or a, la or b
    return f and la


def clashes(pieces: Sequence[Piece], p: Piece) -> bool:
    """Whether ``p`` marks a first end while ``pieces`` (open, carrying data) already have
    one: two row changes overlapping, which Oracle does not write (a reader stops)."""
    if not ends(p, open_=True)[0] or not any(q.carries for q in pieces):
        return False
    return any(ends(q, open_=i > 0)[0] for i, q in enumerate(pieces))


def starts(p: Piece) -> bool:
    """Whether ``p`` opens a row change when its transaction has none open."""
    return p.carries or ends(p, open_=False)[0]


def offset(start: int, first_col: int | None, is_urp: bool) -> int | None:
    """Where a piece's column 0 lands in the table, from the supplemental header's
    ``before`` / ``after`` field (``start``, from 1; 0: not given): None when not given."""
    if not start:
        return None
    if is_urp:
        return None if first_col is None else start - 1 - first_col
    return start - 1


def join(images: Iterable[tuple[int, Cols]], laid: bool = False) -> dict[int, bytes | None]:
    """Row images of pieces, in the row's order (head first), each with its row flags,
    as one image: a piece's first column is the previous piece's last one continued when
    its flags say P, its bytes appended (module docstring, last rule). ``laid``: each
    image numbered from its piece's first column (0), laid end to end after the ones
    before (a P piece's first column is the last one so far); else numbered as the
    table's. Later images win for a column not continued."""
    got: dict[int, bytes | None] = {}
    nxt = 0
    for fb, cols in images:
        base = nxt - 1 if laid and fb & FB_P and nxt else nxt
        for i, (n, v) in enumerate(cols):
            if laid:
                n += base
            if i == 0 and fb & FB_P and n in got:
                v = (got[n] or b"") + (v or b"")
            got[n] = v
            nxt = max(nxt, n + 1)
    return got


def cut(fb: int) -> int:
    """The P / N bits of row flags ``fb`` (0: no column of the piece is cut)."""
    return fb & (FB_P | FB_N)


def urp_flags(fb: int, first_col: int | None) -> int:
    """A URP's row flags as :func:`join` takes them: its P continues its piece's first
    column (number 0), so it applies to the URP's columns only when the first it sets is
    that column."""
    return fb if first_col == 0 else fb & ~FB_P


def _merge(*images: Cols) -> Cols:
    got: dict[int, bytes | None] = {}
    for img in images:
        for n, v in img:
            got[n] = v
    return tuple(sorted(got.items()))


def _row_order(pieces: Sequence[Piece]) -> list[Piece]:
    """``pieces`` in the row's order: from the piece whose own row flags say first (F, the
    head) to the one they say last (L), whatever the supplemental flags say of the
    records' order (a chained insert is logged last piece first)."""
    order = list(pieces)
    if order and not order[0].fb & FB_F and any(p.fb & FB_F for p in order):
        order.reverse()
    return order


def _image(pieces: Sequence[Piece], side: str, laid: bool) -> Cols:
    """The before (undo rows' flags) or after (redo rows' flags) image of ``pieces``, cut
    columns joined: laid end to end (unplaced) or as numbered."""
    order = list(pieces)
    if laid or any(cut(p.fb) or cut(p.ufb) for p in order):
        order = _row_order(order)  # (else log order: the later record wins, as ever)
    if side == "before":
        got = join(((p.ufb, p.before) for p in order), laid)
    else:
        got = join(((p.fb, p.after) for p in order), laid)
    return tuple(sorted(got.items()))


def bind(pieces: Sequence[Piece]) -> Bound | None:
    """The row change ``pieces`` make (one transaction's, in log order, the first opening
    it), or None while it is not complete. Raises :class:`Unplaced` for an update whose
    piece beyond the head cannot be placed."""
    if not pieces or not complete(pieces):
        return None
    data = [p for p in pieces if p.carries]
    if not data:
        return None
    kinds = {p.kind for p in data if p.kind in DATA_OPS}
    if kinds == {"IRP"}:
        op = "INSERT"
    elif kinds == {"DRP"}:
        op = "DELETE"
    else:
        op = "UPDATE"
    head = next((p.rowid for p in pieces if p.fb & FB_H), None) if op == "INSERT" else None
    if head is None:
        head = next((p.head for p in pieces if p.head), None)
    if head is None:
        head = next((p.rowid for p in pieces if p.fb & FB_H), None)
    if head is None:
        head = next((p.rowid for p in pieces if ends(p)[0]), pieces[0].rowid)
    supp = tuple(sorted(join((p.supp_fb or 0, p.supp) for p in pieces).items()))
    if all(p.placed for p in pieces):
        before, after = _image(pieces, "before", False), _image(pieces, "after", False)
    elif op != "UPDATE":
        before, after = _image(pieces, "before", True), _image(pieces, "after", True)
    else:
        bad = next(p for p in pieces if not p.placed)
        raise Unplaced(
            f"a row piece ({bad.kind} at RBA {bad.rba.dump()}) of an update has no column numbers "
            "(supplemental logging)"
        )
    if op == "INSERT":
        return Bound(op, head, data[0].rba, data[0].scn, (), after)
    before = _merge(before, supp)  # the supplemental copies win (as for a whole row)
    if op == "DELETE":
        return Bound(op, head, data[0].rba, data[0].scn, before, ())
    changed = {n for n, _ in after}
    after = _merge(tuple(c for c in supp if c[0] not in changed), after)
    return Bound(op, head, data[0].rba, data[0].scn, before, after)
