"""Instance recovery rolls the tables forward (engine/embedded/rollforward.py): a database
process SIGKILLed after redo was flushed past its last checkpoint reopens with the tables the
committed redo says, row by row, every table: the changes committed after the checkpoint
(inserts, updates, deletes, rows chained over several pieces, a savepoint rollback inside a
committed transaction) are applied, one open across the checkpoint and committed after it
gets its changes from after the checkpoint on top of those the checkpoint saved, and what was
open at the kill is rolled back. The same script run to its end without the kill (its open
transactions rolled back by ROLLBACK) gives the same tables, chained rows' pieces and space
allocators. Recovery killed half-way and run again gives the same tables. Mutations of the
roll forward (skipped, a change applied twice, a change dropped) are caught."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.embedded import rollforward as rf
from engine.embedded.database import Database, create_database
from engine.embedded.errors import DatabaseError
from engine.embedded.sql import execute
from tests.harness.images import differences, redo_image, tables_image

REPO = Path(__file__).parents[2]
LONG = 3000  # three VARCHAR2 values of this many characters: a row over one block (chained)


def _long(ch: str, n: int = LONG) -> str:
    return ch * n


SETUP = [
    ("A", "CREATE TABLE t (id NUMBER PRIMARY KEY, v VARCHAR2(20), d DATE)"),
    ("A", "CREATE TABLE dl (id NUMBER PRIMARY KEY, v VARCHAR2(20))"),
    (
        "A",
        "CREATE TABLE big (id NUMBER PRIMARY KEY, a VARCHAR2(4000), b VARCHAR2(4000),"
        " c VARCHAR2(4000), n NUMBER)",
    ),
    *[
        ("A", f"INSERT INTO t (id, v, d) VALUES ({k}, 'r{k}', DATE '2024-01-0{k}')")
        for k in range(1, 6)
    ],
    (
        "A",
        f"INSERT INTO big (id, a, b, c) VALUES (1, '{_long('a')}', '{_long('b')}', '{_long('c')}')",
    ),
    (
        "A",
        f"INSERT INTO big (id, a, b, c) VALUES (2, '{_long('d')}', '{_long('e')}', '{_long('f')}')",
    ),
    ("A", "COMMIT"),
    # open at the checkpoint, committed after it
    ("B", "UPDATE t SET v = 'across' WHERE id = 2"),
    ("B", "SAVEPOINT b1"),
    ("B", "INSERT INTO t (id, v) VALUES (20, 'across')"),
    ("B", "DELETE FROM t WHERE id = 5"),
    # open at the checkpoint and at the kill: rolled back by recovery
    ("C", "UPDATE t SET v = 'doomed' WHERE id = 3"),
    ("C", "INSERT INTO t (id, v) VALUES (30, 'doomed')"),
]

AFTER = [  # statements after the checkpoint (the child runs them without checkpoints)
    ("A", "INSERT INTO t (id, v) VALUES (6, 'six')"),
    ("A", "UPDATE t SET v = 'one', d = DATE '2025-02-03' WHERE id = 1"),
    ("A", "DELETE FROM t WHERE id = 4"),
    (
        "A",
        f"INSERT INTO big (id, a, b, c) VALUES (3, '{_long('g')}', '{_long('h')}', '{_long('i')}')",
    ),
    ("A", f"UPDATE big SET b = '{_long('B', 2000)}', n = 7 WHERE id = 1"),
    ("A", "DELETE FROM big WHERE id = 2"),
    ("A", "COMMIT"),
    ("B", "UPDATE t SET v = 'across2' WHERE id = 20"),
    ("B", "INSERT INTO t (id, v) VALUES (22, 'undone')"),
    ("B", "ROLLBACK TO b1"),  # takes back changes from after the checkpoint and before it
    ("B", "INSERT INTO t (id, v) VALUES (21, 'across')"),
    ("B", "COMMIT"),
    ("A", "INSERT INTO t (id, v) SELECT id + 100, v FROM t WHERE id < 4"),  # array (11.11)
    ("A", "COMMIT"),
    ("A", "INSERT /*+ APPEND */ INTO dl (id, v) SELECT id + 200, v FROM t WHERE id < 3"),
    ("A", "COMMIT"),  # a direct-path load (19.1)
    ("A", "INSERT INTO t (id, v) VALUES (7, 'seven')"),
    ("A", "SAVEPOINT s1"),
    ("A", "INSERT INTO t (id, v) VALUES (8, 'undone')"),
    ("A", "UPDATE t SET v = 'undone' WHERE id = 6"),
    ("A", "ROLLBACK TO s1"),
    ("A", "UPDATE t SET v = 'one again' WHERE id = 1"),
    ("A", "COMMIT"),
    ("A", "INSERT INTO t (id, v) VALUES (9, 'rolled back')"),
    ("A", "UPDATE t SET v = 'rolled back' WHERE id = 6"),
    ("A", "ROLLBACK"),
    ("A", f"UPDATE big SET c = '{_long('C', 3500)}' WHERE id = 3"),
    ("A", "UPDATE t SET v = 'six!' WHERE id = 6"),
    ("A", "COMMIT"),
    ("D", "INSERT INTO t (id, v) VALUES (40, 'open at kill')"),
    ("D", "UPDATE t SET v = 'open at kill' WHERE id = 7"),
]

OPEN_AT_END = ("C", "D")


def _thread(name: str, threads: int) -> int:
    return threads if name in ("B", "D") else 1


def _setup(base: Path, threads: int) -> Path:
    create_database(base, "DB", threads)
    root = base / "DB"
    db = Database(root)
    for name, text in SETUP:
        execute(db, db.session(name, thread=_thread(name, threads)), text)
    db.close()
    return root


def child_script(root: Path, module: str, statements: str, sessions: str, kill: bool) -> str:
    """A child that opens the database at ``root``, runs ``statements`` (an expression of
    ``module``'s names giving (session, SQL) pairs; sessions on the thread ``_thread``
    gives) without checkpoints, flushes the redo, then SIGKILLs itself (``kill``) or rolls
    back the ``sessions`` and closes cleanly (the twin)."""
    return textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from engine.embedded.database import Database
        from engine.embedded import sql
        from {module} import *
        from {module} import _thread

        db = Database(Path({str(root)!r}))
        real = db.checkpoint
        db.checkpoint = lambda: None  # the tables stay as the last checkpoint saved them
        for name, text in {statements}:
            sql.execute(db, db.session(name, thread=_thread(name, db.state.threads)), text)
        db.logs.flush(everything=True)  # the redo is in the logs, the tables are not
        if {kill}:
            os.kill(os.getpid(), signal.SIGKILL)
        for name in {sessions}:
            sql.execute(db, db.session(name), "ROLLBACK")
        db.checkpoint = real
        db.close()
        """
    )


