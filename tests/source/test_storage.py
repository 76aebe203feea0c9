"""engine.storage: one API over a local path, file:// and s3:// (a local moto server)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine import storage
from engine.storage import PathMap, StorageError

DATA = bytes(range(256)) * 40


@pytest.fixture(params=["plain", "file", "s3"])
def base(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same tests on each kind of location."""
    if request.param == "plain":
        return str(tmp_path / "arch")
    if request.param == "file":
        return f"file://{tmp_path}/arch"
    s3: str = request.getfixturevalue("s3_server")
    return storage.join(s3, f"{request.node.name.replace('[', '-').rstrip(']')}", "arch")


def test_put_read_list(base: str, tmp_path: Path) -> None:
    src = tmp_path / "src.bin"
    src.write_bytes(DATA)
    loc = storage.join(base, "t1", "000000001.log")
    assert not storage.exists(loc)
    storage.put_file(src, loc)
    assert storage.exists(loc) and storage.size(loc) == len(DATA)
    assert storage.read_range(loc, 300, 10) == DATA[300:310]
    assert storage.read_range(loc, len(DATA) - 4, 100) == DATA[-4:]  # short at the end
    with storage.open_input(loc) as f:
        assert f.size == len(DATA)
        assert f.read_at(0, 512) == DATA[:512]
    storage.put_file(src, storage.join(base, "t2", "000000007.log"))
    entries = storage.list_files(base, ".log")
    assert [(e.location, e.size) for e in entries] == [
        (storage.join(base, "t1", "000000001.log"), len(DATA)),
        (storage.join(base, "t2", "000000007.log"), len(DATA)),
    ]
    assert storage.list_files(storage.join(base, "none")) == []


def test_missing_file_is_one_line(base: str) -> None:
    with pytest.raises(StorageError) as err:
        storage.read_range(storage.join(base, "nope.log"), 0, 1)
    assert err.value.missing
    assert str(err.value).startswith("GGS-SRC-0600: ") and "\n" not in str(err.value)


def test_local_copy_is_atomic(tmp_path: Path) -> None:
    """The copy is written beside the target and renamed: no partial file under the final
    name, no leftover part file."""
    src = tmp_path / "src.bin"
    src.write_bytes(DATA)
    target = tmp_path / "arch" / "t1" / "000000001.log"
    storage.put_file(src, str(target))
    assert os.listdir(target.parent) == ["000000001.log"]
    assert target.read_bytes() == DATA


def test_credentials_masked(s3_server: str) -> None:
    assert "test:test" in s3_server
    shown = storage.describe(storage.join(s3_server, "x.log"))
    assert "test:test" not in shown and "***@ggsci/x.log" in shown
    with pytest.raises(StorageError) as err:
        storage.size(storage.join(s3_server, "x.log"))
    assert "test:test" not in str(err.value)


def test_hdfs_without_libhdfs_says_so() -> None:
    with pytest.raises(StorageError) as err:
        storage.size("hdfs://namenode:8020/arch/t1/000000001.log")
    text = str(err.value)
    assert "libhdfs" in text and "\n" not in text


def test_path_map() -> None:
    m = PathMap((("/mnt/driver/arch", "/mnt/exec/arch/"),))
    assert m.for_task("/mnt/driver/arch/t1/000000001.log") == "/mnt/exec/arch/t1/000000001.log"
    assert m.for_task("/mnt/driver/archive/x") == "/mnt/driver/archive/x"  # not a prefix dir
    assert m.for_task("s3://b/x") == "s3://b/x"


# -- the archiver and the catalog over it ------------------------------------------------------
def _db(tmp_path: Path, dest: str | None) -> Path:
    from engine.embedded.archiver import set_archive_dest
    from engine.embedded.database import Database, create_database
    from engine.embedded.sql import execute

    root = create_database(tmp_path, "ARC")
    if dest is not None:
        set_archive_dest(root, dest)
    with Database(root) as db:
        s = db.session("s")
        execute(db, s, "CREATE TABLE hr.t (id NUMBER PRIMARY KEY, pad VARCHAR2(900))")
        for i in range(35):
            execute(db, s, f"INSERT INTO hr.t VALUES ({i}, '{'p' * 900}')")
            execute(db, s, "COMMIT")
            if i % 10 == 9:
                db.switch_log(1)
    return root


