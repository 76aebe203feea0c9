"""UPDATE and DELETE of a chained row (issue 24 §3): the embedded database writes a record per
piece as Oracle does (engine/embedded/chained.py; the fast path's twin, chainpack.py, the
same bytes), and every reader binds them into one row change: random statements of large
and small rows through the embedded database's SQL (two sessions on two RAC threads,
commits, rollbacks, savepoints) give, through the redo miner (the attached Extract's) and
through the embedded Extract (its task miner), exactly the committed statements."""

from __future__ import annotations

import heapq
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.embedded import chained
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.logs import list_logs
from engine.embedded.oradict import oracle_dictionary
from engine.embedded.sql import execute
from engine.home.layout import Home
from engine.redo import capture as C
from engine.redo import framing
from engine.redo import vectors as V
from engine.redo.dictionary import Dictionary
from engine.redo.rowid import FB_P, fb_text
from tests.redo import test_binding
from tests.redo import test_embedded_archives as EA

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

NAMES = ("A", "B", "C", "D", "E", "F")
DDL = (
    f"CREATE TABLE hr.t (id NUMBER PRIMARY KEY, {', '.join(f'{n} VARCHAR2(4000)' for n in NAMES)})"
)
SIZES = (None, 1, 200, 3000, 4000)  # six columns: a row of one, two or three pieces


def _value(size: int | None, tag: int) -> str | None:
    """A value of ``size`` characters that no other statement writes (tagged)."""
    return None if size is None else (f"{tag}:" + "abcdefghij"[tag % 10] * size)[:size]


def _lit(v: str | None) -> str:
    return "NULL" if v is None else f"'{v}'"


# -- a model of what the statements leave committed ----------------------------------------

Change = tuple[str, int, dict[str, str | None]]  # (op, id, columns it sets / the row's)


class _Set(dict[str, str | None]):
    """The columns an UPDATE sets, and ``whole``: the row after it (a re-chained row's
    update carries the whole row in both images: chained.rechain)."""

    def __init__(self, new: dict[str, str | None], whole: dict[str, str | None]) -> None:
        super().__init__(new)
        self.whole = dict(whole)


def _rechained(got: list[list[Change]], want: list[list[Change]]) -> list[list[Change]]:
    """``got`` with each UPDATE that carries the whole row (a re-chain: every column the row
    holds, the trailing NULLs left out) where ``want`` has the columns it set, as ``want``'s,
    so that the two compare."""
    out = []
    for tg, tw in zip(got, want, strict=False):
        t = []
        for n, (op, i, row) in enumerate(tg):
            w = tw[n] if n < len(tw) else None
            if op == "UPDATE" and w is not None and isinstance(w[2], _Set) and row != w[2]:
                whole = w[2].whole
                if (
                    set(w[2]) - set(row) <= {k for k, v in whole.items() if v is None}
                    and all(whole.get(k) == v for k, v in row.items())
                    and all(whole[k] is None for k in whole if k not in row)
                ):
                    row = dict(w[2])
            t.append((op, i, row))
        out.append(t)
    return out + got[len(want) :]


class _Session:
    def __init__(self, name: str, ids: range) -> None:
        self.name = name
        self.ids = ids
        self.changes: list[Change] = []
        self.marks: list[int] = []
        self.rows: dict[int, dict[str, str | None]] = {}  # as the transaction sees them


