"""The Manager daemon: ``python -m engine.manager.main --home DIR`` (started by ``START MANAGER``).

One per home. It owns ``dirpcs/MGR.pcm`` and the socket ``dirpcs/MGR.pcm.sock`` (mode 0600),
listens on mgr.prm's PORT (localhost, same JSON protocol), and answers START / KILL of groups,
CHILDSTATUS, GETPORTINFO, GETPURGEOLDEXTRACTS and STOP. Every ``poll`` seconds it reaps its
children, restarts groups that abended while it watched (AUTORESTART, with RETRIES within
RESETMINUTES, after WAITMINUTES), every CHECKMINUTES it applies PURGEOLDEXTRACTS, and it runs
the heartbeat update and purge jobs that are due (:mod:`engine.heartbeat.schedule`: our
databases have no scheduler of their own, or only a small one). At start it starts the
AUTOSTART groups. Stopping the Manager leaves running groups running, as in GoldenGate.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from engine.heartbeat.schedule import HeartbeatSchedule
from engine.home.groups import GroupKind, GroupStore
from engine.home.layout import Home
from engine.home.names import InvalidGroupName, check_group_name
from engine.home.status import (
    MANAGER,
    LockHeld,
    ProcessFile,
    ProcessLock,
    State,
    lock_holder,
    process_state,
    read_process_file,
    socket_path,
    start_ticks,
    write_process_file,
)
from engine.home.trust import BadFile, NotHomeOwner, check_home_owner, private_umask
from engine.manager.access import AccessPolicy
from engine.manager.params import (
    DEFAULT_PORT,
    ManagerParamError,
    ManagerParams,
    check_manager_params,
)
from engine.manager.purge import purge_candidates
from engine.manager.watch import ManagerWatch
from engine.runtime import paraminfo
from engine.runtime.events import MANAGER_COMPONENT, Clock, Event, Severity, log_event
from engine.runtime.ipc import HandlerTable, IpcServer, Reply, Request, TcpListener

POLL_SECONDS = 0.2
LISTEN_ADDRESS = "0.0.0.0"
"""The Manager's PORT is open on every IPv4 address of the host (pumps of other hosts ask it
for Collectors); its ACCESSRULEs refuse every request no rule allows."""
KILL_WAIT_SECONDS = 5.0
KINDS = {"EXTRACT": GroupKind.EXTRACT, "REPLICAT": GroupKind.REPLICAT}


START_OPTIONS = ("ATCSN", "AFTERCSN")


def group_command(home: Home, kind: str, name: str, options: tuple[str, ...] = ()) -> list[str]:
    """The command line of a group process (the runner entry point); ``options`` are START's
    ``ATCSN n`` / ``AFTERCSN n``, passed on as ``--atcsn n`` / ``--aftercsn n``."""
    argv = [sys.executable, "-m", "engine.runtime.process", kind, name, "--home", str(home.root)]
    for word, value in zip(options[::2], options[1::2], strict=True):
        argv += [f"--{word.lower()}", value]
    return argv


@dataclass
class _Restarts:
    times: list[float] = field(default_factory=list)
    due: float | None = None


def _statements(path: Path) -> tuple[str, ...]:
    """mgr.prm's statements (no comments, no blank lines); ``("PORT 7809",)`` without one."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return (f"PORT {DEFAULT_PORT}",)
    kept = (ln.strip() for ln in lines)
    return tuple(ln for ln in kept if ln and not ln.startswith("--")) or ("-- (empty)",)


