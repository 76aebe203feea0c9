"""Two commits with the same SCN on different redo threads (RAC instances keep their SCNs in
step by messages, so two of them may commit at one SCN): both transactions reach the trail,
each exactly once, in a live capture, in a catch-up of the same redo, and after a restart
whose trail ends between the two (a crash after the first was written).

The embedded database commits at one SCN on both threads inside
:meth:`~engine.embedded.database.Database.same_scn`. The merge orders the pair by thread
(SCN, SUBSCN, thread), so thread 1's is written first.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.embedded.database import Database
from engine.embedded.session import Session
from engine.embedded.sql import execute
from engine.extract.capture import Capture, CaptureState
from engine.extract.start import initial_positions
from engine.home.layout import Home
from engine.trail.reader import TrailReader
from engine.trail.writer import TrailWriter
from params.check import check_text
from tests.harness.livecheck import ALL_TABLES, PRM, capture_for, trail_content

from .test_rac_live import drain, two_threads


@dataclass
class Pair:
    home: Home
    root: Path
    scn: int  # the SCN both commits carry
    before: CaptureState  # the live capture's state just before it read the pair


def _ids(home: Home, trail: str) -> list[int]:
    with TrailReader(str(home.root / "dirdat" / trail)) as reader:
        return [int(dict(r.columns)[0] or 0) for _, r in reader.records()]


def _commit_scns(home: Home, trail: str) -> list[tuple[int, str]]:
    with TrailReader(str(home.root / "dirdat" / trail)) as reader:
        return [(int(dict(r.columns)[0] or 0), r.logcsn or "") for _, r in reader.records()]


@pytest.fixture
def pair(tmp_path: Path) -> Pair:
    """A live capture ("lv") of a two-thread database polled after each step: rows 1 and 2
    (threads 1 and 2), rows 3 and 4 committed at one SCN (thread 1, thread 2), rows 5 and 6."""
    home, root, db, a, b = two_threads(tmp_path)
    cap, writer = capture_for(home, root, "lv")

    def commit(s: Session, i: int) -> None:
        execute(db, s, f"INSERT INTO wl.t VALUES ({i})")
        execute(db, s, "COMMIT")

    commit(a, 1)
    commit(b, 2)
    db.logs.flush()
    drain(cap)
    assert cap.stats.trail_records == 2
    execute(db, a, "INSERT INTO wl.t VALUES (3)")
    execute(db, b, "INSERT INTO wl.t VALUES (4)")
    db.logs.flush()
    drain(cap)  # both open: nothing written
    assert cap.stats.trail_records == 2
    before = cap.durable_state()
    with db.same_scn() as scn:
        execute(db, a, "COMMIT")
        execute(db, b, "COMMIT")
    db.logs.flush()
    drain(cap)
    commit(a, 5)
    commit(b, 6)
    db.close()
    drain(cap)
    cap.close()
    writer.close()
    return Pair(home, root, scn, before)


def test_the_database_commits_on_two_threads_at_one_scn(pair: Pair) -> None:
    with Database(pair.root) as db:
        commits = sorted(
            (lr.record.thread, lr.record.scn)
            for lr in db.records(from_scn=pair.scn)
            if any(cv.layer == 5 and cv.code == 4 for cv in lr.record.changes)
        )
    assert [c for c in commits if c[1] == pair.scn] == [(1, pair.scn), (2, pair.scn)]
    assert len(commits) == 4  # and rows 5 and 6 after them, at SCNs of their own


def test_same_scn_commits_live(pair: Pair) -> None:
    assert _ids(pair.home, "lv") == [1, 2, 3, 4, 5, 6]
    assert [csn for i, csn in _commit_scns(pair.home, "lv") if i in (3, 4)] == [str(pair.scn)] * 2


def test_same_scn_commits_catch_up(pair: Pair) -> None:
    """The whole redo in one batch: the pair is assembled inside one split."""
    cap, writer = capture_for(pair.home, pair.root, "cu")
    drain(cap)
    writer.close()
    assert cap.stats.skipped_recovered == 0
    assert _ids(pair.home, "cu") == [1, 2, 3, 4, 5, 6]
    assert trail_content(pair.home, "cu") == trail_content(pair.home, "lv")


@pytest.mark.parametrize("written", ["3", "4", "6"])
def test_same_scn_commits_after_a_restart(pair: Pair, written: str) -> None:
    """The process died before its checkpoint after the pair (its trail durable up to row
    ``written``): the restart from the checkpoint before the pair reads the pair again.
    "3": the trail ends between the two, thread 1's written: thread 2's is written once
    and thread 1's not again. "4": both written, the trail's last transaction is thread 2's:
    thread 1's, at the same SCN, must not be written again. "6": everything written."""
    home = pair.home
    dirdat = home.root / "dirdat"
    (src,) = sorted(dirdat.glob("lv0*"))
    shutil.copy(src, dirdat / src.name.replace("lv", "rs", 1))
    with TrailReader(str(dirdat / "rs")) as reader:
        cut = next(e.rba + e.length for e, r in reader.records() if dict(r.columns)[0] == written)
    (rs,) = sorted(dirdat.glob("rs0*"))
    with open(rs, "r+b") as fh:
        fh.truncate(cut)
    assert _ids(home, "rs") == list(range(1, int(written) + 1))
    writer = TrailWriter.open(dirdat / "rs", durable=False, megabytes=500)
    model = check_text(PRM.format(db=pair.root.name, trail="rs", tables=ALL_TABLES)).model
    again = Capture(
        model,
        pair.root,
        writer,
        home.dirtmp / "rs",
        start=initial_positions(pair.root / "redo", (), 2),
        state=pair.before,
    )
    drain(again)
    writer.close()
    assert _ids(home, "rs") == [1, 2, 3, 4, 5, 6]
    assert trail_content(home, "rs") == trail_content(home, "lv")
