"""The attached database's Extract on its fast path (engine/extract/oracle_source.py
``FastMiner``: the task miner and its strict C walk over the attached dictionary): the
container of a vector is honoured, and a record it would not read as the redo miner does (a
row in two pieces) is read by the redo miner, in place, with the right row."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from engine.embedded import dml
from engine.embedded import redogen as rg
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.rows import index_cols, rid_block, rid_slot, supp_columns
from engine.embedded.session import UndoEntry
from engine.embedded.sql import execute
from engine.extract import oracle_source
from engine.extract.oracle_source import MinerStates
from engine.extract.run import ExtractRun
from engine.home.groups import GroupStore
from engine.home.layout import Home
from engine.redo.attached import attach
from engine.redo.ids import make_dba
from engine.redo.model import Column
from engine.trail.layout import IOType
from engine.trail.reader import TrailReader
from params.check import check_text
from tests.extract.test_alo_rac import FMT, PRM, _add
from tests.harness.attached import archive_copies, oracle_dictionary


def _source(home: Home, pieces: bool = False) -> tuple[Path, int]:
    """One thread: WL.U and WL.P (id, a, b: numbers, so that a piece reads as a row) with inserts, an update and a delete; with
    ``pieces``, WL.P's inserts are written as Oracle writes a chained row: its last piece
    (fb L, the columns after the first) then its head (fb H F, the first column)."""
    root = create_database(home.dirdb, "ONE", threads=1)
    with Database(root, clock=ManualClock(datetime(2024, 1, 1), step=0.001)) as db:
        s = db.session("A", username="WL", thread=1)
        execute(db, s, "CREATE TABLE wl.u (id NUMBER PRIMARY KEY, v VARCHAR2(20))")
        execute(db, s, "CREATE TABLE wl.p (id NUMBER PRIMARY KEY, a NUMBER, b NUMBER)")
        made = db.state.scn
        with _chained(pieces):
            for i in range(1, 21):
                execute(db, s, f"INSERT INTO wl.u VALUES ({i}, 'u {i}')")
                execute(db, s, f"INSERT INTO wl.p VALUES ({i}, {i * 3}, {i * 7})")
                if i % 4 == 0:
                    execute(db, s, f"UPDATE wl.u SET v = 'w {i}' WHERE id = {i - 1}")
                    execute(db, s, f"DELETE FROM wl.p WHERE id = {i - 2}")
                execute(db, s, "COMMIT")
        db.switch_log()
    return root, made


class _chained:
    """While active (and ``on``), WL.P's single-row inserts are written in two pieces."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.orig = dml._redo_insert

    def __enter__(self) -> None:
        if self.on:
            dml._redo_insert = _two_pieces(self.orig)  # type: ignore[assignment]

    def __exit__(self, *_exc: object) -> None:
        dml._redo_insert = self.orig  # type: ignore[assignment]


def _two_pieces(orig: Any, apart: bool = False) -> Any:
    """The embedded writer's single-row insert, WL.P's in two pieces: last piece then head,
    in one record (``apart``: in two, the last piece with the undo, the head with the
    session's vectors, so that a range may end between them)."""

    def insert(s: Any, db: Any, txn: Any, table: Any, scn: int, rid: int, enc: Any) -> None:
        if table.qualified != "WL.P":
            orig(s, db, txn, table, scn, rid, enc)
            return
        dba = make_dba(table.file_no, rid_block(rid))
        slot = rid_slot(rid)
        pre, _ = s.first_cvs(txn, scn)
        undo_kdo = rg.kdo("DRP", rg.UNDO_KTB, table, dba, slot=slot)
        undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, supp_columns(table, enc))
        txn.ids.started = True
        ktb, _ = rg.ktb_for(txn.ids, dba, uba, db.dirty_blocks, scn)
        cols = rg.columns_of(enc)
        head, tail = cols[:1], tuple(Column(i, c.data) for i, c in enumerate(cols[1:]))
        other = make_dba(table.file_no, rid_block(rid) + 500)  # where the rest went

        def piece(at: int, sl: int, part: tuple[Column, ...], fb: str) -> Any:
            k = rg.kdo("IRP", ktb, table, at, slot=sl, size=rg.row_size([c.data for c in part]),
                       lb=2, cc=len(part), columns=part, fb=fb)  # fmt: skip
            return rg.row_redo(txn.ids, table, scn, at, 2, k)

        last, first = piece(other, slot, tail, "-----L--"), piece(dba, slot, head, "--H-F---")
        if apart:
            db.emit(s.thread, scn, [*pre, undo_cv, last])
            db.emit(s.thread, scn, [first, *s.session_cv(txn)])
        else:
            db.emit(s.thread, scn, [*pre, undo_cv, last, first, *s.session_cv(txn)])
        txn.entries.append(UndoEntry("ins", table.qualified, (rid,), uba))
        for index in table.indexes:
            key = rg.index_key(index_cols(table, index), enc)
            db.emit(s.thread, scn, rg.index_change(txn.ids, table, index, scn, True,
                                                   [(key, rg.keydata(dba, slot), slot)]))  # fmt: skip

    return insert


def _dictionary(root: Path, path: Path, made: int, containers: dict[str, int]) -> Path:
    """The attached dictionary, with the container of the tables ``containers`` names."""
    oracle_dictionary(root, path, made)
    doc = json.loads(path.read_text())
    for t in doc["tables"]:
        t["con_id"] = containers.get(f"{t['owner']}.{t['name']}", t["con_id"])
    path.write_text(json.dumps(doc))
    return path


