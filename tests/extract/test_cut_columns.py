"""A column cut across row pieces (row flags N on the piece holding its head, P on the one
holding its tail; both pieces count it and number it alike: docs/redo_format.md "A column
cut across pieces"): every reader gives the one value, whatever the cut point.

The records are written by the embedded database with the cut points chosen here (its
``row_pieces`` replaced: a cut after 1 byte, at the 1- / 3-byte length boundary, inside a
multi-byte character, one byte before the end, a column over three pieces, a NUMBER), and
read by the redo miner (engine/redo/capture.py, the attached Extract's), the task miner
(engine/extract/tasks/miner.py, the embedded Extract's; Python and C walks) and the harness's
reference decoder. ``pieces.join`` itself is held to a hypothesis property, and a mutation
(the P flag ignored) must fail them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.changes import Kind
from engine.embedded import dml
from engine.embedded import redogen as rg
from engine.embedded import rows as R
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.dictionary import load_dictionary
from engine.embedded.logs import list_logs
from engine.embedded.oradict import oracle_dictionary
from engine.embedded.sql import execute
from engine.extract.tasks.decode import Selection
from engine.extract.tasks.miner import Miner
from engine.extract.tasks.plan import Closed, mine_plan
from engine.home.layout import Home
from engine.redo import capture as C
from engine.redo import framing
from engine.redo import pieces as P
from engine.redo.dictionary import Dictionary
from engine.redo.rowid import FB_N, FB_P
from engine.trail.layout import IOType
from tests.harness import kernels

needs_c = kernels.loaded("redomine")

DDL = (
    "CREATE TABLE hr.cut (id NUMBER PRIMARY KEY, v VARCHAR2(4000), n NVARCHAR2(2000),"
    " w VARCHAR2(100), x NUMBER)"
)
NAMES = ("ID", "V", "N", "W", "X")
V_TEXT = "é" * 700 + "abc" + "€" * 300  # 1,400 + 3 + 900 bytes of UTF-8
N_TEXT = "ñ" * 500  # 1,000 bytes
X_NUM = "-12345678.25"  # (a NUMBER of 7 bytes)

#: (name, column cut, where: byte offsets into its value, each a cut)
CUTS: list[tuple[str, int, tuple[int, ...]]] = [
    ("after-1-byte", 1, (1,)),
    ("inside-a-character", 1, (701,)),
    ("length-byte-boundary-249", 1, (249,)),
    ("length-byte-boundary-250", 1, (250,)),
    ("length-byte-boundary-251", 1, (251,)),
    ("one-byte-before-the-end", 1, (2302,)),
    ("three-pieces", 1, (100, 2000)),
    ("four-pieces", 1, (1, 2, 2302)),
    ("nvarchar2", 2, (999,)),
    ("number", 4, (1,)),
    ("number-three-pieces", 4, (2, 5)),
]


def _cut_at(col: int, offsets: tuple[int, ...]) -> Callable[[rg.Row], list[R.Part]]:
    """A ``row_pieces`` that cuts column ``col`` of hr.cut's rows at ``offsets`` (rows
    whose column is shorter, the index's key rows: one piece)."""

    def pieces(enc: rg.Row) -> list[R.Part]:
        v = enc[col] if col < len(enc) else None
        if v is None or len(v) <= offsets[-1]:
            return [(0, len(enc), 0, 0)]
        out: list[R.Part] = [(0, col + 1, 0, offsets[0])]
        out += [(col, col + 1, a, b) for a, b in itertools.pairwise(offsets)]
        out.append((col, len(enc), offsets[-1], 0))
        return out

    return pieces


def _lit(v: str | None) -> str:
    return "NULL" if v is None else f"'{v}'"


ROW1 = (1, V_TEXT, N_TEXT, "w1", X_NUM)
ROW2 = (2, V_TEXT[::-1], N_TEXT, None, X_NUM)


def _write(root: Path, cut: tuple[str, int, tuple[int, ...]], mp: pytest.MonkeyPatch) -> None:
    """Two rows inserted in pieces cut at ``cut``; the first's uncut column W updated (a
    URP on its piece, the head locked or updated), the second deleted (a DRP per piece,
    each undo restoring its part); committed; then a third row inserted and rolled back."""
    _, col, offsets = cut
    mp.setattr(dml, "row_pieces", _cut_at(col, offsets))
    with Database(root, clock=ManualClock(datetime(2025, 1, 1))) as db:
        s = db.session("A")
        execute(db, s, DDL)
        for row in (ROW1, ROW2):
            vals = ", ".join(str(v) if i in (0, 4) else _lit(v) for i, v in enumerate(row))
            execute(db, s, f"INSERT INTO hr.cut VALUES ({vals})")
        execute(db, s, "COMMIT")
        execute(db, s, "UPDATE hr.cut SET w = 'w2' WHERE id = 1")
        execute(db, s, "DELETE FROM hr.cut WHERE id = 2")
        execute(db, s, "COMMIT")
        execute(db, s, f"INSERT INTO hr.cut VALUES (3, {_lit(V_TEXT)}, NULL, NULL, 7)")
        execute(db, s, "ROLLBACK")
        db.switch_log()


