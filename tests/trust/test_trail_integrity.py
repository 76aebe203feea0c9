"""Issue 12 "Trust": nothing lost or doubled silently in trails.

- A trail cut short behind its write checkpoint: Extract captures the lost transactions
  again (exactly once) or abends naming the file and the positions; the pump copies them
  again from its source trail or abends; a reader (pump, Replicat) whose read checkpoint
  is past the end of its trail file abends (OGG-01705) instead of waiting forever.
- A changed byte in a trail record: with checksums (the default) the pump and Replicat
  abend naming the file and the RBA, Logdump shows the mismatch; with NOCHECKSUM the old
  behaviour (the changed value is read as it is).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from engine.checkpoints import load_checkpoints
from engine.extract.engine import ExtractRun
from engine.extract.start import ExtractError
from engine.home import Home
from engine.source.database import Database, create_database
from engine.source.sql import execute
from engine.trail.reader import TrailReader
from params.check import check_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRM = "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\nTABLE hr.emp;\n"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    return h


@pytest.fixture
def source(home: Home) -> Iterator[Callable[[], Database]]:
    root = create_database(home.dirdb, "src")
    yield lambda: Database(root)


def sql(open_db: Callable[[], Database], *statements: str) -> None:
    with open_db() as db:
        session = db.session("s1")
        for statement in statements:
            execute(db, session, statement)


def transactions(open_db: Callable[[], Database], first: int, count: int) -> None:
    """``count`` committed transactions of two inserts each, keys from ``first``."""
    statements = []
    for i in range(first, first + count):
        statements += [
            f"INSERT INTO hr.emp VALUES ({2 * i}, 'n{i}', {i})",
            f"INSERT INTO hr.emp VALUES ({2 * i + 1}, 'm{i}', {i})",
            "COMMIT",
        ]
    sql(open_db, *statements)


def extract(
    home: Home, spark: SparkSession, prm: str = PRM
) -> tuple[ExtractRun, list[tuple[str, str]]]:
    events: list[tuple[str, str]] = []
    run = ExtractRun(
        home,
        check_text(prm).model,
        None,
        lambda code, _sev, text: events.append((code, text)),
        spark=spark,
        durable=False,
    )
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    return run, events


def trail_transactions(trail: Path) -> list[tuple[Any, ...]]:
    """The trail as its transactions: (LOGCSN, TRANID, [(op, columns), ...]) in order."""
    out: list[tuple[Any, ...]] = []
    for _, rec in TrailReader(trail).records():
        if rec.begins_transaction:
            out.append((rec.logcsn, rec.tranid, []))
        out[-1][2].append((rec.op_name, rec.columns))
    return out


def cut(path: Path, nbytes: int) -> None:
    """Remove the last ``nbytes`` of a file (a trail file cut short, whole records)."""
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(size - nbytes)


def record_ends(path: Path) -> list[int]:
    """The RBAs where the transactions of a trail file end."""
    seqno = int(path.name[2:])
    reader = TrailReader(path.parent / path.name[:2], start=None)
    return [e.end.rba for e, r in reader.records() if e.seqno == seqno and r.ends_transaction]


# -- Extract: a local trail cut short behind its write checkpoint ------------------------
def test_extract_captures_a_cut_trail_again_exactly_once(
    home: Home, source: Callable[[], Database], spark: SparkSession
) -> None:
    sql(source, "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20), sal NUMBER)")
    transactions(source, 0, 3)
    extract(home, spark)  # run 1: file 0
    transactions(source, 3, 5)
    extract(home, spark)  # run 2 (rolls over): file 1
    trail = home.root / "dirdat" / "aa"
    uncut = trail_transactions(trail)
    assert len(uncut) == 8
    # The last 3 committed transactions of file 1 are lost (whole records cut away).
    file1 = home.root / "dirdat" / "aa000000001"
    ends = record_ends(file1)
    lost = file1.stat().st_size - ends[-4]
    cut(file1, lost)
    assert len(trail_transactions(trail)) == 5

    _, events = extract(home, spark)
    warning = [t for c, t in events if c == "OGG-01741"]
    assert len(warning) == 1
    assert f"{lost} bytes are missing" in warning[0] and "aa000000001" in warning[0]
    assert trail_transactions(trail) == uncut  # each lost transaction once, in order
    # A further restart adds nothing.
    extract(home, spark)
    assert trail_transactions(trail) == uncut


def test_extract_abends_when_no_checkpoint_precedes_the_lost_data(
    home: Home, source: Callable[[], Database], spark: SparkSession
) -> None:
    sql(source, "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20), sal NUMBER)")
    transactions(source, 0, 6)
    extract(home, spark)  # one run, one poll: no checkpoint before the end of the data
    file0 = home.root / "dirdat" / "aa000000000"
    ends = record_ends(file0)
    cps = load_checkpoints(home, "EXTRACT", "E1")
    assert cps is not None
    written = cps.writes[0].position
    cut(file0, file0.stat().st_size - ends[-4])
    with pytest.raises(ExtractError) as caught:
        extract(home, spark)
    assert caught.value.code == "OGG-01496"
    text = caught.value.text
    assert f"ends at Seqno 0, RBA {ends[-4]}" in text and "aa000000000" in text
    assert f"write checkpoint is Seqno 0, RBA {written.rba}" in text
    assert "cannot be captured again" in text
    assert "\n" not in text