class _Model:
    """Runs statements on the database and keeps what each committed transaction changed."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.committed: dict[int, dict[str, str | None]] = {}
        self.sessions = [_Session("S1", range(1, 40)), _Session("S2", range(40, 80))]
        self.txns: list[list[Change]] = []  # in commit order
        self.tag = 0
        self.undone = 0  # changes a rollback or savepoint rollback took back

    def run(
        self, who: int, op: str, pick: int, cols: tuple[int, ...], sizes: tuple[int | None, ...]
    ) -> None:
        s = self.sessions[who]
        sess = self.db.session(s.name)
        mine = sorted(i for i in {**self.committed, **s.rows} if i in s.ids and self._live(s, i))
        self.tag += 1
        if op == "ins" or (op in ("upd", "del") and not mine):
            free = [i for i in s.ids if i not in mine and i not in s.rows]
            i = free[pick % len(free)]
            row = {n: _value(sizes[k], self.tag + k) for k, n in enumerate(NAMES)}
            vals = ", ".join(_lit(row[n]) for n in NAMES)
            execute(self.db, sess, f"INSERT INTO hr.t VALUES ({i}, {vals})")
            s.rows[i] = row
            s.changes.append(("INSERT", i, dict(row)))
        elif op == "upd":
            i = mine[pick % len(mine)]
            new = {NAMES[c]: _value(sizes[c], self.tag + c) for c in sorted(set(cols))}
            sets = ", ".join(f"{n} = {_lit(v)}" for n, v in new.items())
            execute(self.db, sess, f"UPDATE hr.t SET {sets} WHERE id = {i}")
            s.rows[i] = {**self._row(s, i), **new}
            s.changes.append(("UPDATE", i, _Set(new, s.rows[i])))
        elif op == "del":
            i = mine[pick % len(mine)]
            execute(self.db, sess, f"DELETE FROM hr.t WHERE id = {i}")
            s.changes.append(("DELETE", i, dict(self._row(s, i))))
            s.rows[i] = {"__deleted__": None}
        elif op == "commit":
            execute(self.db, sess, "COMMIT")
            if s.changes:
                self.txns.append(s.changes)
            for i, r in s.rows.items():
                if "__deleted__" in r:
                    self.committed.pop(i, None)
                else:
                    self.committed[i] = r
            self._reset(s)
        elif op == "rollback":
            execute(self.db, sess, "ROLLBACK")
            self.undone += len(s.changes)
            self._reset(s)
        elif op == "savepoint":
            execute(self.db, sess, f"SAVEPOINT p{len(s.marks)}")
            s.marks.append(len(s.changes))
        elif op == "back" and s.marks:
            execute(self.db, sess, f"ROLLBACK TO SAVEPOINT p{len(s.marks) - 1}")
            self.undone += len(s.changes) - s.marks[-1]
            del s.changes[s.marks[-1] :]
            s.rows = {}
            for kind, i, row in s.changes:  # what the transaction sees again
                if kind == "DELETE":
                    s.rows[i] = {"__deleted__": None}
                else:
                    s.rows[i] = {**self._base(i, s), **row}

    def _base(self, i: int, s: _Session) -> dict[str, str | None]:
        r = s.rows.get(i)
        if r is not None and "__deleted__" not in r:
            return r
        return self.committed.get(i, {})

    def _row(self, s: _Session, i: int) -> dict[str, str | None]:
        return s.rows.get(i) or self.committed[i]

    def _live(self, s: _Session, i: int) -> bool:
        return "__deleted__" not in s.rows.get(i, {})

    def _reset(self, s: _Session) -> None:
        s.changes, s.marks, s.rows = [], [], {}


_OPS = st.tuples(
    st.integers(0, 1),
    st.sampled_from(["ins", "ins", "upd", "upd", "del", "commit", "rollback", "savepoint", "back"]),
    st.integers(0, 1000),
    st.lists(st.integers(0, len(NAMES) - 1), min_size=1, max_size=3).map(tuple),
    # (sizes of any length too: columns cut at any point, P / N)
    st.lists(
        st.one_of(st.sampled_from(SIZES), st.integers(1, 4000)),
        min_size=len(NAMES),
        max_size=len(NAMES),
    ).map(tuple),
)


Op = tuple[int, str, int, tuple[int, ...], tuple[int | None, ...]]


def _run(home: Home, ops: list[Op]) -> _Model:
    root = create_database(home.dirdb, "src", threads=2)
    with Database(root, clock=ManualClock(datetime(2025, 1, 1))) as db:
        execute(db, db.session("S1"), DDL)
        model = _Model(db)
        assert {db.session(s.name).thread for s in model.sessions} == {1, 2}  # RAC
        for op in ops:
            model.run(*op)
        for who in (0, 1):
            model.run(who, "commit", 0, (0,), ())
        db.switch_log()
    return model


def _captured(root: Path) -> list[list[Change]]:
    """The committed transactions as the redo miner (engine/redo/capture.py) reads both
    threads' logs merged by SCN."""
    with Database(root) as db:
        dic: Dictionary = oracle_dictionary(db.dictionary, db.state.scn)
    cap = C.Capture(dic, lambda t: t.full_name == "HR.T")
    streams = []
    for thread in (1, 2):
        recs = []
        for info in list_logs(root / "redo", thread):
            recs += list(framing.iter_records(info.path.read_bytes()))
        streams.append([(r.scn, thread, n, r) for n, r in enumerate(recs)])
    out = []
    for _, _, _, rec in heapq.merge(*streams, key=lambda x: x[:3]):
        for t in cap.feed(rec):
            if t.changes:
                out.append([_change(e) for e in t.changes])
    # every compensation (a chained change's: one per piece) found the change it takes back
    assert not cap.miner.missed
    return out


