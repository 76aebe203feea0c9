"""Trust with real daemons: one instance per group (the lock), the Manager's TCP port under
ACCESSRULE (another local user is refused), the Unix socket for the owner only, and bounded,
timed-out connections. No fixed sleeps: waits poll with a timeout."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from engine.home.layout import Home
from engine.home.status import (
    MANAGER,
    ProcessLock,
    State,
    lock_holder,
    process_file_path,
    process_state,
    read_process_file,
    socket_path,
)
from engine.manager.access import AccessPolicy, program_of
from engine.manager.params import parse_manager_params
from engine.runtime import ipc
from engine.runtime.control import manager_info, wait_for, wait_for_state
from engine.runtime.ipc import HandlerTable, Peer, Reply, Request, TcpListener, send_request
from params.check import check_text

from .conftest import Shell
from .trust_helpers import as_nobody, open_home

pytestmark = pytest.mark.e2e
TIMEOUT = 20.0


@pytest.fixture(autouse=True)
def builtin_runners(monkeypatch: pytest.MonkeyPatch) -> None:
    for kind in ("EXTRACT", "REPLICAT"):
        monkeypatch.setenv(f"GGSCI_RUNNER_{kind}", "tests.harness.runners:ParameterCheckRunner")


def _kill_all(home: Home) -> None:
    for kind, name in (("EXTRACT", "EXT1"), (MANAGER, MANAGER)):
        for pid in {
            lock_holder(home, kind, name) or 0,
            getattr(read_process_file(home, kind, name), "pid", 0),
        }:
            if pid > 0:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def live() -> Iterator[Shell]:
    """A home every user can search (for the other-user tests), an Extract defined."""
    home = open_home()
    (home.dirprm / "mgr.prm").write_text("PORT 0\n")
    (home.dirprm / "ext1.prm").write_text("EXTRACT ext1\nEXTTRAIL ./dirdat/lt\nTABLE hr.*;\n")
    shell = Shell(home)
    shell.run("ADD EXTRACT ext1, TRANLOG, BEGIN NOW")
    try:
        yield shell
    finally:
        _kill_all(home)
        shutil.rmtree(home.root.parent)


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def start_ext1(shell: Shell) -> int:
    home = shell.session.home
    if manager_info(home) is None:
        assert shell.run("START MANAGER") == "Manager started.\n"
    assert shell.run("START EXTRACT ext1").endswith("EXTRACT EXT1 starting\n")
    assert wait_for_state(home, "EXTRACT", "EXT1", {State.RUNNING}, TIMEOUT) == State.RUNNING
    pid = lock_holder(home, "EXTRACT", "EXT1")
    assert pid and pid == getattr(read_process_file(home, "EXTRACT", "EXT1"), "pid", None)
    return pid


# -- one instance per group ------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["delete", "corrupt", "stale"])
def test_no_second_instance_whatever_happens_to_the_process_file(live: Shell, damage: str) -> None:
    home = live.session.home
    pid = start_ext1(live)
    pcs = process_file_path(home, "EXTRACT", "EXT1")
    if damage == "delete":
        pcs.unlink()
    elif damage == "corrupt":
        pcs.write_text("{garbage")
    else:  # a second instance wrote its file over the first one's, then died
        data = json.loads(pcs.read_text())
        data.update(state="ABENDED", pid=_dead_pid())
        pcs.write_text(json.dumps(data))
    assert live.run("STATUS EXTRACT ext1") == "EXTRACT EXT1: RUNNING\n"
    assert "EXTRACT     RUNNING     EXT1" in live.run("INFO ALL")
    out = live.run("START EXTRACT ext1")
    assert out.endswith("ERROR: EXTRACT EXT1 is already running.\n"), out
    assert lock_holder(home, "EXTRACT", "EXT1") == pid
    # KILL finds the process through the lock, and then it is gone for good
    assert live.run("KILL EXTRACT ext1").endswith(f"Killed process ({pid}) for EXTRACT EXT1\n")
    assert live.run("STATUS EXTRACT ext1") == "EXTRACT EXT1: ABENDED\n"
    start_ext1(live)


def test_a_second_process_started_by_hand_stops_with_one_line(live: Shell) -> None:
    home = live.session.home
    pid = start_ext1(live)
    before = process_file_path(home, "EXTRACT", "EXT1").read_text()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine.runtime.process",
            "EXTRACT",
            "ext1",
            "--home",
            str(home.root),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "OGG-01454" in lines[0], done.stderr
    assert f"Lock currently held by process id (PID) {pid}." in lines[0]
    assert "Unable to lock EXTRACT EXT1 " in lines[0] and ".lck" not in lines[0]
    assert process_file_path(home, "EXTRACT", "EXT1").read_text() == before
    assert live.run("STATUS EXTRACT ext1") == "EXTRACT EXT1: RUNNING\n"


def test_a_second_manager_stops_with_one_line(live: Shell) -> None:
    home = live.session.home
    assert live.run("START MANAGER") == "Manager started.\n"
    info = manager_info(home)
    assert info is not None
    process_file_path(home, MANAGER, MANAGER).unlink()  # the file is not the guard
    assert live.run("START MANAGER") == "ERROR: Manager is already running.\n"
    done = subprocess.run(
        [sys.executable, "-m", "engine.manager.main", "--home", str(home.root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "Unable to lock MANAGER (error 11" in done.stderr
    assert lock_holder(home, MANAGER, MANAGER) == info.pid
    assert send_request(socket_path(home, MANAGER, MANAGER), "STATUS").lines == (
        "Manager is running.",
    )


def test_a_held_lock_is_running_without_any_process_file(home: Home) -> None:
    lock = ProcessLock.acquire(home, "REPLICAT", "REP9")
    try:
        assert process_state(home, "REPLICAT", "REP9") == (None, State.RUNNING)
        assert lock_holder(home, "REPLICAT", "REP9") == os.getpid()
    finally:
        lock.release()
    assert process_state(home, "REPLICAT", "REP9") == (None, State.STOPPED)


# -- the Manager's ports ---------------------------------------------------------------------

NOBODY_TCP = """
out = []
for text in ("CHILDSTATUS", "KILL EXTRACT EXT1", "START EXTRACT EXT1", "STOP"):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    s.sendall((json.dumps({"text": text}) + "\\n").encode())
    out.append(json.loads(s.makefile().readline()))
    s.close()