def _run(home: Home, tmp: Path, root: Path, dic: Path, g: str, table: str = "wl.*") -> MinerStates:
    """Group ``g`` of the attached database over every archive, to their end; its miners'
    states (the fast path's counts)."""
    arch = tmp / f"arch_{g}"
    archive_copies(root, arch)
    attach(home.dirdb, f"O{g}".upper(), str(arch), dic, FMT)
    _add(home, g, 1)
    prm = PRM.format(g=g, extra="").replace("SOURCEDB ORA", f"SOURCEDB O{g}".upper())
    prm = prm.replace("TABLE wl.*;", f"TABLE {table};")
    (home.dirprm / f"{g}.prm").write_text(prm)
    group = GroupStore(home).get(g.upper())
    run = ExtractRun(home, check_text(prm).model, group, lambda *_: None, spark=None,
                     durable=False)  # fmt: skip
    try:
        run.run(threading.Event(), stop_at_eof=True)
        origin = run.capture.origin
        assert origin is not None
        states: MinerStates = origin.states  # type: ignore[attr-defined]
        return states
    finally:
        run.close()


def _rows(home: Home, g: str) -> list[tuple[str, str, str | None, dict[int, str | None]]]:
    """(table, operation, ROWID, columns) of each record of trail ``g``."""
    out = []
    for _, rec in TrailReader(str(home.root / "dirdat" / g)).records():
        out.append((rec.table, IOType(rec.io_type).name, rec.rowid, dict(rec.columns)))
    return out


@pytest.fixture
def no_fast_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(oracle_source, "fast_miner", lambda *_a: None)
    yield


def test_another_containers_object_of_the_same_number_is_not_captured(tmp_path: Path) -> None:
    """The redo's vectors are container 0's. A dictionary naming WL.P in container 3 (the
    same object number) captures none of its rows, on the fast path as on the redo miner's,
    and WL.U's all; with both in container 0 WL.P's rows are captured."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = _source(home)
    here = _dictionary(root, tmp_path / "here.json", made, {})
    there = _dictionary(root, tmp_path / "there.json", made, {"WL.P": 3})
    states = _run(home, tmp_path, root, here, "h1")
    # the redo miner reads only the two CREATE TABLEs' DDL markers (24.1)
    assert states.fast_ranges and not states.redo_ranges and states.delegated == 2
    both = _rows(home, "h1")
    assert {t for t, *_ in both} == {"WL.U", "WL.P"}
    states = _run(home, tmp_path, root, there, "h2")
    assert states.fast_ranges and not states.redo_ranges
    only_u = _rows(home, "h2")
    assert only_u == [r for r in both if r[0] == "WL.U"]
    assert len(only_u) == 20 + 5  # the inserts and the updates


def test_another_container_on_the_redo_miner_path_too(tmp_path: Path, no_fast_path: None) -> None:
    """The same as the redo miner reads it: the reference of the fast path's test."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = _source(home)
    there = _dictionary(root, tmp_path / "there.json", made, {"WL.P": 3})
    states = _run(home, tmp_path, root, there, "r2")
    assert states.redo_ranges and not states.fast_ranges
    assert {t for t, *_ in _rows(home, "r2")} == {"WL.U"}


def test_two_containers_tables_of_one_number_are_read_by_the_redo_miner(tmp_path: Path) -> None:
    """A captured table of container 3 with WL.P's object number (a clash the C walk's
    table of numbers cannot hold): the records naming the number are read by the redo
    miner, which gives WL.P's rows to WL.P and none to the other."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = _source(home)
    path = _dictionary(root, tmp_path / "clash.json", made, {})
    doc = json.loads(path.read_text())
    p = next(t for t in doc["tables"] if t["name"] == "P")
    doc["tables"].append({**p, "con_id": 3, "owner": "WL", "name": "P3"})
    path.write_text(json.dumps(doc))
    reference = _rows_of(home, tmp_path, root, _dictionary(root, tmp_path / "r.json", made, {}))
    states = _run(home, tmp_path, root, path, "c1")
    assert states.fast_ranges and states.delegated
    assert _rows(home, "c1") == reference


def _rows_of(home: Home, tmp: Path, root: Path, dic: Path) -> list[Any]:
    _run(home, tmp, root, dic, "c0")
    return _rows(home, "c0")


def test_a_row_in_two_pieces_is_read_by_the_redo_miner_and_is_right(tmp_path: Path) -> None:
    """WL.P's inserts in two pieces (last piece, then head): the strict C walk leaves their
    records, the redo miner reads them in place and binds each row whole (every column,
    the head's ROWID); the other records stay on the fast path. The trail is the one the
    redo miner alone writes, and WL.P's inserts carry their values."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = _source(home, pieces=True)
    dic = _dictionary(root, tmp_path / "d.json", made, {})
    states = _run(home, tmp_path, root, dic, "p1")
    assert states.fast_ranges and not states.redo_ranges
    assert states.delegated == 2 + 20  # the DDL markers and each WL.P insert's record
    got = _rows(home, "p1")
    inserts = [r for r in got if r[0] == "WL.P" and r[1] == IOType.INSERT.name]
    assert [r[3] for r in inserts] == [
        {0: str(i), 1: str(i * 3), 2: str(i * 7)} for i in range(1, 21)
    ]
    assert all(r[2] for r in inserts)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(oracle_source, "fast_miner", lambda *_a: None)
        slow = _run(home, tmp_path, root, dic, "p2")
    assert slow.redo_ranges and not slow.fast_ranges
    assert _rows(home, "p2") == got
