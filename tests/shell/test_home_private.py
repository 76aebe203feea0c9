"""A home nobody else can read or block (issue 28), tested as another local user
(``nobody``; CI runs as root):

- lock files are created 0600, so no other user may open them at all, and a file an older
  version left 0644 is made 0600 when it is next opened;
- a lock another user took on such an older file (a read lock on ``REP1.pcr.lck`` or
  ``MGR.pcm.lck``, an exclusive one on ``dirdb/SRC/lock`` or ``dirrmt/rt.lock``) is never
  taken for a running group of ours: the group shows as not running, with a warning naming
  the holder, and what cannot take the lock names the user;
- the entry points make every file and directory of a home the owner's alone whatever the
  shell's umask (``GGSCI_UMASK`` opens them on purpose)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from engine.embedded.database import Database, create_database
from engine.embedded.errors import DatabaseError
from engine.home.layout import Home
from engine.home.status import (
    MANAGER,
    LockHeld,
    ProcessLock,
    State,
    foreign_lock,
    lock_holder,
    lock_path,
    status_of,
)
from engine.home.trust import private_umask
from engine.trail.errors import TrailIOError
from engine.trail.writer import TrailWriter

from .conftest import Shell
from .trust_helpers import NOBODY, as_nobody

HOLD = """
fds = []
for path, how in PATHS:
    fd = os.open(path, os.O_RDONLY)
    if how == "ofd-read":
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0))
    else:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fds.append(fd)
