"""An Extract's checkpoint cannot lie (issue 28): one digit of ``last_commit_scn`` changed
(+200, +100000) made the Extract skip every commit below it without a word. Now the seal
finds the change, and with the seal made to match the checks against the redo do
(OGG-00444 naming the file); a legitimate ALTER EXTRACT EXTSEQNO/EXTRBA, SCN or BEGIN is
never refused."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from shell.conftest import Shell

from engine.embedded.database import Database
from engine.extract.run import ExtractRun
from engine.extract.start import ExtractError
from engine.home.checkpoints import checkpoint_path
from engine.home.groups import GroupStore, checked_checkpoints
from engine.home.jsonfile import seal
from engine.home.layout import Home
from engine.home.trust import BadFile
from engine.trail.reader import TrailReader
from params.check import check_text

from .conftest import run_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRM = "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\nTABLE hr.emp;\n"


def run_extract(home: Home, spark: SparkSession) -> ExtractRun:
    model = check_text(PRM).model
    group = GroupStore(home).get("E1")
    run = ExtractRun(home, model, group, lambda c, s, t: None, spark=spark, durable=False)
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    return run


def inserts(root: Path, first: int, count: int) -> None:
    with Database(root) as db:
        run_sql(
            db,
            [
                stmt
                for i in range(first, first + count)
                for stmt in (("s1", f"INSERT INTO hr.emp VALUES ({i}, 'n{i}')"), ("s1", "COMMIT"))
            ],
        )


def trail_ids(home: Home) -> list[str]:
    return [
        dict(rec.columns)[0] for _, rec in TrailReader(str(home.root / "dirdat" / "aa")).records()
    ]


def prepared(home: Home, source: Any, spark: SparkSession) -> Path:
    root, open_db = source
    shell = Shell(home)
    assert shell.run("ADD EXTRACT e1, TRANLOG, BEGIN NOW") == "EXTRACT added.\n"
    assert shell.run("ALTER EXTRACT e1, EXTSEQNO 1, EXTRBA 0") == "EXTRACT altered.\n"
    assert "added" in shell.run("ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")
    with open_db() as db:
        run_sql(db, [("s1", "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20))")])
    inserts(root, 1, 5)
    run_extract(home, spark)
    assert trail_ids(home) == [str(i) for i in range(1, 6)]
    inserts(root, 6, 5)  # more commits while the Extract is down: each must be captured
    return root


def edit(home: Home, *, reseal: bool, **capture: int) -> None:
    path = checkpoint_path(home, "EXTRACT", "E1")
    data = json.loads(path.read_text())
    for key, delta in capture.items():
        data["extra"]["capture"][key] += delta
    path.write_text(json.dumps(seal(data) if reseal else data, indent=1))


@pytest.mark.parametrize("delta", [200, 100_000])
def test_a_changed_last_commit_scn_is_found_not_acted_upon(
    home: Home, source: Any, spark: SparkSession, delta: int
) -> None:
    prepared(home, source, spark)
    edit(home, reseal=False, last_commit_scn=delta)
    with pytest.raises(BadFile, match=r"dirchk/E1.cpe is corrupt \(checksum mismatch\)"):
        checked_checkpoints(home, "EXTRACT", "E1")
    with pytest.raises(ExtractError, match=r"dirchk/E1.cpe is corrupt \(checksum mismatch\)"):
        run_extract(home, spark)
    edit(home, reseal=True, last_commit_scn=0)  # the seal made to match the change
    with pytest.raises(ExtractError, match="above the last SCN it read") as exc:
        run_extract(home, spark)
    assert exc.value.code == "OGG-00444" and "dirchk/E1.cpe" in str(exc.value)
    edit(home, reseal=True, last_scn=delta)  # and the last SCN read with it
    with pytest.raises(ExtractError, match="above every SCN of the redo before its read"):
        run_extract(home, spark)
    assert trail_ids(home) == [str(i) for i in range(1, 6)]  # nothing skipped, nothing written
    # recovery as documented: a position given replaces the damaged file
    edit(home, reseal=False, last_commit_scn=1)
    out = Shell(home).run("ALTER EXTRACT e1, EXTSEQNO 1, EXTRBA 0")
    assert out.startswith("WARNING: Checkpoint file dirchk/E1.cpe is corrupt (checksum mismatch)")
    assert out.endswith("EXTRACT altered.\n")
    run_extract(home, spark)  # from the start of the redo: what the trail holds is skipped
    assert trail_ids(home) == [str(i) for i in range(1, 11)]


def test_a_read_position_off_a_record_boundary_or_a_commit_below_the_trail_is_found(
    home: Home, source: Any, spark: SparkSession
) -> None:
    prepared(home, source, spark)
    path = checkpoint_path(home, "EXTRACT", "E1")
    data = json.loads(path.read_text())
    # the read positions are recorded once (the read checkpoints), not again in the state
    assert set(data["extra"]["capture"]) & {"current", "recovery", "trail"} == set()
    for r in data["reads"]:
        r["current"]["rba"] -= 3
    path.write_text(json.dumps(seal(data), indent=1))
    with pytest.raises(ExtractError, match="not on a record boundary of redo log"):
        run_extract(home, spark)
    for r in data["reads"]:
        r["current"]["rba"] += 3
    data["extra"]["capture"]["last_commit_scn"] -= 1  # below the trail's last LOGCSN
    path.write_text(json.dumps(seal(data), indent=1))
    with pytest.raises(ExtractError, match=r"is below the LOGCSN \d+ of the trail.s last"):
        run_extract(home, spark)


@pytest.mark.parametrize("alter", ["EXTSEQNO 1, EXTRBA 0", "SCN 1", "BEGIN 2000-01-01 00:00:00"])
def test_alter_extract_is_never_refused(
    home: Home, source: Any, spark: SparkSession, alter: str
) -> None:
    prepared(home, source, spark)
    assert Shell(home).run(f"ALTER EXTRACT e1, {alter}") == "EXTRACT altered.\n"
    run_extract(home, spark)  # from the start of the redo again: no abend
    # what the trail holds is not written again; what came since is captured
    assert trail_ids(home) == [str(i) for i in range(1, 11)]
    run_extract(home, spark)  # a plain restart after it is believed
    assert trail_ids(home) == [str(i) for i in range(1, 11)]