def _change(e: C.RowEvent) -> Change:
    image = dict(e.before if e.op == "DELETE" else e.after)
    i = int(str(image.pop("ID")))
    return e.op, i, {k: (None if v is None else str(v)) for k, v in image.items()}


def _norm(changes: list[list[Change]]) -> list[list[Change]]:
    """An insert's or delete's row without its NULL columns (the redo leaves trailing ones
    out)."""
    return [
        [
            (op, i, row if op == "UPDATE" else {k: v for k, v in row.items() if v is not None})
            for op, i, row in t
        ]
        for t in changes
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_OPS, min_size=1, max_size=25))
def test_the_redo_miner_gives_the_committed_statements(
    tmp_path_factory: pytest.TempPathFactory, ops: list[Any]
) -> None:
    """Random inserts, updates and deletes of rows in one to three pieces, two sessions on
    two RAC threads, commits, rollbacks and savepoints: the redo miner (engine/redo/capture.py,
    the attached Extract's) gives each committed transaction's statements, in commit order,
    with their columns (a delete's before image: the whole row, every piece's columns)."""
    home = Home(tmp_path_factory.mktemp("p"))
    home.create_subdirs()
    model = _run(home, ops)
    want = _norm(model.txns)
    assert _rechained(_norm(_captured(home.dirdb / "SRC")), want) == want


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_OPS, min_size=4, max_size=20))
def test_the_embedded_extract_gives_the_committed_statements(
    tmp_path_factory: pytest.TempPathFactory, ops: list[Any]
) -> None:
    """The same statements through the embedded Extract (its task miner, on the driver:
    the C walk leaves a piece's record to the Python walk): its trail holds each committed
    change, in commit order, on the row's key, with the columns the statement set (a
    delete: its key)."""
    home = Home(tmp_path_factory.mktemp("e"))
    home.create_subdirs()
    model = _run(home, ops)
    EA._embedded(home, None, "x1", "tt", "")  # type: ignore[arg-type]
    want = _in_trail(model)
    assert _rechained(_trail(home), want) == want


def _trail(home: Home) -> list[list[Change]]:
    """The embedded Extract's trail ``tt`` as changes (an update: the columns it set)."""
    got: list[Change] = []
    for r in EA._rows(home.dirdat, "tt"):
        cols = dict(r["columns"] or {})
        i = int(cols.pop("ID"))
        op = {"Insert": "INSERT", "Delete": "DELETE"}.get(r["op"], "UPDATE")
        got.append((op, i, cols))
    return _norm([got])


def _in_trail(model: _Model) -> list[list[Change]]:
    """What the trail holds of the model's committed changes (a delete: its key)."""
    return [[(op, i, {} if op == "DELETE" else row) for t in _norm(model.txns) for op, i, row in t]]