class Manager:
    """The daemon's state; :meth:`serve` runs until STOP or SIGTERM."""

    def __init__(
        self,
        home: Home,
        params: ManagerParams,
        clock: Clock = datetime.now,
        poll: float = POLL_SECONDS,
    ) -> None:
        self.home = home
        self.params = params
        self.clock = clock
        self.poll = poll
        self.stop_event = threading.Event()
        self.children: dict[tuple[str, str], subprocess.Popen[bytes]] = {}
        self.lock = threading.Lock()
        self.last_state: dict[tuple[str, str], State] = {}
        self.restarts: dict[tuple[str, str], _Restarts] = {}
        self.port = params.port
        self.table = HandlerTable()
        self.table.add("START", self._start_request)
        self.table.add("KILL", self._kill_request)
        self.table.add("STOP", self._stop_request)
        self.table.add("CHILDSTATUS", self._childstatus)
        self.table.add("GETPORTINFO", self._portinfo)
        self.table.add("GETPURGEOLDEXTRACTS", self._purgeinfo)
        self.table.add("COLLECTOR", self._collector)
        self.collectors: list[subprocess.Popen[bytes]] = []
        self.table.add("STATUS", lambda _: Reply(("Manager is running.",)))
        read = _statements(home.dirprm / "mgr.prm")  # as read at start-up, for GETPARAMINFO
        self.table.add("GETPARAMINFO", paraminfo.handler("MANAGER", "dirprm/mgr.prm", lambda: read))
        self.heartbeats = HeartbeatSchedule(home, self.event)
        self.watches = ManagerWatch(home, params, self.event, clock)

    def event(self, code: str, severity: Severity, text: str) -> None:
        log_event(
            self.home.ggserr_log,
            Event(code, severity, text, MANAGER_COMPONENT, "mgr.prm"),
            self.clock,
        )

    # -- requests --------------------------------------------------------------------------
    def _group_of(self, request: Request) -> tuple[str, str] | Reply:
        if len(request.args) < 2 or request.args[0].upper() not in KINDS:
            return Reply.error("ERROR: expected EXTRACT|REPLICAT and a group name.")
        try:
            return request.args[0].upper(), check_group_name(request.args[1])
        except InvalidGroupName as exc:
            return Reply.error(f"ERROR: {exc}")

    def _start_request(self, request: Request) -> Reply:
        target = self._group_of(request)
        if isinstance(target, Reply):
            return target
        self.event(
            "OGG-00963",
            Severity.INFO,
            f"Command received from GGSCI on host "
            f"{os.uname().nodename} (START {target[0]} {target[1]} ).",
        )
        options = request.args[2:]
        if len(options) % 2 or any(w.upper() not in START_OPTIONS for w in options[::2]):
            return Reply.error("ERROR: START takes only ATCSN n or AFTERCSN n.")
        return self.start_group(*target, options=tuple(options))

    def start_group(self, kind: str, name: str, options: tuple[str, ...] = ()) -> Reply:
        try:
            group = GroupStore(self.home).get(name)
        except BadFile as exc:
            return Reply.error(f"ERROR: {exc}")
        if group is None or group.kind != kind:
            return Reply.error(f"ERROR: {kind} {name} does not exist.")
        with self.lock:
            pf, state = process_state(self.home, kind, name)
            if state in (State.STARTING, State.RUNNING) or not self._lock_released(kind, name):
                return Reply.error(f"ERROR: {kind} {name} is already running.")
            self.home.sub("dirout").mkdir(exist_ok=True)
            with (self.home.sub("dirout") / f"{name}.out").open("ab") as out:
                child = subprocess.Popen(
                    group_command(self.home, kind, name, options),
                    cwd=self.home.root,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            self.children[(kind, name)] = child
            pf, _ = process_state(self.home, kind, name)
            if pf is None or pf.pid != child.pid:
                write_process_file(
                    self.home,
                    ProcessFile(
                        kind,
                        name,
                        child.pid,
                        State.STARTING,
                        self.clock().isoformat(" ", "seconds"),
                        ticks=start_ticks(child.pid),
                        socket=str(socket_path(self.home, kind, name)),
                    ),
                )
            self.last_state[(kind, name)] = State.STARTING
        self.watches.started(kind, name, _monotonic())
        self.event("OGG-00975", Severity.INFO, f"{kind} {name} starting.")
        return Reply((f"{kind} {name} starting",))

    def _lock_released(self, kind: str, name: str) -> bool:
        """Whether the group's lock is free, waiting a little for a process that has written
        its last state (STOPPED, ABENDED) and is ending."""
        deadline = _monotonic() + KILL_WAIT_SECONDS
        while lock_holder(self.home, kind, name) is not None:
            if _monotonic() >= deadline:
                return False
            self.stop_event.wait(0.01)
        return True

    def _kill_request(self, request: Request) -> Reply:
        target = self._group_of(request)
        if isinstance(target, Reply):
            return target
        kind, name = target
        with self.lock:
            pf, state = process_state(self.home, kind, name)
            if state not in (State.STARTING, State.RUNNING):
                return Reply.error(f"ERROR: {kind} {name} is not running.")
            holder = lock_holder(self.home, kind, name)
            pid = holder or (pf.pid if pf is not None else 0)
            if pid <= 0:
                return Reply.error(f"ERROR: {kind} {name} runs, but its process id is unknown.")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            child = self.children.pop((kind, name), None)
            if child is not None:
                child.wait()
            self._lock_released(kind, name)  # the kernel drops the lock as the process ends
            if pf is None or pf.pid != pid:
                pf = ProcessFile(kind, name, pid, State.RUNNING, "")
            write_process_file(
                self.home,
                pf.with_state(
                    State.ABENDED, stopped=self.clock().isoformat(" ", "seconds"), killed=True
                ),
            )
            self.last_state[(kind, name)] = State.ABENDED
        self.event("OGG-01666", Severity.WARNING, f"{kind} {name} killed (process {pid}).")
        return Reply((f"Killed process ({pid}) for {kind} {name}",))

    def _stop_request(self, _: Request) -> Reply:
        self.stop_event.set()
        return Reply(("Request processed.", "Manager stopped."))

    def _childstatus(self, _: Request) -> Reply:
        """GoldenGate's table: one row per group process, its AUTORESTART retries."""
        rows: list[str] = []
        groups, bad = GroupStore(self.home).scan()
        for group in groups:
            pf, state = process_state(self.home, group.kind, group.name)
            if pf is None:
                continue
            info = self.restarts.get((group.kind, group.name))
            retries = len(info.times) if info else 0
            last = "None"
            if info and info.times:  # restart times are monotonic seconds
                ago = timedelta(seconds=_monotonic() - info.times[-1])
                last = f"{self.clock() - ago:%Y/%m/%d %H:%M:%S}"
            started = pf.started.replace("-", "/")[:19]
            rows.append(
                f"{len(rows):>5} {group.name:<10} {pf.pid:>10} {retries:>5} {last:<19} "
                f"{started}  {state.value}"
            )
        lines = [
            f"Child Process Status - {len(rows)} Entries",
            "",
            f"{'ID':>5} {'Group':<10} {'Process':>10} {'Retry':>5} {'Retry Time':<19} "
            f"{'Start Time':<20} Status",
            f"{'-' * 5} {'-' * 10} {'-' * 10} {'-' * 5} {'-' * 19} {'-' * 20} {'-' * 8}",
            *rows,
        ]
        lines.extend(f"ERROR: {b}" for b in bad)
        return Reply(tuple(lines))

    def _refused(self, request: Request, reply: Reply) -> None:
        text = reply.lines[0].removeprefix("ERROR: ") if reply.lines else "access denied"
        self.event("OGG-00912", Severity.WARNING, f"Request refused: {text}")

    def _collector(self, request: Request) -> Reply:
        """A pump asks for a dynamic Collector (ACCESSRULE PROG COLLECTOR let it through):
        bind a port of DYNAMICPORTLIST (the system's when there is none), start the Collector
        on it for the asking address only, and say which port."""
        peer = request.peer
        if peer is None or peer.address == "unix":
            return Reply.error("ERROR: COLLECTOR is asked over TCP, by a pump.")
        sock = bind_dynamic_port(self.params.dynamic_ports)
        if sock is None:
            self.event(
                "OGG-01223",
                Severity.WARNING,
                f"No free port in DYNAMICPORTLIST for a Collector for {peer.address}.",
            )
            return Reply.error("ERROR: NODYNPORTS: no port of DYNAMICPORTLIST is free.")
        port = int(sock.getsockname()[1])
        self.home.sub("dirout").mkdir(exist_ok=True)
        try:
            with (self.home.sub("dirout") / "COLLECTOR.out").open("ab") as out:
                child = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "engine.manager.collector",
                        "--home",
                        str(self.home.root),
                        "--fd",
                        str(sock.fileno()),
                        "--peer",
                        peer.address,
                    ],
                    cwd=self.home.root,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    pass_fds=(sock.fileno(),),
                    start_new_session=True,
                )
        finally:
            sock.close()
        with self.lock:
            self.collectors.append(child)
        self.event(
            "OGG-01229",
            Severity.INFO,
            f"Collector started for {peer.address} on port {port} (process {child.pid}).",
        )
        return Reply((f"Collector listening on port {port}.",))

    def _portinfo(self, _: Request) -> Reply:
        return Reply((f"Manager listening on port {self.port}.",))

    def _purgeinfo(self, _: Request) -> Reply:
        if not self.params.purge:
            return Reply(("PURGEOLDEXTRACTS is not set.",))
        lines = ["PurgeOldExtracts Rules"]
        for rule in self.params.purge:
            use = "USECHECKPOINTS" if rule.use_checkpoints else "NOUSECHECKPOINTS"
            lines.append(
                f"{rule.trail}  {use}  MINKEEPHOURS {rule.min_keep_hours:g}  "
                f"MINKEEPFILES {rule.min_keep_files}"
            )
        return Reply(tuple(lines))

    # -- the loop --------------------------------------------------------------------------
    def autostart(self) -> None:
        for group in GroupStore(self.home).all():
            if any(p.matches(group.kind, group.name) for p in self.params.autostart):
                self.start_group(group.kind, group.name)

    def watch(self, now: float) -> None:
        """Reap children; note groups that abended while we watched; restart those due."""
        with self.lock:
            for key, child in list(self.children.items()):
                if child.poll() is not None:
                    del self.children[key]
            self.collectors = [c for c in self.collectors if c.poll() is None]
        for group in GroupStore(self.home).all():
            key = (group.kind.value, group.name)
            pf, state = process_state(self.home, group.kind, group.name)
            before = self.last_state.get(key)
            self.last_state[key] = state
            rule = next(
                (r for r in self.params.autorestart if r.target.matches(group.kind, group.name)),
                None,
            )
            if rule is None or pf is None or pf.killed:
                continue
            info = self.restarts.setdefault(key, _Restarts())
            if state == State.ABENDED and before in (State.STARTING, State.RUNNING):
                info.times = [t for t in info.times if now - t < rule.reset_minutes * 60]
                if len(info.times) < rule.retries:
                    info.due = now + rule.wait_minutes * 60
                else:
                    self.event(
                        "OGG-01093",
                        Severity.WARNING,
                        f"{key[0]} {key[1]} abended; AUTORESTART retries exhausted.",
                    )
            if info.due is not None and now >= info.due and state == State.ABENDED:
                info.due = None
                info.times.append(now)
                self.event(
                    "OGG-01090", Severity.INFO, f"Restarting {key[0]} {key[1]} (AUTORESTART)."
                )
                self.start_group(*key)

    def purge(self) -> None:
        for rule in self.params.purge:
            for path in purge_candidates(self.home, rule, self.clock()):
                path.unlink(missing_ok=True)
                rules = "UseCheckpoints" if rule.use_checkpoints else "NoUseCheckpoints"
                self.event(
                    "OGG-00957",
                    Severity.INFO,
                    f"Purged old extract file '{path.relative_to(self.home.root)}', "
                    f"applying {rules} purge rules.",
                )

    def serve(self) -> int:
        pid = os.getpid()
        sock = socket_path(self.home, MANAGER, MANAGER)
        pf = _manager_file(State.STARTING, self.clock(), socket=str(sock), port=self.port)
        write_process_file(self.home, pf)
        try:
            tcp = TcpListener(
                LISTEN_ADDRESS,
                self.port,
                self.table,
                AccessPolicy.of(self.params.access_rules).gate,
                self._refused,
            ).start()
        except OSError as exc:
            self.event(
                "OGG-00664",
                Severity.ERROR,
                f"Manager cannot listen on port {self.port}: {exc.strerror or exc}.",
            )
            write_process_file(self.home, pf.with_state(State.ABENDED))
            return 1
        self.port = tcp.port
        try:
            server = IpcServer(sock, self.table, on_refused=self._refused).start()
        except OSError as exc:
            tcp.close()
            self.event("OGG-00664", Severity.ERROR, f"Manager cannot listen on {sock}: {exc}.")
            write_process_file(self.home, pf.with_state(State.ABENDED))
            return 1
        pf = ProcessFile(
            pf.kind, pf.name, pid, State.RUNNING, pf.started, pf.ticks, pf.socket, self.port
        )
        # logged before RUNNING is published: whoever sees it running finds the line too
        self.event("OGG-00983", Severity.INFO, f"Manager started (port {self.port}).")
        for warning in self.params.warnings:
            self.event("OGG-10144", Severity.WARNING, f"Parameter file mgr.prm: {warning}.")
        write_process_file(self.home, pf)
        signal.signal(signal.SIGTERM, lambda *_: self.stop_event.set())
        self.autostart()
        next_purge = 0.0
        clock = _monotonic
        while not self.stop_event.wait(self.poll):
            now = clock()
            try:
                self.watch(now)
                if self.params.purge and now >= next_purge:
                    next_purge = now + self.params.check_minutes * 60
                    self.purge()
                self.heartbeats.tick()
                self.watches.tick(now)
            except Exception as exc:  # one bad file must not stop the Manager; log, go on
                self.event("OGG-01091", Severity.WARNING, f"Manager check failed: {exc!r}.")
        server.close()
        tcp.close()
        write_process_file(
            self.home, pf.with_state(State.STOPPED, stopped=self.clock().isoformat(" ", "seconds"))
        )
        self.event("OGG-00954", Severity.INFO, "Manager stopped.")
        return 0