def _logs(root: Path) -> list[Path]:
    return [i.path for i in list_logs(root / "redo")]


def _flags(root: Path) -> list[int]:
    """The P / N bits of every row piece the log's 11.2 / 11.5 and DRP undos carry."""
    from engine.redo import vectors as V

    out = []
    for log in _logs(root):
        for rec in framing.iter_records(log.read_bytes()):
            for v in rec.vectors:
                d = V.decode(v) if v.layer in (5, 11) else None
                row = getattr(d, "row", None)
                if row is not None and getattr(row, "fb", None) is not None:
                    out.append(row.fb & (FB_P | FB_N))
    return out


def _capture(root: Path, raw_v: bool = False) -> list[C.RowEvent]:
    """The redo miner's row changes (``raw_v``: column V declared RAW in its dictionary,
    so that its value is the bytes as joined)."""
    with Database(root) as db:
        dic: Dictionary = oracle_dictionary(db.dictionary, db.state.scn)
    if raw_v:
        dic = replace(dic, tables=tuple(_raw_v(t) for t in dic.tables))
    cap = C.Capture(dic, lambda t: t.full_name == "HR.CUT")
    out: list[C.RowEvent] = []
    for log in _logs(root):
        for rec in framing.iter_records(log.read_bytes()):
            for t in cap.feed(rec):
                out += t.changes
    return out


def _raw_v(t: Any) -> Any:
    if t.name != "CUT":
        return t
    return replace(
        t, columns=tuple(replace(c, type="RAW") if c.name == "V" else c for c in t.columns)
    )


def _text(image: tuple[tuple[str, Any], ...]) -> dict[str, str | None]:
    return {k: None if v is None else str(v) for k, v in image}


def _set(image: Any) -> dict[Any, str]:
    """The columns of an image that are not NULL, as text."""
    return {k: str(v) for k, v in image if v is not None}


def _row(row: tuple[Any, ...]) -> dict[str, str | None]:
    return {n: None if v is None else str(v) for n, v in zip(NAMES, row, strict=True)}


def _mine(root: Path, native: bool, table: str = "HR.CUT") -> list[Any]:
    """The task miner's items of every log (``native``: its C walk)."""
    dictionary = load_dictionary(root / "dictionary.json")
    plan = mine_plan(dictionary, Selection(everything=True), hooked=frozenset({table}),
                     compact=False)  # fmt: skip
    out: list[Any] = []
    for log in _logs(root):
        m = Miner(plan)
        if not native:
            m._walker = None
        out += m.mine(str(log), 0, None).items
    return out


def _events(items: list[Any]) -> list[tuple[int, dict[int, Any]]]:
    """(I/O type, columns) of the row events of a range's items."""
    out = []
    for e in items:
        assert not isinstance(e, Closed)
        if e[0] == int(Kind.ROW):
            out.append((e[8], dict(e[11])))
    return out


