"""The attached database's Extract and a row updated in two pieces (a chained row, as Oracle
writes it: oracdc's 19c ``testRaInterfaceLinesAll_2``): a URP on the head piece (row flags
``--H-F---``, supplemental flags ``----F---``) then a URP on the last piece (``-----L--``,
its column numbers its own, the supplemental header's ``after`` naming the table column of
its first changed one). The fast path (the strict C walk and ``FastMiner._plain``) leaves
both records to the redo miner, which binds them into one update of the head's ROWID with
both pieces' columns; the trail is the one the redo miner alone writes."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from engine.embedded import dml
from engine.embedded import redogen as rg
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.rows import encode_row, rid_block, rid_slot, supp_columns
from engine.embedded.session import UndoEntry
from engine.embedded.sql import execute
from engine.extract import oracle_source
from engine.home.layout import Home
from engine.redo import payloads
from engine.redo import vectors as V
from engine.redo.ids import make_dba
from engine.redo.model import Column
from engine.redo.rowid import fb_value
from engine.trail.layout import IOType
from tests.extract.test_alo_fast import _dictionary, _rows, _run

_HEAD = 2  # WL.C's head piece holds its first two columns (ID, A); the last piece B, C
_LAST = "-----L--"


def _split_update(orig: Any) -> Any:
    """WL.C's updates written as two records: the head piece's URP, the last piece's URP."""

    def update(s: Any, db: Any, txn: Any, table: Any, scn: int, rid: int, old: Any, new: Any,
               set_cols: list[int]) -> None:  # fmt: skip
        if table.qualified != "WL.C":
            orig(s, db, txn, table, scn, rid, old, new, set_cols)
            return
        old_enc, new_enc = encode_row(table, old), encode_row(table, new)
        head_dba = make_dba(table.file_no, rid_block(rid))
        last_dba = make_dba(table.file_no, rid_block(rid) + 500)  # where the rest went
        slot = rid_slot(rid)
        supp = supp_columns(table, old_enc)
        uba = None
        for part, dba, flags, supp_fb in (
            ([c for c in set_cols if c < _HEAD], head_dba, "--H-F---", "----F---"),
            ([c for c in set_cols if c >= _HEAD], last_dba, _LAST, _LAST),
        ):
            base = 0 if dba == head_dba else _HEAD
            pre, _ = s.first_cvs(txn, scn)

            def cols(enc: Any, part: list[int] = part, base: int = base) -> tuple[Column, ...]:
                return tuple(Column(i - base, enc[i]) for i in part)

            undo_kdo = rg.kdo("URP", rg.UNDO_KTB, table, dba, slot=slot, lock=0, cc=_HEAD,
                              nnew=len(part), columns=cols(old_enc), fb=supp_fb,
                              flag=fb_value(flags))  # fmt: skip
            undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, supp)
            txn.ids.started = True
            ktb, _ = rg.ktb_for(txn.ids, dba, uba, db.dirty_blocks, scn)
            redo = rg.kdo("URP", ktb, table, dba, slot=slot, lock=1, cc=_HEAD, nnew=len(part),
                          columns=cols(new_enc), flag=fb_value(flags))  # fmt: skip
            db.emit(s.thread, scn, [*pre, undo_cv, rg.row_redo(txn.ids, table, scn, dba, 5, redo),
                                    *s.session_cv(txn)])  # fmt: skip
        assert uba is not None
        txn.entries.append(UndoEntry("upd", table.qualified, (rid,), uba,
                                     tuple(old[i] for i in set_cols), tuple(set_cols)))  # fmt: skip

    return update


def _placed(orig: Any) -> Any:
    """The supplemental header of a last piece's URP undo names the table column (from 1) of
    its first changed column (``before`` / ``after``, as Oracle's do)."""

    def supplemental(order: Any, u: Any) -> list[bytes]:
        out: list[bytes] = orig(order, u)
        k = u.kdo
        if k is not None and k.name == "URP" and k.fb == _LAST and k.columns:
            head = bytearray(out[0])
            at = _HEAD + k.columns[0].no + 1
            for name in ("before", "after"):
                off, code = V.SUPP_AT[name]
                struct.pack_into(order + code, head, off, at)
            out[0] = bytes(head)
        return out

    return supplemental


@contextmanager
def _pieces() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dml, "_redo_update", _split_update(dml._redo_update))
        mp.setattr(payloads, "_supplemental", _placed(payloads._supplemental))
        yield