def test_the_embedded_extract_on_spark_gives_the_committed_statements(
    tmp_path: Path, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random statements (a fixed seed: 150 of them, two RAC threads) through the embedded
    Extract on Spark, its log read in 8 KiB splits so that ranges end inside chained rows'
    updates and deletes (the range holding a change's first piece reads on to its last; the
    next drops the pieces it starts with): the trail holds each committed change once."""
    import random

    from engine.extract import run as run_module

    # (a seed whose run holds every shape: a piece is filled to the brim once a column is
    # cut, so many updates no longer fit their pieces and re-chain the row)
    rnd = random.Random(21)
    kinds = ["ins", "ins", "upd", "upd", "del", "commit", "rollback", "savepoint", "back"]
    ops: list[Op] = [
        (
            rnd.randrange(2),
            rnd.choice(kinds),
            rnd.randrange(1000),
            tuple(rnd.randrange(len(NAMES)) for _ in range(rnd.randint(1, 3))),
            tuple(rnd.choice(SIZES) for _ in NAMES),
        )
        for _ in range(150)
    ]
    home = Home(tmp_path)
    home.create_subdirs()
    model = _run(home, ops)
    shapes = _shapes(home.dirdb / "SRC")  # chained rows' updates and deletes among them
    assert any(op == "DRP" and supp == "-----L--" for op, _, supp in shapes)
    assert any(op == "URP" and supp == "-C---L--" for op, _, supp in shapes)
    assert any(op == "ORP" for op, _, _ in shapes)  # re-chained rows (test_rechain.py)
    # columns cut across pieces: inserted (IRP), deleted (the DRP's undo)
    for kind in ("IRP", "DRP"):
        assert any(op == kind and fb and fb[6:] == "P-" for op, fb, _ in shapes)
        assert any(op == kind and fb and fb[6:] == "-N" for op, fb, _ in shapes)
    # a cut column updated in its pieces (a URP setting a piece's column 0, with P); every
    # change taken back compensated piece by piece (test_chained_rollback.py)
    from tests.extract.test_chained_rollback import _check, _written

    w = _written(home.dirdb / "SRC")
    assert any(
        k.name == "URP" and k.flag & FB_P and k.columns and k.columns[0].no == 0
        for _, k, _ in w.undos.values()
    )
    _check(w, model.undone)
    monkeypatch.setattr(run_module, "_split_bytes", lambda: 8192)
    EA._embedded(home, spark, "x1", "tt", "")
    want = _in_trail(model)
    assert _rechained(_trail(home), want) == want


# -- the records written, against Oracle's; mutations ------------------------------------------

BIG = (4000,) * len(NAMES)  # three pieces: (ID, A, B, C's head), (C's tail, D, E's head),
# (E's tail, F): Oracle cuts a column that does not fit the room a piece has left
#: a fixed run: a row of three pieces and one of two inserted; the big one's head and last
#: piece updated (URP + URP), then its middle piece alone (the head locked: LKR + URP); both
#: deleted (DRP per piece, head first)
FIXED: list[Op] = [
    (0, "ins", 0, (0,), BIG),
    (0, "ins", 1, (0,), (3000, None, 4000, 200, 4000, 1)),
    (0, "commit", 0, (0,), ()),
    (0, "upd", 0, (0, 5), (1,) * len(NAMES)),
    (0, "upd", 0, (3,), (200,) * len(NAMES)),
    (0, "del", 0, (0,), ()),
    (0, "del", 0, (0,), ()),
    (0, "commit", 0, (0,), ()),
]

Shape = tuple[str, str | None, str | None]  # (redo op, row flags, supplemental flags)


def _shape(rec: framing.Record) -> Shape | None:
    """A row record's level-11 op, its row flags (the redo's; for a DRP the row its undo
    restores) and its 5.1's supplemental flags."""
    undo = redo = None
    for v in rec.vectors:
        if v.layer == 5 and v.code == 1:
            undo = V.decode(v)
        elif v.layer == 11 and not any(x.layer == 5 and x.code == 6 for x in rec.vectors):
            redo = V.decode(v)
    if not isinstance(redo, V.Redo) or not isinstance(undo, V.Undo):
        return None
    row = undo.row if redo.row.name == "DRP" else redo.row
    fb = None if row is None or row.fb is None else fb_text(row.fb)
    supp = None if undo.supp is None else fb_text(undo.supp.fb)
    return redo.row.name, fb, supp


def _shapes(root: Path) -> list[Shape]:
    out = []
    for info in list_logs(root / "redo"):
        for rec in framing.iter_records(info.path.read_bytes()):
            got = _shape(rec)
            if got is not None:
                out.append(got)
    return out


def _fl(fb: str | None) -> str:
    """The F and L letters of flags (what binds pieces; other letters: Oracle's own use)."""
    return "" if fb is None else "".join(c for c in fb if c in "FL")


def _real(method: str) -> list[Shape]:
    cases = [c for c in test_binding._cases() if c.method == method]
    assert len(cases) == 1
    shapes = [_shape(test_binding._parsed(r)) for r in cases[0].records]
    return [s for s in shapes if s is not None]


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = Home(tmp_path_factory.mktemp("fixed"))
    home.create_subdirs()
    _run(home, FIXED)
    return home.dirdb / "SRC"


