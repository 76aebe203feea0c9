"""11.6 ORP (overwrite row piece) in the redo model: the payload writer encodes it, as redo
and as the row operation of a 5.1's undo, in the layout of a whole row piece (the KDO's
``KDO_ROW_AT``: flags, column count, next piece, a field a column, as 11.2 IRP), and both
readers read it back: the redo model (the task miner's, instance recovery's) the same model,
the Extract's typed reader (engine/redo/vectors.py, the redo miner's) an ORP row operation
with the same flags, slot, next piece and columns. Both byte orders, both vector header
layouts. Its layout in Oracle's records: oracdc's Ops_URP_IRP_ORP / Ops_IRP_ORP binding
vectors (tests/extract/test_chained_binding.py reads them)."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.redo import framing as F
from engine.redo import payloads as P
from engine.redo import vectors as V
from engine.redo.layout import Order
from engine.redo.model import ChangeVector, Column, Kdo, RedoRecord, Undo
from engine.redo.rowid import fb_value, next_piece
from tests.redo.test_payloads import (
    F_RBA,
    _cols,
    _same,
    _through,
    fbs,
    ktbs,
    u8,
    u16,
    u32,
    values,
    xids,
)


@st.composite
def orps(draw: st.DrawFn) -> Kdo:
    vals = draw(st.lists(values, max_size=12))
    fb = draw(fbs)
    nb = draw(st.one_of(st.just(0), u32))  # (named only by a piece that is not the last)
    return Kdo("ORP", draw(ktbs()), draw(u32), draw(u32), itli=draw(u8), slot=draw(u16),
               fb=fb, lb=draw(u8), cc=len(vals), size=draw(u16), columns=_cols(vals),
               nrid=next_piece(fb_value(fb), nb, draw(u16)))  # fmt: skip


def _vector(layer: int, code: int, body: object, obj: int) -> ChangeVector:
    return ChangeVector(layer, code, body, cls=1, afn=4, dba=0x1000, obj=obj, scn=7, seq=1)  # type: ignore[arg-type]


def _seen(kdo: Kdo, row: V.RowOp) -> None:
    """What the typed reader reads is what the model says."""
    assert V.KDO_OPS[row.op] == "ORP"
    assert (row.bdba, row.slot, row.fb) == (kdo.bdba, kdo.slot, fb_value(kdo.fb))
    assert row.nrid == kdo.nrid
    assert row.columns == tuple((c.no, c.data or None) for c in kdo.columns)


@settings(max_examples=150, deadline=None)
@given(orps(), orps(), xids, st.sampled_from(["<", ">"]), st.sampled_from(["12c", "11g"]))
def test_an_orp_round_trips_through_both_readers(
    redo: Kdo, before: Kdo, xid: object, order: Order, layout: str
) -> None:
    """An ORP as redo (code 6) after a 5.1 whose undo is an ORP (the piece as it was)."""
    undo = Undo(xid, (11, 1), 77, 77, kdo=before, supplemental=(Column(0, b"\x01"),))  # type: ignore[arg-type]
    rec = RedoRecord(1, F_RBA, 1000, 1, datetime(2026, 1, 2, 3, 4, 5),
                     (_vector(5, 1, undo, 77), _vector(11, 6, redo, 77)))  # fmt: skip
    _same(_through(rec, order, layout), rec)
    raw = P.encode_record(rec, order, layout)
    u, r = F.parse_record(raw, order, layout).vectors
    got_u, got_r = V.decode(u), V.decode(r)
    assert isinstance(got_u, V.Undo) and got_u.row is not None
    assert isinstance(got_r, V.Redo)
    _seen(before, got_u.row)
    _seen(redo, got_r.row)


def test_an_orp_is_a_row_piece_operation() -> None:
    """The writer's table of whole-row-piece operations names 11.2 and 11.6 (a mutation
    dropping 11.6 writes an ORP as a slot-only row operation: the round trip above fails)."""
    assert {V.KDO_OPS[c] for c in P.ROW_PIECE_CODES} == {"IRP", "ORP"}
