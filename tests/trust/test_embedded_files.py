# ruff: noqa: F811  (the tests take the fixture ``home`` imported from test_attached_private)
"""An embedded database's files, one by one (engine/embedded/ownfiles.py): ``redo/``,
``redo/tN/``, the logs, their ``*.side`` files, the ``*.arc`` marks, ``data.sqlite`` (and a
``-wal`` beside it), ``dictionary.json``, ``archive.json``. Another user's file, a symbolic
link, a FIFO, or a file or directory others may write stops every open (``ggsci db``,
DBLOGIN, the Extract's SOURCEDB) with one line naming it, and nothing is read or changed.
Everything is made 0600 / 0700 whatever the umask, so another user reads none of it.

CI runs as root: "another user" is ``nobody`` (uid 65534)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.embedded.archiver import ArchiveParams
from engine.embedded.database import create_database, open_database
from engine.extract.start import ExtractError, source_root
from engine.home.layout import Home
from params.check import check_text
from tests.shell.conftest import Shell
from tests.shell.trust_helpers import NOBODY, as_nobody
from tests.trust.test_attached_private import _db, _one_line, home  # noqa: F401 (its fixture)


def _make(home: Home) -> Path:
    """Database SRC: 2 threads, a table with a row, one switch (archived to a local
    destination: archive.json, the .arc marks)."""
    assert (
        _db(home, "create", "src", "--threads", "2", "--archive-dest", str(home.root / "a"))[0] == 0
    )
    code, out = _db(
        home, "sql", "src", "CREATE TABLE hr.t (id NUMBER PRIMARY KEY); INSERT INTO hr.t VALUES (1)"
    )
    assert code == 0, out
    assert _db(home, "switch-log", "src")[0] == 0
    root = home.dirdb / "SRC"
    assert (root / "redo" / "t1" / "000000001.arc").exists()
    return root


def _plant_copy(src: Path, dst: Path) -> None:
    shutil.copy(src, dst)
    os.chown(dst, NOBODY, NOBODY)


def _link(target: Path, at: Path, uid: int) -> None:
    at.unlink(missing_ok=True)
    at.symlink_to(target)
    os.lchown(at, uid, uid)


#: (what is done to the database at root, the file the line names, the reason it gives)
CASES: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "a log planted by another user": (
        lambda r: _plant_copy(r / "redo/t1/000000002.log", r / "redo/t1/000000009.log"),
        "Database file dirdb/SRC/redo/t1/000000009.log",
        "is owned by nobody, not by the home's owner root",
    ),
    "a side file planted by another user": (
        lambda r: _plant_copy(r / "redo/t2/000000002.side", r / "redo/t2/000000003.side"),
        "Database file dirdb/SRC/redo/t2/000000003.side",
        "is owned by nobody",
    ),
    "data.sqlite another user's": (
        lambda r: os.chown(r / "data.sqlite", NOBODY, NOBODY),
        "Database file dirdb/SRC/data.sqlite",
        "is owned by nobody",
    ),
    "a WAL planted beside data.sqlite": (
        lambda r: _plant_copy(r / "data.sqlite", r / "data.sqlite-wal"),
        "Database file dirdb/SRC/data.sqlite-wal",
        "is owned by nobody",
    ),
    "archive.json a link of another user": (
        lambda r: _link(Path("/tmp/nowhere.json"), r / "archive.json", NOBODY),
        "Database file dirdb/SRC/archive.json",
        "is a symbolic link of nobody; it is not followed",
    ),
    "an .arc mark the owner linked": (
        lambda r: _link(r / "lock", r / "redo/t1/000000001.arc", 0),
        "Database file dirdb/SRC/redo/t1/000000001.arc",
        "is a symbolic link of root; it is not followed",
    ),
    "dictionary.json writable by all": (
        lambda r: (r / "dictionary.json").chmod(0o666),
        "Database file dirdb/SRC/dictionary.json",
        "is writable by others (mode 0666)",
    ),
    "a side file writable by the group": (
        lambda r: (r / "redo/t1/000000001.side").chmod(0o620),
        "Database file dirdb/SRC/redo/t1/000000001.side",
        "is writable by others (mode 0620)",
    ),
    "redo/t2 writable by all": (
        lambda r: (r / "redo/t2").chmod(0o777),
        "Database directory dirdb/SRC/redo/t2",
        "is writable by others (mode 0777)",
    ),
    "a directory of another user in the database": (
        lambda r: (os.mkdir(r / "x"), os.chown(r / "x", NOBODY, NOBODY)),
        "Database directory dirdb/SRC/x",
        "is owned by nobody",
    ),
    "redo another user's": (
        lambda r: os.chown(r / "redo", NOBODY, NOBODY),
        "Database directory dirdb/SRC/redo",
        "is owned by nobody",
    ),
}


def _snapshot(root: Path) -> dict[str, tuple[int, int, bytes]]:
    out = {}
    for d, _dirs, files in os.walk(root):
        for f in files:
            p = Path(d, f)
            st = p.lstat()
            body = p.read_bytes() if stat.S_ISREG(st.st_mode) else b""
            out[str(p)] = (st.st_mode, st.st_uid, body)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_open_refuses_a_file_not_the_owners(home: Home, case: str) -> None:
    root = _make(home)
    do, names, reason = CASES[case]
    do(root)
    before = _snapshot(root)
    for args in (
        ("sql", "src", "SELECT id FROM hr.t"),
        ("logs", "src"),
        ("dump", "src"),
        ("show", "src"),
        ("switch-log", "src"),
    ):
        code, out = _db(home, *args)
        line = _one_line(out)
        assert code == 1 and line.startswith(f"GGS-SRC-0111: {names} "), (args, out)
        assert reason in line, (args, line)
    assert _snapshot(root) == before  # nothing read into, nothing written
    out = Shell(home).run("DBLOGIN USERID ggadmin@src, PASSWORD ggadmin")
    assert out.startswith(f"ERROR: Unable to log in: GGS-SRC-0111: {names} "), out
    with pytest.raises(ExtractError) as e:
        source_root(home, check_text("EXTRACT e1\nSOURCEDB src\n").model)
    assert e.value.code == "OGG-00664" and names in str(e.value) and reason in str(e.value)


def test_a_fifo_among_the_logs_is_refused_not_waited_on(home: Home) -> None:
    """Before: the open read the newest log of each thread to check its format, and a FIFO
    named like one hung every ``ggsci db`` command (a child process here, so a hang fails)."""
    root = _make(home)
    os.mkfifo(root / "redo" / "t1" / "000000009.log", 0o600)
    r = subprocess.run(
        [sys.executable, "-c", "from ggsci.cli import main; main()", "db", "logs", "src",
         "--home", str(home.root)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    line = _one_line(r.stdout + r.stderr)
    assert r.returncode == 1 and line == (
        "GGS-SRC-0111: Database file dirdb/SRC/redo/t1/000000009.log is not a regular file; "
        "it is not used."
    ), line


def test_the_owners_own_link_to_a_redo_directory_is_followed(home: Home) -> None:
    """Logs moved to another disk by the owner, linked back: the database opens."""
    root = _make(home)
    elsewhere = home.root.parent / "t2-elsewhere"
    shutil.move(root / "redo" / "t2", elsewhere)
    (root / "redo" / "t2").symlink_to(elsewhere)
    code, out = _db(home, "logs", "src")
    assert code == 0 and len(out.strip().splitlines()) == 4, out


def test_files_are_private_whatever_the_umask(home: Home) -> None:
    """Under umask 000 (an embedding program's), every file is 0600 and every directory
    0700: another user reads nothing, not the users' password hashes in data.sqlite."""
    old = os.umask(0)
    try:
        home.dirdb.chmod(0o755)  # let nobody as far as the database, to meet its modes
        root = create_database(home.dirdb, "src", 2, archive=ArchiveParams(str(home.root / "a")))
        with open_database(home.dirdb, "src") as db:
            s = db.session("S1")
            from engine.embedded.sql import run_script

            list(run_script(db, s, "CREATE TABLE hr.t (id NUMBER PRIMARY KEY)"))
            list(run_script(db, s, "INSERT INTO hr.t VALUES (1)"))
            s.commit(db)
            db.checkpoint()
            db.switch_log()
    finally:
        os.umask(old)
    paths = sorted(p for p in root.rglob("*"))
    assert any(p.suffix == ".side" for p in paths) and any(p.suffix == ".arc" for p in paths)
    for p in [root, *paths]:
        want = 0o700 if p.is_dir() else 0o600
        assert stat.S_IMODE(p.lstat().st_mode) == want, (p, oct(p.lstat().st_mode))
    files = [str(p) for p in paths if p.is_file()] + [str(root / "redo" / "t1")]
    body = (
        f"for p in {files!r}:\n"
        "    try:\n"
        "        (os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read(1))\n"
        "        print('READ', p)\n"
        "    except PermissionError:\n"
        "        print('DENIED')\n"
    )
    r = as_nobody("", body)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["DENIED"] * len(files), r.stdout
