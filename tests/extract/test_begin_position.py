"""BEGIN SCN / BEGIN time positioning (``ADD EXTRACT ..., SCN n | BEGIN time``, ``ALTER
EXTRACT ..., BEGIN time``) searches every log the Extract can read: the online logs and the
archived copies in the archive destination (a directory, or ``s3://`` on a local moto
server), on every redo thread. Here the database's archived logs are gone from its own
directory once copied out (as RMAN's ``DELETE INPUT`` leaves them), so a begin point in one
of them is found only in the archive destination. A begin point older than a thread's
oldest available log abends with OGG-00446; one before a thread's very first log does not
(nothing was lost)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from engine import storage
from engine.embedded.archiver import archived_copy, set_archive_dest
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.extract.run import ExtractRun
from engine.extract.start import ExtractError
from engine.home.groups import GroupStore
from engine.home.layout import Home
from engine.redo.payloads import redo_time_of
from engine.trail.reader import TrailReader
from params.check import check_text
from tests.shell.conftest import Shell

from .conftest import rewrite_header

T0 = datetime(2024, 1, 1)
ROWS = 24
PRM = "EXTRACT {g}\nSOURCEDB src\nEXTTRAIL ./dirdat/{g}\n{extra}TABLE hr.emp;\n"


@dataclass(frozen=True)
class Row:
    id: int
    thread: int
    scn: int  # the SCN of its first redo record (or of one just before it)
    time: datetime  # no record of an earlier row is this late


def _source(home: Home, dest: str) -> tuple[Path, list[Row]]:
    """Database SRC, two threads, archiving to ``dest``: ROWS committed rows alternating
    between the threads, both threads switching logs every 6 rows (sequences 1 to 4 archived,
    5 current); then the archived logs are removed from the database's directory."""
    root = create_database(home.dirdb, "src", threads=2)
    set_archive_dest(root, dest)
    clock = ManualClock(T0, step=0.0001)
    rows = []
    with Database(root, clock=clock) as db:
        s = {t: db.session(f"S{t}", thread=t) for t in (1, 2)}
        execute(db, s[1], "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, pad VARCHAR2(100))")
        for i in range(1, ROWS + 1):
            t = i % 2 + 1
            clock.advance(1)
            rows.append(Row(i, t, db.state.scn + 1, clock.current))
            execute(db, s[t], f"INSERT INTO hr.emp VALUES ({i}, 'row {i}')")
            execute(db, s[t], "COMMIT")
            if i % 6 == 0:
                db.switch_log()
        assert not db.archiver.errors
    gone = 0
    for marker in (root / "redo").rglob("*.arc"):  # copied out: deleted here
        marker.with_suffix(".log").unlink()
        gone += 1
    assert gone == 8  # 4 archived logs per thread, only in the destination now
    return root, rows


def _run(home: Home, group: str, extra: str = "", events: list[str] | None = None) -> list[int]:
    """Run the group's Extract to the end of the redo (no Spark); the ids in its trail.
    ``events``: the codes and texts it reported."""
    (home.dirprm / f"{group}.prm").write_text(PRM.format(g=group, extra=extra))
    model = check_text(PRM.format(g=group, extra=extra)).model
    definition = GroupStore(home).get(group.upper())
    assert definition is not None
    seen = events if events is not None else []
    run = ExtractRun(
        home, model, definition, lambda c, s, t: seen.append(f"{c} {t}"), spark=None, durable=False
    )
    try:
        run.run(threading.Event(), stop_at_eof=True)
    finally:
        run.close()
    with TrailReader(str(home.root / "dirdat" / group)) as reader:
        return [int(dict(r.columns)[0] or 0) for _, r in reader.records()]


def _add(shell: Shell, group: str, start: str) -> None:
    out = shell.run(f"ADD EXTRACT {group}, TRANLOG, {start}, THREADS 2")
    assert out == "EXTRACT added.\n", out
    out = shell.run(f"ADD EXTTRAIL ./dirdat/{group}, EXTRACT {group}")
    assert shell.ok, out


def _stamp(t: datetime) -> str:
    """A BEGIN time for a row's ``time``: its whole second (a record's redo time is its
    LWN's, in whole seconds, as Oracle keeps it)."""
    return f"{t:%Y-%m-%d %H:%M:%S}.000000"


