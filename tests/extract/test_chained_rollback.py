"""A rollback of a chained row's change compensates each piece (issue 24 §3): Oracle applies
the change's undo records one by one, newest first, and logs for each a 5.6 (the undo record
applied) with the row operation that undo holds, on that undo's piece (docs/redo_format.md,
"Rows larger than a block are chained"). The embedded database writes them so
(engine/embedded/chained.py ``compensations``; the fast path's twin, chainpack.py
``undone``, the same bytes); the readers leave exactly the surviving changes
(test_chained_changes.py's properties, which draw rollbacks and savepoint rollbacks); instance
recovery rolls a savepoint rollback of a change made before its checkpoint forward by any of
its pieces' compensations.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.embedded import chained
from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.home.layout import Home
from engine.redo.ids import Uba
from engine.redo.model import Kdo, Undo, UndoApplied
from engine.redo.rowid import FB_F, FB_L, FB_P, fb_text, fb_value
from tests.extract import test_chained_changes as CC


@dataclass
class _Written:
    """A table's row records and compensation records, as the logs hold them."""

    #: undo address -> (transaction, the undo's row operation, the supplemental flags)
    undos: dict[Uba, tuple[str, Kdo, int]]
    #: per transaction, its row records' undo addresses in log order
    order: dict[str, list[Uba]]
    #: the compensations, in log order: (transaction, the undo address named, row operation)
    comps: list[tuple[str, Uba, Kdo]]


def _written(root: Path, owner: str = "HR", name: str = "T") -> _Written:
    """The logs' records (read as the database reads them back: ``Database.records``) of
    table ``owner.name``."""
    out = _Written({}, defaultdict(list), [])
    with Database(root) as db:
        dataobj = db.dictionary.get(owner, name).dataobj
        records = [lr.record for lr in db.records()]
    for rec in records:
        undo: Undo | None = None
        applied: UndoApplied | None = None
        for cv in rec.changes:
            body = cv.body
            if isinstance(body, Undo):
                undo = body
            elif isinstance(body, UndoApplied):
                applied = body
            elif isinstance(body, Kdo) and cv.layer == 11 and cv.obj == dataobj:
                if applied is not None:
                    out.comps.append((str(applied.xid), applied.uba, body))
                    assert body.ktb.uba == applied.uba  # (its KTB names the undo too)
                elif undo is not None and undo.kdo is not None:
                    xid = str(undo.xid)
                    supp = fb_value(undo.supp_fb) if undo.supp_fb else FB_F | FB_L
                    out.undos[body.ktb.uba] = (xid, undo.kdo, supp)
                    out.order[xid].append(body.ktb.uba)
                undo = applied = None
    return out


def _changes(w: _Written) -> list[list[Uba]]:
    """Each row change's records (undo addresses): a transaction's records from the one
    whose supplemental flags mark F to the one marking L (a whole row's: both)."""
    out: list[list[Uba]] = []
    for ubas in w.order.values():
        run: list[Uba] = []
        for u in ubas:
            supp = w.undos[u][2]
            if supp & FB_F:
                assert not run, "a change begun before the last one ended"
                run = []
            run.append(u)
            if supp & FB_L:
                out.append(run)
                run = []
        assert not run
    return out


def _same_op(undo: Kdo, comp: Kdo) -> bool:
    """The compensation applies the undo's row operation (its KTB aside: the undo's is
    ``Z``, the compensation's ``C`` naming the undo record)."""
    return replace(undo, ktb=comp.ktb) == comp


def _check(w: _Written, undone: int) -> None:
    """Every compensation is the undo of the record it names, each record compensated at
    most once, a change's records all or none (a chained row's change: every piece), the
    newest first; ``undone`` changes compensated."""
    named = [u for _, u, _ in w.comps]
    assert len(named) == len(set(named)), "a record compensated twice"
    for xid, uba, kdo in w.comps:
        assert uba in w.undos, f"a compensation names no row record: {uba}"
        uxid, undo, _ = w.undos[uba]
        assert uxid == xid
        assert _same_op(undo, kdo), (undo, kdo)
    done = set(named)
    whole = 0
    for change in _changes(w):
        got = [u for u in change if u in done]
        assert got in ([], change), f"a change compensated in part: {got} of {change}"
        whole += bool(got)
    assert whole == undone
    # newest first: a change's records compensated one after the other, its last first
    pos = {u: i for i, u in enumerate(named)}
    for change in _changes(w):
        if change[0] in done:
            p0 = pos[change[-1]]
            assert [pos[u] for u in reversed(change)] == list(range(p0, p0 + len(change)))


def _run(home: Home, ops: list[CC.Op]) -> tuple[Path, int]:
    """The property's statements run; the database and how many changes a rollback or a
    savepoint rollback took back."""
    model = CC._run(home, ops)
    return home.dirdb / "SRC", model.undone


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(CC._OPS, min_size=1, max_size=25))
def test_each_piece_is_compensated_by_its_own_undo(
    tmp_path_factory: pytest.TempPathFactory, ops: list[Any]
) -> None:
    """Random statements (test_chained_changes' property: rows of one to three pieces,
    columns cut, two RAC threads, rollbacks and savepoint rollbacks): every change a
    rollback takes back is compensated record by record (a chained row's: each piece, by
    the undo of that piece's change), none in part, newest first."""
    home = Home(tmp_path_factory.mktemp("r"))
    home.create_subdirs()
    root, undone = _run(home, ops)
    _check(_written(root), undone)