print(json.dumps(out))
"""


def test_another_user_is_refused_on_the_tcp_port_and_the_owner_still_works(live: Shell) -> None:
    home = live.session.home
    pid = start_ext1(live)
    info = manager_info(home)
    assert info is not None and info.port
    done = as_nobody("import json, socket", NOBODY_TCP.replace("PORT", str(info.port)))
    assert done.returncode == 0, done.stderr
    replies = json.loads(done.stdout)
    assert [r["ok"] for r in replies] == [False] * 4
    assert replies[0]["lines"] == [
        "ERROR: access denied: CHILDSTATUS (PROG GGSCI) from 127.0.0.1 (uid 65534); "
        "no ACCESSRULE allows it."
    ]
    assert "KILL (PROG MANAGER)" in replies[1]["lines"][0]
    # nothing happened: the group and the Manager run on, and the refusals are logged
    assert lock_holder(home, "EXTRACT", "EXT1") == pid
    assert manager_info(home) is not None
    assert home.ggserr_log.read_text().count("Request refused: access denied") == 4
    # the owner, over the Unix socket, is served
    assert "EXT1        " in live.run("SEND MANAGER CHILDSTATUS")


def test_another_user_is_refused_on_the_unix_socket_even_if_it_can_reach_it(live: Shell) -> None:
    home = live.session.home
    start_ext1(live)
    sock = socket_path(home, MANAGER, MANAGER)
    home.dirpcs.chmod(0o755)
    sock.chmod(0o666)  # as if someone loosened the modes: the kernel still says who calls
    done = as_nobody(
        "import engine.runtime.ipc",
        f"r = engine.runtime.ipc.send_request(__import__('pathlib').Path({str(sock)!r}), 'STOP')\n"
        "print(r.ok, r.lines[0])",
    )
    assert done.stdout == (
        "False ERROR: access denied: only user root may send requests to this process.\n"
    ), done.stderr
    assert manager_info(home) is not None


def test_accessrule_allows_what_it_names_only() -> None:
    rules = parse_manager_params(
        "ACCESSRULE, PROG *, DENY, PRI 99\n"
        "ACCESSRULE, PROG GGSCI, IPADDR 127.0.0.*, PRI 1, ALLOW\n"
        "ACCESSRULE, PROG MGR, IPADDR 10.1.1.1, PRI 2, ALLOW\n"
        "ACCESSRULE, PROG GGSCI, ALLOW\n"  # no PRI: tried after every rule with one
    ).access_rules
    policy = AccessPolicy.of(rules)
    local, remote = Peer("127.0.0.1"), Peer("10.1.1.1")
    assert policy.gate(local, Request.parse("CHILDSTATUS")) is None
    assert policy.gate(remote, Request.parse("KILL EXTRACT E1")) is None
    refused = policy.gate(local, Request.parse("KILL EXTRACT E1"))
    assert refused is not None and refused.lines == (
        "ERROR: access denied: KILL (PROG MANAGER) from 127.0.0.1; "
        "ACCESSRULE 1 of mgr.prm denies it.",
    )
    assert policy.gate(remote, Request.parse("GETPORTINFO")) is not None
    assert AccessPolicy.of(()).gate(local, Request.parse("STATUS")) is not None
    assert program_of(Request.parse("start extract e1")) == "MANAGER"


def test_tcp_requests_allowed_by_accessrule_are_served(live: Shell) -> None:
    home = live.session.home
    (home.dirprm / "mgr.prm").write_text(
        "PORT 0\nACCESSRULE, PROG GGSCI, IPADDR 127.0.0.1, ALLOW\n"
    )
    live.run("START MANAGER")
    info = manager_info(home)
    assert info is not None and info.port
    assert _tcp(info.port, "GETPORTINFO") == {
        "ok": True,
        "lines": [f"Manager listening on port {info.port}."],
    }
    assert not _tcp(info.port, "STOP")["ok"]
    assert manager_info(home) is not None


def _tcp(port: int, text: str) -> dict[str, object]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall((json.dumps({"text": text}) + "\n").encode())
        return dict(json.loads(s.makefile().readline()))


def test_manager_refuses_a_bad_accessrule_at_start(live: Shell) -> None:
    home = live.session.home
    (home.dirprm / "mgr.prm").write_text("PORT 0\nACCESSRULE, PROG GGSCI, PRI 0, ALLOW\n")
    out = live.run("START MANAGER")
    why = "dirprm/mgr.prm:2:29: error: PRI 0 must be a whole number from 1 to 99"
    assert out.startswith("ERROR: Manager failed to start:\n") and why in out, out
    assert why in home.ggserr_log.read_text()


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("ACCESSRULE, PROG *, IPADDR 10.0.0.*, PRI 5, ALLOW", None),
        ("ACCESSRULE, PROG SERVER, DENY", None),
        ("ACCESSRULE, PROG FOO, ALLOW", "18: PROG FOO is not a program"),
        ("ACCESSRULE, IPADDR 10.0.0.x, ALLOW", "20: IPADDR 10.0.0.x is not an IP address"),
        ("ACCESSRULE, PROG GGSCI, PRI 100, DENY", "29: PRI 100 must be a whole number"),
        ("ACCESSRULE, PROG GGSCI", "22: ACCESSRULE needs ALLOW or DENY"),
        ("ACCESSRULE, PROG GGSCI, ALLOW, DENY", "32: ACCESSRULE takes one of ALLOW or DENY"),
        ("ACCESSRULE, PROG *, USER john, PASSWORD x, ALLOW", "21: ACCESSRULE USER (a login ID)"),
        ("ACCESSRULE, PROG GGSCI, NOSUCH, ALLOW", "25: unknown ACCESSRULE option"),
    ],
)
def test_params_check_reads_accessrule(line: str, error: str | None) -> None:
    result = check_text(f"PORT 7809\n{line}\n", "mgr.prm")
    rendered = [f"{d.origin.col}: {d.message}" for d in result.errors]
    if error is None:
        assert rendered == [] and len(result.model.manager.access_rules) == 1
    else:
        assert len(rendered) == 1 and rendered[0].startswith(error), rendered


# -- connections: bounded, timed out -----------------------------------------------------------


def test_listeners_bound_their_threads_and_time_out_silent_clients(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ipc._Handler, "timeout", 3.0)  # not 10 s; room for a loaded machine
    table = HandlerTable({"PING": lambda _: Reply(("pong",))})
    listener = TcpListener("127.0.0.1", 0, table, gate=lambda peer, request: None).start()
    idle = [
        socket.create_connection(("127.0.0.1", listener.port)) for _ in range(ipc.MAX_CONNECTIONS)
    ]
    try:
        busy = socket.create_connection(("127.0.0.1", listener.port), timeout=10)
        assert json.loads(busy.makefile().readline())["lines"] == [
            "ERROR: too many connections; retry."
        ]
        busy.close()
        for s in idle:  # silent clients are dropped after the read timeout
            s.settimeout(10)
            assert s.recv(1) == b""
        assert wait_for(lambda: _tcp(listener.port, "PING")["lines"] == ["pong"], TIMEOUT)
    finally:
        for s in idle:
            s.close()
        listener.close()
