"""The Extract reads redo through the storage layer: archived logs on s3:// (a local moto
server) or a shared directory give the same trail as the local redo; the tasks read where
PATHMAP says; lost redo (a missing sequence, a log cut short, SCNs going back, a block
number jump) abends naming the thread, sequence and position: with OGG-00446, or the redo-corrupt
code (GGS-SRC-0302) when the reader finds a log's blocks are not what they should be."""

from __future__ import annotations

import os
import re
import shutil
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from engine import storage
from engine.changes import Position
from engine.embedded.archiver import set_archive_dest
from engine.embedded.catalog import RedoCatalog, RedoGapError
from engine.embedded.database import Database, create_database
from engine.embedded.logfile import BLOCK, read_header
from engine.embedded.logs import list_logs
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from engine.redo.onlinelog import read_side, write_side
from engine.trail.reader import TrailReader
from params.check import check_text

from .conftest import rewrite_header, run_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRM = "EXTRACT x{trail}\nSOURCEDB src\nEXTTRAIL ./dirdat/{trail}\n{extra}TABLE hr.emp;\n"
PAD = "x" * 900  # rows of about a kilobyte: a few dozen fill several blocks


def _source(home: Home, dest: str | None, *, switches: int = 3, rows: int = 12) -> Path:
    """Database SRC with committed rows in ``switches`` archived logs and a current one."""
    root = create_database(home.dirdb, "src", threads=1)
    if dest is not None:
        set_archive_dest(root, dest)
    n = 0
    with Database(root) as db:
        run_sql(db, [("s", "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, pad VARCHAR2(1000))")])
        for log in range(switches + 1):
            for _ in range(rows):
                n += 1
                run_sql(db, [("s", f"INSERT INTO hr.emp VALUES ({n}, '{PAD}')")])
                run_sql(db, [("s", "COMMIT")])
            if log < switches:
                db.switch_log(1)
    return root


def _extract(home: Home, spark: SparkSession | None, trail: str, extra: str = "") -> ExtractRun:
    model = check_text(PRM.format(trail=trail, extra=extra)).model
    run = ExtractRun(home, model, None, lambda c, s, t: None, spark=spark, durable=False)
    try:
        run.run(threading.Event(), stop_at_eof=True)
    finally:
        run.close()
    return run


def _body(home: Home, trail: str) -> bytes:
    """The trail's bytes after its file header (which names the group)."""
    files = sorted((home.root / "dirdat").glob(f"{trail}0*"))
    assert len(files) == 1
    with TrailReader(str(home.root / "dirdat" / trail)) as reader:
        first = next(iter(reader.records()))[0].position.rba
    return files[0].read_bytes()[first:]


def _ids(home: Home, trail: str) -> list[str]:
    with TrailReader(str(home.root / "dirdat" / trail)) as reader:
        return [dict(r.columns)[0] for _, r in reader.records()]


def test_capture_from_s3_archive_equals_local(
    home: Home, spark: SparkSession, s3_server: str
) -> None:
    dest = storage.join(s3_server, "equal", "arch")
    root = _source(home, dest)
    archived = storage.list_files(dest)
    names = [e.location.split("?")[0].rsplit("/", 1)[1] for e in archived]
    assert names == [f"1_{s}_1.dbf" for s in (1, 2, 3)]  # LOG_ARCHIVE_FORMAT %t_%s_%r.dbf
    for s, e in zip((1, 2, 3), archived, strict=True):  # the very bytes of the local log
        local = root / "redo" / "t1" / f"{s:09d}.log"
        assert storage.read_range(e.location, 0, e.size) == local.read_bytes()
    _extract(home, spark, "aa")  # local redo
    # archived logs from S3 in the tasks, the current one from the online directory
    _extract(home, spark, "bb", f'TRANLOGOPTIONS ALTARCHIVELOGDEST "{dest}"\n')
    assert _ids(home, "aa") == [str(i) for i in range(1, 49)]
    assert _body(home, "bb") == _body(home, "aa")
    with Database(root) as db:
        db.switch_log(1)  # now every log is archived: ARCHIVEDLOGONLY reads them all
    _extract(home, spark, "cc", f'TRANLOGOPTIONS ALTARCHIVELOGDEST "{dest}" ARCHIVEDLOGONLY\n')
    assert _body(home, "cc") == _body(home, "aa")


