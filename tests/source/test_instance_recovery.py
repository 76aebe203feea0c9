"""Instance recovery at open (engine/embedded/recovery.py): a database process killed with
SIGKILL after redo was flushed past its last checkpoint. The next open gives out no SCN and no
transaction id the logs hold already, rolls the tables forward to the committed redo
(rollforward.py; more cases in test_rollforward.py), rolls back the transactions the kill
left open (a 5.4 each), and what the logs then hold decodes to the committed transactions,
each once, and to the tables, row by row."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.embedded.database import Database, create_database
from engine.embedded.dictionary import load_dictionary
from engine.embedded.sql import execute
from engine.home.layout import Home
from tests.harness.images import differences, redo_image, tables_image
from tests.harness.logical import Decoded, decode
from tests.source.test_rollforward import kill_recovery, run_child


def _child(root: Path, thread: int) -> str:
    """The child's script: statements run through the SQL layer without its per-statement
    checkpoint for those after ``db.checkpoint()``, then redo flushed and SIGKILL."""
    return textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from engine.embedded.database import Database

        db = Database(Path({str(root)!r}))
        db.checkpoint = lambda: None  # statements after this leave the state as it was
        from engine.embedded import sql
        s, o = db.session("A"), db.session("B", thread={thread})
        sql.execute(db, o, "UPDATE t SET v = 'more' WHERE id = 2")
        for k in range(3, 6):
            sql.execute(db, s, f"INSERT INTO t (id, v) VALUES ({{k}}, 'c{{k}}')")
            sql.execute(db, s, "COMMIT")
        sql.execute(db, s, "INSERT INTO t (id, v) VALUES (9, 'left open')")
        db.logs.flush(everything=True)  # the redo is in the logs, the tables are not
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )


def _setup(tmp_path: Path, threads: int) -> Path:
    create_database(tmp_path, "DB", threads)
    root = tmp_path / "DB"
    db = Database(root)
    s, o = db.session("A", thread=1), db.session("B", thread=threads)
    execute(db, s, "CREATE TABLE t (id NUMBER PRIMARY KEY, v VARCHAR2(20))")
    execute(db, s, "INSERT INTO t (id, v) VALUES (1, 'one')")
    execute(db, s, "COMMIT")
    execute(db, o, "INSERT INTO t (id, v) VALUES (2, 'open across')")  # checkpointed open
    db.close()
    return root


def _kill(root: Path, threads: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    r = subprocess.run(
        [sys.executable, "-c", _child(root, threads)], env=env, capture_output=True, timeout=120
    )
    assert r.returncode == -signal.SIGKILL, r.stderr.decode()


def _decoded(db: Database) -> Decoded:
    return decode((lr.record for lr in db.records()), load_dictionary(db.root / "dictionary.json"))


def test_a_killed_database_reopens_past_its_logs_and_rolls_back_what_was_open(
    tmp_path: Path,
) -> None:
    for threads in (1, 2):
        base = tmp_path / f"t{threads}"
        base.mkdir()
        root = _setup(base, threads)
        _kill(root, threads)
        db = Database(root)
        try:
            before = _decoded(db)
            top = max(lr.record.scn for lr in db.records())
            assert db.state.scn >= top
            # the transaction open across the checkpoint and the one begun after it
            assert len(db.recovered) == 2 and not db.sessions
            assert {t.xid for t in before.open} == set()
            rolled = {str(t.xid) for t in before.rolled_back}
            assert len(rolled) == 2, rolled
            committed = [c.after for t in before.committed for c in t.changes]
            assert committed == [{"ID": k, "V": v} for k, v in _EXPECTED], committed
            used = {str(t.xid) for t in before.committed + before.rolled_back}
            s = db.session("C", thread=threads)
            execute(db, s, "INSERT INTO t (id, v) VALUES (7, 'after')")
            execute(db, s, "COMMIT")
            after = _decoded(db)
            new = [t for t in after.committed if str(t.xid) not in used]
            assert len(new) == 1 and new[0].start_scn > top
            assert [c.after for c in new[0].changes] == [{"ID": 7, "V": "after"}]
            rows = execute(db, s, "SELECT id FROM t ORDER BY id").rows
            # rolled forward: the inserts committed after the checkpoint are in the tables;
            # the update of 2 and the insert of 9, open at the kill, are not
            assert [r[0] for r in rows] == [1, 3, 4, 5, 7]
            two = execute(db, s, "SELECT v FROM t WHERE id = 2").rows
            assert list(two) == []  # (inserted by B open across the checkpoint: rolled back)
            assert not differences(tables_image(db), redo_image(db))
        finally:
            db.close()


_EXPECTED = [(1, "one"), (3, "c3"), (4, "c4"), (5, "c5")]


def test_a_workload_killed_mid_run_reopens_past_its_logs(tmp_path: Path) -> None:
    """``ggsci db workload`` (checkpoints at its start and end only) killed with SIGKILL while
    its sessions commit and hold long transactions on two threads, then the recovery of the
    next open SIGKILLed at its 500th change rolled forward: the open after it goes on past
    every SCN and transaction id in the logs, the logs then hold no open transaction, and
    the tables are what the committed redo says, row by row."""
    home = tmp_path / "home"
    Home(home).create_subdirs()
    env = {**os.environ, "GGHOME": str(home), "PYTHONPATH": str(Path(__file__).parents[2])}
    ggsci = [sys.executable, "-m", "ggsci"]
    r = subprocess.run([*ggsci, "db", "create", "WL", "--threads", "2"], env=env,
                       capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    root = home / "dirdb" / "WL"
    run = subprocess.Popen(
        [*ggsci, "db", "workload", "WL", "--duration", "60", "--tps", "300",
         "--long-txn", "3:100000", "--tables", "2"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # transactions written after the start's checkpoint
            time.sleep(0.5)
            if sum(p.stat().st_size for p in (root / "redo").rglob("*.log")) > 600_000:
                break
        time.sleep(1.0)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
    # recovery itself SIGKILLed half-way through the roll forward, then run again
    run_child(kill_recovery(root, "apply", 500))
    db = Database(root)
    try:
        top = max(lr.record.scn for lr in db.records())
        assert db.state.scn >= top
        before = _decoded(db)
        assert before.open == [] and len(before.committed) > 10
        assert len(db.recovered) >= 3  # the long transactions at least
        rolled = db.rolled_forward
        assert rolled is not None and rolled.transactions > 10 and rolled.changes > 100
        # rolled forward: the tables are what the committed redo says, row by row
        got = tables_image(db)
        assert len(got) == 2 and sum(len(r) for r in got.values()) > 1000
        assert not differences(got, redo_image(db)), differences(got, redo_image(db))
        used = {str(t.xid) for t in before.committed + before.rolled_back}
        s = db.session("C", thread=2)
        execute(db, s, "INSERT INTO WL.WL_T01 (ID, NAME) VALUES (999999999, 'after')")
        execute(db, s, "COMMIT")
        new = [t for t in _decoded(db).committed if str(t.xid) not in used]
        assert len(new) == 1 and new[0].start_scn > top
    finally:
        db.close()


def test_an_open_that_recovers_tells_the_user_and_the_home_log(tmp_path: Path) -> None:
    """``ggsci db sql`` on a database killed past its checkpoint: the open's instance
    recovery is one OGG-03600 line on standard error and in the home's ggserr.log, saying
    what it rolled forward and back; the next open recovers nothing and says nothing."""
    from typer.testing import CliRunner

    from ggsci.cli_db import app

    home = tmp_path / "home"
    Home(home).create_subdirs()
    root = _setup(home / "dirdb", 2)
    _kill(root, 2)
    runner = CliRunner()
    r = runner.invoke(app, ["sql", "DB", "SELECT COUNT(*) FROM t", "--home", str(home)])
    assert r.exit_code == 0, r.output
    line = (
        "OGG-03600  instance recovery of database DB: 3 changes of 3 transactions rolled "
        "forward, 2 transactions rolled back"
    )
    assert re.fullmatch(re.escape(line) + r" \(\d+\.\d\d s\)\n", r.stderr), r.stderr
    # (rows 1, 3, 4 and 5: 2 was inserted by a transaction the kill left open)
    assert "OGG-03600" not in r.stdout and r.stdout.split()[2] == "4"
    logged = (home / "ggserr.log").read_text().splitlines()
    assert len(logged) == 1
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  INFO    OGG-03600  Oracle GoldenGate Command "
        r"Interpreter for Oracle:  instance recovery of database DB: 3 changes of 3 "
        r"transactions rolled forward, 2 transactions rolled back \(\d+\.\d\d s\)",
        logged[0],
    ), logged[0]
    again = runner.invoke(app, ["sql", "DB", "SELECT COUNT(*) FROM t", "--home", str(home)])
    assert again.exit_code == 0 and again.stderr == ""
    assert len((home / "ggserr.log").read_text().splitlines()) == 1
    # outside a home (a database directory of its own): no ggserr.log, the line still made
    base = tmp_path / "alone"
    base.mkdir()
    alone = _setup(base, 1)
    _kill(alone, 1)
    db = Database(alone)
    try:
        assert db.recovery_line is not None and db.recovery_line.startswith("OGG-03600  ")
    finally:
        db.close()
    assert not list(tmp_path.rglob("alone/**/ggserr.log"))


def _workload_child(root: Path, kill: str, unsafe: bool) -> str:
    """A child that runs the workload (checkpoints every 40 transactions, long transactions
    on the session path across them) and SIGKILLs itself, its redo flushed, at the first
    transaction end where ``kill`` (an expression of ``stats`` and ``seen``) holds. ``unsafe``: the
    mutation, a checkpoint taken without waiting for the fast-path transactions open (their
    changes committed to the tables, no undo)."""
    return textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from engine.embedded import workload as W
        from engine.embedded.database import Database

        if {unsafe}:
            W.open_fast = lambda workers: []
        db = Database(Path({str(root)!r}))
        seen = {{"cp": 0, "at": 0}}  # the last checkpoint: its number, the transactions then
        def progress(stats):
            if stats.checkpoints != seen["cp"]:
                seen["cp"], seen["at"] = stats.checkpoints, stats.transactions
            if {kill}:
                db.logs.flush(everything=True)
                os.kill(os.getpid(), signal.SIGKILL)
        spec = W.WorkloadSpec(tables=2, transactions=10**6, initial_rows=200, sessions=6,
                              rows_per_txn=6, long_txns=2, checkpoint_every=40, seed=5)
        W.run_workload(db, spec, progress, wall=iter(range(10**9)).__next__,
                       sleep=lambda s: None)
        """
    )


