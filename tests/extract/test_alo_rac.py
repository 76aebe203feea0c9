"""An attached database's archived logs of two redo threads (RAC), read by the Extract's one
driver (engine/extract/alo.py): the embedded database writes Oracle's format with a log
stream per thread; its archived logs, copied into a directory under LOG_ARCHIVE_FORMAT names
and attached with a dictionary, are captured into the same trail, byte for byte, as the
embedded Extract captures from the database itself (the reference), whether every archive is
there at the start or they arrive, one thread behind the other, while the Extract runs."""

from __future__ import annotations

import shutil
import threading
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import pytest

from engine.embedded.catalog import RedoGapError
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.extract.run import ExtractRun
from engine.extract.start import ExtractError
from engine.home.checkpoints import load_checkpoints, save_checkpoints
from engine.home.groups import GroupStore
from engine.home.layout import Home
from engine.redo.attached import attach
from params.check import check_text
from tests.harness.attached import archive_copies, oracle_dictionary
from tests.harness.livecheck import capture_for, trail_content
from tests.shell.conftest import Shell

E = TypeVar("E", bound=Exception)
FMT = "%t_%s_%r.dbf"
PRM = (
    "EXTRACT {g}\nSOURCEDB ORA\nTRANLOGOPTIONS ARCHIVEDLOGONLY\nEXTTRAIL ./dirdat/{g}\n"
    "{extra}TABLE wl.*;\n"
)


def rac_source(
    home: Home,
    long_open: bool = False,
    threads: int = 2,
    step: float = 0.001,
    savepoint: bool = False,
) -> tuple[Path, int]:
    """A two-thread database "RAC" with a workload on both threads: inserts, updates (one
    of a key), deletes and a rollback, transactions open across each other and across log
    switches; every log archived at the end (both threads switched, after a transaction of an
    uncaptured table on each, so that the archives show every captured commit complete). ``long_open``: one
    transaction on thread 1 stays open over several logs until near the end (``savepoint``:
    its changes after a savepoint taken at the start rolled back to it before its commit,
    but for a last insert). With the SCN
    after the table was made (a dictionary taken then: its CREATE is not a change)."""
    root = create_database(home.dirdb, "RAC", threads=threads)
    with Database(root, clock=ManualClock(datetime(2024, 1, 1), step=step)) as db:
        a = db.session("A", username="WL", thread=1)
        b = db.session("B", username="WL", thread=min(2, threads))
        c = db.session("C", username="WL", thread=1)
        execute(db, a, "CREATE TABLE wl.u (id NUMBER PRIMARY KEY, v VARCHAR2(20), n NUMBER)")
        execute(db, a, "CREATE TABLE ops.z (id NUMBER PRIMARY KEY)")  # not captured
        made = db.state.scn
        if long_open:
            execute(db, c, "INSERT INTO wl.u VALUES (9000, 'long', 0)")
            if savepoint:
                execute(db, c, "SAVEPOINT sp")
                execute(db, c, "INSERT INTO wl.u VALUES (8000, 'undone', 0)")
        for i in range(1, 41):
            s, other = (a, b) if i % 2 else (b, a)
            execute(db, s, f"INSERT INTO wl.u VALUES ({i}, 'row {i}', {i * 10})")
            execute(db, other, f"INSERT INTO wl.u VALUES ({1000 + i}, 'other {i}', {i})")
            if i % 3 == 0:
                execute(db, s, f"UPDATE wl.u SET v = 'upd {i}', n = n + 1 WHERE id = {i - 1}")
            if i % 5 == 0:
                execute(db, other, f"DELETE FROM wl.u WHERE id = {1000 + i - 1}")
            if i == 12:
                execute(db, s, f"UPDATE wl.u SET id = {2000 + i} WHERE id = {i}")  # the key
            execute(db, s, "COMMIT")
            execute(db, other, "ROLLBACK" if i % 7 == 0 else "COMMIT")
            if long_open and i % 8 == 4:
                execute(db, c, f"INSERT INTO wl.u VALUES ({9000 + i}, 'long {i}', {i})")
            if i % 6 == 0:
                db.switch_log(1 if i % 12 or threads == 1 else 2)
        if long_open:
            if savepoint:
                execute(db, c, "ROLLBACK TO SAVEPOINT sp")
                execute(db, c, "INSERT INTO wl.u VALUES (8001, 'kept', 0)")
            execute(db, c, "COMMIT")
        for n, s in enumerate((a, b)):  # later redo on each thread: the last commits pass
            execute(db, s, f"INSERT INTO ops.z VALUES ({n})")  # the thread merge's watermark
            execute(db, s, "COMMIT")
        db.switch_log()  # every thread: its last log archived
    return root, made