def test_tasks_never_open_the_local_redo(home: Home, spark: SparkSession, tmp_path: Path) -> None:
    """The online redo directory hidden: everything comes from the archive destination."""
    dest = f"file://{tmp_path}/shared/arch"
    root = _source(home, dest)
    with Database(root) as db:
        db.switch_log(1)
    _extract(home, spark, "aa")
    (root / "redo").rename(root / "redo.hidden")
    _extract(home, spark, "bb", "TRANLOGOPTIONS ARCHIVEDLOGONLY\n")  # the database's dest
    assert _body(home, "bb") == _body(home, "aa")
    assert len(_ids(home, "bb")) == 48


def test_pathmap_tasks_read_their_view(home: Home, spark: SparkSession, tmp_path: Path) -> None:
    """The driver lists the archives where it sees them; the tasks read them where PATHMAP
    says they see the same mount. Here the driver's view has its records damaged (headers
    intact): only a task reading the other view captures them."""
    driver, task = tmp_path / "driver" / "arch", tmp_path / "task" / "arch"
    root = _source(home, str(driver))
    with Database(root) as db:
        db.switch_log(1)
    _extract(home, spark, "aa")
    shutil.copytree(driver, task)
    for log in driver.glob("*.dbf"):
        data = bytearray(log.read_bytes())
        for i in range(2 * BLOCK, len(data), BLOCK):
            data[i + 40] ^= 0xFF  # a payload byte in each block
        log.write_bytes(bytes(data))
    alo = f'TRANLOGOPTIONS ALTARCHIVELOGDEST "{driver}" ARCHIVEDLOGONLY\n'
    _extract(home, spark, "bb", alo + f"TRANLOGOPTIONS PATHMAP ('{driver}', '{task}')\n")
    assert _body(home, "bb") == _body(home, "aa")
    with pytest.raises(RedoGapError, match="checksum mismatch"):  # the mutation: no PATHMAP
        _extract(home, spark, "cc", alo)


# -- lost redo ---------------------------------------------------------------------------------
def test_redo_cut_from_current_log_abends(home: Home, spark: SparkSession) -> None:
    """3,000 bytes cut from the end of committed, unread redo while the database was down;
    it opens again and goes on (a delete of a row whose insert was in the lost redo): the
    Extract abends naming the gap instead of capturing the delete without the insert."""
    root = _source(home, None, switches=1)
    current = list_logs(root / "redo")[-1]
    size = os.path.getsize(current.path)
    with open(current.path, "r+b") as fh:
        fh.truncate(size - 3000)
    with Database(root) as db:
        run_sql(db, [("s", "DELETE FROM hr.emp WHERE id = 24"), ("s", "COMMIT")])
    with pytest.raises(RedoGapError) as err:
        _extract(home, spark, "aa")
    assert err.value.code == "OGG-00446"
    found = re.match(
        rf"Redo thread 1 sequence {current.sequence}: the archived log ends at RBA (\d+), "
        r"\d+ bytes short of the RBA (\d+) its writer recorded \(.*\): redo was lost$",
        err.value.message,
    )
    assert found, err.value.message
    # the records left end before the cut; the header still says how far they went
    assert int(found.group(1)) <= size - 3000 and int(found.group(2)) == size


def test_redo_spliced_out_of_archived_log_abends(home: Home, spark: SparkSession) -> None:
    root = _source(home, None)
    log = root / "redo" / "t1" / "000000002.log"
    data = log.read_bytes()
    log.write_bytes(data[: 3 * BLOCK + 100] + data[3 * BLOCK + 3100 :])
    with pytest.raises(RedoGapError, match=r"Redo thread 1 sequence 2: the archived log ends"):
        _extract(home, spark, "aa")