def test_the_records_of_a_chained_update_and_delete_are_oracles(fixed: Path) -> None:
    """After the two inserts (the pieces last first: test_chained_rows), the update of the
    head and the last piece is Oracle 19c's URP + URP (oracdc
    ``Ops_URP_LMN_BindingTest.testRaInterfaceLinesAll_2``, its first two records: the head
    ``--H-F---`` with supplemental ``----F---``, the last piece ``-----L--`` with
    ``-C---L--``); the update of a middle piece alone locks the head first, as Oracle's
    ``testSapSd_11_2_0_4`` (LKR with supplemental F, then the URP with L; Oracle's LMN
    between carries supplemental columns that did not fit, which ours do); a delete: a DRP
    per piece, head first, each undo restoring its piece with the insert's row flags
    (``Op11_2_Test``), supplemental F on the first and L on the last."""
    got = _shapes(fixed)[5:]  # after the inserts' 3 + 2 pieces
    real = _real("testRaInterfaceLinesAll_2")[:2]
    assert real == [("URP", "--H-F---", "----F---"), ("URP", "-----L--", "-C---L--")]
    # the same, and P / N: the head's last column is cut (its tail begins the next piece)
    assert [(op, fb and fb[:6] + "--", supp) for op, fb, supp in got[:2]] == real
    assert [fb for _, fb, _ in got[:2]] == ["--H-F--N", "-----LP-"]
    sap = [s for s in _real("testSapSd_11_2_0_4") if s[0] != "LMN"]
    assert [(op, _fl(supp)) for op, _, supp in sap] == [("LKR", "F"), ("URP", "L")]
    assert [(op, _fl(supp)) for op, _, supp in got[2:4]] == [("LKR", "F"), ("URP", "L")]
    assert got[2:4] == [("LKR", None, "----F---"), ("URP", "------PN", "-C---L--")]
    assert got[4:] == [
        ("DRP", "--H-F--N", "----F---"),
        ("DRP", "------PN", "--------"),
        ("DRP", "-----LP-", "-----L--"),
        ("DRP", "--H-F--N", "----F---"),
        ("DRP", "-----LP-", "-----L--"),
    ]


def _fails(check: Any) -> bool:
    try:
        return not check()
    except Exception:  # a reader's stop or a corrupt read: the mutation is seen
        return True


def _drop_middle_drp(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer loses one piece's DRP (a middle piece's)."""
    emit = Database.emit

    def lossy(self: Database, thread: int, scn: int, changes: Any, **kw: Any) -> None:
        undo = next((c.body for c in changes if (c.layer, c.code) == (5, 1)), None)
        kdo = getattr(undo, "kdo", None)
        if any((c.layer, c.code) == (11, 3) for c in changes) and kdo and kdo.fb[:6] == "------":
            return
        emit(self, thread, scn, changes, **kw)

    monkeypatch.setattr(Database, "emit", lossy)


def _l_on_the_wrong_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last record's supplemental L written on the first record instead."""
    for table in (chained.SUPP_FB, chained.SUPP_FB_UPDATE):
        monkeypatch.setitem(table, (True, False), "----FL--")
        monkeypatch.setitem(table, (False, True), "--------")


@pytest.mark.parametrize("mutation", [_drop_middle_drp, _l_on_the_wrong_record])
def test_a_mutated_writer_fails_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutation: Any
) -> None:
    """Each mutation of the writer fails the record test and what the redo miner gives
    (the fixed run, which does not fail them unmutated: the tests above)."""
    mutation(monkeypatch)
    home = Home(tmp_path)
    home.create_subdirs()
    model = _run(home, FIXED)
    root = home.dirdb / "SRC"
    assert _fails(lambda: _norm(_captured(root)) == _norm(model.txns))
    assert _fails(lambda: test_the_records_of_a_chained_update_and_delete_are_oracles(root))


def test_the_fixed_run_gives_its_statements(fixed: Path) -> None:
    """What the mutation test holds the redo miner to, unmutated: both transactions, the
    three-piece row's delete with every piece's columns (after its two updates)."""
    got = _norm(_captured(fixed))
    assert [[(op, i) for op, i, _ in t] for t in got] == [
        [("INSERT", 1), ("INSERT", 3)],
        [("UPDATE", 1), ("UPDATE", 1), ("DELETE", 1), ("DELETE", 3)],
    ]
    row = {n: _value(4000, 1 + k) for k, n in enumerate(NAMES)}
    row |= {"A": _value(1, 4), "F": _value(1, 9), "D": _value(200, 8)}
    assert got[1][2][2] == row