print("held", flush=True)
time.sleep(120)
"""


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def home(root_home: Home) -> Home:
    return root_home


def test_lock_files_are_created_for_the_owner_alone(home: Home) -> None:
    lock = ProcessLock.acquire(home, "REPLICAT", "REP1")
    root = create_database(home.dirdb, "src")
    writer = TrailWriter.open(home.root / "dirrmt" / "rt", durable=False)
    try:
        with Database(root):
            paths = [
                lock_path(home, "REPLICAT", "REP1"),
                root / "lock",
                home.root / "dirrmt" / "rt.lock",
            ]
            assert [mode(p) for p in paths] == [0o600] * 3
            out = as_nobody(
                "",
                f"for p in {[str(p) for p in paths]!r}:\n"
                "    try:\n"
                "        os.open(p, os.O_RDONLY)\n"
                "        print('opened', p)\n"
                "    except PermissionError:\n"
                "        print('refused')\n",
            )
            assert out.stdout.split() == ["refused"] * 3, out
    finally:
        writer.close()
        lock.release()


def test_an_older_wide_lock_file_is_made_the_owners_alone(home: Home) -> None:
    path = lock_path(home, "REPLICAT", "REP1")
    path.write_text("")
    path.chmod(0o644)
    ProcessLock.acquire(home, "REPLICAT", "REP1").release()
    assert mode(path) == 0o600


def test_a_lock_of_another_user_is_named_never_taken_for_ours(home: Home) -> None:
    shell = Shell(home)
    assert shell.run("ADD REPLICAT rep1, EXTTRAIL ./dirrmt/rt") == "REPLICAT added.\n"
    root = create_database(home.dirdb, "src")
    (home.root / "dirrmt").mkdir(exist_ok=True)
    rt_lock = home.root / "dirrmt" / "rt.lock"
    targets = [
        (lock_path(home, "REPLICAT", "REP1"), "ofd-read"),
        (lock_path(home, MANAGER, MANAGER), "ofd-read"),
        (root / "lock", "flock"),
        (rt_lock, "flock"),
    ]
    for path, _ in targets:  # as an older version left them: readable by every user
        path.touch()
        path.chmod(0o644)
    for d in (home.dirpcs, home.dirdb, root, home.root / "dirrmt"):
        d.chmod(0o755)
    paths = [(str(p), h) for p, h in targets]
    holder = start_as_nobody(f"import fcntl, struct, time\nPATHS = {paths!r}\n", HOLD)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        who = f"process {holder.pid} of user nobody"
        # not a running group of ours
        assert lock_holder(home, "REPLICAT", "REP1") is None
        assert status_of(home, "REPLICAT", "REP1") == State.STOPPED
        assert lock_holder(home, MANAGER, MANAGER) is None
        assert foreign_lock(home, "REPLICAT", "REP1") == who
        out = shell.run("INFO ALL")
        assert "REPLICAT    STOPPED     REP1" in out
        assert f"WARNING: The lock of REPLICAT REP1 is held by {who}, not by a process" in out
        # what needs the lock says who has it
        for kind, name in (("REPLICAT", "REP1"), (MANAGER, MANAGER)):
            with pytest.raises(LockHeld) as exc:
                ProcessLock.acquire(home, kind, name)
            assert f"its lock is held by {who}, not by a process of this home" in str(exc.value)
        with pytest.raises(DatabaseError, match=f"in use by another process \\({who}, not a"):
            Database(root, lock_wait=0)
        with pytest.raises(TrailIOError, match=f"another writer \\({who}, not a process"):
            TrailWriter.open(home.root / "dirrmt" / "rt", durable=False)
        # and every one of those files is now the owner's alone: nobody opens them again
        assert [mode(p) for p, _ in targets] == [0o600] * 4
    finally:
        holder.kill()
        holder.communicate(timeout=10)


def start_as_nobody(imports: str, body: str) -> subprocess.Popen[str]:
    drop = f"os.setgroups([])\nos.setgid({NOBODY})\nos.setuid({NOBODY})\n"
    return subprocess.Popen(
        [sys.executable, "-c", f"import os, sys\n{imports}\n{drop}{body}"],
        stdout=subprocess.PIPE,
        text=True,
        cwd="/",
        env={**os.environ, "HOME": "/nonexistent"},
    )


def test_the_entry_points_make_a_home_private_whatever_the_umask(tmp_path: Path) -> None:
    """ggsci under umask 022 (the usual default): the directories it makes are 0700, the
    files 0600 - the embedded database (its users' scrypt hashes), checkpoints, process
    files, trails, reports, the Extract's temporary files; GGSCI_UMASK=027 opens them to the
    group on purpose (state files stay 0600). The parameter file is the user's own."""
    prm = "EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nTABLE hr.*;\n"
    for env_mask, dirs, files in ((None, 0o700, 0o600), ("027", 0o750, 0o640)):
        root = tmp_path / f"home{env_mask or ''}"
        env = {**os.environ, "GGHOME": str(root)}
        env.pop("GGSCI_UMASK", None)
        if env_mask:
            env["GGSCI_UMASK"] = env_mask
        old = os.umask(0o022)
        try:
            root.mkdir()  # the user makes the home (a missing one is refused), as dirprm's files
            ggsci(env, tmp_path, "run", "CREATE SUBDIRS")
            ggsci(env, tmp_path, "db", "create", "src")
            ggsci(env, tmp_path, "db", "sql", "src", "CREATE TABLE hr.t (id NUMBER PRIMARY KEY)")
            ggsci(env, tmp_path, "db", "sql", "src", "INSERT INTO hr.t VALUES (1)")
            ggsci(env, tmp_path, "run", "ADD EXTRACT ext1, TRANLOG, EXTSEQNO 1, EXTRBA 0",
                  "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1")  # fmt: skip
            (root / "dirprm" / "ext1.prm").write_text(prm)
            if env_mask is None:
                ggsci(env, root, "extract", "paramfile", "dirprm/ext1.prm", "--stop-at-eof")
        finally:
            os.umask(old)
        assert (root / "dirdb" / "SRC").is_dir()
        if env_mask is None:
            assert list((root / "dirdat").glob("lt*")) and (root / "dirchk" / "EXT1.cpe").exists()
        wrong = []
        for path in root.rglob("*"):
            if path.parent.name == "dirprm" and path.is_file():
                continue  # written by the user (here: the test)
            want = dirs if path.is_dir() else files
            if path.is_file() and path.parent.name in ("dirchk", "dirpcs"):
                want = 0o600  # state files: the owner's alone, always
            if mode(path) & ~want:
                wrong.append(f"{path.relative_to(tmp_path)} {mode(path):04o}")
        assert not wrong, wrong


def ggsci(env: dict[str, str], cwd: Path, *argv: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ggsci", *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (argv, done.stdout, done.stderr)


def test_ggsci_umask_never_grants_write_to_others() -> None:
    old = os.umask(0o022)
    try:
        assert private_umask({"GGSCI_UMASK": "000"}) == 0o022
        assert private_umask({}) == 0o077
        assert private_umask({"GGSCI_UMASK": "nonsense"}) == 0o077
    finally:
        os.umask(old)
