"""The fast path (engine/embedded/bulk.py, chainpack.rechain) re-chains a row an UPDATE
outgrows as the generic path does (engine/embedded/chained.py ``rechain``), byte for byte:
a chained row whose piece no longer holds its columns, a row in one piece grown past a
block, a cut column set to a value that no longer reaches its last part; each committed,
rolled back, and rolled back to a savepoint with the transaction going on; and the row's
pieces (``Database.chained``) are the new layout after a commit, the old one after either
rollback."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

import pytest

from engine.embedded import chained, dml
from engine.embedded import redogen as rg
from engine.embedded import redopack as rp
from engine.embedded import rows as R
from engine.embedded.bulk import BulkSession, can_outgrow
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.dictionary import ColumnDef
from engine.embedded.sql import execute
from engine.embedded.state import Pieces
from engine.redo.codecs import encode_text, encode_value
from tests.extract.test_chained_changes import DDL, _shapes


class Case(NamedTuple):
    row: tuple[object, ...]  # (id, a .. f), inserted and committed first
    cols: tuple[int, ...]  # the columns the UPDATE sets (table numbering)
    values: tuple[str, ...]
    old_pieces: int  # how many pieces the row is in before and after it
    new_pieces: int


X4K = "x" * 4000
CASES = {
    # the second (last) piece outgrown: its columns laid anew over three pieces
    "piece outgrown": Case(
        (1, "a" * 4000, "b" * 4000, "c" * 100, None, "e" * 4000, None),
        (4, 6),
        ("d" * 4000, "f" * 100),
        2,
        3,
    ),
    # a row in one piece grown past a block
    "plain row grown": Case(
        (2, "small", None, None, None, None, None),
        (1, 2, 3),
        ("a" * 3000, "b" * 3000, "c" * 3000),
        1,
        2,
    ),
    # C is cut (its first 58 bytes in the head); set to 30 bytes it does not reach its
    # part in the second piece; the row stays larger than a block
    "cut column shortened": Case((3, *(X4K,) * 6), (3,), ("c" * 30,), 3, 3),
}
SMALL = (9, "s", None, None, None, None, None)  # a row of one piece, updated around the case


class Written(NamedTuple):
    logs: list[bytes]
    before: Pieces | None  # the row's pieces after its insert (None: one piece)
    after: Pieces | None  # ... at the end


def _written(tmp: Path, case: Case, fast: bool, end: str) -> Written:
    """The logs of ``case``'s row and :data:`SMALL` inserted (committed), then, in one
    transaction, SMALL updated, ``case``'s UPDATE, and ``end``: ``commit``, ``rollback``,
    or ``savepoint`` (rolled back to a savepoint taken before the UPDATE, then the row's
    last column and SMALL updated again, committed); by the fast path (BulkSession) or the
    generic one (dml, Session), the clock standing."""
    root = create_database(tmp, "W")
    db = Database(root, clock=ManualClock(datetime(2024, 1, 1)))
    try:
        execute(db, db.session("DDL"), DDL)
        table = db.dictionary.get("HR", "T")
        s = db.session("W")
        bulk = BulkSession(db, s)
        where = ' WHERE "ID" = ?'

        def update(key: object, cols: Sequence[int], values: Sequence[str]) -> None:
            if fast:
                assert bulk.update(table, key, tuple(cols), tuple(values))
            else:
                sql = [f"'{v}'" for v in values]
                assert dml.update(s, db, table, list(cols), sql, where, (key,)) == 1

        for row in (case.row, SMALL):
            bulk.insert(table, row) if fast else dml.insert(s, db, table, [row], array=False)
        bulk.commit() if fast else s.commit(db)
        sql = f'SELECT "_rid" FROM "{table.sqlite_name}" WHERE "ID" = ?'
        rid = db.conn.execute(sql, (case.row[0],)).fetchone()[0]
        before = db.chained.get(table.obj, {}).get(rid)
        bulk.record_undo = end != "commit"
        update(SMALL[0], (1,), ("t",))
        mark = bulk.savepoint()
        s.savepoint("S1")
        update(case.row[0], case.cols, case.values)
        if end == "commit":
            bulk.commit() if fast else s.commit(db)
        elif end == "rollback":
            bulk.rollback() if fast else s.rollback(db)
        else:
            bulk.rollback_to(mark) if fast else s.rollback_to(db, "S1")
            update(case.row[0], (6,), ("g",))
            update(SMALL[0], (2,), ("u",))
            bulk.commit() if fast else s.commit(db)
        after = db.chained.get(table.obj, {}).get(rid)
        db.switch_log()
        return Written([i.path.read_bytes() for i in db.list_logs()], before, after)
    finally:
        db.close()


def _layout(case: Case, pieces: Pieces | None) -> list[R.Part]:
    return [(0, len(case.row), 0, 0)] if pieces is None else [p[1:] for p in pieces]


@pytest.mark.parametrize("end", ["commit", "rollback", "savepoint"])
@pytest.mark.parametrize("name", list(CASES))
def test_the_fast_path_rechains_as_the_generic_path(tmp_path: Path, name: str, end: str) -> None:
    case = CASES[name]
    fast = _written(tmp_path / "f", case, True, end)
    generic = _written(tmp_path / "g", case, False, end)
    assert fast == generic
    assert len(_layout(case, generic.before)) == case.old_pieces
    if end == "commit":  # the row laid anew: the new pieces kept, the head where it was
        assert generic.after is not None and generic.after != generic.before
        assert generic.after[0][0] == (generic.before or generic.after)[0][0]
        new = list(_encoded(case.row))
        for c, v in zip(case.cols, case.values, strict=True):
            new[c] = encode_text(v)
        expect = R.row_pieces(rg.columns_of_row(tuple(new)))
        assert _layout(case, generic.after) == expect
        assert len(expect) == case.new_pieces
    else:  # rolled back (to the savepoint): the old pieces again (None: one piece)
        assert generic.after == generic.before
    # the re-chain was written (not a URP of the whole row): the new head by an ORP, each
    # new piece by an IRP, each old one removed by a DRP
    ops = [op for op, _, _ in _shapes(tmp_path / "g" / "W")]
    assert ops.count("ORP") == 1
    assert ops.count("DRP") == case.old_pieces - 1


def _encoded(row: tuple[object, ...]) -> tuple[bytes | None, ...]:
    return (encode_value("NUMBER", row[0]), *(None if v is None else encode_text(str(v)) for v in row[1:]))  # fmt: skip


def test_the_cases_are_what_they_say(tmp_path: Path) -> None:
    """The cut column's update is one the pieces no longer hold (chained.fits) and leaves
    the row larger than a block; the test table's rows can be larger than a block (the fast
    path reads the whole row on update), the workload's cannot (it reads only the columns
    it sets)."""
    root = create_database(tmp_path, "W")
    with Database(root) as db:
        execute(db, db.session("DDL"), DDL)
        execute(db, db.session("DDL"), "CREATE TABLE hr.w (id NUMBER PRIMARY KEY, "
                "name VARCHAR2(40), amount NUMBER, created DATE, status CHAR(1))")  # fmt: skip
        table = db.dictionary.get("HR", "T")
        assert can_outgrow(table)
        w = db.dictionary.get("HR", "W")
        assert not can_outgrow(w)
        no_length = ColumnDef("NOTE", "VARCHAR2")  # (no declared length: no bound)
        assert can_outgrow(replace(w, columns=(*w.columns, no_length)))
    case = CASES["cut column shortened"]
    enc = _encoded(case.row)
    pieces = tuple((0, *p) for p in R.row_pieces(rg.columns_of_row(enc)))
    assert len(pieces) == case.old_pieces
    assert 3 in chained.cut_columns(pieces)
    new = (*enc[:3], encode_text(case.values[0]), *enc[4:])
    assert not chained.fits(table, pieces, new, case.cols)
    assert R.piece_bytes(rg.columns_of_row(new)) > R.PIECE_ROOM


@pytest.mark.parametrize("end", ["commit", "rollback"])
def test_a_mutated_twin_fails_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, end: str) -> None:
    """The twin writing the head (and, rolled back, putting it back) by an IRP, not an
    ORP: the fast path's bytes are not the generic path's."""
    case = CASES["piece outgrown"]
    generic = _written(tmp_path / "g", case, False, end)
    monkeypatch.setattr(rp, "KDO_ORP", rp.KDO_IRP)
    fast = _written(tmp_path / "f", case, True, end)
    assert fast.logs != generic.logs
    assert (fast.before, fast.after) == (generic.before, generic.after)