def _positions_from_archive(home: Home, dest: str) -> None:
    shell = Shell(home)
    root, rows = _source(home, dest)
    r8, r15 = rows[7], rows[14]  # in sequence 2 of their threads: archived, copied out only
    _add(shell, "e1", f"SCN {r8.scn}")
    assert _run(home, "e1") == list(range(8, ROWS + 1))
    _add(shell, "e2", f"BEGIN {_stamp(r15.time)}")
    assert _run(home, "e2") == list(range(15, ROWS + 1))
    _add(shell, "e3", "BEGIN NOW")  # the shell's clock: past every record
    assert shell.run(f"ALTER EXTRACT e3, BEGIN {_stamp(r8.time)}") == "EXTRACT altered.\n"
    assert _run(home, "e3") == list(range(8, ROWS + 1))
    # before everything: the threads' oldest logs are their first ones, nothing is lost
    _add(shell, "e4", "SCN 1")
    assert _run(home, "e4") == list(range(1, ROWS + 1))
    assert (root / "redo" / "t1").is_dir()


def test_begin_found_in_archived_logs_on_every_thread(home: Home, tmp_path: Path) -> None:
    _positions_from_archive(home, str(tmp_path / "arch"))
    # archived logs only: the search reads the destination alone. (The last commit, 24,
    # stays held by the thread merge until later redo of the other thread is archived.)
    shell = Shell(home)
    rows_time = T0 + timedelta(seconds=11)  # row 11's time: thread 2, sequence 2
    _add(shell, "e5", f"BEGIN {_stamp(rows_time)}")
    assert _run(home, "e5", "TRANLOGOPTIONS ARCHIVEDLOGONLY\n") == list(range(11, 24))


def test_begin_found_in_archived_logs_on_s3(home: Home, s3_server: str) -> None:
    _positions_from_archive(home, storage.join(s3_server, "begin", "arch"))


def test_begin_before_the_oldest_log_abends(home: Home, tmp_path: Path) -> None:
    """Thread 2's sequence 1 purged from the destination too: a begin point in it, or
    before it, cannot be established (OGG-00446 naming the thread and its oldest log); one
    inside what is left still works, on both threads."""
    dest = str(tmp_path / "arch")
    root, rows = _source(home, dest)
    Path(str(archived_copy(root, 2, 1))).unlink()
    shell = Shell(home)
    for group, start in (
        ("e1", f"SCN {rows[0].scn}"),
        ("e2", f"BEGIN {_stamp(rows[0].time)}"),
        ("e3", "SCN 1"),
    ):
        _add(shell, group, start)
        with pytest.raises(ExtractError) as caught:
            _run(home, group)
        assert caught.value.code == "OGG-00446"
        assert "Not able to establish initial position for" in caught.value.text
        assert "redo thread 2: its oldest available log is sequence 2" in caught.value.text
        assert "sequence 1 and older are no longer online" in caught.value.text
    # thread 2's sequence 2 begins after row 6 (the switch): row 7 is there
    _add(shell, "e4", f"SCN {rows[6].scn}")
    assert _run(home, "e4") == list(range(7, ROWS + 1))
    # A log started after its records' times (as an import writes them): a begin time
    # after its first record is still found, before it still abends.
    copy = Path(str(archived_copy(root, 2, 2)))
    later = T0 + timedelta(days=1)
    rewrite_header(copy, first_time=redo_time_of(later))
    _add(shell, "e5", f"BEGIN {_stamp(rows[8].time)}")
    assert _run(home, "e5") == list(range(9, ROWS + 1))
    _add(shell, "e6", f"BEGIN {_stamp(rows[6].time - timedelta(seconds=0.5))}")
    with pytest.raises(ExtractError, match=r"OGG-00446 .* thread 2: its oldest available log"):
        _run(home, "e6")
    assert (root / "redo").is_dir()


def test_trail_cut_short_is_captured_again_from_archived_copies(home: Home, tmp_path: Path) -> None:
    """The trail loses its last transactions (cut after row 15): the next start re-reads the
    redo from an earlier checkpoint, whose logs are only in the archive destination now,
    and writes rows 16 to 24 again, once (OGG-01741)."""
    _root, rows = _source(home, str(tmp_path / "arch"))
    shell = Shell(home)
    _add(shell, "e1", f"SCN {rows[7].scn}")
    assert _run(home, "e1") == list(range(8, ROWS + 1))
    (path,) = sorted((home.root / "dirdat").glob("e10*"))
    with TrailReader(str(home.root / "dirdat" / "e1")) as reader:
        cut = next(e.rba + e.length for e, r in reader.records() if dict(r.columns)[0] == "15")
    with open(path, "r+b") as fh:
        fh.truncate(cut)
    events: list[str] = []
    assert _run(home, "e1", events=events) == list(range(8, ROWS + 1))
    assert any(e.startswith("OGG-01741") for e in events), events