#: a three-piece row and a two-piece row inserted and committed; then updated (the head and
#: the last piece; a middle piece alone: the head locked) and deleted, rolled back to a
#: savepoint and then whole; a chained insert rolled back to a savepoint
ROLLED: list[CC.Op] = [
    (0, "ins", 0, (0,), CC.BIG),
    (0, "ins", 1, (0,), (3000, None, 4000, 200, 4000, 1)),
    (0, "commit", 0, (0,), ()),
    (0, "savepoint", 0, (0,), ()),
    (0, "upd", 0, (0, 5), (1,) * len(CC.NAMES)),
    (0, "upd", 0, (3,), (200,) * len(CC.NAMES)),
    (0, "del", 0, (0,), ()),
    (0, "back", 0, (0,), ()),
    (0, "del", 1, (0,), ()),
    (0, "ins", 2, (0,), CC.BIG),
    (0, "rollback", 0, (0,), ()),
]


@pytest.fixture(scope="module")
def rolled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    home = Home(tmp_path_factory.mktemp("rolled"))
    home.create_subdirs()
    return _run(home, ROLLED)


def test_the_compensations_of_the_fixed_run(rolled: tuple[Path, int]) -> None:
    """The records each rollback writes, newest first: the delete of the three-piece row
    (its pieces put back, last first: IRPs with the pieces' flags and next-piece ROWIDs),
    the middle piece's update (its URP, then the head's lock), the head's and last piece's
    update (the last piece's URP, then the head's); then the chained insert (its pieces
    removed, head first: it was logged last) and the two-piece row's delete."""
    root, undone = rolled
    w = _written(root)
    _check(w, undone)
    assert undone == 5
    got = [(k.name, k.fb if k.name == "IRP" else None) for _, _, k in w.comps]
    assert got == [
        ("IRP", "-----LP-"), ("IRP", "------PN"), ("IRP", "--H-F--N"),  # the delete
        ("URP", None), ("LKR", None),  # the middle piece's update
        ("URP", None), ("URP", None),  # the head's and last piece's
        ("DRP", None), ("DRP", None), ("DRP", None),  # the insert: head first
        ("IRP", "-----LP-"), ("IRP", "--H-F--N"),  # the two-piece row's delete
    ]  # fmt: skip
    # each URP's flags are its piece's: the middle one's, the last one's, the head's
    urps = [fb_text(k.flag) for _, _, k in w.comps if k.name == "URP"]
    assert urps == ["------PN", "-----LP-", "--H-F--N"]


def test_the_readers_leave_the_surviving_changes(rolled: tuple[Path, int]) -> None:
    """What the redo miner makes of them: the two inserts, then nothing (every later change
    taken back)."""
    root, _ = rolled
    got = CC._norm(CC._captured(root))
    assert [[(op, i) for op, i, _ in t] for t in got] == [[("INSERT", 1), ("INSERT", 3)]]


def _one_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer drops the compensation of one piece (not the head's) of each chained
    change rolled back."""
    real = chained.compensations

    def short(table: Any, entry: Any) -> list[chained.Compensation]:
        got = real(table, entry)
        return [c for c in got if c[5]] + [c for c in got if not c[5]][1:]

    monkeypatch.setattr(chained, "compensations", short)


def _whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer compensates a chained row's change as before: one whole-row record on
    the head."""
    real = chained.compensations

    def head(table: Any, entry: Any) -> list[chained.Compensation]:
        return [c for c in real(table, entry) if c[5]]

    monkeypatch.setattr(chained, "compensations", head)


@pytest.mark.parametrize("mutation", [_one_short, _whole])
def test_a_mutated_writer_fails_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutation: Any
) -> None:
    """A piece's compensation dropped: the check above fails on the fixed run (the readers
    still drop the change, by its head's: only the records show it)."""
    mutation(monkeypatch)
    home = Home(tmp_path)
    home.create_subdirs()
    root, undone = _run(home, ROLLED)
    with pytest.raises(AssertionError, match="in part"):
        _check(_written(root), undone)


# -- the fast path ------------------------------------------------------------------------------


def test_the_fast_path_compensates_as_the_generic_path(tmp_path: Path) -> None:
    """BulkSession's rollback of chained rows' inserts, updates and deletes: the generic
    path's bytes (test_chained_changes._fast_written with the inserts rolled back too), and
    those are per piece."""

    def written(tmp: Path, fast: bool) -> list[bytes]:
        return CC._fast_written(tmp, fast, rollback=True, inserts_too=True)

    assert written(tmp_path / "f", True) == written(tmp_path / "g", False)
    w = _written(tmp_path / "g" / "W")
    _check(w, len(CC._ROWS) + len(CC._SETS) + 2)
    assert len(w.comps) > len(CC._ROWS) + len(CC._SETS) + 2  # (per piece)