@pytest.mark.parametrize(
    ("kill", "unsafe"),
    [
        # late in an interval (35 transactions after the 5th checkpoint): the most to roll
        # forward
        ("stats.checkpoints >= 5 and stats.transactions >= seen['at'] + 35", False),
        ("stats.checkpoints >= 8", False),  # just after a checkpoint
        ("stats.checkpoints >= 8", True),  # the mutation: fast-path transactions open in it
    ],
)
def test_a_workload_killed_after_its_checkpoints_reopens_from_the_last(
    tmp_path: Path, kill: str, unsafe: bool
) -> None:
    """A workload checkpointing every 40 transactions, SIGKILLed: the next open rolls
    forward only what followed the last checkpoint (at most the interval and the drain
    before it), and the tables are the committed redo, row by row. The mutation
    (checkpoints taken with fast-path transactions open) leaves tables that disagree."""
    from tests.source.test_rollforward import run_child

    create_database(tmp_path, "WL", 2)
    root = tmp_path / "WL"
    run_child(_workload_child(root, kill, unsafe))
    db = Database(root)
    try:
        rolled = db.rolled_forward
        assert rolled is not None
        diff = differences(tables_image(db), redo_image(db))
        if unsafe:
            assert diff, "checkpoints with fast-path transactions open went unnoticed"
            return
        assert diff == [], diff
        assert rolled.transactions <= 40 + 6 and rolled.changes <= (40 + 6) * 6
        assert len(db.recovered) >= 2  # the long transactions at least, open at the kill
        if "seen" in kill:
            assert rolled.transactions >= 20  # (the kill was late in the interval)
    finally:
        db.close()