def test_missing_sequence_abends(home: Home, spark: SparkSession) -> None:
    root = _source(home, None)
    (root / "redo" / "t1" / "000000002.log").unlink()
    with pytest.raises(RedoGapError, match=r"Redo thread 1: log sequence 2 missing between "):
        _extract(home, spark, "aa")


def test_missing_log_at_the_read_position_abends(home: Home) -> None:
    root = _source(home, None)
    (root / "redo" / "t1" / "000000001.log").unlink()
    catalog = RedoCatalog.for_extract(root)
    with pytest.raises(RedoGapError, match=r"log sequence 1 \(read position RBA 0\) is missing"):
        catalog.for_reading({1: Position(1, 1, 0)})
    catalog.for_reading({1: Position(1, 2, 0)})  # from sequence 2 on, nothing is missing


def test_scn_going_back_abends(home: Home, spark: SparkSession) -> None:
    root = _source(home, None)
    log = root / "redo" / "t1" / "000000003.log"
    prev = read_header(root / "redo" / "t1" / "000000002.log")
    rewrite_header(log, first_scn=prev.next_scn - 5)
    with pytest.raises(RedoGapError, match=r"sequence 3 starts at SCN \d+, below the next SCN"):
        _extract(home, spark, "aa")


def test_block_number_jump_abends(home: Home, spark: SparkSession) -> None:
    """Whole blocks gone from the middle of a log whose header was made to agree: the
    reader in the task sees the block numbers jump."""
    root = _source(home, None)
    log = root / "redo" / "t1" / "000000002.log"
    data = log.read_bytes()
    cut = data[: 4 * BLOCK] + data[10 * BLOCK :]
    log.write_bytes(cut)
    rewrite_header(log, blocks=len(cut) // BLOCK)
    side = read_side(log)
    if side is not None:
        write_side(log, replace(side, end=len(cut)))
    with pytest.raises(RedoGapError) as err:
        _extract(home, spark, "aa")
    assert err.value.code == "GGS-SRC-0302"
    assert "Redo thread 1 sequence 2, RBA 0 to its end:" in err.value.message
    assert "block 4 (RBA 2048) holds block 10: the block numbers jump" in err.value.message, (
        err.value.message
    )


def test_group_process_abends_with_the_gap_line() -> None:
    """The group process turns the gap into its abend code and line (no traceback)."""
    from types import SimpleNamespace

    from engine.extract.runner import ExtractRunner
    from engine.runtime.process import ProcessAbend

    class Run:
        def run(self, _stop: object) -> None:
            raise RedoGapError("Redo thread 1: log sequence 2 missing between ...")

        def close(self) -> None:
            pass

    runner = ExtractRunner()
    runner.run_ = Run()  # type: ignore[assignment]
    with pytest.raises(ProcessAbend) as err:
        runner.run(SimpleNamespace(stop_requested=threading.Event()))  # type: ignore[arg-type]
    assert (err.value.code, err.value.text) == (
        "OGG-00446",
        "Redo thread 1: log sequence 2 missing between ...",
    )


def test_archived_only_starts_at_the_oldest_archive(
    home: Home, spark: SparkSession, tmp_path: Path
) -> None:
    """A new Extract reading archives only starts at the oldest one there (here sequence 1
    was purged from the destination), not at a sequence 1 it cannot find."""
    dest = tmp_path / "arch"
    root = _source(home, str(dest))
    with Database(root) as db:
        db.switch_log(1)
    (dest / "1_1_1.dbf").unlink()
    (root / "redo").rename(root / "redo.hidden")
    _extract(home, spark, "aa", "TRANLOGOPTIONS ARCHIVEDLOGONLY\n")
    assert _ids(home, "aa") == [str(i) for i in range(13, 49)]


def test_archived_only_without_a_destination_is_one_line(home: Home) -> None:
    from engine.extract.start import ExtractError

    create_database(home.dirdb, "src", threads=1)
    with pytest.raises(ExtractError) as err:
        _extract(home, None, "aa", "TRANLOGOPTIONS ARCHIVEDLOGONLY\n")
    assert err.value.code == "OGG-00446"
    assert err.value.text.startswith("TRANLOGOPTIONS ARCHIVEDLOGONLY needs an archive destination")