def _source(home: Home) -> tuple[Path, int]:
    root = create_database(home.dirdb, "ONE", threads=1)
    with Database(root, clock=ManualClock(datetime(2024, 1, 1), step=0.001)) as db:
        s = db.session("A", username="WL", thread=1)
        execute(db, s, "CREATE TABLE wl.c (id NUMBER PRIMARY KEY, a NUMBER, b NUMBER, c NUMBER)")
        execute(db, s, "CREATE TABLE wl.u (id NUMBER PRIMARY KEY, v VARCHAR2(20))")
        made = db.state.scn
        with _pieces():
            for i in range(1, 11):
                execute(db, s, f"INSERT INTO wl.c VALUES ({i}, {i}, {i * 2}, {i * 3})")
                execute(db, s, f"INSERT INTO wl.u VALUES ({i}, 'u {i}')")
                execute(db, s, "COMMIT")
            for i in range(1, 11, 2):
                execute(db, s, f"UPDATE wl.c SET a = {i * 100}, c = {i * 300} WHERE id = {i}")
                execute(db, s, f"UPDATE wl.u SET v = 'w {i}' WHERE id = {i}")
                execute(db, s, "COMMIT")
        db.switch_log()
    return root, made


def test_an_update_in_two_pieces_is_one_update_on_the_fast_path_too(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = _source(home)
    dic = _dictionary(root, tmp_path / "d.json", made, {})
    states = _run(home, tmp_path, root, dic, "q1")
    assert states.fast_ranges and not states.redo_ranges
    assert states.delegated == 2 + 5 * 2  # the DDL markers and both records of each update
    got = _rows(home, "q1")
    updates = [r for r in got if r[0] == "WL.C" and r[1] != IOType.INSERT.name]
    assert [(r[1], r[3]) for r in updates] == [
        (IOType.FIELDCOMP.name, {0: str(i), 1: str(i * 100), 3: str(i * 300)})
        for i in range(1, 11, 2)
    ]
    heads = {r[2] for r in got if r[0] == "WL.C" and r[1] == IOType.INSERT.name}
    assert {r[2] for r in updates} <= heads  # the head's ROWID, the row's
    assert len([r for r in got if r[0] == "WL.U"]) == 10 + 5
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(oracle_source, "fast_miner", lambda *_a: None)
        slow = _run(home, tmp_path, root, dic, "q2")
    assert slow.redo_ranges and not slow.fast_ranges
    assert _rows(home, "q2") == got


def test_every_oracdc_piece_is_left_to_the_redo_miner() -> None:
    """Each record of oracdc's 19c binding tests that is not a whole row change by itself
    (engine/redo/pieces.py) is one the fast path leaves (``FastMiner._plain``'s rules; the
    strict C walk states the same in redomine.c ``rows()`` / ``undo_whole()``): its 5.1's
    supplemental data or its row flags say a piece."""
    from engine.redo import capture as C
    from engine.redo import framing as F
    from engine.redo import pieces as P
    from engine.redo.rowid import rowid
    from tests.redo import oracdc
    from tests.redo.corpus import ORACDC, need

    kinds: dict[str, int] = {}
    whole = idle = 0
    for path in sorted(need(ORACDC).glob("Ops_*_BindingTest.java")):
        for rec in oracdc.records(path):
            r = F.parse_record(rec.raw, rec.order, rec.layout)  # type: ignore[arg-type]
            u = next(v for v in r.vectors if v.op == "5.1")
            v = next(v for v in r.vectors if v.layer == 11)
            d, undo = V.decode(v), V.decode(u)
            assert isinstance(d, V.Redo) and isinstance(undo, V.Undo)
            piece = C.row_piece(v, d.row, undo, r, rowid(v.obj, v.dba, d.row.slot))
            left = not P.undo_whole(u) or not P.kdo_whole(v.fields[1])
            ends = P.ends(piece, open_=False)
            if ends == (True, True):
                whole += 1  # (the fast path may still leave it: a middle piece in context)
            elif not piece.carries and not any(ends):
                idle += 1  # (an LMN without supplemental data: nothing, on either path)
            else:
                kinds[piece.kind] = kinds.get(piece.kind, 0) + 1
                assert left, (rec.file, rec.rba, piece.kind)
    assert kinds == {"URP": 20, "IRP": 6, "DRP": 1, "ORP": 4, "LMN": 13, "CFA": 2, "LKR": 1}
    assert (whole, idle) == (7, 5)