def reference(home: Home, root: Path) -> tuple[list[str], bytes]:
    """What the embedded database's Extract captures from the same redo."""
    cap, writer = capture_for(home, root, "rf")
    while cap.poll():
        pass
    cap.close()
    writer.close()
    return trail_content(home, "rf")


def attached_run(
    home: Home, g: str, extra: str = "", events: list[str] | None = None
) -> ExtractRun:
    (home.dirprm / f"{g}.prm").write_text(PRM.format(g=g, extra=extra))
    model = check_text(PRM.format(g=g, extra=extra)).model
    group = GroupStore(home).get(g.upper())
    seen = events if events is not None else []
    return ExtractRun(
        home, model, group, lambda c, _s, t: seen.append(f"{c} {t}"), spark=None, durable=False
    )


def to_eof(home: Home, g: str) -> None:
    """Group ``g`` run until every archive there is read."""
    run = attached_run(home, g)
    try:
        run.run(threading.Event(), stop_at_eof=True)
    finally:
        run.close()


def abend(home: Home, g: str, error: type[E]) -> E:
    """What group ``g``'s run to the end of the archives stops with."""
    run = attached_run(home, g)
    try:
        with pytest.raises(error) as got:
            run.run(threading.Event(), stop_at_eof=True)
    finally:
        run.close()
    return got.value


def _add(home: Home, g: str, threads: int = 2) -> None:
    shell = Shell(home)
    out = shell.run(f"ADD EXTRACT {g}, TRANLOG, SCN 1, THREADS {threads}")
    assert out == "EXTRACT added.\n", out
    shell.run(f"ADD EXTTRAIL ./dirdat/{g}, EXTRACT {g}")
    assert shell.ok


def staged(
    home: Home, root: Path, dic: Path, tmp_path: Path, g: str, threads: int = 2
) -> tuple[tuple[list[str], bytes], list[Path], Path]:
    """The reference trail, the archived logs copied aside (in SCN order) and an empty
    archive location attached as ORA, with group ``g`` added from SCN 1."""
    want = reference(home, root)
    copies = archive_copies(root, tmp_path / "staged")
    arch = tmp_path / "arch"
    arch.mkdir()
    attach(home.dirdb, "ORA", str(arch), dic, FMT)
    _add(home, g, threads)
    return want, copies, arch


@pytest.fixture
def rac(tmp_path: Path) -> tuple[Home, Path, Path]:
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = rac_source(home)
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    return home, root, dic


def test_two_threads_archived_give_the_reference_trail(
    rac: tuple[Home, Path, Path], tmp_path: Path
) -> None:
    home, root, dic = rac
    want = reference(home, root)
    arch = tmp_path / "arch"
    copies = archive_copies(root, arch)
    assert {p.name.split("_")[0] for p in copies} == {"1", "2"} and len(copies) >= 6
    attach(home.dirdb, "ORA", str(arch), dic, FMT)
    _add(home, "e1")
    to_eof(home, "e1")
    got = trail_content(home, "e1")
    assert got[0] == want[0] and len(want[0]) > 40
    assert got[1] == want[1]


def test_archives_arriving_one_thread_behind_the_other(
    rac: tuple[Home, Path, Path], tmp_path: Path
) -> None:
    """Thread 1's archives all arrive first: nothing above what thread 2 is known to have
    is applied; then thread 2's, one at a time, with a poll after each: the same trail."""
    home, root, dic = rac
    want, copies, arch = staged(home, root, dic, tmp_path, "e2")
    run = attached_run(home, "e2")
    try:
        ones = [p for p in copies if p.name.startswith("1_")]
        twos = [p for p in copies if p.name.startswith("2_")]
        for p in ones:
            shutil.copy(p, arch / p.name)
        while run.poll():
            pass
        run.checkpoint()
        assert trail_content(home, "e2")[0] == []  # thread 2 has no archive yet: all held
        for p in twos:
            shutil.copy(p, arch / p.name)
            while run.poll():
                pass
            run.checkpoint()
            done = trail_content(home, "e2")[0]
            assert done == want[0][: len(done)]  # a prefix of the reference, in order
    finally:
        run.close()
    assert trail_content(home, "e2") == want


