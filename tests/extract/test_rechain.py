"""An UPDATE that a row's pieces no longer hold (issue 24 §3): the embedded database re-chains
the row as Oracle migrates one (engine/embedded/chained.py ``rechain``: the new layout's
pieces by IRPs, the last first; the old layout's other pieces removed by DRPs; the head
overwritten by an ORP), and every reader binds the records into one UPDATE on the head's
ROWID with the whole row in both images: the redo miner (the attached Extract's), the task
miner (the embedded Extract's, Python and C walks), the harness's reference decoder; a
rollback compensates each piece and puts the old pieces back; instance recovery keeps the
new pieces; a live capture of two RAC threads, polling inside re-chains, equals a catch-up.
Three shapes: a row in one piece grown past a block, a chained row's piece
outgrown, a cut column set to a value that no longer reaches its last part."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from engine.changes import Kind
from engine.embedded import chained
from engine.embedded import redogen as rg
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.oradict import oracle_dictionary
from engine.embedded.rows import encode_row, row_pieces, rows_of
from engine.embedded.sql import execute
from engine.home.layout import Home
from engine.redo import capture as C
from engine.redo import framing
from engine.redo.dictionary import Dictionary
from engine.trail.layout import IOType
from tests.extract import test_chained_changes as CH
from tests.extract import test_chained_rollback as CR
from tests.extract import test_cut_columns as CC
from tests.harness.images import differences, redo_image, tables_image

NAMES = CH.NAMES  # A .. F, VARCHAR2(4000) each, after ID


def _v(ch: str, n: int) -> str:
    return ch * n


#: the statements (session A), with what each leaves
STATEMENTS = [
    "INSERT INTO hr.t (id, a) VALUES (1, 'a')",  # one piece
    f"INSERT INTO hr.t (id, a, c) VALUES (2, '{_v('p', 3000)}', '{_v('q', 4000)}')",  # two
    "INSERT INTO hr.t VALUES (3, {})".format(", ".join(f"'{_v(n.lower(), 4000)}'" for n in NAMES)),
    "COMMIT",
    # row 1 grown past a block: re-chained from one piece to two
    "UPDATE hr.t SET {} WHERE id = 1".format(", ".join(f"{n} = '{_v(n, 4000)}'" for n in "BCD")),
    # row 2 (one piece) grown past a block too
    f"UPDATE hr.t SET e = '{_v('E', 4000)}', f = '{_v('F', 3000)}' WHERE id = 2",
    # row 3's cut column C set short: it no longer reaches its last part
    "UPDATE hr.t SET c = 'short' WHERE id = 3",
    "COMMIT",
    # row 1's pieces outgrown (two to three), taken back by a savepoint rollback; then a
    # change that survives (its head's URP: its pieces hold it)
    "SAVEPOINT s",
    "UPDATE hr.t SET {} WHERE id = 1".format(", ".join(f"{n} = '{_v(n, 4000)}'" for n in "DEF")),
    "ROLLBACK TO SAVEPOINT s",
    "UPDATE hr.t SET a = 'k' WHERE id = 1",  # (as long as 'a': the pieces hold it)
    "COMMIT",
    # row 2's pieces outgrown (two to three), rolled back whole
    f"UPDATE hr.t SET a = '{_v('Z', 4000)}', b = '{_v('Y', 4000)}' WHERE id = 2",
    "ROLLBACK",
    # the re-chained row deleted: a DRP per piece of its new layout
    "DELETE FROM hr.t WHERE id = 3",
    "COMMIT",
]


def _write(root: Path) -> dict[int, Any]:
    """Run :data:`STATEMENTS`; the rows' pieces (``Database.chained``) after each
    statement that changes them, by statement index."""
    layouts: dict[int, Any] = {}
    with Database(root, clock=ManualClock(datetime(2025, 1, 1))) as db:
        s = db.session("A")
        execute(db, s, CH.DDL)
        obj = db.dictionary.get("HR", "T").obj
        for n, text in enumerate(STATEMENTS):
            execute(db, s, text)
            layouts[n] = {rid & 0xFFFF: p for rid, p in db.chained.get(obj, {}).items()}
        db.switch_log()
    return layouts


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, Any]]:
    home = Home(tmp_path_factory.mktemp("rechain"))
    home.create_subdirs()
    root = create_database(home.dirdb, "src")
    return root, _write(root)


def _rows(root: Path) -> list[tuple[str, Any]]:
    """The update records' row operations and supplemental flags, in log order (no
    compensation): (op, row flags, supplemental F / L letters)."""
    out = []
    for log in CC._logs(root):
        for rec in framing.iter_records(log.read_bytes()):
            got = CH._shape(rec)
            if got is not None:
                out.append((got[0], got[1], CH._fl(got[2])))
    return out


def test_the_records_are_oracles_migration(written: tuple[Path, Any]) -> None:
    """Each re-chain as oracdc's ``IRP + ORP`` (``Ops_IRP_ORP_BindingTest``: the row's
    piece in a new block by an IRP with supplemental F, the head by an ORP with
    supplemental L), generalized: the new pieces by IRPs (the last first), the old pieces
    removed by DRPs (the last first), then the head's ORP; the other pieces' records
    supplemental ``--------``. The head keeps its first columns (``--H-F---``, ``N`` when
    its last column is cut), every new piece's flags as an insert's."""
    root, _ = written
    got = _rows(root)[5:]  # after the inserts' 1 + 1 + 3 pieces
    ops = [(op, fl) for op, _, fl in got]
    two = list(ORACDC_IRP_ORP)  # (one piece to two)
    assert ops[0:2] == two and ops[2:4] == two  # rows 1 and 2 grown past a block
    # row 3: three pieces to three (C short), two old pieces removed, the last first
    assert ops[4:9] == [("IRP", "F"), ("IRP", ""), ("DRP", ""), ("DRP", ""), ("ORP", "L")]
    # row 1: two to three (taken back), its later update (one URP, the head's); row 2:
    # two to three (rolled back); row 3's delete, a DRP per piece of its new layout
    three = [("IRP", "F"), ("IRP", ""), ("DRP", ""), ("ORP", "L")]
    assert ops[9:13] == three and ops[13] == ("URP", "FL") and ops[14:18] == three
    assert ops[18:] == [("DRP", "F"), ("DRP", ""), ("DRP", "L")]
    # row flags (the P / N letters aside): a new last piece -----L--, a middle one
    # --------, the head --H-F---; a DRP's (its undo's) the old piece's
    fbs = [(op, fl, fb[:6] if fb else fb) for op, fb, fl in got[:18]]
    assert [fb for op, fl, fb in fbs if op == "IRP" and fl == "F"] == ["-----L"] * 5
    assert [fb for op, fl, fb in fbs if op == "IRP" and not fl] == ["------"] * 3
    assert [fb for op, _, fb in fbs if op == "ORP"] == ["--H-F-"] * 5
    assert [fb for op, _, fb in fbs if op == "DRP"] == ["-----L", "------", "-----L", "-----L"]


#: oracdc's ``IRP + ORP`` migration (``Ops_IRP_ORP_BindingTest``), its records' operations
#: and supplemental F / L letters (:func:`test_oracdcs_migration_is_the_form_we_write`)
ORACDC_IRP_ORP = (("IRP", "F"), ("ORP", "L"))


def test_oracdcs_migration_is_the_form_we_write() -> None:
    """The real 19c records (the corpus: skipped where it is absent) are the form
    :data:`ORACDC_IRP_ORP` states."""
    real = [(op, fl) for op, _, fl in _oracdc("Ops_IRP_ORP_BindingTest.java")]
    assert tuple(real) == ORACDC_IRP_ORP


def _oracdc(name: str) -> list[tuple[str, str | None, str]]:
    """The first change's records of oracdc's binding case ``name`` (a .java file of the
    corpus): (op, row flags, supplemental F / L letters)."""
    from tests.redo import test_binding as TB

    case = next(c for c in TB._cases() if c.file == name)
    out = []
    for r in case.records:
        got = CH._shape(TB._parsed(r))
        if got is not None:
            out.append((got[0], got[1], CH._fl(got[2])))
    return out[:2]


def test_the_pieces_follow_the_row(written: tuple[Path, Any]) -> None:
    """``Database.chained`` (``_gg_pieces``): a re-chained row's new pieces, the head where
    it was and the others in new blocks, cut as an insert of its values would be; a savepoint
    rollback and a rollback put the old pieces back (row 1: none, a row in one piece again;
    row 2: its two)."""
    root, layouts = written
    assert 0 not in layouts[3] and 1 not in layouts[3] and len(layouts[3][2]) == 3
    one, two, three = layouts[4][0], layouts[5][1], layouts[6][2]
    assert len(one) == 2 and len(two) == 2 and len(three) == 3
    assert one[0][0] & 0xFFFF == 0 and three[0] == layouts[3][2][0][:1] + three[0][1:]
    assert {r for r, *_ in three[1:]}.isdisjoint(r for r, *_ in layouts[3][2][1:])
    assert len(layouts[9][0]) == 3 and layouts[10][0] == one  # the savepoint rollback
    assert len(layouts[13][1]) == 3 and layouts[14][1] == two  # the rollback
    with Database(root) as db:  # (kept with the tables: the database opened again)
        table = db.dictionary.get("HR", "T")
        head = one[0][0]
        want = row_pieces(rg.columns_of_row(encode_row(table, rows_of(db, table, (head,))[head])))
        got = db.chained[table.obj][head]
    assert [p[1:] for p in got] == [tuple(w) for w in want]


def _committed(root: Path) -> list[list[CH.Change]]:
    """The committed transactions as the redo miner reads them."""
    return CH._captured(root)


def _want() -> list[list[tuple[str, int, dict[str, str | None]]]]:
    big = {n: _v(n.lower(), 4000) for n in NAMES}
    one = {"A": "a", **{n: _v(n, 4000) for n in "BCD"}}
    two = {"A": _v("p", 3000), "B": None, "C": _v("q", 4000), "D": None,
           "E": _v("E", 4000), "F": _v("F", 3000)}  # fmt: skip
    three = {**big, "C": "short"}
    return [
        [("INSERT", 1, {"A": "a"}), ("INSERT", 2, {"A": _v("p", 3000), "B": None,
                                                    "C": _v("q", 4000)}), ("INSERT", 3, big)],
        [("UPDATE", 1, one), ("UPDATE", 2, two), ("UPDATE", 3, three)],
        [("UPDATE", 1, {"A": "k"})],
        [("DELETE", 3, three)],
    ]  # fmt: skip


def test_the_redo_miner_gives_one_update_each(written: tuple[Path, Any]) -> None:
    """The redo miner (the attached Extract's): each re-chain one UPDATE on the row's key
    with the whole new row; the one a savepoint rollback took back and the one rolled back
    gone (every compensation found its change: ``CH._captured`` asserts it)."""
    root, _ = written
    assert _committed(root) == _want()


def test_the_redo_miner_gives_the_whole_old_row(written: tuple[Path, Any]) -> None:
    """A re-chain's before image: the whole old row (the old pieces' undo), a cut column
    joined."""
    root, _ = written
    with Database(root) as db:
        dic: Dictionary = oracle_dictionary(db.dictionary, db.state.scn)
    cap = C.Capture(dic, lambda t: t.full_name == "HR.T")
    ups = []
    for log in CC._logs(root):
        for rec in framing.iter_records(log.read_bytes()):
            for t in cap.feed(rec):
                ups += [e for e in t.changes if e.op == "UPDATE"]
    before = {k: None if v is None else str(v) for k, v in ups[2].before}
    assert before == {"ID": "3", **{n: _v(n.lower(), 4000) for n in NAMES}}
    assert dict(ups[0].before)["A"] == "a" and dict(ups[0].before).get("B") is None


@pytest.mark.parametrize("native", [False, pytest.param(True, marks=CC.needs_c)])
def test_the_task_miner_gives_one_update_each(written: tuple[Path, Any], native: bool) -> None:
    """The embedded Extract's task miner (its C walk leaves the pieces to the Python walk:
    the same events): the same changes; the re-chains taken back named by their UNDO."""
    root, _ = written
    items = _mine(root, native)
    undone = {e[13] for e in items if e[0] == int(Kind.UNDO)}
    rows = [e for e in items if e[0] == int(Kind.ROW) and e[13] not in undone]
    got = CC._events(rows)
    ops = [io for io, _ in got]
    upd = int(IOType.FIELDCOMP)  # (an update's after image, as the plan asks)
    # (rolled back whole: its transaction's rows dropped at the rollback, not here)
    assert ops[:3] == [int(IOType.INSERT)] * 3 and ops[3:6] == [upd] * 3
    assert str(got[5][1][3]) == "short" and str(got[3][1][4]) == _v("D", 4000)
    assert str(got[4][1][5]) == _v("E", 4000)
    if native:
        assert _mine(root, True) == _mine(root, False)


def _mine(root: Path, native: bool) -> list[Any]:
    return CC._mine(root, native, "HR.T")


def test_the_reference_decoder_replays_the_tables(written: tuple[Path, Any]) -> None:
    """The harness's reference decoder binds the pieces too: the committed redo replayed
    gives the tables."""
    root, _ = written
    with Database(root) as db:
        got, want = tables_image(db), redo_image(db)
    assert not differences(got, want), differences(got, want)


def test_each_piece_is_compensated(written: tuple[Path, Any]) -> None:
    """The two re-chains taken back: a compensation per record, each its record's undo
    (the head's ORP back, the old pieces put back by IRPs, the new ones removed by DRPs),
    the last record first."""
    root, _ = written
    w = CR._written(root)
    CR._check(w, 2)
    assert [k.name for _, _, k in w.comps] == ["ORP", "IRP", "DRP", "DRP"] * 2


def _drop_new_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer loses each re-chain's first record (the IRP of its new last piece)."""
    emit, rechain = Database.emit, chained.rechain
    seen: list[int] = []

    def lossy(self: Database, thread: int, scn: int, changes: Any, **kw: Any) -> None:
        if seen and seen[-1] == 0:
            seen[-1] = 1
            return
        emit(self, thread, scn, changes, **kw)

    def counted(*a: Any, **k: Any) -> Any:
        seen.append(0)
        try:
            return rechain(*a, **k)
        finally:
            seen.pop()

    monkeypatch.setattr(Database, "emit", lossy)
    monkeypatch.setattr(chained, "rechain", counted)


def _whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer writes a re-chain whole (one URP on the head), as before it re-chained."""
    monkeypatch.setattr(chained, "rechain", lambda *a, **k: None)


@pytest.mark.parametrize("mutation", [_drop_new_piece, _whole])
def test_a_mutated_writer_fails_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutation: Any
) -> None:
    """Each mutation fails the record test and what the redo miner gives (both pass
    unmutated: the tests above)."""
    mutation(monkeypatch)
    home = Home(tmp_path)
    home.create_subdirs()
    root = create_database(home.dirdb, "src")
    layouts = _write(root)
    monkeypatch.undo()
    assert CH._fails(lambda: _committed(root) == _want())
    assert CH._fails(lambda: test_the_records_are_oracles_migration((root, layouts)))


# -- instance recovery ---------------------------------------------------------------------

RF_SETUP = [
    ("A", CH.DDL),
    ("A", "INSERT INTO hr.t (id, a) VALUES (1, 'a')"),
    ("A", f"INSERT INTO hr.t (id, a, c) VALUES (2, '{_v('p', 3000)}', '{_v('q', 4000)}')"),
    ("A", "COMMIT"),
    # open at the checkpoint: row 1 re-chained (its undo entry saved with B's session)
    ("B", "SAVEPOINT b1"),
    ("B", "UPDATE hr.t SET {} WHERE id = 1".format(", ".join(f"{n} = '{_v(n, 4000)}'"
                                                            for n in "BCD"))),
]  # fmt: skip
#: after the checkpoint: B's re-chain taken back (its compensations name the saved entry);
#: row 2 re-chained and committed (rolled forward: its new pieces kept)
RF_AFTER = [
    ("B", "ROLLBACK TO b1"),
    ("A", f"UPDATE hr.t SET e = '{_v('E', 4000)}', f = '{_v('F', 3000)}' WHERE id = 2"),
    ("A", "COMMIT"),
    ("B", "UPDATE hr.t SET a = 'k' WHERE id = 1"),
    ("B", "COMMIT"),
]


def _thread(name: str, threads: int) -> int:
    return 1


def _rf_twin(base: Path, kill: bool) -> Path:
    return CR._rf_twins(base, kill, RF_SETUP, "tests.extract.test_rechain")


def test_recovery_keeps_the_new_pieces(tmp_path: Path) -> None:
    """Killed after the redo of both re-chains and before a checkpoint: recovery rolls the
    committed one forward (the row's new pieces kept: ``_gg_pieces``), takes back the one
    made before the checkpoint by its saved undo entry (the old pieces back: row 1 in one
    piece), and leaves the tables and the pieces of a run not killed (whose B restored
    that entry, with its pieces, from the checkpoint)."""
    import shutil

    killed = _rf_twin(tmp_path / "k", True)
    twin = _rf_twin(tmp_path / "t", False)
    root = Path(shutil.copytree(killed, tmp_path / "DB"))
    with Database(root) as db:
        rolled = db.rolled_forward
        got, redo = tables_image(db), redo_image(db)
        pieces = {k: dict(v) for k, v in db.chained.items()}
    assert rolled is not None and rolled.missed == [] and rolled.undone == 1
    with Database(twin) as db:
        want = tables_image(db)
        want_pieces = {k: dict(v) for k, v in db.chained.items()}
    assert not differences(got, want), differences(got, want)
    assert not differences(got, redo), differences(got, redo)
    assert pieces == want_pieces
    (layout,) = [p for v in pieces.values() for p in v.values()]
    assert len(layout) == 2 and layout[0][0] & 0xFFFF == 1  # row 2's; row 1 in one piece
    CR._check(CR._written(twin), 1)


def test_recovery_that_keeps_no_pieces_fails_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutation: recovery not keeping a re-chain's new pieces (as before it did): the
    pieces differ from the run not killed."""
    import shutil

    from engine.embedded import rollforward

    killed = _rf_twin(tmp_path / "k", True)
    real = rollforward._keep_pieces
    monkeypatch.setattr(
        rollforward,
        "_keep_pieces",
        lambda db, row, p: real(db, row, p) if row.op == "INSERT" else None,
    )
    root = Path(shutil.copytree(killed, tmp_path / "DB"))
    with Database(root) as db:
        pieces = {k: dict(v) for k, v in db.chained.items()}
    assert not any(pieces.values())


def test_the_dump_prints_them_and_imports_back(written: tuple[Path, Any], tmp_path: Path) -> None:
    """``ggsci db dump NAME`` prints a re-chain's ORP as the whole row piece it is (its
    flags, columns and next piece: ``nrid:``, as Oracle's dump shows a chained row's
    pieces), and the dump imported into a new database (``db import-dump``) dumps the
    same."""
    import shutil

    from tests.source.test_source_cli import _db

    root, _ = written
    home = tmp_path / "home"
    shutil.copytree(root.parent.parent, home)
    code, first = _db(home, "dump", "src")
    assert code == 0
    orp = first.split(" OP:11.6 ", 1)[1].split("\n\n", 1)[0]  # (row 1's, the first)
    assert "fb: --H-F--N lb: 0x2  cc: 5" in orp and "\nnrid:  0x" in orp
    assert "\ncol  4: [" in orp  # (the head's part of D, cut: N)
    assert first.count("\nnrid:  0x") == 18  # (every piece but a row's last, redo and undo)
    # the log file's dump (read as an Oracle log is) prints the same next pieces
    logs = sorted((home / "dirdb" / "SRC" / "redo").rglob("*.log"))
    runs = [_db(home, "dump", str(log)) for log in logs]
    assert all(code == 0 for code, _ in runs)
    nrids = [ln for _, text in runs for ln in text.splitlines() if ln.startswith("nrid:")]
    assert sorted(nrids) == sorted(ln for ln in first.splitlines() if ln.startswith("nrid:"))
    (tmp_path / "again.dump").write_text(first)
    assert _db(home, "create", "COPY")[0] == 0
    dic = str(root / "dictionary.json")
    code, out = _db(home, "import-dump", "COPY", str(tmp_path / "again.dump"), "--dictionary", dic)
    assert code == 0, out
    assert _db(home, "dump", "COPY")[1] == first


def test_a_record_that_cannot_be_read_is_one_line(
    written: tuple[Path, Any], tmp_path: Path
) -> None:
    """``ggsci db dump NAME`` of a database holding a record its reader cannot decode (a
    dump imported with a change vector the importer keeps verbatim, an 11.8 here, whose
    text is no KDO): one line with the redo error's code, exit 1, no traceback."""
    import shutil

    from tests.source.test_source_cli import _db

    root, _ = written
    home = tmp_path / "home"
    shutil.copytree(root.parent.parent, home)
    code, text = _db(home, "dump", "src")
    assert code == 0
    (tmp_path / "odd.dump").write_text(text.replace(" OP:11.6 ", " OP:11.8 ", 1))
    assert _db(home, "create", "ODD")[0] == 0
    dic = str(root / "dictionary.json")
    assert _db(home, "import-dump", "ODD", str(tmp_path / "odd.dump"), "--dictionary", dic)[0] == 0
    code, out = _db(home, "dump", "ODD")
    assert code == 1 and out.startswith("GGS-REDO-") and out.count("\n") == 1, out


# -- live, two redo threads ----------------------------------------------------------------

BIG = "CREATE TABLE wl.big (id NUMBER PRIMARY KEY, {})".format(
    ", ".join(f"{n} VARCHAR2(4000)" for n in NAMES)
)


def test_live_on_two_threads_equals_catchup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-chains on two RAC threads, captured live (no Spark) while they are written: the
    capture polls after every few records, each thread's redo flushed to its file on its
    own (so a poll meets a re-chain in part, and one thread ahead of the other), open
    transactions on both threads; the live trail equals a capture of the whole redo
    afterwards, byte for byte, and holds every re-chain once."""
    from engine.embedded import database as database_module
    from tests.extract.test_rac_live import drain, two_threads
    from tests.harness.livecheck import capture_for, trail_content

    monkeypatch.setattr(database_module, "FLUSH_INTERVAL", 1e9)  # (the test flushes)
    home, root, db, a, b = two_threads(tmp_path)  # (A on thread 1, B on thread 2)
    execute(db, a, BIG)
    cap, writer = capture_for(home, root, "lv")
    emit, seen = Database.emit, [0]

    def flushing(self: Database, thread: int, scn: int, changes: Any, **kw: Any) -> None:
        emit(self, thread, scn, changes, **kw)
        seen[0] += 1
        if seen[0] % 3 == 0:  # a thread's redo reaches its file mid-statement; a poll
            self.logs.writers[thread].flush()
            cap.poll()

    monkeypatch.setattr(Database, "emit", flushing)
    big = ", ".join(f"'{_v(n, 4000)}'" for n in NAMES)
    for i, s in ((1, a), (2, b)):
        execute(db, s, f"INSERT INTO wl.big (id, a) VALUES ({i}, 'x')")
        execute(db, s, f"INSERT INTO wl.big VALUES ({i + 10}, {big})")
    execute(db, a, "COMMIT")
    execute(
        db,
        b,
        "UPDATE wl.big SET b = '{}', c = '{}' WHERE id = 2".format(_v("b", 4000), _v("c", 4000)),
    )
    for i, s in ((1, a), (2, b)):  # grown past a block; cut column set short
        execute(db, s, "UPDATE wl.big SET {} WHERE id = {}".format(
            ", ".join(f"{n} = '{_v(n.lower(), 4000)}'" for n in "BCD"), i))  # fmt: skip
        execute(db, s, f"UPDATE wl.big SET c = 'short' WHERE id = {i + 10}")
    execute(db, b, "COMMIT")
    execute(db, a, "UPDATE wl.big SET e = '{}' WHERE id = 1".format(_v("e", 4000)))
    execute(db, a, "COMMIT")
    monkeypatch.setattr(Database, "emit", emit)  # (the writer as it was)
    db.switch_log()  # (each thread's log complete: _rows reads them as files)
    db.close()  # (the last flush: every thread's progress marked)
    drain(cap)
    cap.close()
    writer.close()
    again, writer = capture_for(home, root, "cu")
    drain(again)
    writer.close()
    live, catchup = trail_content(home, "lv"), trail_content(home, "cu")
    assert live == catchup and len(live[0]) == 3  # (three transactions, in commit order)
    # four re-chains (rows 1 and 2 grown past a block, rows 11 and 12 cut short), row 1's
    # last update a chained row's (LKR + URP), each once in both trails (the same bytes)
    rows = _rows(root)
    assert sum(op == "ORP" for op, _, _ in rows) == 4 and ("LKR", "F") in [r[::2] for r in rows]
    from tests.redo import test_embedded_archives as EA

    ups = [(int(r["columns"]["ID"]), len(r["columns"])) for r in EA._rows(home.dirdat, "lv")
           if r["op"] not in ("Insert", "Delete")]  # fmt: skip
    # (row 2's first update whole: ID and its two columns; the re-chains: the whole row;
    # row 1's last: ID and E)
    assert sorted(ups) == [(1, 2), (1, 5), (2, 3), (2, 5), (11, 7), (12, 7)]


def test_a_live_capture_that_skips_a_pending_rechain_fails_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutation: when a poll meets a re-chain in part (the thread's file ends inside it),
    the capture resumes at its last piece read instead of its first record (the re-chain's
    first pieces never read again): the live trail loses it, and the test above fails."""
    from engine.extract.tasks import chain

    def skipping(self: chain.Chains, out: list[Any]) -> int:
        at = max(p[-1].head[1] for p in self.changes.values())
        self.changes.clear()
        return at

    monkeypatch.setattr(chain.Chains, "cut", skipping)
    with pytest.raises(AssertionError):
        test_live_on_two_threads_equals_catchup(tmp_path, monkeypatch)
