"""Process files in ``dirpcs/``: who runs, with which pid, and in what state.

``dirpcs/<GROUP>.pce`` (Extract), ``.pcr`` (Replicat) and ``MGR.pcm`` (Manager) are small JSON
files written by the process itself (STARTING when it begins, RUNNING once its socket listens,
STOPPED on a clean stop, ABENDED when it fails) and by the Manager (ABENDED after KILL). A file
that says STARTING/RUNNING but whose pid is gone (or is a zombie, or is another process that
reused the pid) means the process died without saying so: that is ABENDED. So the status is
right after a ``kill -9``, a GGSCI restart or a Manager restart.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from engine.home import Home
from engine.jsonfile import read_json, write_json

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
        return ProcessFile.from_json(read_json(path))
    except FileNotFoundError:
        return None
    except (ValueError, KeyError):
        return None


def write_process_file(home: Home, pf: ProcessFile) -> None:
    home.dirpcs.mkdir(parents=True, exist_ok=True)
    write_json(process_file_path(home, pf.kind, pf.name), pf.to_json())


def remove_process_file(home: Home, kind: str, name: str) -> None:
    process_file_path(home, kind, name).unlink(missing_ok=True)
    socket_path(home, kind, name).unlink(missing_ok=True)


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


def status_of(home: Home, kind: str, name: str) -> State:
    return effective_state(read_process_file(home, kind, name))


def is_running(home: Home, kind: str, name: str) -> bool:
    return status_of(home, kind, name) in (State.STARTING, State.RUNNING)
