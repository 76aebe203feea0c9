"""An UPDATE that sets a column cut across row pieces (issue 24 §3): the embedded database
writes a URP on each piece the value touches, each with its piece's P / N flags and the
piece's part of the new value, cut where the old value was (docs/redo_format.md "Rows larger
than a block are chained"); every reader joins the parts into the one value (a URP's P
continues the previous piece's last column when the URP sets its piece's column 0), and a
savepoint rollback compensates each piece. The cut points are test_cut_columns.py's (a cut
after 1 byte, at the length-byte boundary, inside a character, over three and four pieces,
NVARCHAR2, NUMBER)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from engine.changes import Kind
from engine.embedded import dml
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.home.layout import Home
from engine.redo import framing
from engine.redo import pieces as P
from engine.redo import vectors as V
from engine.redo.rowid import FB_N, FB_P
from engine.trail.layout import IOType
from tests.extract import test_chained_rollback as CR
from tests.extract import test_cut_columns as CC
from tests.harness.images import differences, redo_image, tables_image

#: new values of the cut columns: each longer than the old value's last cut
NEW = {1: "ü" * 1200, 2: "ß" * 600, 4: "-98765432.75"}  # V (2,400 bytes), N (1,200), X
LATER = {1: "ö" * 1300, 2: "ç" * 700, 4: "-11111111.5"}  # set, then taken back


def _sql(col: int, v: str) -> str:
    return v if col == 4 else f"'{v}'"


def _write(root: Path, cut: tuple[str, int, tuple[int, ...]], mp: pytest.MonkeyPatch) -> None:
    """Row 1 inserted in pieces cut at ``cut``; its cut column set to a new value (a URP per
    piece holding a part of it); committed; then set again and taken back by a savepoint
    rollback, W set; committed."""
    _, col, offsets = cut
    mp.setattr(dml, "row_pieces", CC._cut_at(col, offsets))
    name = CC.NAMES[col]
    with Database(root, clock=ManualClock(datetime(2025, 1, 1))) as db:
        s = db.session("A")
        execute(db, s, CC.DDL)
        vals = ", ".join(str(v) if i in (0, 4) else CC._lit(v) for i, v in enumerate(CC.ROW1))
        execute(db, s, f"INSERT INTO hr.cut VALUES ({vals})")
        execute(db, s, "COMMIT")
        execute(db, s, f"UPDATE hr.cut SET {name} = {_sql(col, NEW[col])} WHERE id = 1")
        execute(db, s, "COMMIT")
        execute(db, s, "SAVEPOINT p")
        execute(db, s, f"UPDATE hr.cut SET {name} = {_sql(col, LATER[col])} WHERE id = 1")
        execute(db, s, "ROLLBACK TO SAVEPOINT p")
        execute(db, s, "UPDATE hr.cut SET w = 'w3' WHERE id = 1")
        execute(db, s, "COMMIT")
        db.switch_log()


@pytest.fixture(params=CC.CUTS, ids=[c[0] for c in CC.CUTS])
def updated(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, tuple[str, int, tuple[int, ...]]]:
    home = Home(tmp_path)
    home.create_subdirs()
    root = create_database(home.dirdb, "src")
    _write(root, request.param, monkeypatch)
    monkeypatch.undo()
    return root, request.param


def _urps(root: Path) -> list[tuple[int, int, int]]:
    """The update records' URPs, in log order: (row flags' P / N, the piece's first column
    it sets, how many it sets)."""
    out = []
    for log in CC._logs(root):
        for rec in framing.iter_records(log.read_bytes()):
            if any(v.op == "5.6" for v in rec.vectors):
                continue  # (a compensation)
            for v in rec.vectors:
                d = V.decode(v) if v.op == "11.5" else None
                if isinstance(d, V.Redo) and d.row.fb is not None:
                    cols = d.row.columns
                    out.append((d.row.fb & (FB_P | FB_N), cols[0][0], len(cols)))
    return out


def test_a_urp_per_piece_the_value_touches(updated: tuple[Path, Any]) -> None:
    """The first update: one URP per piece holding a part of the column (the head's sets
    the column where it ends the piece: N; each later one its column 0: P, and N where the
    column goes on), the second (taken back) the same; W's update: one URP."""
    root, (_, col, offsets) = updated
    got = _urps(root)
    n = len(offsets) + 1  # pieces holding a part of the column
    want = [(FB_N, col, 1), *[(FB_P | FB_N, 0, 1)] * (n - 2), (FB_P, 0, 1)]
    assert got[:n] == want
    assert got[n : 2 * n] == want
    assert len(got) == 2 * n + 1