def _child(root: Path, threads: int, kill: bool) -> str:
    """The AFTER statements, then the kill or (the twin) C and D rolled back."""
    return child_script(root, "tests.source.test_rollforward", "AFTER", "OPEN_AT_END", kill)


def run_child(script: str, expect_kill: bool = True) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, timeout=300, cwd=REPO
    )
    want = -signal.SIGKILL if expect_kill else 0
    assert r.returncode == want, r.stderr.decode()[-3000:]


def _pieces(db: Database) -> list[tuple[Any, ...]]:
    return db.conn.execute("SELECT obj, rid, pieces FROM _gg_pieces ORDER BY obj, rid").fetchall()


def _killed(base: Path, threads: int) -> Path:
    root = _setup(base, threads)
    run_child(_child(root, threads, kill=True))
    return root


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, tuple[Path, Path]]]:
    """Per thread count: a copy killed after the AFTER statements (not opened yet) and one
    run to its end (open transactions rolled back, closed cleanly)."""
    out: dict[int, tuple[Path, Path]] = {}
    for threads in (1, 2):
        killed = tmp_path_factory.mktemp(f"killed{threads}")
        twin = tmp_path_factory.mktemp(f"twin{threads}")
        kroot = _setup(killed, threads)
        troot = _setup(twin, threads)
        run_child(_child(kroot, threads, kill=True))
        run_child(_child(troot, threads, kill=False), expect_kill=False)
        out[threads] = (kroot, troot)
    yield out


def _copy(root: Path, dest: Path) -> Path:
    import shutil

    shutil.copytree(root, dest)
    return dest


