"""Process files in ``dirpcs/``: who runs, with which pid, and in what state.

``dirpcs/<GROUP>.pce`` (Extract), ``.pcr`` (Replicat) and ``MGR.pcm`` (Manager) are small JSON
files written by the process itself (STARTING when it begins, RUNNING once its socket listens,
STOPPED on a clean stop, ABENDED when it fails) and by the Manager (ABENDED after KILL). A file
that says STARTING/RUNNING but whose pid is gone (or is a zombie, or is another process that
reused the pid) means the process died without saying so: that is ABENDED. So the status is
right after a ``kill -9``, a GGSCI restart or a Manager restart.

The process file is not the guard against two instances: every process (Extract, pump,
Replicat, Manager) holds an exclusive lock on ``dirpcs/<file>.lck`` for its whole life
(:class:`ProcessLock`, an open-file-description lock the kernel drops when the process dies,
however it dies). A second instance cannot take it and stops with OGG-01454; GGSCI and the
Manager read the lock (:func:`process_state`): a held lock means RUNNING even when the process
file is missing, corrupt or stale.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import struct
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from engine.home.jsonfile import read_json, write_json
from engine.home.layout import Home
from engine.home.lockfile import foreign_holder, open_lock_file

MANAGER = "MANAGER"
SUFFIXES = {"EXTRACT": ".pce", "REPLICAT": ".pcr", MANAGER: ".pcm"}


class State(StrEnum):
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    STOPPED = "STOPPED"
    ABENDED = "ABENDED"


@dataclass(frozen=True)
class ProcessFile:
    """The content of a process file; ``ticks`` is the pid's start time to detect pid reuse."""

    kind: str
    name: str
    pid: int
    state: State
    started: str
    ticks: int | None = None
    socket: str | None = None
    port: int | None = None
    stopped: str | None = None
    killed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "pid": self.pid,
            "state": self.state.value,
            "started": self.started,
            "ticks": self.ticks,
            "socket": self.socket,
            "port": self.port,
            "stopped": self.stopped,
            "killed": self.killed,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProcessFile:
        return cls(
            kind=str(data["kind"]),
            name=str(data["name"]),
            pid=int(data["pid"]),
            state=State(data["state"]),
            started=str(data["started"]),
            ticks=data.get("ticks"),
            socket=data.get("socket"),
            port=data.get("port"),
            stopped=data.get("stopped"),
            killed=bool(data.get("killed", False)),
        )

    def with_state(
        self, state: State, stopped: str | None = None, killed: bool = False
    ) -> ProcessFile:
        return replace(self, state=state, stopped=stopped, killed=killed)


def process_file_path(home: Home, kind: str, name: str) -> Path:
    stem = "MGR" if kind == MANAGER else name.upper()
    return home.dirpcs / f"{stem}{SUFFIXES[kind]}"


def socket_path(home: Home, kind: str, name: str) -> Path:
    stem = "MGR" if kind == MANAGER else name.upper()
    return home.dirpcs / f"{stem}{SUFFIXES[kind]}.sock"


def read_process_file(home: Home, kind: str, name: str) -> ProcessFile | None:
    path = process_file_path(home, kind, name)
    try:
        return ProcessFile.from_json(read_json(path, sealed=True, max_bytes=1 << 16))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None  # missing, unreadable or corrupt: no process file (the lock still tells)


def write_process_file(home: Home, pf: ProcessFile) -> None:
    home.dirpcs.mkdir(parents=True, exist_ok=True)
    write_json(process_file_path(home, pf.kind, pf.name), pf.to_json())


def remove_process_file(home: Home, kind: str, name: str) -> None:
    """Remove the process file, socket and (when nobody holds it) lock file of a group."""
    process_file_path(home, kind, name).unlink(missing_ok=True)
    socket_path(home, kind, name).unlink(missing_ok=True)
    if lock_holder(home, kind, name) is None:
        lock_path(home, kind, name).unlink(missing_ok=True)


# -- the instance lock ---------------------------------------------------------------------

#: ``struct flock`` (Linux): l_type, l_whence, l_start, l_len, l_pid, with native alignment.
_FLOCK = "hhqqi"
_PID_WIDTH = 10


def lock_path(home: Home, kind: str, name: str) -> Path:
    return process_file_path(home, kind, name).with_name(
        process_file_path(home, kind, name).name + ".lck"
    )


class LockHeld(OSError):
    """Another process holds the lock; ``pid`` is its pid when it wrote one (else 0)."""

    def __init__(self, path: Path, pid: int, what: str = "", foreign: str | None = None) -> None:
        # OGG-01454's text, naming the group (``what``) rather than the lock's file: the
        # messages a user reads never name the home's internal files
        held = f" Lock currently held by process id (PID) {pid}." if pid else ""
        why = f"it runs in another process.{held}"
        if foreign is not None:
            why = (
                f"its lock is held by {foreign}, not by a process of this home; that process "
                "must let go (the lock file is now the owner's alone, 0600)."
            )
        super().__init__(
            errno.EAGAIN,
            f"Unable to lock {what or path.name} (error {errno.EAGAIN}, "
            f"{os.strerror(errno.EAGAIN)}): {why}",
        )
        self.path = path
        self.pid = pid
        self.foreign = foreign


