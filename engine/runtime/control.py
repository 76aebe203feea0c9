"""Client side of process control, used by GGSCI: start/stop the Manager, talk to processes.

Nothing here imports pyspark or the engines; it only spawns ``python -m engine.manager.main``
(fully detached through ``python -m engine.runtime.daemon``) and sends requests over the
sockets in ``dirpcs/``.
Waits poll the process files with a timeout; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.home.layout import Home
from engine.home.status import (
    MANAGER,
    ProcessFile,
    State,
    lock_holder,
    process_state,
    read_process_file,
    socket_path,
)
from engine.runtime.events import MANAGER_COMPONENT
from engine.runtime.ipc import IpcError, Reply, send_request

START_TIMEOUT = 15.0
POLL = 0.02


class ControlError(RuntimeError):
    """A process-control request that could not be carried out; the message is one line."""


@dataclass(frozen=True)
class ManagerInfo:
    pid: int
    port: int | None
    state: State


def manager_info(home: Home) -> ManagerInfo | None:
    """The running Manager of ``home``, or ``None`` when it is down (its lock is free and its
    process file does not show a live process)."""
    pf, state = process_state(home, MANAGER, MANAGER)
    if state != State.RUNNING:
        return None
    if pf is None or pf.state != State.RUNNING:
        return ManagerInfo(lock_holder(home, MANAGER, MANAGER) or 0, None, State.RUNNING)
    return ManagerInfo(pf.pid, pf.port, State.RUNNING)


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll ``predicate`` until true or ``timeout`` seconds passed; return the last result."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)


def start_manager(
    home: Home, timeout: float = START_TIMEOUT, launcher: Sequence[str] = ()
) -> ManagerInfo:
    """Start the Manager daemon and wait until it listens; raises ControlError otherwise.
    ``launcher``: a command the daemon runs under (``ip netns exec NAME``: the tests put a
    home in a network namespace of its own, as on another host)."""
    if manager_info(home) is not None:
        raise ControlError("Manager is already running.")
    if not wait_for(lambda: lock_holder(home, MANAGER, MANAGER) is None, timeout):
        raise ControlError("Manager is still stopping; try again.")  # wrote its state, ending
    before = read_process_file(home, MANAGER, MANAGER)
    try:
        log_size = home.ggserr_log.stat().st_size
    except OSError:
        log_size = 0
    home.dirpcs.mkdir(parents=True, exist_ok=True)
    out = home.sub("dirout")
    out.mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "engine.manager.main", "--home", str(home.root)]
    subprocess.run(
        [*launcher, sys.executable, "-m", "engine.runtime.daemon", str(out / "MGR.out"), *cmd],
        cwd=home.root,
        check=True,
        stdin=subprocess.DEVNULL,
    )

    def settled() -> bool:
        pf = read_process_file(home, MANAGER, MANAGER)
        if pf is None or pf == before:
            return False
        return process_state(home, MANAGER, MANAGER)[1] in (
            State.RUNNING,
            State.ABENDED,
            State.STOPPED,
        )

    wait_for(settled, timeout)
    info = manager_info(home)
    if info is None:
        why = _manager_errors(home, log_size)
        if why:
            raise ControlError("Manager failed to start:\n" + "\n".join(why))
        raise ControlError("Manager failed to start; see VIEW GGSEVT.")
    return info


def _manager_errors(home: Home, since: int) -> list[str]:
    """The Manager's ERROR lines written to ggserr.log after byte ``since`` (why it did not
    start), as they stand in the log."""
    try:
        with home.ggserr_log.open("rb") as log:
            log.seek(since)
            text = log.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return []
    return [ln for ln in text.splitlines() if "  ERROR   " in ln and MANAGER_COMPONENT in ln]


def manager_request(home: Home, text: str, timeout: float = 30.0) -> Reply:
    if manager_info(home) is None:
        raise ControlError("Manager not currently running.")
    try:
        return send_request(socket_path(home, MANAGER, MANAGER), text, timeout)
    except IpcError as exc:  # the reason, never the socket's file name
        why = exc.__cause__.strerror if isinstance(exc.__cause__, OSError) else None
        raise ControlError(
            f"Manager does not answer{f' ({why})' if why else ''}; see VIEW GGSEVT."
        ) from exc


def stop_manager(home: Home, timeout: float = START_TIMEOUT) -> Reply:
    reply = manager_request(home, "STOP")
    wait_for(lambda: manager_info(home) is None, timeout)
    return reply


def group_process(home: Home, kind: str, name: str) -> ProcessFile | None:
    """The group's process file when the process is starting or running (one with the pid of
    the lock's holder when a running process lost its process file)."""
    pf, state = process_state(home, kind, name)
    if state not in (State.STARTING, State.RUNNING):
        return None
    if pf is None or pf.state not in (State.STARTING, State.RUNNING):
        return ProcessFile(kind, name, lock_holder(home, kind, name) or 0, state, "")
    return pf


def group_request(home: Home, kind: str, name: str, text: str, timeout: float = 30.0) -> Reply:
    """Send ``text`` to a running group; ControlError when it is not running."""
    if group_process(home, kind, name) is None:
        raise ControlError(f"{kind} {name} not currently running.")
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            return send_request(socket_path(home, kind, name), text, timeout)
        except IpcError as exc:
            pf = group_process(home, kind, name)
            if pf is None:
                raise ControlError(f"{kind} {name} not currently running.") from exc
            # A process just started opens its socket in its first second: wait for it.
            if pf.state != State.STARTING or time.monotonic() >= deadline:
                why = exc.__cause__.strerror if isinstance(exc.__cause__, OSError) else None
                raise ControlError(
                    f"{kind} {name} is {pf.state.value.lower()} but does not answer"
                    f"{f' ({why})' if why else ''}; see VIEW REPORT {name}."
                ) from exc
            time.sleep(POLL)


def wait_for_state(home: Home, kind: str, name: str, states: set[State], timeout: float) -> State:
    """Poll the group's state until it is one of ``states``; return the last state seen."""
    last = [State.STOPPED]

    def check() -> bool:
        last[0] = process_state(home, kind, name)[1]
        return last[0] in states

    wait_for(check, timeout)
    return last[0]