# -- instance recovery ---------------------------------------------------------------------------

RF_LONG = 3000
RF_SETUP = [
    ("A", "CREATE TABLE big (id NUMBER PRIMARY KEY, a VARCHAR2(4000), b VARCHAR2(4000),"
          " c VARCHAR2(4000), n NUMBER)"),
    *[("A", f"INSERT INTO big (id, a, b, c) VALUES ({i}, '{'a' * RF_LONG}', '{'b' * RF_LONG}',"
            f" '{'c' * RF_LONG}')") for i in (1, 2, 3)],
    ("A", "COMMIT"),
    # open at the checkpoint: chained rows' changes written a record per piece
    ("B", "SAVEPOINT b1"),
    ("B", "UPDATE big SET a = 'x', n = 1 WHERE id = 1"),  # the head and the last piece
    ("B", "DELETE FROM big WHERE id = 2"),  # every piece
    ("B", "UPDATE big SET n = 3 WHERE id = 3"),  # the last piece (the head locked)
    ("B", f"UPDATE big SET c = '{'y' * 3500}' WHERE id = 3"),  # a cut column: both pieces
]  # fmt: skip
#: after the checkpoint: the savepoint rollback takes them back (its compensations name
#: each piece's undo record; the changes are in the tables, not in the redo read)
RF_AFTER = [
    ("B", "ROLLBACK TO b1"),
    ("B", "UPDATE big SET n = 9 WHERE id = 2"),
    ("B", f"UPDATE big SET c = '{'z' * 3600}' WHERE id = 1"),  # a cut column, rolled forward
    ("B", "COMMIT"),
]


def _thread(name: str, threads: int) -> int:
    return 1


def _rf_twins(
    base: Path,
    kill: bool,
    setup: list[tuple[str, str]] = RF_SETUP,
    module: str = "tests.extract.test_chained_rollback",
) -> Path:
    """A database at ``base``/DB: ``setup`` run and checkpointed; then, in a child that
    takes no checkpoint, ``module``'s ``RF_AFTER`` (its sessions on ``module._thread``'s
    threads), the child SIGKILLed after (``kill``) or closing cleanly (the twin)."""
    from tests.source.test_rollforward import child_script, run_child

    create_database(base, "DB", 1)
    root = base / "DB"
    db = Database(root)
    for name, text in setup:
        execute(db, db.session(name), text)
    db.close()  # (a checkpoint: B's undo entries saved with its session)
    run_child(child_script(root, module, "RF_AFTER", "()", kill), expect_kill=kill)
    return root


@pytest.fixture(scope="module")
def rf(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return (
        _rf_twins(tmp_path_factory.mktemp("killed"), True),
        _rf_twins(tmp_path_factory.mktemp("twin"), False),
    )


def _recovered(killed: Path, dest: Path) -> tuple[Any, Any, Any]:
    import shutil

    from tests.harness.images import redo_image, tables_image

    root = Path(shutil.copytree(killed, dest))
    with Database(root) as db:
        rolled = db.rolled_forward
        return rolled, tables_image(db), redo_image(db)


def test_recovery_takes_back_a_chained_change_from_before_its_checkpoint(
    rf: tuple[Path, Path], tmp_path: Path
) -> None:
    """A savepoint rollback after the checkpoint of chained rows' changes made before it
    (in the tables, not in the redo read): each piece's compensation names the saved undo
    entry (``UndoEntry.names``: any of its records), none is missed, and the tables equal
    those of a run not killed and the committed redo."""
    from tests.harness.images import differences, tables_image

    killed, twin = rf
    rolled, got, redo = _recovered(killed, tmp_path / "DB")
    assert rolled is not None and rolled.missed == [] and rolled.undone == 4
    with Database(twin) as db:
        want = tables_image(db)
    assert not differences(got, want), differences(got, want)
    assert not differences(got, redo), differences(got, redo)
    assert len(got["GGUSER.BIG"]) == 3
    # the cut column's update was written a URP per piece (both sides of the cut)
    w = _written(tmp_path / "DB", "GGUSER", "BIG")
    cut = [k for _, k, _ in w.undos.values() if k.name == "URP" and k.flag & FB_P]
    assert sum(k.columns[0].no == 0 for k in cut) == 2  # (the tails: column 0, with P)
    # the twin's rollback (B's session and undo entries restored from the checkpoint by its
    # next process, ``statefile``): a compensation per piece, each its piece's undo
    _check(_written(twin, "GGUSER", "BIG"), 4)


def test_recovery_naming_the_head_alone_misses_them(
    rf: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutation: a saved undo entry found by its head's undo address alone (as before each
    piece was compensated): the other pieces' compensations are reported missed."""
    from engine.embedded.state import UndoEntry

    monkeypatch.setattr(UndoEntry, "names", lambda self, uba: uba == self.uba)
    rolled, _, _ = _recovered(rf[0], tmp_path / "DB")
    assert rolled is not None and rolled.missed