# -- the fast path writes what the generic path writes ------------------------------------------

_ROWS = [
    (1, *("x" * 4000 for _ in NAMES)),  # three pieces
    (2, "y" * 3000, None, "z" * 4000, "w" * 200, "v" * 4000, "u"),  # two
    (3, "small", None, None, None, None, None),  # one
]
#: (key, columns set (table numbering), their values): the head and last pieces; a middle
#: piece alone (the head locked); a column cut across two pieces (a URP on each); a piece
#: grown past a block (re-chained: test_rechain_fastpath.py); a small row
_SETS = [
    (1, (1, 6), ("a", "f")),
    (1, (4,), ("d" * 300,)),
    (1, (3,), ("c" * 3900,)),
    (2, (2,), ("q" * 4000,)),
    (3, (2,), ("b",)),
]


def _fast_written(
    tmp: Path, fast: bool, rollback: bool, *, inserts_too: bool = False
) -> list[bytes]:
    """The logs of :data:`_ROWS` inserted (committed), then :data:`_SETS` updated and rows
    1 and 2 deleted in one transaction (committed or rolled back), by the workload's fast
    path (BulkSession) or the generic one (dml), the clock standing; ``inserts_too``: the
    inserts in that transaction as well (not committed before it)."""
    from engine.embedded import dml
    from engine.embedded.bulk import BulkSession

    root = create_database(tmp, "W")  # (the name is in the log header)
    db = Database(root, clock=ManualClock(datetime(2024, 1, 1)))
    try:
        execute(db, db.session("DDL"), DDL)
        table = db.dictionary.get("HR", "T")
        s = db.session("W")
        where = ' WHERE "ID" = ?'
        bulk = BulkSession(db, s)
        bulk.record_undo = rollback and inserts_too
        for row in _ROWS:
            bulk.insert(table, row) if fast else dml.insert(s, db, table, [row], array=False)
        if not inserts_too:
            bulk.commit() if fast else s.commit(db)
        bulk.record_undo = rollback
        for key, cols, values in _SETS:
            if fast:
                assert bulk.update(table, key, cols, values)
            else:
                sql = [f"'{v}'" for v in values]
                assert dml.update(s, db, table, list(cols), sql, where, (key,)) == 1
        for key in (1, 2):
            assert bulk.delete(table, key) if fast else dml.delete(s, db, table, where, (key,))
        if fast:
            bulk.rollback() if rollback else bulk.commit()
        else:
            s.rollback(db) if rollback else s.commit(db)
        db.switch_log()
        return [i.path.read_bytes() for i in db.list_logs()]
    finally:
        db.close()


@pytest.mark.parametrize("rollback", [False, True])
def test_the_fast_path_writes_the_generic_paths_pieces(tmp_path: Path, rollback: bool) -> None:
    """BulkSession (the workload's, the benchmarks') updates and deletes a chained row as
    the generic path does, byte for byte (its kernel, C or the Python twin, writes rows in
    one piece; chainpack.py writes a chained row's records with the twin's primitives),
    and its rollback's compensation records are the generic path's."""
    fast = _fast_written(tmp_path / "f", True, rollback)
    generic = _fast_written(tmp_path / "g", False, rollback)
    assert fast == generic
    root = tmp_path / "g" / "W"
    shapes = _shapes(root)
    assert ("LKR", None, "----F---") in shapes  # the middle piece's update locked the head
    assert shapes.count(("DRP", "------PN", "--------")) == 1  # the three-piece row's middle


def test_a_database_reopened_knows_its_chained_rows(tmp_path: Path) -> None:
    """Where a chained row's pieces are is kept with the rows (``_gg_pieces``, committed by
    SQLite with them): a database closed and opened again writes its update per piece."""
    home = Home(tmp_path)
    home.create_subdirs()
    root = create_database(home.dirdb, "src")
    with Database(root) as db:
        execute(db, db.session("A"), DDL)
        execute(
            db,
            db.session("A"),
            f"INSERT INTO hr.t (id, a, b, c, d) VALUES (1, {_lit('a' * 4000)}, {_lit('b' * 4000)}, {_lit('c' * 4000)}, 'd')",
        )
        execute(db, db.session("A"), "COMMIT")
        pieces = db.chained[db.dictionary.get("HR", "T").obj][
            next(iter(db.chained[db.dictionary.get("HR", "T").obj]))
        ]
    with Database(root) as db:
        assert list(db.chained[db.dictionary.get("HR", "T").obj].values()) == [pieces]
        # (d: in the last piece, not cut; c is cut, its update would be written whole)
        execute(db, db.session("A"), "UPDATE hr.t SET d = 'x' WHERE id = 1")
        execute(db, db.session("A"), "COMMIT")
        db.switch_log()
    assert [s[0] for s in _shapes(root)][-2:] == ["LKR", "URP"]


