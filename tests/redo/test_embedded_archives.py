"""The embedded database's archive destination is an Oracle archive location as it is
(issue 24 §3): created with ``--archive-format``, its dictionary written by ``ggsci db
dictionary``, the directory attached by ``ggsci db attach X --archive DEST --format FMT
--dictionary FILE``, the archived-log-only Extract over it (``ggsci extract paramfile``, in
this process on the test session's Spark; test_alo_ggsci runs it as a child process) writes
the same trail rows as the embedded database's own Extract, which also reads the archives by
their format (TRANLOGOPTIONS ARCHIVEDLOGONLY)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from typer.testing import CliRunner

from engine.embedded.archiver import ArchiveParams
from engine.embedded.catalog import RedoGapError
from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from engine.logdump.dump import dump_files
from engine.logdump.views import DisplayOptions
from ggsci.cli import build_app
from params.check import check_text
from tests.redo.test_alo_ggsci import _extract_here

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FMT = "ora_%t_%S_%r.arc"
EMBEDDED = "EXTRACT {group}\nSOURCEDB src\n{tranlog}EXTTRAIL ./dirdat/{trail}\nTABLE HR.*;\n"
ATTACHED = "EXTRACT e1\nSOURCEDB ora\nTRANLOGOPTIONS ARCHIVEDLOGONLY\nEXTTRAIL ./dirdat/aa\n"
ATTACHED += "TABLE HR.*;\n"
COMPARED = ("op", "table", "trans_ind", "before_after", "io_time", "columns", "before_columns")
COMPARED += ("tokens",)  # ORAROWID, LOGCSN, TRANID
DDL = (
    "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(60), nick NVARCHAR2(20),"
    " salary NUMBER(9,2), born DATE, seen TIMESTAMP)"
)


def _common(db: Database) -> None:
    """Inserts of every column type with non-ASCII text, updates setting values and NULLs,
    two sessions interleaved, a rolled-back transaction, one across a log switch; every log
    archived at the end."""
    a, b = db.session("A"), db.session("B")
    for i in range(1, 13):
        execute(
            db,
            a,
            f"INSERT INTO hr.emp VALUES ({i}, 'name {i} é', 'ñ{i}', {i * 1000}.25, "
            f"DATE '2024-0{i % 9 + 1}-1{i % 9}', TIMESTAMP '2025-01-02 03:04:05.{i:06d}')",
        )
        if i % 4 == 0:
            execute(db, a, "COMMIT")
    execute(db, a, "UPDATE hr.emp SET salary = salary * 2, nick = NULL WHERE id <= 3")
    execute(db, b, "UPDATE hr.emp SET name = 'by b' WHERE id = 9")
    execute(db, a, "COMMIT")
    db.switch_log()
    execute(db, b, "UPDATE hr.emp SET born = NULL, seen = NULL WHERE id = 10")  # B spans it
    execute(db, b, "COMMIT")
    execute(db, a, "UPDATE hr.emp SET name = 'never' WHERE id IN (4, 5)")
    execute(db, a, "ROLLBACK")
    execute(db, a, "UPDATE hr.emp SET name = 'kept' WHERE id = 8")
    execute(db, a, "COMMIT")
    db.switch_log()


def _keys_deletes_savepoints(db: Database) -> None:
    """What the attached Extract once wrote differently (its redo miner, before it became
    the Extract's): an insert leaving trailing columns NULL, a key update, a delete, a
    rollback to a savepoint (whose 5.6 names no object: the embedded writer's)."""
    a, b = db.session("A"), db.session("B")
    for i in range(1, 9):
        execute(db, a, f"INSERT INTO hr.emp VALUES ({i}, 'n{i}', 'k', {i}, NULL, NULL)")
    execute(db, b, "INSERT INTO hr.emp (id, name) VALUES (100, 'only a name')")
    execute(db, a, "COMMIT")
    execute(db, b, "UPDATE hr.emp SET id = 101 WHERE id = 100")
    execute(db, b, "COMMIT")
    execute(db, a, "DELETE FROM hr.emp WHERE id = 6")
    execute(db, a, "SAVEPOINT s1")
    execute(db, a, "UPDATE hr.emp SET name = 'gone' WHERE id = 7")
    execute(db, a, "ROLLBACK TO SAVEPOINT s1")
    execute(db, a, "UPDATE hr.emp SET name = 'kept' WHERE id = 8")
    execute(db, a, "COMMIT")
    db.switch_log()


def _rows(dirdat: Path, trail: str) -> list[dict[str, Any]]:
    buf = io.StringIO()
    files = sorted(dirdat.glob(f"{trail}0*"))
    dump_files(
        files, buf, as_json=True, options=DisplayOptions(ghdr=True, detail="ON", fileheader="OFF")
    )
    recs = [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]
    return [
        {k: r.get(k) for k in COMPARED}
        for r in recs
        if r["io_type"] not in (None, 170)  # not the file header, not metadata
    ]


def _embedded(home: Home, spark: SparkSession, group: str, trail: str, tranlog: str) -> None:
    text = EMBEDDED.format(group=group, trail=trail, tranlog=tranlog)
    run = ExtractRun(home, check_text(text).model, None, lambda c, s, t: None, spark=spark)
    try:
        run.run(threading.Event(), stop_at_eof=True)
    finally:
        run.close()


def _ggsci(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GGHOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "ggsci", *args],
        env=env, cwd=home, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("workload", "rows"),
    [
        pytest.param(_common, 12 + 3 + 1 + 1 + 1, id="common"),
        pytest.param(_keys_deletes_savepoints, 9 + 1 + 1 + 1, id="keys-deletes-savepoints"),
    ],
)
def test_the_archives_attached_read_as_the_embedded_extract_reads_them(
    tmp_path: Path, spark: SparkSession, workload: Callable[[Database], None], rows: int
) -> None:
    home = Home(tmp_path / "home")
    home.create_subdirs()
    dest = tmp_path / "arch"
    root = create_database(home.dirdb, "src", archive=ArchiveParams(str(dest), FMT))
    with Database(root) as db:
        execute(db, db.session("DDL"), DDL)
        db.switch_log()  # the DDL in sequence 1; the dictionary taken after it
    cli = CliRunner()
    dic = tmp_path / "dict.json"
    args = ["db", "dictionary", "src", "--out", str(dic), "--home", str(home.root)]
    r = cli.invoke(build_app(), args)
    assert r.exit_code == 0, r.output
    with Database(root) as db:
        workload(db)
        assert db.archiver is not None and not db.archiver.errors
    logs = sorted(p.name for p in dest.iterdir())
    assert logs[:2] == [f"ora_1_{s:010d}_1.arc" for s in (1, 2)]

    _embedded(home, spark, "x1", "bb", "")  # the online logs, as always
    _embedded(home, spark, "x2", "cc", "TRANLOGOPTIONS ARCHIVEDLOGONLY\n")  # DEST, by FMT
    want = _rows(home.dirdat, "bb")
    assert len(want) == rows
    assert _rows(home.dirdat, "cc") == want

    args = ["db", "attach", "ora", "--archive", str(dest), "--format", FMT, "--dictionary"]
    r = cli.invoke(build_app(), [*args, str(dic), "--home", str(home.root)])
    assert r.exit_code == 0, r.output
    assert f"({len(logs)} now), dictionary of 1 table(s)" in r.output
    (home.dirprm / "e1.prm").write_text(ATTACHED)
    added = _ggsci(home.root, "run", "ADD EXTRACT e1, TRANLOG, EXTSEQNO 2, EXTRBA 0",
                   "ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")  # fmt: skip
    assert "EXTRACT added." in added.stdout, added.stdout + added.stderr
    run = _extract_here(home.root)
    assert run.exit_code == 0, run.output
    assert _rows(home.dirdat, "aa") == want


def test_an_archived_only_extract_restarts_in_the_named_archives(
    tmp_path: Path, spark: SparkSession
) -> None:
    """Two threads. Run, more redo archived, run again: the restart reads on from its
    checkpoint in the archives the format names (nothing twice, nothing lost); a named
    archive purged before it is read (a later one there) is OGG-00446 naming the thread and
    sequence, not a silent skip."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    dest = tmp_path / "arch"
    root = create_database(home.dirdb, "src", threads=2, archive=ArchiveParams(str(dest), FMT))
    alo = "TRANLOGOPTIONS ARCHIVEDLOGONLY\n"

    def batch(first: int) -> None:
        with Database(root) as db:
            s = {t: db.session(f"S{t}", thread=t) for t in (1, 2)}
            if first == 1:
                execute(db, s[1], DDL)
            for i in range(first, first + 6):
                execute(db, s[i % 2 + 1], f"INSERT INTO hr.emp (id, name) VALUES ({i}, 'r{i}')")
                execute(db, s[i % 2 + 1], "COMMIT")
            db.switch_log()

    def ids() -> list[int]:
        return [int(r["columns"]["ID"]) for r in _rows(home.dirdat, "bb")]

    batch(1)
    _embedded(home, spark, "x1", "bb", alo)
    # the last commit (6, thread 1) waits: thread 2 is known complete past an archived log
    # only once the reader is in its next one (engine/extract/merge.py), not archived yet
    assert ids() == list(range(1, 6))
    batch(7)
    _embedded(home, spark, "x1", "bb", alo)  # the restart, from its checkpoint
    assert ids() == list(range(1, 12))
    batch(13)
    batch(19)
    (dest / "ora_2_0000000003_1.arc").unlink()  # purged before it was read
    with pytest.raises(RedoGapError) as err:
        _embedded(home, spark, "x1", "bb", alo)
    assert err.value.code == "OGG-00446"
    assert "thread 2" in err.value.message and "sequence 3" in err.value.message
    assert ids() == list(range(1, 12))  # nothing written past the gap
