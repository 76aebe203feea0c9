"""The attached database's Extract mined in Spark tasks (engine/extract/oracle_source.py
``OracleMiner.mine_alone`` / ``settle``, engine/extract/redo_source.py ``_settled``): each
range is mined alone in a task, from no redo-miner state; the driver settles the results in
order, and mines again, with the thread's true state, a range whose result depended on a
state it did not have (a savepoint rollback whose undone change lies in an earlier range, a
row whose pieces began in an earlier range). The ranges are made small (a few KB) so that such
boundaries are crossed; the trails must equal the embedded Extract's (the reference)."""

from __future__ import annotations

import json
import shutil
import threading
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from engine.embedded import dml
from engine.embedded.catalog import RedoGapError
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.extract.alo import AttachedOrigin
from engine.extract.capture import Capture
from engine.extract.oracle_source import MinerStates
from engine.extract.run import ExtractRun
from engine.extract.start import ExtractError
from engine.home.groups import GroupStore
from engine.home.layout import Home
from engine.redo.attached import attach
from params.check import check_text
from tests.extract.test_alo_fast import _rows, _two_pieces
from tests.extract.test_alo_rac import FMT, PRM, _add, ddl_source, rac_source, staged
from tests.harness.attached import archive_copies, oracle_dictionary
from tests.harness.livecheck import trail_content

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Range size: a few records a range, so that a transaction's changes and a row's pieces fall
#: into different tasks.
SMALL = 4096


def run_of(
    home: Home, g: str, spark: SparkSession | None, extra: str = "", split: int = SMALL,
    events: list[str] | None = None,
) -> ExtractRun:  # fmt: skip
    prm = PRM.format(g=g, extra=extra)
    (home.dirprm / f"{g}.prm").write_text(prm)
    seen = events if events is not None else []
    run = ExtractRun(home, check_text(prm).model, GroupStore(home).get(g.upper()),
                     lambda c, _s, t: seen.append(f"{c} {t}"), spark=spark,
                     durable=False)  # fmt: skip
    run.capture.split_bytes = split
    return run


def _archived_savepoints(tmp_path: Path, g: str) -> tuple[Home, tuple[list[str], bytes]]:
    """rac_source's two threads with the long transaction's savepoint, archived and attached
    as ORA, group ``g`` added; the home and the reference trail."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = rac_source(home, long_open=True, savepoint=True)
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    want, copies, arch = staged(home, root, dic, tmp_path, g)
    for p in copies:
        shutil.copy(p, arch / p.name)
    return home, want


def states_of(run: ExtractRun) -> MinerStates:
    origin = run.capture.origin
    assert isinstance(origin, AttachedOrigin)
    return origin.states


def to_eof(home: Home, g: str, spark: SparkSession | None, split: int = SMALL) -> MinerStates:
    run = run_of(home, g, spark, split=split)
    try:
        run.run(threading.Event(), stop_at_eof=True)
        return states_of(run)
    finally:
        run.close()


@pytest.mark.parametrize("threads", [1, 2])
def test_savepoint_rollbacks_across_ranges_give_the_reference_trail(
    tmp_path: Path, spark: SparkSession, threads: int
) -> None:
    """RAC (or one thread): a long transaction's changes spread over several logs, rolled back
    to a savepoint near its end, with full rollbacks and key updates between: mined in tasks
    of 4 KB ranges, the trail is the embedded Extract's. Most ranges stand as the tasks mined
    them; the rollback's range (its undone changes are in earlier ranges) is mined again on
    the driver."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = rac_source(home, long_open=True, threads=threads, savepoint=True)
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    want, copies, arch = staged(home, root, dic, tmp_path, "s1", threads)
    for p in copies:
        shutil.copy(p, arch / p.name)
    states = to_eof(home, "s1", spark)
    assert trail_content(home, "s1") == want
    assert states.tasks > 10  # mined in tasks, and their results stood
    assert states.remined == 0  # the savepoint rollbacks resolved on the driver
    assert states.fast_ranges  # the fast path ran in the tasks