@pytest.mark.parametrize("threads", [1, 2])
def test_recovery_rolls_forward_to_the_tables_of_a_run_that_was_not_killed(
    twins: dict[int, tuple[Path, Path]], tmp_path: Path, threads: int
) -> None:
    kroot, troot = twins[threads]
    root = _copy(kroot, tmp_path / "DB")
    db = Database(root)
    twin = Database(troot)
    try:
        rolled = db.rolled_forward
        assert rolled is not None and rolled.transactions == 6 and not rolled.missed
        assert len(db.recovered) == 2  # C (open across the checkpoint) and D (begun after)
        got, want = tables_image(db), tables_image(twin)
        assert not differences(got, want), differences(got, want)
        assert got["GGUSER.T"] and len(got["GGUSER.BIG"]) == 2
        # the tables equal the committed redo, row by row, every table
        assert not differences(got, redo_image(db)), differences(got, redo_image(db))
        assert _pieces(db) == _pieces(twin)
        assert db.chained == twin.chained
        assert db.state.space == twin.state.space
        assert db.state.next_block == twin.state.next_block
        assert (db.state.next_sid, db.state.audit) == (twin.state.next_sid, twin.state.audit)
        rows = execute(db, db.session("X"), "SELECT id, v FROM t ORDER BY id").rows
        # (103: the array insert's SELECT read C's uncommitted change, as the embedded
        # database reads: no read consistency)
        assert list(rows) == [(1, "one again"), (2, "across"), (3, "r3"), (5, "r5"), (6, "six!"),
                              (7, "seven"), (21, "across"), (101, "one"), (102, "across"),
                              (103, "doomed")]  # fmt: skip
        assert len(got["GGUSER.DL"]) == 2
        # the chained rows rolled forward are whole rows with their pieces: change them again
        s = db.session("E", thread=threads)
        execute(db, s, f"UPDATE big SET a = '{_long('Z', 3900)}', n = 9 WHERE id = 3")
        execute(db, s, "DELETE FROM big WHERE id = 1")
        execute(db, s, "INSERT INTO t (id, v) VALUES (50, 'after')")
        execute(db, s, "COMMIT")
        got = tables_image(db)
        assert not differences(got, redo_image(db)), differences(got, redo_image(db))
    finally:
        db.close()
        twin.close()
    # a clean open reads nothing more
    again = Database(root)
    try:
        assert again.rolled_forward is None and again.recovered == []
    finally:
        again.close()