def _ofd(fd: int, command: int, kind: int) -> int:
    """Run an open-file-description lock command on the whole file; the resulting l_type."""
    out = fcntl.fcntl(fd, command, struct.pack(_FLOCK, kind, os.SEEK_SET, 0, 0, 0))
    return int(struct.unpack(_FLOCK, out[: struct.calcsize(_FLOCK)])[0])


def _holder_pid(path: Path) -> int:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


class ProcessLock:
    """The exclusive lock one process holds on its ``.lck`` file for its whole life.

    An OFD lock (``F_OFD_SETLK``): owned by this open file, not shared with children (the fd is
    not inherited), dropped by the kernel when the process ends, and testable by others without
    taking it (``F_OFD_GETLK``), so a status check never makes a concurrent start fail.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, home: Home, kind: str, name: str) -> ProcessLock:
        """Take the lock or raise :class:`LockHeld`; the file then holds our pid."""
        home.dirpcs.mkdir(parents=True, exist_ok=True)
        path = lock_path(home, kind, name)
        fd = open_lock_file(path)
        try:
            _ofd(fd, fcntl.F_OFD_SETLK, fcntl.F_WRLCK)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                what = "MANAGER" if kind == MANAGER else f"{kind} {name.upper()}"
                foreign = foreign_holder(path)
                raise LockHeld(path, 0 if foreign else _holder_pid(path), what, foreign) from None
            raise
        # One fixed-width write: a reader never sees an empty or half-written pid.
        os.pwrite(fd, f"{os.getpid():>{_PID_WIDTH}}\n".encode(), 0)
        os.ftruncate(fd, _PID_WIDTH + 1)
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def lock_holder(home: Home, kind: str, name: str) -> int | None:
    """``None`` when no process of this home holds the lock, else the holder's pid (0 when
    unknown). Our processes take write locks; a read lock is another user's (taken on a file
    an older version left readable), never a running group of ours (:func:`foreign_lock`)."""
    path = lock_path(home, kind, name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if _ofd(fd, fcntl.F_OFD_GETLK, fcntl.F_WRLCK) != fcntl.F_WRLCK:
            return None
    except OSError:
        return None
    finally:
        os.close(fd)
    return _holder_pid(path)


def foreign_lock(home: Home, kind: str, name: str) -> str | None:
    """Who holds the group's lock when it is not a process of this home (see
    :func:`engine.home.lockfile.foreign_holder`); None when the lock is free or ours."""
    path = lock_path(home, kind, name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        held = _ofd(fd, fcntl.F_OFD_GETLK, fcntl.F_WRLCK)
    except OSError:
        return None
    finally:
        os.close(fd)
    if held == fcntl.F_UNLCK:
        return None
    if held != fcntl.F_RDLCK:
        return None
    return foreign_holder(path) or "a process that is not of this home"


def start_ticks(pid: int) -> int | None:
    """The process start time in clock ticks since boot (``/proc/<pid>/stat`` field 22)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[19])


def pid_alive(pid: int, ticks: int | None = None) -> bool:
    """Whether ``pid`` is a live (non-zombie) process, the same one when ``ticks`` is given."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        after = stat[stat.rindex(")") + 2 :].split()
        if after[0] in ("Z", "X"):
            return False
        if ticks is not None and int(after[19]) != ticks:
            return False
    return True


def effective_state(pf: ProcessFile | None) -> State:
    """The state to show: the file's word, unless a live-looking process is actually gone."""
    if pf is None:
        return State.STOPPED
    if pf.state in (State.STARTING, State.RUNNING) and not pid_alive(pf.pid, pf.ticks):
        return State.ABENDED
    return pf.state


def process_state(home: Home, kind: str, name: str) -> tuple[ProcessFile | None, State]:
    """The process file (if readable) and the state to show, the lock first: a held lock is a
    live process, RUNNING whatever the process file says, unless the file is the holder's own
    (same pid: its STARTING, or the state it is exiting with, STOPPED or ABENDED, as a process
    writes its last state before the kernel drops its lock) or a STARTING of a live process
    (one the Manager has just started, which may not have written its pid yet)."""
    pf = read_process_file(home, kind, name)
    holder = lock_holder(home, kind, name)
    if holder is not None:
        if pf is not None and (
            pf.pid == holder or (pf.state == State.STARTING and pid_alive(pf.pid, pf.ticks))
        ):
            return pf, pf.state
        return pf, State.RUNNING
    return pf, effective_state(pf)


def status_of(home: Home, kind: str, name: str) -> State:
    return process_state(home, kind, name)[1]