def bind_dynamic_port(ports: Sequence[int]) -> socket.socket | None:
    """A listening socket on the first free port of ``ports`` (DYNAMICPORTLIST), or on one
    the system chooses when the list is empty; None when every listed port is taken."""
    for port in ports or (0,):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((LISTEN_ADDRESS, port))
            sock.listen(1)
        except OSError:
            sock.close()
            continue
        return sock
    return None


def _monotonic() -> float:
    import time

    return time.monotonic()


def main(argv: Sequence[str] | None = None) -> int:
    private_umask()
    parser = argparse.ArgumentParser(prog="python -m engine.manager.main")
    parser.add_argument("--home", required=True)
    args = parser.parse_args(argv)
    home = Home(Path(args.home).resolve())
    try:
        check_home_owner(home)
    except NotHomeOwner as exc:
        sys.stderr.write(f"{str(exc).removeprefix('ERROR: ')}\n")
        return 2
    os.chdir(home.root)
    try:
        lock = ProcessLock.acquire(home, MANAGER, MANAGER)
    except LockHeld as exc:
        ev = Event("OGG-01454", Severity.ERROR, exc.strerror or str(exc), MANAGER_COMPONENT)
        sys.stderr.write(ev.format(datetime.now()) + "\n")
        log_event(home.ggserr_log, ev)
        return 2
    try:
        return _serve(home)
    finally:
        lock.release()