@pytest.mark.parametrize("savepoint", [False, True])
def test_bounded_recovery_showtrans_and_a_restart_mid_transaction(
    tmp_path: Path, savepoint: bool
) -> None:
    """A transaction of thread 1 open over several logs: SHOWTRANS lists it, a Bounded
    Recovery checkpoint persists it, and the restart reads again from that checkpoint (not
    from the transaction's start); with the rest archived, the trail is the reference.
    ``savepoint``: the transaction rolls back to a savepoint taken before the checkpoint,
    after the restart: the changes it takes back, restored from the BR files, are not
    written."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = rac_source(home, long_open=True, savepoint=savepoint)
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    want, copies, arch = staged(home, root, dic, tmp_path, "e3")
    br = "BR BRINTERVAL 20M, BRDIR ./BR\n"
    parts = [copies[: len(copies) // 3], copies[len(copies) // 3 : -2]]  # the commit: after
    run = attached_run(home, "e3", br)
    try:
        for part in parts:  # two BR checkpoints: the second persists what the first saw open
            for p in part:
                shutil.copy(p, arch / p.name)
            while run.poll():
                pass
            run.br_requested = "now"
            run.poll()
        shown = run.showtrans(())
        (long_txn,) = [t for t in run.capture.cache.open_transactions() if t.start.thread == 1
                       and t.start.sequence == 1]  # fmt: skip
        assert any(long_txn.xid in ln for ln in shown), shown
        run.checkpoint()
        started = long_txn.start
    finally:
        run.close()
    events: list[str] = []
    run = attached_run(home, "e3", br, events)
    try:
        assert any(e.startswith("OGG-01644 ") and "1 persisted" in e for e in events), events
        restart = run.capture.positions[1]
        assert restart > started  # bounded: not from the long transaction's start
        for p in copies[-2:]:
            shutil.copy(p, arch / p.name)
        run.run(threading.Event(), stop_at_eof=True)
    finally:
        run.close()
    assert trail_content(home, "e3") == want


def ddl_source(home: Home, tmp_path: Path, threads: int) -> tuple[int, int]:
    """A database "ONE" of ``threads`` threads: two commits (one a thread), a DDL on WL.U
    (thread ``threads``), an insert after it on thread 1, more redo on the DDL's thread;
    archived and attached as ORA with a dictionary from before the DDL. The dictionary's
    SCN and the DDL's."""
    root = create_database(home.dirdb, "ONE", threads=threads)
    with Database(root, clock=ManualClock(datetime(2024, 1, 1), step=0.001)) as db:
        a = db.session("A", username="WL", thread=1)
        b = db.session("B", username="WL", thread=threads)
        execute(db, a, "CREATE TABLE wl.u (id NUMBER PRIMARY KEY, v VARCHAR2(20), n NUMBER)")
        execute(db, a, "CREATE TABLE ops.z (id NUMBER PRIMARY KEY)")  # not captured
        made = db.state.scn
        for i, s in ((1, a), (2, b)):
            execute(db, s, f"INSERT INTO wl.u VALUES ({i}, 'v{i}', {i})")
            execute(db, s, "COMMIT")
        db.switch_log()
        execute(db, b, "ALTER TABLE wl.u ADD CONSTRAINT u_v UNIQUE (v)")
        ddl_scn = db.state.scn
        execute(db, a, "INSERT INTO wl.u VALUES (3, 'v3', 3)")
        execute(db, a, "COMMIT")
        execute(db, b, "INSERT INTO ops.z VALUES (1)")  # the DDL's thread goes on past it
        execute(db, b, "COMMIT")
        db.switch_log()
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    arch = tmp_path / "arch"
    archive_copies(root, arch)
    attach(home.dirdb, "ORA", str(arch), dic, FMT)
    return made, ddl_scn