def test_the_redo_miner_gives_the_new_value(updated: tuple[Path, Any]) -> None:
    """The redo miner (the attached Extract's): the update with the whole old and new
    values; the update taken back is gone; W's update."""
    root, (_, col, _) = updated
    got = CC._capture(root)
    name = CC.NAMES[col]
    assert [e.op for e in got] == ["INSERT", "UPDATE", "UPDATE"]
    assert CC._text(got[1].after)[name] == str(NEW[col])
    assert CC._text(got[1].before)[name] == str(CC.ROW1[col])
    assert CC._text(got[2].after)["W"] == "w3"


@pytest.mark.parametrize("native", [False, pytest.param(True, marks=CC.needs_c)])
def test_the_task_miner_gives_the_new_value(updated: tuple[Path, Any], native: bool) -> None:
    """The embedded Extract's miner (the C walk leaves the pieces to the Python walk: the
    same events): the update with the new value whole; the one taken back gone."""
    root, (_, col, _) = updated
    got = _surviving(CC._mine(root, native))
    updates = [cols for io, cols in got if io != int(IOType.INSERT)]
    assert len(updates) == 2
    assert str(updates[0][col]) == str(NEW[col])
    if native:
        assert CC._mine(root, True) == CC._mine(root, False)


def _surviving(items: list[Any]) -> list[tuple[int, dict[int, Any]]]:
    """The row events of a range's items that no savepoint rollback (an UNDO naming the
    row's reference) took back."""
    undone = {e[13] for e in items if e[0] == int(Kind.UNDO)}
    return CC._events([e for e in items if e[0] != int(Kind.ROW) or e[13] not in undone])


def test_the_reference_decoder_replays_the_tables(updated: tuple[Path, Any]) -> None:
    """The harness's reference decoder replays the committed redo to the tables."""
    root, _ = updated
    with Database(root) as db:
        got, want = tables_image(db), redo_image(db)
    assert not differences(got, want), differences(got, want)


def test_the_compensations_are_each_pieces_undo(updated: tuple[Path, Any]) -> None:
    """The update taken back: a compensation per piece, each its piece's undo (the old
    part of the value), the last piece first."""
    root, (_, _, offsets) = updated
    w = CR._written(root, "HR", "CUT")
    CR._check(w, 1)
    assert [k.name for _, _, k in w.comps] == ["URP"] * (len(offsets) + 1)


def test_ignoring_a_urps_p_fails_them(
    updated: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutation: a URP's P never applied (its column 0 taken as a value of its own): the
    redo miner's and the task miner's new value is wrong."""
    root, (_, col, _) = updated
    # (the task miner reads its pieces as the redo miner does: engine/redo/capture.row_piece)
    monkeypatch.setattr(P, "urp_flags", lambda fb, first: fb & ~FB_P)
    try:
        redo_ok = CC._text(CC._capture(root)[1].after)[CC.NAMES[col]] == str(NEW[col])
    except Exception:  # a stop or a wrong decode: the mutation is seen
        redo_ok = False
    assert not redo_ok
    try:
        got = _surviving(CC._mine(root, False))
        first = next(c for io, c in got if io != int(IOType.INSERT))
        task_ok = str(first[col]) == str(NEW[col])
    except Exception:
        task_ok = False
    assert not task_ok