# -- the Extract killed mid-stream --------------------------------------------------------------


def _batch(root: Path, start: int, count: int) -> list[tuple[int, str]]:
    """Chained rows inserted, updated (head and last piece; a middle piece alone) and
    deleted, a transaction each; one rolled back: the (trail io type, key) each gives."""
    from engine.trail.layout import IOType

    out: list[tuple[int, str]] = []
    big = ", ".join(_lit(c * 4000) for c in "abcdef")
    with Database(root) as db:
        s = db.session("load")
        for i in range(start, start + count):
            execute(db, s, f"INSERT INTO hr.t VALUES ({i}, {big})")
            execute(db, s, f"UPDATE hr.t SET a = 'a{i}', f = 'f{i}' WHERE id = {i}")
            execute(db, s, f"UPDATE hr.t SET d = 'd{i}' WHERE id = {i}")
            execute(db, s, "COMMIT")
            out += [(IOType.INSERT, str(i)), (IOType.FIELDCOMP, str(i))]
            out += [(IOType.FIELDCOMP, str(i))]
            if i % 3 == 0:
                execute(db, s, f"DELETE FROM hr.t WHERE id = {i}")
                execute(db, s, "COMMIT")
                out.append((IOType.DELETE, str(i)))
        execute(db, s, f"DELETE FROM hr.t WHERE id = {start}")
        execute(db, s, "ROLLBACK")
    return [(int(t), k) for t, k in out]


@pytest.mark.e2e
def test_the_extract_killed_mid_stream_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    """The embedded Extract as a group process under the Manager, killed with SIGKILL while
    it reads chained rows' updates and deletes (records of up to 8 KiB each, a row's pieces
    in a row), then started again: every committed change in the trail once, in order (the
    crash harness of tests/extract/test_process.py)."""
    import os
    import signal

    from engine.home.status import State, read_process_file
    from engine.trail.reader import TrailReader
    from tests.extract.test_process import ggsci, wait_until

    home = Home(tmp_path / "home")
    home.create_subdirs()
    root = create_database(home.dirdb, "src")
    with Database(root) as db:
        execute(db, db.session("ddl"), DDL)
    (home.dirprm / "mgr.prm").write_text("PORT 0\n")
    (home.dirprm / "ext1.prm").write_text(
        "EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nCHECKPOINTSECS 1\nTABLE hr.t;\n"
    )
    out = ggsci(home, "START MANAGER", "ADD EXTRACT ext1, TRANLOG, EXTSEQNO 1, EXTRBA 0",
                "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1", "START EXTRACT ext1")  # fmt: skip
    assert "EXTRACT added." in out and "EXTRACT EXT1 starting" in out, out

    def trail() -> list[tuple[int, str]]:
        if not list((home.root / "dirdat").glob("lt*")):
            return []
        base = str(home.root / "dirdat" / "lt")
        return [(rec.io_type, dict(rec.columns)[0] or "") for _, rec in TrailReader(base).records()]

    try:
        expected = _batch(root, 1, 6)
        wait_until(lambda: len(trail()) >= len(expected), "the first batch in the trail")
        pf = read_process_file(home, "EXTRACT", "EXT1")
        assert pf is not None and pf.state == State.RUNNING
        expected += _batch(root, 100, 12)
        os.kill(pf.pid, signal.SIGKILL)  # mid-stream: the second batch may be partly written
        expected += _batch(root, 200, 6)
        assert "EXTRACT EXT1 starting" in ggsci(home, "START EXTRACT ext1")
        wait_until(lambda: len(trail()) >= len(expected), "all batches in the trail")
        assert trail() == expected
    finally:
        ggsci(home, "STOP EXTRACT ext1", "STOP MANAGER !")