@pytest.fixture(params=CUTS, ids=[c[0] for c in CUTS])
def written(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = Home(tmp_path)
    home.create_subdirs()
    root = create_database(home.dirdb, "src")
    _write(root, request.param, monkeypatch)
    monkeypatch.undo()
    return root


def test_the_pieces_carry_p_and_n(written: Path) -> None:
    """The inserts' pieces, the update's URP and the delete's undos say where the cut is."""
    got = _flags(written)
    assert FB_N in got and FB_P in got


def test_the_redo_miner_gives_one_value(written: Path) -> None:
    got = _capture(written)
    assert [e.op for e in got] == ["INSERT", "INSERT", "UPDATE", "DELETE"]
    assert _text(got[0].after) == _row(ROW1)
    assert _set(got[1].after) == _set(_row(ROW2).items())
    assert _text(got[2].after)["W"] == "w2"
    assert _text(got[2].before)["W"] == "w1"
    assert _set(got[3].before) == _set(_row(ROW2).items())


def test_the_redo_miner_gives_one_raw_value(written: Path) -> None:
    """Column V read as RAW: its bytes exactly (a RAW is cut as any column)."""
    got = _capture(written, raw_v=True)
    assert dict(got[0].after)["V"] == V_TEXT.encode()
    assert dict(got[3].before)["V"] == V_TEXT[::-1].encode()


@pytest.mark.parametrize("native", [False, pytest.param(True, marks=needs_c)])
def test_the_task_miner_gives_one_value(written: Path, native: bool) -> None:
    """The embedded Extract's miner: the inserts whole, the update on the row (the C walk
    leaves every piece's record to the Python one: the same events)."""
    got = _events(_mine(written, native))
    inserts = [_set(cols.items()) for io, cols in got if io == int(IOType.INSERT)]
    assert inserts[:2] == [
        {i: str(v) for i, v in enumerate(ROW1) if v is not None},
        {i: str(v) for i, v in enumerate(ROW2) if v is not None},
    ]
    if native:
        assert got == _events(_mine(written, False))


def test_ignoring_the_p_flag_fails_them(written: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutation: a piece's first column taken as a column of its own, not the previous
    piece's last continued: the redo miner's and the task miner's values are wrong."""
    monkeypatch.setattr(P, "FB_P", 0)
    try:
        redo_ok = _text(_capture(written)[0].after) == _row(ROW1)
    except Exception:  # a stop or a wrong decode: the mutation is seen
        redo_ok = False
    assert not redo_ok
    try:
        inserts = [c for io, c in _events(_mine(written, False)) if io == int(IOType.INSERT)]
        task_ok = _set(inserts[0].items()) == {
            i: str(v) for i, v in enumerate(ROW1) if v is not None
        }
    except Exception:  # a corrupt value (a character cut in two): the mutation is seen
        task_ok = False
    assert not task_ok


# -- pieces.join, the rule itself ----------------------------------------------------------


@st.composite
def _cut_row(draw: st.DrawFn) -> tuple[list[bytes | None], list[tuple[int, list[bytes | None]]]]:
    """A row and its pieces, head first: each piece's flags (P / N) and values, a column
    cut at random points (any column but a NULL may be cut, over any number of pieces)."""
    row = draw(st.lists(st.one_of(st.none(), st.binary(min_size=1, max_size=40)), min_size=1,
                        max_size=8))  # fmt: skip
    pieces: list[tuple[int, list[bytes | None]]] = []
    cur: list[bytes | None] = []
    p = 0
    for v in row:
        if v is None or len(v) < 2 or not draw(st.booleans()):
            cur.append(v)
            if draw(st.booleans()) and v is not row[-1]:  # a piece ends after a whole column
                pieces.append((p, cur))
                cur, p = [], 0
            continue
        cuts = sorted(draw(st.sets(st.integers(1, len(v) - 1), min_size=1, max_size=3)))
        for a, b in zip([0, *cuts], cuts, strict=False):
            cur.append(v[a:b])
            pieces.append((p | FB_N, cur))
            cur, p = [], FB_P
        cur.append(v[cuts[-1] :])
    pieces.append((p, cur))
    return row, [(fb, vals) for fb, vals in pieces if vals]


@settings(max_examples=200, deadline=None)
@given(_cut_row())
def test_join_gives_the_row_laid_or_placed(
    case: tuple[list[bytes | None], list[tuple[int, list[bytes | None]]]],
) -> None:
    """Laid end to end (each piece numbered from 0: a chained insert without column
    numbers) or placed (numbered as the table's: the cut column's number in both pieces),
    the pieces joined are the row."""
    row, pieces = case
    want = dict(enumerate(row))
    laid = [(fb, tuple(enumerate(vals))) for fb, vals in pieces]
    assert P.join(laid, laid=True) == want
    placed = []
    at = 0
    for fb, vals in pieces:
        at -= 1 if fb & FB_P else 0
        placed.append((fb, tuple((at + i, v) for i, v in enumerate(vals))))
        at += len(vals)
    assert P.join(placed) == want


def test_pieces_kept_before_columns_were_cut_read_as_uncut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database made before columns were cut keeps each piece as (rid, first column, past
    the last) in ``_gg_pieces``: read as uncut, its row's DELETE is a DRP per piece without
    P / N, and the redo miner gives the row."""
    import json

    home = Home(tmp_path)
    home.create_subdirs()
    root = create_database(home.dirdb, "old")
    whole = [(0, 2, 0, 0), (2, 5, 0, 0)]  # (ID, V), (N, W, X): whole columns, as before
    monkeypatch.setattr(
        dml, "row_pieces", lambda enc: whole if len(enc) == 5 else [(0, len(enc), 0, 0)]
    )
    with Database(root) as db:
        s = db.session("A")
        execute(db, s, DDL)
        vals = ", ".join(str(v) if i in (0, 4) else _lit(v) for i, v in enumerate(ROW1))
        execute(db, s, f"INSERT INTO hr.cut VALUES ({vals})")
        execute(db, s, "COMMIT")
        (obj,) = db.chained
        ((rid, kept),) = db.chained[obj].items()
        assert [p[3:] for p in kept] == [(0, 0), (0, 0)]
        old = json.dumps([list(p[:3]) for p in kept])
        db.conn.execute("UPDATE _gg_pieces SET pieces = ?", (old,))
        db.conn.commit()
    monkeypatch.undo()
    with Database(root) as db:
        assert db.chained[obj][rid] == kept
        execute(db, db.session("A"), "DELETE FROM hr.cut WHERE id = 1")
        execute(db, db.session("A"), "COMMIT")
        db.switch_log()
    assert not any(_flags(root))
    got = _capture(root)
    assert [e.op for e in got] == ["INSERT", "DELETE"]
    assert _set(got[1].before) == _set(_row(ROW1).items())