def test_archiver_copies_each_switched_log(tmp_path: Path) -> None:
    dest = str(tmp_path / "arch")
    root = _db(tmp_path, dest)
    copies = storage.list_files(dest)
    # named by Oracle's default LOG_ARCHIVE_FORMAT, %t_%s_%r.dbf, flat in the destination
    assert [e.location for e in copies] == [f"{dest}/1_{s}_1.dbf" for s in (1, 2, 3)]
    for s, e in zip((1, 2, 3), copies, strict=True):
        local = root / "redo" / "t1" / f"{s:09d}.log"
        assert Path(e.location).read_bytes() == local.read_bytes()
        assert local.with_suffix(".arc").exists()


def test_archiver_retries_after_a_failure(tmp_path: Path) -> None:
    from engine.embedded.archiver import Archiver

    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the destination's directory should be")
    root = _db(tmp_path, str(blocker / "arch"))
    archiver = Archiver.for_database(root)
    assert archiver is not None
    assert [p.name for p, _t, _s in archiver.pending()] == [f"{s:09d}.log" for s in (1, 2, 3)]
    archiver.dest = str(tmp_path / "arch")  # the destination fixed: the next pass copies all
    assert len(archiver()) == 3 and archiver.pending() == []


def test_catalog_reads_archives_and_online_logs(tmp_path: Path) -> None:
    from engine.embedded.catalog import RedoCatalog

    dest = str(tmp_path / "arch")
    root = _db(tmp_path, dest)
    both = RedoCatalog(root / "redo", (dest,)).logs()
    assert [(i.sequence, i.archived, i.local, i.location) for i in both] == [
        (1, True, False, f"{dest}/1_1_1.dbf"),
        (2, True, False, f"{dest}/1_2_1.dbf"),
        (3, True, False, f"{dest}/1_3_1.dbf"),
        (4, False, True, ""),  # the current log: the driver reads it
    ]
    only = RedoCatalog(None, (dest,), PathMap(((dest, "/task/arch"),))).logs()
    assert [i.sequence for i in only] == [1, 2, 3]
    assert only[0].task_location == "/task/arch/1_1_1.dbf"
    plain = RedoCatalog(root / "redo").logs()  # no archive destination: as before
    assert [(i.sequence, i.local, i.location) for i in plain] == [
        (s, False, "") for s in (1, 2, 3, 4)
    ]


class _Pos:
    def __init__(self, sequence: int, offset: int) -> None:
        self.sequence, self.offset = sequence, offset


def test_continuity_breaks_are_named(tmp_path: Path) -> None:
    from engine.embedded.catalog import RedoCatalog, RedoGapError

    root = _db(tmp_path, None)
    catalog = RedoCatalog(root / "redo")
    logs = catalog.for_reading({})
    assert [(i.sequence, i.prev_sequence) for i in logs] == [(1, -1), (2, 1), (3, 2), (4, 3)]
    assert all(i.end == i.size for i in logs)
    with pytest.raises(RedoGapError, match=r"RBA 99999999, is past the end of the log"):
        catalog.for_reading({1: _Pos(2, 99_999_999)})
    t1 = root / "redo" / "t1"
    data = (t1 / "000000003.log").read_bytes()
    (t1 / "000000003.log").write_bytes(data[:-700])
    with pytest.raises(RedoGapError, match=r"sequence 3: the archived log ends at RBA \d+, 700 b"):
        catalog.for_reading({})
    catalog.for_reading({1: _Pos(4, 0)})  # only what the reader still needs is checked
    (t1 / "000000003.log").unlink()
    with pytest.raises(RedoGapError, match="log sequence 3 missing between sequence 2"):
        catalog.for_reading({1: _Pos(1, 600)})
    with pytest.raises(RedoGapError) as err:
        catalog.for_reading({1: _Pos(3, 0)})
    assert err.value.code == "OGG-00446"
    assert str(err.value) == (
        "OGG-00446: Redo thread 1: log sequence 3 (read position RBA 0) is missing; the next "
        "log found is sequence 4"
    )


