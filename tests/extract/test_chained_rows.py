"""Rows larger than a block (issue 24 §3): the embedded database writes them as Oracle chains
them, a record per row piece (the last first, the head last; flags ``--H-F---``,
``--------``, ``-----L--``; every piece but the last naming the next one), and every reader
binds the pieces into one insert on the head's ROWID: the Extract's task miner (its Python
walk and its C walk, which leaves a piece's record to Python), on any split of the log (a
range ending inside a row reads on to its head; the next one drops the pieces it starts
with), and the real-redo miner (engine/redo/capture.py) the attached Extract uses."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from engine._native import load as load_native
from engine.changes import Kind
from engine.embedded import rows as R
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.dictionary import load_dictionary
from engine.embedded.logs import list_logs
from engine.embedded.oradict import oracle_dictionary
from engine.embedded.redogen import columns_of_row
from engine.embedded.sql import execute
from engine.extract.tasks.decode import Selection
from engine.extract.tasks.miner import Miner
from engine.extract.tasks.plan import Closed, mine_plan
from engine.home.layout import Home
from engine.redo import capture as C
from engine.redo import framing
from engine.redo import vectors as V
from engine.redo.dictionary import Dictionary
from engine.redo.ids import make_dba
from engine.redo.rowid import FB_N, FB_P, fb_text
from engine.redo.scan import Scan
from engine.trail.layout import IOType
from ggsci.cli import build_app
from tests.harness import kernels
from tests.source import test_source_redopack as TP

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

needs_c = kernels.loaded("redomine")

DDL = (
    "CREATE TABLE hr.big (id NUMBER PRIMARY KEY, a VARCHAR2(4000), b VARCHAR2(4000),"
    " c VARCHAR2(4000), d VARCHAR2(4000), n NVARCHAR2(4000))"
)
A4K, B4K, C4K = "a" * 4000, "b" * 4000, "c" * 4000
#: (id, a, b, c, d, n) of each row inserted, and how many pieces it is stored in
ROWS: list[tuple[tuple[Any, ...], int]] = [
    ((1, "small", None, None, None, "é"), 1),
    # 3 + (1 + 2) + (3 + 4000) * 2 + (1 + 60) = 8,073 bytes: just under a block's 8,076
    ((2, "x" * 4000, "y" * 4000, "z" * 60, None, None), 1),
    ((3, "x" * 4000, "y" * 4000, "z" * 64, None, None), 2),  # 8,077: just over
    ((4, A4K, B4K, C4K, "d" * 4000, "ñ" * 2000), 3),  # 3 pieces, NVARCHAR2 non-ASCII
    ((5, A4K, None, C4K, None, "€" * 1333), 2),  # NULLs inside pieces
    ((6, None, B4K, "q" * 100, "é" * 2000, None), 2),  # trailing NULL cut, two-byte characters
    ((7, "ü" * 2000, "ß" * 2000, "ø" * 2000, "ÿ" * 2000, "漢" * 1333), 3),
]


def _lit(v: Any) -> str:
    return "NULL" if v is None else str(v) if isinstance(v, int) else f"'{v}'"


def _insert(row: tuple[Any, ...]) -> str:
    return f"INSERT INTO hr.big VALUES ({', '.join(_lit(v) for v in row)})"


def _workload(db: Database, ddl: bool = True) -> None:
    """Every row of :data:`ROWS` inserted by two sessions in transactions that interleave;
    one chained insert rolled back whole, one taken back by a savepoint rollback; updates
    and deletes of chained rows (a record per piece; two updates re-chain their row:
    docs/redo_format.md). The log archived."""
    a, b = db.session("A"), db.session("B")
    if ddl:
        execute(db, a, DDL)
    for row, _ in ROWS[:4]:
        execute(db, a, _insert(row))
    execute(db, b, _insert((90, A4K, B4K, C4K, None, None)))
    execute(db, b, "ROLLBACK")
    for row, _ in ROWS[4:]:
        execute(db, b, _insert(row))
    execute(db, b, "SAVEPOINT s1")
    execute(db, b, _insert((91, A4K, B4K, C4K, None, None)))
    execute(db, b, "ROLLBACK TO SAVEPOINT s1")
    execute(db, a, "COMMIT")
    execute(db, b, "COMMIT")
    execute(db, a, "UPDATE hr.big SET b = 'short' WHERE id = 4")
    execute(db, a, "DELETE FROM hr.big WHERE id = 5")
    execute(db, a, "COMMIT")
    for sql in UPDATES:  # chained.py: a record per piece changed, and the head's
        execute(db, a, sql)
    execute(db, b, "UPDATE hr.big SET c = 'gone' WHERE id = 6")
    execute(db, b, "DELETE FROM hr.big WHERE id = 3")
    execute(db, b, "ROLLBACK")
    execute(db, a, "SAVEPOINT s2")
    execute(db, a, "UPDATE hr.big SET d = 'q', n = 'r' WHERE id = 4")
    execute(db, a, "DELETE FROM hr.big WHERE id = 6")
    execute(db, a, "ROLLBACK TO SAVEPOINT s2")
    execute(db, a, "COMMIT")
    db.switch_log()


#: the chained rows' updates and deletes of :func:`_workload` (committed): the head piece
#: alone (one record); the last piece alone (the head locked: LKR, then a URP); every piece;
#: a piece grown past a block (written whole on the head); a row of three pieces deleted
UPDATES = (
    "UPDATE hr.big SET n = 'zz' WHERE id = 7",
    "UPDATE hr.big SET a = 'a2', c = 'c2', n = 'n2' WHERE id = 4",
    f"UPDATE hr.big SET c = '{'w' * 3000}' WHERE id = 6",
    "DELETE FROM hr.big WHERE id = 7",
    "COMMIT",
)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = Home(tmp_path_factory.mktemp("chained"))
    home.create_subdirs()
    root = create_database(home.dirdb, "src")
    with Database(root) as db:
        _workload(db)
    return root


def _logs(root: Path) -> list[str]:
    return [str(i.path) for i in list_logs(root / "redo")]


def _inserts(items: list[Any]) -> list[tuple[str, dict[int, str | None]]]:
    """(ROWID, columns as text) of the inserts among a range's events (closed transactions
    are not made: the plan is not compact)."""
    out = []
    for e in items:
        assert not isinstance(e, Closed)
        if e[0] == int(Kind.ROW) and e[8] == int(IOType.INSERT):
            out.append((e[10], dict(e[11])))
    return out


def _plan(root: Path) -> Any:
    dictionary = load_dictionary(root / "dictionary.json")
    return mine_plan(dictionary, Selection(everything=True), hooked=frozenset({"HR.BIG"}),
                     compact=False)  # fmt: skip


def _mine(root: Path, native: bool, cuts: tuple[int, ...] = ()) -> list[Any]:
    """The events of every log, each cut into ranges at ``cuts``."""
    out: list[Any] = []
    for log in _logs(root):
        m = Miner(_plan(root))
        if not native:
            m._walker = None
        bounds = [0, *cuts, None]
        for lo, hi in itertools.pairwise(bounds):
            assert lo is not None
            out += m.mine(log, lo, hi).items
    return out


def _expected() -> list[dict[int, str | None]]:
    got = []
    for row, _ in ROWS:
        cols: dict[int, str | None] = {0: str(row[0])}
        cols.update({i: v for i, v in enumerate(row) if i})
        got.append(cols)
    got.insert(4, {0: "90", 1: A4K, 2: B4K, 3: C4K, 4: None, 5: None})
    got.append({0: "91", 1: A4K, 2: B4K, 3: C4K, 4: None, 5: None})
    return got


def test_a_row_larger_than_a_block_is_stored_in_pieces() -> None:
    """The threshold from the block size; filled head first, a column that does not fit
    the room a piece has left cut (its head in the piece, N; its tail in the next, P):
    (first column, past the last, bytes of the first in the pieces before, where the
    last's part ends)."""
    assert R.PIECE_ROOM == 8076
    assert R.row_pieces((b"x" * 8000,)) == [(0, 1, 0, 0)]
    # 9 + 4003 + 4003 = 8015 bytes used: 61 left, 60 of z's bytes and their length byte
    got = R.row_pieces((b"x" * 4000, b"y" * 4000, b"z" * 100))
    assert got == [(0, 3, 0, 60), (2, 3, 60, 0)]
    # one value over a block: 8,067 bytes left, a 3-byte length, 8,064 bytes of it
    assert R.row_pieces((b"x" * 9000,)) == [(0, 1, 0, 8064), (0, 1, 8064, 0)]
    assert R.row_pieces((b"x" * 20000,)) == [
        (0, 1, 0, 8064), (0, 1, 8064, 16128), (0, 1, 16128, 0)
    ]  # fmt: skip
    assert R.row_pieces((b"x", None, b"y" * 8070)) == [(0, 3, 0, 8061), (2, 3, 8061, 0)]
    # a NULL is never cut: the piece ends before it when it does not fit
    assert R.row_pieces((b"x" * 8064, None, b"y" * 9)) == [(0, 1, 0, 0), (1, 3, 0, 0)]


def test_the_pieces_are_logged_last_first_with_oracles_flags(source: Path) -> None:
    """Each chained row: the last piece first (``-----L--``, supplemental ``-----L--``),
    middle pieces (``--------``), the head last (``--H-F---``, supplemental ``----F---``),
    with P / N where a column is cut (``-----LP-`` ... ``--H-F--N``);
    each piece but the last names the next one's ROWID; a row in one piece is
    ``--H-FL--``."""
    rows = [n for _, n in ROWS[:4]] + [2] + [n for _, n in ROWS[4:]] + [2]
    got = _dumped(source)
    at = cuts = 0
    for n in rows:
        pieces = got[at : at + n]
        at += n
        if n == 1:
            assert pieces[0]["fb"] == "--H-FL--"
            continue
        fbs = [p["fb"] for p in pieces]
        assert [f[:6] for f in fbs] == ["-----L", *["------"] * (n - 2), "--H-F-"]
        # a column cut over two pieces: N on the first (in the row's order), P on the next
        row = fbs[::-1]
        assert [f[7] == "N" for f in row[:-1]] == [f[6] == "P" for f in row[1:]]
        assert row[0][6] == "-" and row[-1][7] == "-"
        cuts += sum(f[7] == "N" for f in row)
        assert [p["supp_fb"] for p in pieces] == ["----F---", *["--------"] * (n - 2), "-----L--"]
        # every piece but the last names the next (logged just before it)
        for later, earlier in zip(pieces[1:], pieces, strict=False):
            assert later["nrid"] == earlier["rowid"]
        assert "nrid" not in pieces[0]
    assert cuts >= 8  # (every chained row of the workload cuts a column)
    # then the IRPs of the updates that re-chained a row (test_rechain.py): the new pieces
    # other than the head, the last first, each naming the next
    rest = got[at:]
    assert rest and {p["fb"][:6] for p in rest} <= {"-----L", "------"}
    assert [p["supp_fb"] == "----F---" for p in rest] == [p["fb"][5] == "L" for p in rest]


def _dumped(root: Path) -> list[dict[str, Any]]:
    """The 11.2 changes of HR.BIG as ``ggsci db dump LOG --json`` prints them, with their
    record's 5.1 supplemental flags."""
    from typer.testing import CliRunner

    from ggsci.cli import build_app

    dic = load_dictionary(root / "dictionary.json")
    obj = dic.get("HR", "BIG").dataobj
    out: list[dict[str, Any]] = []
    for log in _logs(root):
        r = CliRunner().invoke(build_app(), ["db", "dump", log, "--json"])
        assert r.exit_code == 0, r.output
        for line in r.stdout.splitlines():  # (a current log's line on stderr: not JSON)
            rec = json.loads(line)
            if any(c["op"] == "5.6" for c in rec["changes"]):
                continue  # a rollback's compensation (a chained delete's: a whole 11.2)
            supp = [c.get("supp_fb") for c in rec["changes"] if c["op"] == "5.1"]
            for c in rec["changes"]:
                if c["op"] == "11.2" and c["obj"] == obj:
                    out.append({**c, "supp_fb": supp[0] if supp else None})
    return out


def _inserted(root: Path, native: bool, cuts: tuple[int, ...] = ()) -> list[Any]:
    return _inserts(_mine(root, native, cuts))


def test_the_task_miner_binds_the_pieces_into_one_insert_on_the_head(source: Path) -> None:
    got = _inserted(source, native=False)
    assert [cols for _, cols in got] == _expected()
    heads = {p["rowid"] for p in _dumped(source) if p["fb"][:5] == "--H-F"}
    assert {rid for rid, _ in got} <= heads


@needs_c
def test_the_c_walk_mines_what_the_python_walk_mines(source: Path) -> None:
    """Event for event (the C walk leaves a piece's record to the Python one)."""
    assert _mine(source, native=True) == _mine(source, native=False)


def _offsets(root: Path) -> list[int]:
    return [o for o, *_ in Scan(_logs(root)[0])]


@pytest.mark.parametrize("native", [False, pytest.param(True, marks=needs_c)])
def test_a_split_inside_a_row_gives_the_row_once(source: Path, native: bool) -> None:
    """Every record offset of the first log a split point (and the offset just after a
    record's start) of the log that holds them: the ranges together give what the whole log gives; the range holding
    a row's last piece reads on to its head, the next one drops the pieces it starts with."""
    whole = _mine(source, native)
    assert len(_logs(source)) == 2  # the second empty
    for at in _offsets(source):
        for cut in (at, at + 1):
            assert _mine(source, native, (cut,)) == whole, cut


def _records(root: Path) -> Iterator[framing.Record]:
    for log in _logs(root):
        yield from framing.iter_records(Path(log).read_bytes())


def _capture(root: Path) -> list[C.RowEvent]:
    with Database(root) as db:
        dic: Dictionary = oracle_dictionary(db.dictionary, db.state.scn)
    cap = C.Capture(dic, lambda t: t.full_name == "HR.BIG")
    out: list[C.RowEvent] = []
    for rec in _records(root):
        for t in cap.feed(rec):
            out += t.changes
    return out


def test_the_redo_miner_binds_them_as_the_task_miner_does(source: Path) -> None:
    """engine/redo/capture.py (the attached Extract's) gives the same inserts: same head
    ROWIDs, same values (the rolled-back rows left out of both after their transactions)."""
    events = _capture(source)
    inserts = [e for e in events if e.op == "INSERT"]
    got = _inserted(source, native=False)
    dropped = {"90", "91"}  # the rolled-back transaction's and the savepoint's
    kept = [(rid, cols) for rid, cols in got if cols[0] not in dropped]
    assert [e.rowid for e in inserts] == [rid for rid, _ in kept]
    names = ("ID", "A", "B", "C", "D", "N")
    for e, (_, cols) in zip(inserts, kept, strict=True):
        values = dict(e.after)
        for i, name in enumerate(names):
            v = values.get(name)
            assert (None if v is None else str(v)) == cols[i], (name, e.rowid)


def _written(
    tmp: Path, fast: bool, rollback: bool, array: bool = False, log_bytes: int = 64 << 20
) -> list[bytes]:
    """The logs of :data:`ROWS` inserted one statement each (or with ``array`` in one array
    insert) in one transaction (committed, or rolled back), by the workload's fast path or
    the generic one, the clock standing."""
    from datetime import datetime

    from engine.embedded import dml
    from engine.embedded.bulk import BulkSession
    from engine.embedded.clock import ManualClock

    root = create_database(tmp, "W", log_bytes=log_bytes)  # (the name is in the log header)
    db = Database(root, clock=ManualClock(datetime(2024, 1, 1)))
    try:
        execute(db, db.session("DDL"), DDL)
        table = db.dictionary.get("HR", "BIG")
        s = db.session("W")
        rows = [row for row, _ in ROWS]
        if fast:
            bulk = BulkSession(db, s)
            bulk.record_undo = rollback
            if array:
                bulk.insert_array(table, rows)
            for row in [] if array else rows:
                bulk.insert(table, row)
            bulk.rollback() if rollback else bulk.commit()
        else:
            for group in [rows] if array else [[row] for row in rows]:
                dml.insert(s, db, table, group, array=array)
            s.rollback(db) if rollback else s.commit(db)
        db.switch_log()
        return [i.path.read_bytes() for i in db.list_logs()]
    finally:
        db.close()


@pytest.mark.parametrize("array", [False, True])
@pytest.mark.parametrize("rollback", [False, True])
def test_the_fast_path_writes_the_generic_paths_pieces(
    tmp_path: Path, rollback: bool, array: bool
) -> None:
    """BulkSession (the workload's, benchmarks') writes a chained row as the generic path
    does, byte for byte: its kernel (C or the Python twin) gives no record for a row over a
    block and the twin writes its pieces (redopack.Table.insert_pieces); a rollback's
    compensation names the head's undo record. An array insert with a row over a block
    goes as single-row inserts on both paths."""
    fast = _written(tmp_path / "f", True, rollback, array)
    assert fast == _written(tmp_path / "g", False, rollback, array)


def test_the_c_kernels_threshold_is_the_rows_one() -> None:
    src = (Path(__file__).resolve().parents[2] / "engine" / "_native" / "redopack.c").read_text()
    assert f"#define PIECE_ROOM {R.PIECE_ROOM}\n" in src
    assert f"#define PIECE_HEAD {R.piece_bytes(())}\n" in src


def test_every_extract_writes_the_same_trail_of_chained_rows(
    tmp_path: Path, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded Extract on Spark (the task miner, its C walk when built; splits of 8 KiB,
    so that ranges end inside rows), the same on the driver with the Python walk only, and
    the attached archived-log-only Extract over ``db dictionary`` and the archives (the
    redo miner) write the same trail: the chained inserts whole on their head ROWIDs."""
    from engine.embedded.archiver import ArchiveParams
    from engine.extract import run as run_module
    from engine.extract.tasks import miner as miner_module
    from tests.redo import test_embedded_archives as EA

    home = Home(tmp_path / "home")
    home.create_subdirs()
    dest = tmp_path / "arch"
    root = create_database(home.dirdb, "src", archive=ArchiveParams(str(dest), EA.FMT))
    with Database(root) as db:
        execute(db, db.session("DDL"), DDL)
        db.switch_log()  # the DDL in sequence 1; the dictionary taken after it
    cli = CliRunner()
    dic = tmp_path / "dict.json"
    r = cli.invoke(build_app(), ["db", "dictionary", "src", "--out", str(dic), "--home",
                                 str(home.root)])  # fmt: skip
    assert r.exit_code == 0, r.output
    with Database(root) as db:
        _workload(db, ddl=False)
        assert db.archiver is not None and not db.archiver.errors

    monkeypatch.setattr(run_module, "_split_bytes", lambda: 8192)
    EA._embedded(home, spark, "x1", "bb", "")
    monkeypatch.setattr(miner_module, "_NATIVE", None)
    EA._embedded(home, None, "x2", "cc", "")  # type: ignore[arg-type]
    want = EA._rows(home.dirdat, "bb")
    inserts = [row for row in want if row["op"] == "Insert"]
    assert [int(row["columns"]["ID"]) for row in inserts] == [1, 2, 3, 4, 5, 6, 7]
    for row, (values, _) in zip(inserts, ROWS, strict=True):
        assert row["columns"]["A"] == values[1] and row["columns"]["N"] == values[5]
        assert row["columns"]["D"] == values[4]
    assert [(row["op"], row["columns"]) for row in want[7:]] == [
        ("FieldComp", {"ID": "4", "B": "short"}),
        ("Delete", {"ID": "5"}),
        # UPDATES: each chained row's update or delete once, with its columns
        # (re-chained rows, their whole row logged: N, cut across pieces, set short; C grown)
        ("FieldComp", {"ID": "7", **dict(zip("ABCD", ROWS[6][0][1:5], strict=True)), "N": "zz"}),
        ("FieldComp", {"ID": "4", "A": "a2", "C": "c2", "N": "n2"}),
        ("FieldComp", {"ID": "6", "A": None, "B": B4K, "C": "w" * 3000, "D": "é" * 2000}),
        ("Delete", {"ID": "7"}),
    ]  # the rolled-back transaction's and the savepoint's changes: none
    assert EA._rows(home.dirdat, "cc") == want

    logs = sorted(p.name for p in dest.iterdir())
    args = ["db", "attach", "ora", "--archive", str(dest), "--format", EA.FMT, "--dictionary"]
    r = cli.invoke(build_app(), [*args, str(dic), "--home", str(home.root)])
    assert r.exit_code == 0, r.output
    assert f"({len(logs)} now)" in r.output
    (home.dirprm / "e1.prm").write_text(EA.ATTACHED)
    added = EA._ggsci(home.root, "run", "ADD EXTRACT e1, TRANLOG, EXTSEQNO 2, EXTRBA 0",
                      "ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")  # fmt: skip
    assert "EXTRACT added." in added.stdout, added.stdout + added.stderr
    run = EA._ggsci(home.root, "extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof")
    assert run.returncode == 0, run.stderr
    assert EA._rows(home.dirdat, "aa") == want


@pytest.mark.skipif(load_native("redopack") is None, reason="the C kernel is disabled")
@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(["number key", "no index"]),
    size=st.integers(R.PIECE_ROOM - 40, R.PIECE_ROOM + 10),
    amount=st.one_of(st.none(), st.integers(-(10**6), 10**6)),
    status=st.sampled_from([None, "A"]),
    txn=TP.txns,
)
def test_the_c_kernel_leaves_the_rows_the_twin_chains(
    name: str, size: int, amount: int | None, status: str | None, txn: tuple[Any, ...]
) -> None:
    """Rows around the threshold: the compiled row change gives no record (and changes
    nothing) exactly where the Python twin's does, the same bytes elsewhere."""
    native, python = TP._kernels(name)
    dba = make_dba(4, 0x500)
    row = (7, 12, "n" * size, amount, None, status)
    results = []
    for kernel in (native, python):
        tx = TP._state(txn, dba, make_dba(4, 0x441))
        got = TP._outcome(kernel.insert, tx, 99, dba, 3, row)
        results.append((got, TP._after(tx)))
    assert results[0] == results[1]
    enc = python.encode(row[1:])
    assert (results[1][0] == ()) == (R.piece_bytes(columns_of_row(enc)) > R.PIECE_ROOM)


def test_the_text_dump_shows_the_pieces_flags(source: Path) -> None:
    """``ggsci db dump NAME`` (the seed's dump text) prints each piece's row flags, the last
    piece's before the head's."""
    r = CliRunner().invoke(build_app(), ["db", "dump", "src", "--home", str(source.parents[1])])
    assert r.exit_code == 0, r.output
    flags = [line.split()[1] for line in r.output.splitlines() if line.startswith("fb: ")]
    assert any(f[:6] == "------" for f in flags)  # a middle piece
    at = next(i for i, f in enumerate(flags) if f[:6] == "-----L")
    assert flags[at + 1][:6] == "--H-F-"
    assert "-----LP-" in flags and "--H-F--N" in flags and "------PN" in flags  # cut columns


@pytest.mark.parametrize("native", [False, pytest.param(True, marks=needs_c)])
def test_a_current_log_that_ends_before_the_head_ends_the_range_before_the_row(
    tmp_path: Path, native: bool
) -> None:
    """The log being written, read to a recorded end between a row's pieces (the head's log
    write not there yet): the range ends where the row's first record starts (its events, the
    transaction's begin among them, dropped); read again from there once the head is in, the
    row comes whole."""
    home = Home(tmp_path)
    home.create_subdirs()
    root = create_database(home.dirdb, "cur")
    # a clock that moves at each reading: each record its own LWN (log write), so that the
    # recorded end can fall between the pieces
    with Database(root, clock=ManualClock(datetime(2024, 1, 1), step=1.0)) as db:
        s = db.session("A")
        execute(db, s, DDL)
        execute(db, s, _insert(ROWS[0][0]))
        execute(db, s, "COMMIT")
        execute(db, s, _insert(ROWS[3][0]))  # 3 pieces, in the transaction's first records
        execute(db, s, "COMMIT")
    log = _logs(root)[0]
    offsets = [(o, stop) for o, stop, *_ in Scan(log)]
    heads = [p for p in _dumped_current(log) if p[0][:5] == "--H-F" and p[0] != "--H-FL--"]
    assert len(heads) == 1
    head_at = heads[0][1]
    first_piece = offsets[[o for o, _ in offsets].index(head_at) - 2][0]
    m = Miner(_plan(root))
    if not native:
        m._walker = None
    events, _, resume, _ = m.walk(log, 0, None, limit=head_at)
    assert resume == first_piece
    assert all(e[3] < first_piece for e in events)
    assert [cols[0] for _, cols in _inserts(events)] == ["1"]
    rest, _, _, _ = m.walk(log, resume, None)
    assert [cols for _, cols in _inserts(rest)] == [_expected()[3]]
    assert rest[0][0] == int(Kind.BEGIN)


def _dumped_current(log: str) -> list[tuple[str, int]]:
    """(row flags, record offset) of every 11.2 in a current log."""
    from engine.redo import vectors as V

    out = []
    scan = Scan(log)
    for offset, _stop, buf, lo, size, _s, _t in scan:
        h = scan.header
        assert h is not None
        rec = framing.parse_record(bytes(buf[lo : lo + size]), h.order, h.layout)
        for v in rec.vectors:
            if v.op == "11.2":
                d = V.decode(v)
                assert isinstance(d, V.Redo) and d.row.fb is not None
                out.append((fb_text(d.row.fb), offset))
    return out


def test_no_log_switch_falls_inside_a_chained_row(tmp_path: Path) -> None:
    """Logs of 16 KiB (a switch after nearly every row): each log holds whole rows, its
    11.2s in order L [middle...] H-F; both paths switch at the same records."""
    for fast in (True, False):
        logs = _written(tmp_path / str(fast), fast, False, log_bytes=16 << 10)
        assert len(logs) > 4
        for data in logs:
            fbs = [
                fb_text(V.decode(v).row.fb & ~(FB_P | FB_N))  # type: ignore[union-attr]
                for rec in framing.iter_records(data)
                for v in rec.vectors
                if v.op == "11.2"
            ]
            pending = False
            for fb in fbs:
                assert pending or fb in ("--H-FL--", "-----L--"), fbs
                pending = fb in ("-----L--", "--------")
            assert not pending, fbs
    assert _written(tmp_path / "f", True, False, log_bytes=16 << 10) == _written(
        tmp_path / "g", False, False, log_bytes=16 << 10
    )
