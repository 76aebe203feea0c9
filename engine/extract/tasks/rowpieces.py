"""An UPDATE or DELETE of a chained row, written a record per piece (the embedded database's
``engine/embedded/chained.py``, as Oracle writes them), bound into one row change for the
task miner (:meth:`engine.extract.tasks.miner.Miner._rows`): the rules of
``engine/redo/pieces.py`` (docs/redo_format.md "Rows in pieces") for what the task miner
reads, stated as pure functions of the pieces.

A piece is a record ``5.1 + 11.3 DRP | 11.5 URP | 11.4 LKR`` whose supplemental flags (the
5.1's supplemental header, :func:`supp_flags`) lack F or L: F marks the change's first
record, L its last; the pieces of one change are consecutive in their transaction. A
piece's columns are numbered from its own first column; the supplemental header's
``before`` / ``after`` field is the table column (from 1) of the undo / redo image's
first column (for a URP, its first changed column): :func:`placed`. The change is a
DELETE when its pieces are all DRPs, else an UPDATE; it is on the first piece's ROWID (the
head's: the writer starts at the head) at the first piece's record. A column cut across two
pieces (row flags N on the first, P on the next: both number it alike) is joined, its
bytes in the row's order, by :func:`engine.redo.pieces.join`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from engine.redo.model import Column, Kdo, Undo
from engine.redo.pieces import join, urp_flags
from engine.redo.rowid import FB_F, FB_L, fb_value

Raw = dict[int, bytes | None]
WHOLE: Final = FB_F | FB_L
#: the level-11 codes of the operations whose records may be an update's or delete's piece
CODES: Final = {"DRP": 3, "URP": 5, "LKR": 4}


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


@dataclass(frozen=True, slots=True)
class Piece:
    """One record's part of a chained row's update or delete."""

    op: str  # DRP, URP, LKR
    flags: int  # its supplemental F / L
    before: Raw  # the undo's columns, placed
    after: Raw  # the redo's columns, placed
    supp: Raw  # the supplemental columns
    ufb: int  # the undo row's flags (P / N: its first / last column cut)
    rfb: int  # the redo row's flags
    rowid: str
    ref: str  # its undo record's address (what a rollback names)
    head: tuple[int, int, int, int, int, int]  # its record's (thread, offset, ...)


def piece(kdo: Kdo, undo: Undo, rowid: str, ref: str, head: tuple[int, ...]) -> Piece:
    u = undo.kdo
    before = placed(u.columns, undo.supp_before) if u is not None else {}
    supp = {c.no: c.data for c in undo.supplemental}
    urp = kdo.name == "URP"
    after = placed(kdo.columns, undo.supp_after) if urp else {}
    ufb = row_flags(u) if u is not None else 0
    if u is not None and u.name == "URP":
        ufb = urp_flags(ufb, u.columns[0].no if u.columns else None)
    rfb = urp_flags(row_flags(kdo), kdo.columns[0].no if kdo.columns else None) if urp else 0
    return Piece(kdo.name, supp_flags(undo), before, after, supp, ufb, rfb, rowid, ref, head)  # type: ignore[arg-type]


def row_flags(kdo: Kdo) -> int:
    """A KDO's row flags: a URP's are its flag byte (the redo model's ``flag``), the other
    operations' their ``fb`` letters."""
    return kdo.flag if kdo.name == "URP" else fb_value(kdo.fb)


@dataclass(frozen=True, slots=True)
class Bound:
    delete: bool
    before: Raw
    after: Raw
    first: Piece  # where the change is: its ROWID, undo address and record


def bind(pieces: Sequence[Piece]) -> Bound:
    """The row change of a complete run of pieces (first F ... last L)."""
    before = join((p.ufb, tuple(p.before.items())) for p in pieces)
    for p in pieces:  # the supplemental copies win (as for a whole row)
        before.update(p.supp)
    after = join((p.rfb, tuple(p.after.items())) for p in pieces)
    delete = all(p.op == "DRP" for p in pieces)
    return Bound(delete, before, after, pieces[0])