@pytest.mark.parametrize("threads", [1, 2])
def test_a_ddl_on_a_captured_table_stops_after_what_came_before(
    tmp_path: Path, threads: int
) -> None:
    """A DDL statement on a captured table after the dictionary's SCN (its 24.1 marker in
    the redo): the Extract stops with the table and the SCN, after writing the transactions
    committed before it, and none after it, on any thread (with two: the DDL is thread 2's,
    the insert after it thread 1's, mined before it in the same batch); the restart stops there again
    (nothing written twice)."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    made, ddl_scn = ddl_source(home, tmp_path, threads)
    _add(home, "e4", threads=threads)
    for _ in range(2):
        stop = abend(home, "e4", ExtractError)
        assert stop.code == "OGG-01433"
        assert "a DDL statement on WL.U at SCN " in stop.text
        scn = int(stop.text.split(" at SCN ")[1].split()[0])
        assert made < scn <= ddl_scn
        assert "take a new dictionary from that SCN" in stop.text
        assert len(trail_content(home, "e4")[0]) == 2  # the two commits before it, once


def test_a_checkpoint_of_the_earlier_archived_log_run_restarts_where_it_left_off(
    tmp_path: Path,
) -> None:
    """A checkpoint as the earlier release's archived-log run wrote it (its state in
    ``extra["archive"]``: the recovery position, at the start of a transaction still open,
    and the last commit): the restart reads again from that recovery position, and the trail
    ends as the reference, no transaction lost or written twice."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = rac_source(home, long_open=True, threads=1)
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    want, copies, arch = staged(home, root, dic, tmp_path, "e5", threads=1)
    for p in copies[: len(copies) // 2]:
        shutil.copy(p, arch / p.name)
    to_eof(home, "e5")
    cps = load_checkpoints(home, "EXTRACT", "E5")
    assert cps is not None
    (read,) = cps.reads
    assert read.recovery.seqno < read.current.seqno  # the long transaction is open
    state = cps.extra["capture"]
    old = {
        "recovery": {"thread": 1, "sequence": read.recovery.seqno, "offset": read.recovery.rba},
        "last_commit_scn": state["last_commit_scn"],
        "last_commit_xids": state["last_commit_xids"],
        "last_commit_time_us": state["last_time_us"],
    }
    save_checkpoints(home, replace(cps, extra={"archive": old}))
    for p in copies[len(copies) // 2 :]:
        shutil.copy(p, arch / p.name)
    to_eof(home, "e5")
    assert trail_content(home, "e5") == want


@pytest.mark.parametrize("action", ["SKIPTRANS", "FORCETRANS"])
def test_warnlongtrans_skiptrans_and_forcetrans(tmp_path: Path, action: str) -> None:
    """The long transaction (hours of redo time, a minute a step) is warned (OGG-01027 naming
    it), then skipped (never in the trail) or forced (in the trail once, at once; its later
    redo ignored); every other transaction is the reference's, in its order."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root, made = rac_source(home, long_open=True, step=60.0)
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", made)
    want, copies, arch = staged(home, root, dic, tmp_path, "e6")
    events: list[str] = []
    run = attached_run(home, "e6", "WARNLONGTRANS 1H, CHECKINTERVAL 10M\n", events)
    try:
        for p in copies[:-2]:
            shutil.copy(p, arch / p.name)
        while run.poll():
            pass
        long_xid = run.capture.cache.open_transactions()[0].xid
        assert any(e.startswith("OGG-01027 ") and long_xid in e for e in events), events
        done = run.transaction_action(action, (long_xid, "FORCE"))
        assert done[0].endswith("skipped." if action == "SKIPTRANS" else "forced to trail file.")
        forced = [t for t in trail_content(home, "e6")[0] if t.startswith(f"{long_xid}/")]
        assert len(forced) == (action == "FORCETRANS")
        for p in copies[-2:]:
            shutil.copy(p, arch / p.name)
        run.run(threading.Event(), stop_at_eof=True)
    finally:
        run.close()
    got = trail_content(home, "e6")[0]
    mine = [t for t in got if t.startswith(f"{long_xid}/")]
    assert len(mine) == (action == "FORCETRANS")  # once, or never: its commit is ignored
    assert [t for t in got if t not in mine] == [
        t for t in want[0] if not t.startswith(f"{long_xid}/")
    ]


def test_a_missing_sequence_of_thread_2_names_it(
    rac: tuple[Home, Path, Path], tmp_path: Path
) -> None:
    """A sequence of thread 2 missing while a later one is there: OGG-00446 naming thread 2
    and the sequence, before anything past it is applied."""
    home, root, dic = rac
    _want, copies, arch = staged(home, root, dic, tmp_path, "e8")
    twos = sorted(
        (p for p in copies if p.name.startswith("2_")), key=lambda p: int(p.name.split("_")[1])
    )
    gone = twos[1]
    for p in copies:
        if p != gone:
            shutil.copy(p, arch / p.name)
    gap = abend(home, "e8", RedoGapError)
    seq = int(gone.name.split("_")[1])
    assert gap.code == "OGG-00446"
    assert gap.message.startswith(
        f"Could not find archived log for sequence {seq} thread 2 under {arch}"
    )


def test_what_an_attached_source_cannot_do_is_warned(
    rac: tuple[Home, Path, Path], tmp_path: Path
) -> None:
    """FETCHOPTIONS and PURGEORPHANEDTRANSACTIONS need the database itself: each is a "not
    used" warning (OGG-10144) at the start, not silently ignored."""
    home, root, dic = rac
    staged(home, root, dic, tmp_path, "e9")
    events: list[str] = []
    extra = "FETCHOPTIONS FETCHPKUPDATECOLS\nTRANLOGOPTIONS PURGEORPHANEDTRANSACTIONS\n"
    attached_run(home, "e9", extra, events).close()
    warned = [e for e in events if e.startswith("OGG-10144 ")]
    assert [w.split(" not used")[0] for w in warned] == [
        "OGG-10144 FETCHOPTIONS (no database to fetch a row from)",
        "OGG-10144 TRANLOGOPTIONS PURGEORPHANEDTRANSACTIONS (no database to ask which "
        "transactions are still open)",
    ]


def test_a_run_to_the_end_that_reads_nothing_says_what_it_waits_for(
    rac: tuple[Home, Path, Path], tmp_path: Path
) -> None:
    """THREADS 2 with only thread 1 archived, ``--stop-at-eof``: before, it ended with
    nothing written and nothing said; now a warning names thread 2's sequence it waits for."""
    home, root, dic = rac
    _want, copies, arch = staged(home, root, dic, tmp_path, "ea")
    for p in copies:
        if p.name.startswith("1_"):
            shutil.copy(p, arch / p.name)
    events: list[str] = []
    run = attached_run(home, "ea", events=events)
    try:
        run.run(threading.Event(), stop_at_eof=True)
    finally:
        run.close()
    assert trail_content(home, "ea")[0] == []
    (said,) = [e for e in events if e.startswith("OGG-00446 ")]
    assert said.startswith("OGG-00446 Nothing read: waiting for thread 2 sequence ")
    assert f"not archived under {arch} named by LOG_ARCHIVE_FORMAT '{FMT}' yet." in said


def test_a_corrupt_block_is_said_under_the_redo_corrupt_code_once(
    rac: tuple[Home, Path, Path], tmp_path: Path
) -> None:
    """64 garbage bytes in the middle of an archived log: before, ``OGG-00446 ... RBA 0 to
    its end: GGS-SRC-0302: GGS-REDO-0002: ...`` (the missing-log code, two codes stacked);
    now the embedded Extract's redo-corrupt code, once, naming the log and the block."""
    home, root, dic = rac
    _want, copies, arch = staged(home, root, dic, tmp_path, "eb")
    for p in copies:
        shutil.copy(p, arch / p.name)
    bad = arch / copies[0].name
    data = bytearray(bad.read_bytes())
    at = len(data) // 2
    data[at : at + 64] = b"\xa5" * 64
    bad.write_bytes(bytes(data))
    got = abend(home, "eb", RedoGapError)
    assert got.code == "GGS-SRC-0302", got
    assert got.message.startswith("Redo thread ") and "GGS-" not in got.message, got.message
    assert str(bad) in got.message and "block" in got.message
