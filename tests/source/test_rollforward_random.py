"""Roll forward over random statement streams (seeded): three sessions on one or two redo
threads insert, update and delete short rows and rows of up to three 4,000-character values
(chained over pieces, updates that grow or shrink them), set savepoints, roll back to them,
commit and roll back; a checkpoint in the middle leaves transactions open across it; the
process is SIGKILLed after the rest with transactions open. After recovery the tables equal
the same stream run to its end without the kill (its open transactions rolled back) and
every committed transaction in the logs replayed by ROWID, row by row; chained rows' pieces
and the space allocators equal the twin's."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from tests.harness.images import differences, redo_image, tables_image
from tests.source.test_rollforward import child_script, run_child

SESSIONS = ("A", "B", "C")
BEFORE, AFTER = 150, 250  # statements before the checkpoint, and after it
TABLES = [
    "CREATE TABLE t (id NUMBER PRIMARY KEY, v VARCHAR2(30), n NUMBER)",
    "CREATE TABLE big (id NUMBER PRIMARY KEY, a VARCHAR2(4000), b VARCHAR2(4000),"
    " c VARCHAR2(4000), n NUMBER)",
]


def streams(seed: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The statements (session, SQL) before the checkpoint and after it: one stream, so
    the savepoints of a transaction open across the checkpoint are rolled back to after
    it. Each session changes only the rows it inserted (ids ``k * 3 + its index``, never
    reused): no statement waits for another's lock."""
    rnd = random.Random(seed)
    ids: dict[str, list[int]] = {s: [] for s in SESSIONS}
    big: dict[str, list[int]] = {s: [] for s in SESSIONS}
    points: dict[str, list[str]] = {s: [] for s in SESSIONS}
    next_id = 0
    out: list[tuple[str, str]] = []

    def text(ch: str) -> str:
        return ch * rnd.choice([1, 50, 900, 2500, 3000, 3999])

    for _ in range(BEFORE + AFTER):
        s = rnd.choice(SESSIONS)
        i = SESSIONS.index(s)
        r = rnd.random()
        if r < 0.25:
            next_id += 1
            k = next_id * 3 + i
            ids[s].append(k)
            out.append((s, f"INSERT INTO t (id, v, n) VALUES ({k}, 'v{k}', {rnd.randint(0, 999)})"))
        elif r < 0.37:
            next_id += 1
            k = next_id * 3 + i
            big[s].append(k)
            a, b, c = text("a"), text("b"), text("c")
            out.append((s, f"INSERT INTO big (id, a, b, c) VALUES ({k}, '{a}', '{b}', '{c}')"))
        elif r < 0.55 and ids[s]:
            k = rnd.choice(ids[s])
            out.append((s, f"UPDATE t SET v = 'u{rnd.randint(0, 99)}' WHERE id = {k}"))
        elif r < 0.67 and big[s]:
            k = rnd.choice(big[s])
            col = rnd.choice("abc")
            out.append((s, f"UPDATE big SET {col} = '{text(col.upper())}', n = {k} WHERE id = {k}"))
        elif r < 0.74 and ids[s]:
            out.append((s, f"DELETE FROM t WHERE id = {rnd.choice(ids[s])}"))
        elif r < 0.78 and big[s]:
            out.append((s, f"DELETE FROM big WHERE id = {rnd.choice(big[s])}"))
        elif r < 0.84:
            name = f"p{len(out)}"  # (a savepoint named again moves: never here)
            points[s].append(name)
            out.append((s, f"SAVEPOINT {name}"))
        elif r < 0.90 and points[s]:
            at = rnd.randrange(len(points[s]))
            out.append((s, f"ROLLBACK TO {points[s][at]}"))
            del points[s][at + 1 :]  # (the savepoints after it are gone)
        elif r < 0.97:
            points[s].clear()
            out.append((s, "COMMIT"))
        else:
            points[s].clear()
            out.append((s, "ROLLBACK"))
    return out[:BEFORE], out[BEFORE:]


def _thread(name: str, threads: int) -> int:
    return SESSIONS.index(name) % threads + 1


def _setup(base: Path, threads: int, seed: int) -> Path:
    create_database(base, "DB", threads)
    root = base / "DB"
    db = Database(root)
    for text in TABLES:
        execute(db, db.session("A", thread=1), text)
    for name, text in streams(seed)[0]:  # (each COMMIT checkpoints; open ones stay)
        execute(db, db.session(name, thread=_thread(name, threads)), text)
    db.close()  # the checkpoint the kill goes back to, with the open sessions
    return root


def _child(root: Path, threads: int, seed: int, kill: bool) -> str:
    return child_script(
        root, "tests.source.test_rollforward_random", f"streams({seed})[1]", "SESSIONS", kill
    )


#: (seed, threads, whether a transaction open across the checkpoint rolls back to a savepoint
#: set before it and commits: the roll forward applies saved undo entries)
CASES = [(1, 1, False), (2, 2, False), (7, 2, True), (9, 2, True), (10, 1, True)]


@pytest.mark.parametrize(("seed", "threads", "undone"), CASES)
def test_random_streams_roll_forward_to_the_tables_of_a_run_not_killed(
    tmp_path: Path, seed: int, threads: int, undone: bool
) -> None:
    (tmp_path / "k").mkdir()
    (tmp_path / "t").mkdir()
    kroot = _setup(tmp_path / "k", threads, seed)
    troot = _setup(tmp_path / "t", threads, seed)
    run_child(_child(kroot, threads, seed, kill=True))
    run_child(_child(troot, threads, seed, kill=False), expect_kill=False)
    db = Database(kroot)
    twin = Database(troot)
    try:
        rolled = db.rolled_forward
        assert rolled is not None and rolled.transactions > 5 and not rolled.missed
        assert bool(rolled.undone) == undone
        got = tables_image(db)
        assert not differences(got, tables_image(twin)), differences(got, tables_image(twin))
        assert not differences(got, redo_image(db)), differences(got, redo_image(db))
        assert db.chained == twin.chained
        assert db.state.space == twin.state.space
        assert db.state.next_block == twin.state.next_block
        assert (db.state.next_sid, db.state.audit) == (twin.state.next_sid, twin.state.audit)
    finally:
        db.close()
        twin.close()