def _mutate(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """``skip``: no roll forward; ``twice``: the second change applied (an UPDATE of a row
    changed again later) applied again after the last; ``drop``: the sixth change left out."""
    real_apply, real_roll = rf.apply, rf.roll_forward
    seen: list[tuple[Any, tuple[str, ...]]] = []

    def apply(db: rf.Target, row: Any, pieces: tuple[str, ...]) -> int:
        seen.append((row, pieces))
        if how == "drop" and len(seen) == 6:
            return 0
        return real_apply(db, row, pieces)

    def roll_forward(db: rf.Target, state: Any, records: Any, saved: Any) -> rf.RollForward:
        if how == "skip":
            return rf.RollForward()
        out = real_roll(db, state, records, saved)
        if how == "twice":
            real_apply(db, *seen[1])
        return out

    monkeypatch.setattr(rf, "apply", apply)
    monkeypatch.setattr("engine.embedded.recovery.roll_forward", roll_forward)


@pytest.mark.parametrize("how", ["skip", "twice", "drop"])
def test_mutations_of_the_roll_forward_are_caught(
    twins: dict[int, tuple[Path, Path]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    """Skipping the roll forward, applying one change again after the others, dropping one
    change: each gives tables the committed redo does not say."""
    kroot, troot = twins[2]
    root = _copy(kroot, tmp_path / "DB")
    twin = Database(troot)
    want = tables_image(twin)
    twin.close()
    _mutate(monkeypatch, how)
    db = Database(root)
    try:
        got = tables_image(db)
        assert differences(got, want)
        assert differences(got, redo_image(db))
    finally:
        db.close()


def kill_recovery(root: Path, where: str, after: int = 0) -> str:
    """A child that opens the database (recovery runs) and is SIGKILLed inside it: at the
    ``after``-th change the roll forward applies, or after recovery's redo is flushed and
    before its checkpoint commits the tables."""
    return textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from engine.embedded import rollforward as rf, database

        real, n = rf.apply, [0]
        def apply(db, row, pieces):
            n[0] += 1
            if {where == "apply"} and n[0] == {after}:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(db, row, pieces)
        rf.apply = apply

        encode = database.encode_sessions
        def before_commit(sessions):  # the checkpoint: logs flushed, SQLite not committed
            if {where == "commit"}:
                os.kill(os.getpid(), signal.SIGKILL)
            return encode(sessions)
        database.encode_sessions = before_commit
        database.Database(Path({str(root)!r}))
        """
    )


@pytest.mark.parametrize(("where", "after"), [("apply", 1), ("apply", 9), ("commit", 0)])
def test_recovery_killed_half_way_and_run_again_gives_the_same_tables(
    twins: dict[int, tuple[Path, Path]], tmp_path: Path, where: str, after: int
) -> None:
    kroot, troot = twins[2]
    root = _copy(kroot, tmp_path / "DB")
    run_child(kill_recovery(root, where, after))
    db = Database(root)
    twin = Database(troot)
    try:
        got = tables_image(db)
        assert not differences(got, tables_image(twin)), differences(got, tables_image(twin))
        assert not differences(got, redo_image(db))
        assert _pieces(db) == _pieces(twin)
        assert db.state.space == twin.state.space
        # the transactions left open were rolled back once: C and D, a 5.4 each
        assert not db.sessions
    finally:
        db.close()
        twin.close()


def test_tables_that_disagree_with_the_redo_refuse_the_open_in_one_line(
    twins: dict[int, tuple[Path, Path]], tmp_path: Path
) -> None:
    """A row already at a ROWID the redo inserts into after the checkpoint (the tables are
    not the checkpoint's): the open is refused with GGS-SRC-0111 naming the table, ROWID and
    SCN, nothing is changed, and the database is not left locked (the same error again)."""
    import sqlite3

    kroot, _troot = twins[1]
    root = _copy(kroot, tmp_path / "DB")
    conn = sqlite3.connect(root / "data.sqlite")
    rid = conn.execute('SELECT MAX("_rid") FROM "GGUSER$T"').fetchone()[0] + 1
    conn.execute('INSERT INTO "GGUSER$T" ("_rid", "ID", "V") VALUES (?, 99, ?)', (rid, "alien"))
    conn.commit()
    conn.close()
    for _ in range(2):
        with pytest.raises(DatabaseError) as got:
            Database(root)
        assert got.value.code == "GGS-SRC-0111"
        assert "GGUSER.T" in str(got.value) and "SCN" in str(got.value)


def test_redo_time_goes_on_from_the_rolled_forward_redo(tmp_path: Path) -> None:
    """A killed process whose redo time ran a day ahead of its last checkpoint's: the
    records written after recovery are not older than the ones it rolled forward."""
    root = _setup(tmp_path, 1)
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from engine.embedded.database import Database
        from engine.embedded import sql

        db = Database(Path({str(root)!r}))
        db.checkpoint = lambda: None
        db.clock.advance(86400.0)
        s = db.session("A")
        sql.execute(db, s, "INSERT INTO t (id, v) VALUES (60, 'tomorrow')")
        sql.execute(db, s, "COMMIT")
        db.logs.flush(everything=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    run_child(script)
    db = Database(root)
    try:
        top = max(lr.record.timestamp for lr in db.records())
        s = db.session("A")
        execute(db, s, "INSERT INTO t (id, v) VALUES (61, 'after')")
        execute(db, s, "COMMIT")
        scn = db.state.scn
        new = [lr.record for lr in db.records() if lr.record.scn >= scn - 1]
        assert new and all(r.timestamp >= top for r in new)
        assert not differences(tables_image(db), redo_image(db))
    finally:
        db.close()


def test_a_corrupt_log_after_the_checkpoint_refuses_the_open_in_one_error(
    twins: dict[int, tuple[Path, Path]], tmp_path: Path
) -> None:
    """A byte of the redo after the checkpoint changed on disk: the block's checksum fails,
    the open is refused with the redo file error (GGS-SRC-030x) naming the file, the tables
    are not changed, and the database is not left locked."""
    from engine.embedded.errors import SourceError
    from engine.embedded.logs import list_logs

    kroot, _troot = twins[1]
    root = _copy(kroot, tmp_path / "DB")
    before = (root / "data.sqlite").read_bytes()
    log = list_logs(root / "redo", 1)[-1].path
    data = bytearray(log.read_bytes())
    at = len(data) - 3000  # inside the last records (the AFTER statements')
    data[at] ^= 0xFF
    log.write_bytes(bytes(data))
    for _ in range(2):
        with pytest.raises(SourceError) as got:
            Database(root)
        assert got.value.code.startswith("GGS-SRC-030"), got.value
        assert str(log.name) in str(got.value)
    assert (root / "data.sqlite").read_bytes() == before