def _serve(home: Home) -> int:
    """Check mgr.prm and serve; a Manager that cannot start (an error in mgr.prm, or any
    failure) says why in ggserr.log, where GGSCI's START MANAGER finds it."""
    try:
        params = check_manager_params(home.dirprm / "mgr.prm", home.root)
    except ManagerParamError as exc:
        for line in exc.lines:
            _abend_event(home, "OGG-00303", f"Problem in param file [mgr.prm]: {line}.")
        _abended(home)
        return 1
    try:
        return Manager(home, params).serve()
    except Exception as exc:  # the reason belongs in ggserr.log, not only in dirout/MGR.out
        _abend_event(home, "OGG-01668", f"Manager abended: {type(exc).__name__}: {exc}.")
        _abended(home)
        raise


def _abend_event(home: Home, code: str, text: str) -> None:
    log_event(home.ggserr_log, Event(code, Severity.ERROR, text, MANAGER_COMPONENT, "mgr.prm"))


def _abended(home: Home) -> None:
    pid = os.getpid()
    pf = read_process_file(home, MANAGER, MANAGER)
    if pf is not None and pf.pid == pid:
        write_process_file(home, pf.with_state(State.ABENDED))
        return
    write_process_file(home, _manager_file(State.ABENDED, datetime.now()))


def _manager_file(state: State, when: datetime, **extra: Any) -> ProcessFile:
    """This process's own process file (the Manager's)."""
    pid = os.getpid()
    return ProcessFile(
        MANAGER,
        MANAGER,
        pid,
        state,
        when.isoformat(" ", "seconds"),
        ticks=start_ticks(pid),
        **extra,
    )


if __name__ == "__main__":
    # Run the canonical module, not this ``__main__`` copy, so that classes (GroupRunner) are
    # the ones runner modules import.
    from engine.manager import main as _canonical

    sys.exit(_canonical.main())