def test_log_cut_short_while_down_is_archived_as_lost(tmp_path: Path) -> None:
    """The database opens a current log cut below what it recorded as written: it archives
    it as it is (its recorded end kept) and goes on in the next sequence; a reader is told."""
    from engine.embedded.catalog import RedoCatalog, RedoGapError
    from engine.embedded.database import Database
    from engine.embedded.sql import execute

    root = _db(tmp_path, None)
    current = root / "redo" / "t1" / "000000004.log"
    size = current.stat().st_size
    with open(current, "r+b") as fh:
        fh.truncate(size - 3000)
    with Database(root) as db:
        execute(db, db.session("s"), "DELETE FROM hr.t WHERE id = 34")
        execute(db, db.session("s"), "COMMIT")
    logs = RedoCatalog(root / "redo").logs()
    assert [(i.sequence, i.archived, i.end) for i in logs][-2:-1] == [(4, True, size)]
    assert (logs[-1].sequence, logs[-1].archived, logs[-1].prev_sequence) == (5, False, 4)
    with pytest.raises(RedoGapError, match=rf"sequence 4: the archived log ends .* RBA {size} its"):
        RedoCatalog(root / "redo").for_reading({})


def test_db_cli_archive_dest(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ggsci.cli_db import app

    def db(*args: str) -> tuple[int, str]:
        r = CliRunner().invoke(app, [*args, "--home", str(tmp_path / "home")])
        return r.exit_code, r.output

    (tmp_path / "home").mkdir()  # a --home that does not exist is refused (issue 29)
    dest = tmp_path / "arch"
    assert db("create", "src", "--archive-dest", str(dest))[0] == 0
    assert db("archive-dest", "SRC") == (
        0,
        f"LOG_ARCHIVE_DEST: {dest}\nLOG_ARCHIVE_FORMAT: %t_%s_%r.dbf\n",
    )
    assert db("sql", "SRC", "CREATE TABLE t (id NUMBER PRIMARY KEY)")[0] == 0
    assert db("switch-log", "SRC")[0] == 0
    assert [Path(e.location).name for e in storage.list_files(str(dest))] == ["1_1_1.dbf"]
    assert db("archive", "SRC") == (0, "0 log(s) archived.\n")  # nothing left to copy
    code, out = db("archive-dest", "SRC", "hdfs://namenode:8020/arch")
    assert code == 1 and out.startswith("GGS-SRC-0600: hdfs://namenode:8020/arch: hdfs:// needs")
    assert out.count("\n") == 1
    assert db("archive-dest", "SRC", "--none") == (0, "System altered. LOG_ARCHIVE_DEST: (none)\n")
    code, out = db("archive", "SRC")
    assert code == 1 and out == "GGS-SRC-0109: database SRC has no archive destination\n"


def test_first_scn_at_reads_any_storage(tmp_path: Path, s3_server: str) -> None:
    """The RAC merge's look at the SCN where a batch stops works on an archived copy in S3
    as on the local log, for every record boundary and between them."""
    from engine.embedded import logfile
    from engine.redo import scan as redo_scan

    dest = storage.join(s3_server, "first-scn")
    root = _db(tmp_path, dest)
    local = root / "redo" / "t1" / "000000002.log"
    remote = storage.join(dest, "1_2_1.dbf")
    offsets = [o for o, _e, _p in logfile.read_frames(local)]
    for at in [0, *offsets[:3], offsets[1] + 7, offsets[-1], offsets[-1] + 1]:
        want = logfile.first_scn_at(local, at)
        assert redo_scan.first_scn_at(local, at) == want
        assert redo_scan.first_scn_at(remote, at) == want
    assert logfile.first_scn_at(local, offsets[-1] + 1) is None


def test_a_split_on_s3_is_a_few_ranged_reads(
    tmp_path: Path, s3_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A range of an archived log in S3 comes in a handful of ranged GETs (header, a block
    header, the range with its lookahead), not one per block; same frames as locally."""
    from engine.redo import scan as redo_scan

    dest = storage.join(s3_server, "reads")
    root = _db(tmp_path, dest)
    local = root / "redo" / "t1" / "000000002.log"
    remote = storage.join(dest, "1_2_1.dbf")
    reads: list[tuple[int, int]] = []
    real = storage._ArrowInput.read_at

    def counted(self: storage._ArrowInput, offset: int, n: int) -> bytes:
        reads.append((offset, n))
        return real(self, offset, n)

    monkeypatch.setattr(storage._ArrowInput, "read_at", counted)
    size = local.stat().st_size
    for start, end in [(0, None), (size // 3, 2 * size // 3)]:
        reads.clear()
        got = [
            (o, e, bytes(b[lo : lo + n]))
            for o, e, b, lo, n, _s, _t in redo_scan.scan(remote, start, end)
        ]
        want = [
            (o, e, bytes(b[lo : lo + n]))
            for o, e, b, lo, n, _s, _t in redo_scan.scan(local, start, end)
        ]
        assert got == want and got
        assert len(reads) <= 4, reads