def test_a_full_rollback_across_ranges_stands_as_the_tasks_mined_it(
    tmp_path: Path, spark: SparkSession
) -> None:
    """A transaction of eight changes over several ranges, rolled back whole at the end: its
    undo-applied records find the changes they undo in no range of their own, but the whole
    transaction goes; every range's result stands (nothing is mined again) and the trail is
    the embedded Extract's, without it."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root = create_database(home.dirdb, "ONE", threads=1)
    with Database(root, clock=ManualClock(datetime(2024, 1, 1), step=0.001)) as db:
        a = db.session("A", username="WL", thread=1)
        b = db.session("B", username="WL", thread=1)
        execute(db, a, "CREATE TABLE wl.u (id NUMBER PRIMARY KEY, v VARCHAR2(200), n NUMBER)")
        made = db.state.scn
        for i in range(1, 41):
            execute(db, b, f"INSERT INTO wl.u VALUES ({i}, '{'b' * 150}', {i})")
            execute(db, b, "COMMIT")
            if i % 5 == 0:
                execute(db, a, f"INSERT INTO wl.u VALUES ({1000 + i}, 'gone', {i})")
        execute(db, a, "ROLLBACK")
        execute(db, b, "UPDATE wl.u SET n = 0 WHERE id = 1")
        execute(db, b, "COMMIT")
        db.switch_log()
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    want, copies, arch = staged(home, root, dic, tmp_path, "f1", threads=1)
    for p in copies:
        shutil.copy(p, arch / p.name)
    states = to_eof(home, "f1", spark, split=8192)
    assert trail_content(home, "f1") == want
    assert states.tasks > 3 and states.remined == 0


@pytest.mark.parametrize("split", [512, 4096])
def test_the_same_without_a_session_mines_in_process(tmp_path: Path, split: int) -> None:
    """No session: the attached Extract mines in its own process, with the driver's states
    (no task, nothing mined again), and the trail is the same. (Small ranges: a batch goes on
    from where its last record ended, past its last range's end; the thread's redo miner goes
    on with its state from there, where it used to start afresh and lose the savepoint's
    changes.)"""
    home, want = _archived_savepoints(tmp_path, "s2")
    states = to_eof(home, "s2", None, split=split)
    assert trail_content(home, "s2") == want
    assert states.tasks == 0 and states.remined == 0


def test_bounded_recovery_restart_with_a_savepoint_in_tasks(
    tmp_path: Path, spark: SparkSession
) -> None:
    """Bounded Recovery in tasks: two BR checkpoints persist the long transaction, the
    restart reads again from the checkpoint (its miners seeded from the BR files, on the
    driver), and the rollback to a savepoint taken before the checkpoint takes back the
    restored changes: the trail is the reference."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = rac_source(home, long_open=True, savepoint=True)
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    want, copies, arch = staged(home, root, dic, tmp_path, "s3")
    br = "BR BRINTERVAL 20M, BRDIR ./BR\n"
    run = run_of(home, "s3", spark, br)
    try:
        for part in (copies[: len(copies) // 3], copies[len(copies) // 3 : -2]):
            for p in part:
                shutil.copy(p, arch / p.name)
            while run.poll():
                pass
            run.br_requested = "now"
            run.poll()
        run.checkpoint()
    finally:
        run.close()
    events: list[str] = []
    run = run_of(home, "s3", spark, br, events=events)
    try:
        assert any(e.startswith("OGG-01644 ") and "1 persisted" in e for e in events), events
        for p in copies[-2:]:
            shutil.copy(p, arch / p.name)
        run.run(threading.Event(), stop_at_eof=True)
        states = states_of(run)
    finally:
        run.close()
    assert trail_content(home, "s3") == want
    assert states.tasks and states.remined == 0  # the restored changes taken back on the driver


@pytest.mark.parametrize("threads", [1, 2])
def test_a_structure_change_stops_at_its_scn_in_tasks(
    tmp_path: Path, spark: SparkSession, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A DDL on a captured table, met by a task: the Extract stops with its table and SCN
    (the one the in-process run names), after the two commits before it, and with none
    after it on any thread; the restart stops there again. With Spark, batches of two
    ranges, each mined ahead while the one before it is applied: the stop the batch ahead
    meets is not seen before that batch is taken (it is settled then), so the commits
    before it are all in the trail when the Extract stops."""
    queued: list[bool] = []
    taken: list[bool] = []
    real_after, real_take = Capture._ahead_after, Capture._take_ahead

    def after(self: Capture, splits: Any) -> None:
        real_after(self, splits)
        queued.append(self._ahead is not None)

    def take(self: Capture) -> Any:
        got = real_take(self)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(Capture, "_ahead_after", after)
    monkeypatch.setattr(Capture, "_take_ahead", take)
    home = Home(tmp_path / "home")
    home.create_subdirs()
    ddl_source(home, tmp_path, threads)
    texts = []
    for g, session in (("d0", None), ("d1", spark), ("d1", spark)):
        if g not in {t[0] for t in texts}:
            _add(home, g, threads=threads)
        run = run_of(home, g, session, split=1024)
        if session is not None:  # (a log's first range of 1 KB is its header alone)
            run.capture.max_poll_splits = 2
        try:
            with pytest.raises(ExtractError) as got:
                run.run(threading.Event(), stop_at_eof=True)
            stop = got.value
        finally:
            run.close()
        assert stop.code == "OGG-01433"
        assert "a DDL statement on WL.U at SCN " in stop.text
        assert len(trail_content(home, g)[0]) == 2
        texts.append((g, stop.text, session is not None and states_of(run).tasks > 0))
    assert texts[1][1] == texts[0][1] == texts[2][1]
    assert texts[1][2]
    # batches were mined ahead; with one thread, taken (with two, the merge's cut makes the
    # positions differ from the ones predicted: waited for and dropped, never settled)
    assert any(queued) and (any(taken) or threads == 2)


def test_a_corrupt_archive_is_the_same_one_line_abend_in_tasks(
    tmp_path: Path, spark: SparkSession
) -> None:
    """A damaged archived log (a flipped byte in a record): in tasks as in process, the run
    stops with the same one line naming the log and where, and writes nothing of that
    batch."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = rac_source(home, threads=1)
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    want, copies, arch = staged(home, root, dic, tmp_path, "c0", threads=1)
    _add(home, "c1", threads=1)
    for p in copies:
        shutil.copy(p, arch / p.name)
    bad = arch / copies[1].name
    data = bytearray(bad.read_bytes())
    data[3 * 512 + 100] ^= 0xFF
    bad.write_bytes(bytes(data))
    lines = []
    for g, session in (("c0", None), ("c1", spark)):
        run = run_of(home, g, session, split=1 << 20)
        try:
            with pytest.raises(RedoGapError) as got:
                run.run(threading.Event(), stop_at_eof=True)
        finally:
            run.close()
        lines.append(str(got.value))
        assert "\n" not in lines[-1]
    assert lines[0] == lines[1]
    assert want[0]  # (the reference wrote something: the damage is not all there is)


# -- a row in two pieces, in two records: the pieces fall into two ranges -------------------


def _pieces_source(home: Home) -> tuple[Path, int]:
    """One thread: WL.P's inserts each written as Oracle writes a chained row, its last piece
    (fb L) in one record and its head (fb H F) in the next; other rows between."""
    root = create_database(home.dirdb, "ONE", threads=1)
    with Database(root, clock=ManualClock(datetime(2024, 1, 1), step=0.001)) as db:
        s = db.session("A", username="WL", thread=1)
        execute(db, s, "CREATE TABLE wl.u (id NUMBER PRIMARY KEY, v VARCHAR2(200))")
        execute(db, s, "CREATE TABLE wl.p (id NUMBER PRIMARY KEY, a NUMBER, b NUMBER)")
        made = db.state.scn
        orig = dml._redo_insert
        dml._redo_insert = _two_pieces(orig, apart=True)  # type: ignore[assignment]
        try:
            for i in range(1, 61):
                execute(db, s, f"INSERT INTO wl.u VALUES ({i}, '{'x' * (i * 7 % 180)}')")
                execute(db, s, f"INSERT INTO wl.p VALUES ({i}, {i * 3}, {i * 7})")
                execute(db, s, "COMMIT")
        finally:
            dml._redo_insert = orig  # type: ignore[assignment]
        db.switch_log()
    return root, made


@pytest.mark.parametrize("split", [512, 1024, 1536])
def test_a_row_whose_pieces_fall_into_two_ranges_is_bound_whole(
    tmp_path: Path, spark: SparkSession, split: int
) -> None:
    """WL.P's rows in two pieces, two records: with ranges of a block or a few, some rows'
    last piece ends a range and their head starts the next; the trail is the one the
    Extract writes in its own process with one range a log, and every WL.P insert carries
    its three values."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = _pieces_source(home)
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    arch = tmp_path / "arch"
    archive_copies(root, arch)
    attach(home.dirdb, "ORA", str(arch), dic, FMT)
    _add(home, "p0", threads=1)
    _add(home, "p1", threads=1)
    to_eof(home, "p0", None, split=1 << 30)
    states = to_eof(home, "p1", spark, split=split)
    assert trail_content(home, "p1") == trail_content(home, "p0")
    inserts = [r for r in _rows(home, "p1") if r[0] == "WL.P" and r[1] == "INSERT"]
    assert [r[3] for r in inserts] == [
        {0: str(i), 1: str(i * 3), 2: str(i * 7)} for i in range(1, 61)
    ]
    assert states.tasks and states.remined == 0  # pieces over a boundary bound on the driver


def test_a_stop_in_the_batch_mined_ahead_waits_for_its_batch(
    tmp_path: Path, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Log 1 holds a commit; log 2 another commit, then a DDL on the captured table. A batch
    a log: log 2's batch is mined ahead (and its tasks have met the stop) while log 1's is
    applied. The stop is the Extract's only once log 2's batch is taken, so the commit before
    the DDL is in the trail when it stops, as in process."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root = create_database(home.dirdb, "ONE")
    with Database(root, clock=ManualClock(datetime(2024, 1, 1), step=0.001)) as db:
        a = db.session("A", username="WL")
        execute(db, a, "CREATE TABLE wl.u (id NUMBER PRIMARY KEY, v VARCHAR2(20))")
        made = db.state.scn
        execute(db, a, "INSERT INTO wl.u VALUES (1, 'v1')")
        execute(db, a, "COMMIT")
        db.switch_log()
        execute(db, a, "INSERT INTO wl.u VALUES (2, 'v2')")
        execute(db, a, "COMMIT")
        execute(db, a, "ALTER TABLE wl.u ADD CONSTRAINT u_v UNIQUE (v)")
        execute(db, a, "INSERT INTO wl.u VALUES (3, 'v3')")
        execute(db, a, "COMMIT")
        db.switch_log()
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    archive_copies(root, tmp_path / "arch")
    attach(home.dirdb, "ORA", str(tmp_path / "arch"), dic, FMT)
    real_apply = Capture._apply
    mined_ahead: list[bool] = []

    def apply(self: Capture, *args: Any, **kwargs: Any) -> int:
        ahead = self._ahead
        if ahead is not None:  # the batch ahead mined (its tasks met the stop) first
            ahead.mined.wait()
            mined_ahead.append(True)
        return real_apply(self, *args, **kwargs)

    monkeypatch.setattr(Capture, "_apply", apply)
    for g, session in (("s0", None), ("s1", spark)):
        _add(home, g, threads=1)
        run = run_of(home, g, session, split=1 << 20)
        run.capture.max_poll_splits = 1
        try:
            with pytest.raises(ExtractError) as got:
                run.run(threading.Event(), stop_at_eof=True)
        finally:
            run.close()
        assert got.value.code == "OGG-01433" and "WL.U" in got.value.text
        assert len(trail_content(home, g)[0]) == 2, g  # the commits before the DDL
    assert mined_ahead


def test_a_warning_of_the_tasks_is_in_the_report_once(tmp_path: Path, spark: SparkSession) -> None:
    """Two threads, 4 KB ranges in tasks, a captured column of a type not captured (the
    dictionary says CLOB): the Extract reports OGG-01431 for it once (each task gives it,
    and each thread's redo miner on the driver), as in process; the trails are the same."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = rac_source(home)
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    doc = json.loads(dic.read_text())
    for t in doc["tables"]:
        for c in t["columns"]:
            c["type"] = "CLOB" if (t["name"], c["name"]) == ("U", "V") else c["type"]
    dic.write_text(json.dumps(doc))
    archive_copies(root, tmp_path / "arch")
    attach(home.dirdb, "ORA", str(tmp_path / "arch"), dic, FMT)
    for g, session in (("w0", None), ("w1", spark)):
        _add(home, g)
        events: list[str] = []
        run = run_of(home, g, session, events=events)
        try:
            run.run(threading.Event(), stop_at_eof=True)
        finally:
            run.close()
        warned = [e for e in events if e.startswith("OGG-01431 ")]
        assert warned == ["OGG-01431 column V of WL.U has type CLOB, not captured"], g
    assert states_of(run).tasks > 10
    assert trail_content(home, "w1") == trail_content(home, "w0")


def test_two_threads_of_small_ranges_take_the_batch_mined_ahead(
    tmp_path: Path, spark: SparkSession
) -> None:
    """Two threads, 1 KB ranges, two a thread a batch: the merge's cut ends a thread's reading
    where its last record ends, before its last range's end (the rest of a redo write's
    block, a range holding a log's header alone), so that the batch mined ahead, planned
    from the ranges' ends, was dropped about as often as taken (19 of 43 batches, 22 taken). Reading
    an archived range whole, nothing starts in between: the batch ahead is taken every time,
    and the trail is the reference."""
    home, want = _archived_savepoints(tmp_path, "a1")
    run = run_of(home, "a1", spark, split=1024)
    run.capture.max_poll_splits = 2
    try:
        run.run(threading.Event(), stop_at_eof=True)
        timing = run.capture.timing
    finally:
        run.close()
    assert trail_content(home, "a1") == want
    assert timing["ahead_taken"] > 20 and timing["ahead_dropped"] == 0, timing
    assert states_of(run).remined == 0
