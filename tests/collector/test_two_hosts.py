"""Source and target homes as two hosts, with real Managers, pump and Collector processes:
over loopback, and in two network namespaces joined only by a veth pair. Faults made on
purpose (Collector killed, target Manager restarted, target disk full, the link stalled, the
pump and the Collector killed again and again); each run ends with the independent audit:
every source transaction exactly once among the remote trail's whole transactions."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.home.layout import Home
from engine.home.status import MANAGER, State, read_process_file
from engine.runtime.control import wait_for, wait_for_state
from tests.collector.two_homes import (
    NetnsPair,
    TwoHomes,
    audit,
    audit_tranids,
    duplicate_last_transaction,
    netns_available,
    pids_of,
    source_tranids,
    until,
)

pytestmark = pytest.mark.e2e


@pytest.fixture
def homes(tmp_path: Path) -> Iterator[TwoHomes]:
    pair = TwoHomes(Home(tmp_path / "source"), Home(tmp_path / "target"))
    pair.setup()
    try:
        yield pair
    finally:
        pair.kill_all()


def assert_exactly_once(pair: TwoHomes) -> None:
    result = audit(source_tranids(pair.written), audit_tranids(pair.target))
    assert result.clean, (result.lost[:5], result.duplicated[:5], result.foreign[:5])


def test_the_pump_reaches_the_targets_collector_over_loopback(homes: TwoHomes) -> None:
    homes.write(300)
    homes.start_target()
    homes.start_source()
    assert homes.wait_copied(300), homes.copied()
    homes.write(50)  # the same Collector goes on with what comes later
    assert homes.wait_copied(350), homes.copied()
    assert_exactly_once(homes)
    log = homes.target.ggserr_log.read_text()
    assert "Collector started for 127.0.0.1 on port" in log
    port = int(log.split("on port ")[1].split()[0])
    assert homes.mgr_port < port <= homes.mgr_port + 20  # DYNAMICPORTLIST
    assert not (homes.source.root / "dirrmt").exists() or not any(
        (homes.source.root / "dirrmt").iterdir()
    )  # the remote trail is the target's only


def test_collector_killed_and_target_manager_restarted(homes: TwoHomes) -> None:
    homes.write(2000)
    homes.start_target()
    homes.start_source()
    for _ in range(3):  # the Collector dies mid-stream (kill -9)
        assert until(lambda: bool(homes.collector_pids()) and homes.copied() > 0, 60)
        for pid in homes.collector_pids():
            os.kill(pid, signal.SIGKILL)
        homes.write(200)
    target_mgr = read_process_file(homes.target, MANAGER, MANAGER)
    assert target_mgr is not None
    os.kill(target_mgr.pid, signal.SIGKILL)  # the target host's Manager goes too
    for pid in homes.collector_pids():
        os.kill(pid, signal.SIGKILL)
    homes.write(200)
    time.sleep(0.5)  # the pump finds nobody (ECONNREFUSED) and retries
    homes.start_target()
    assert homes.wait_copied(homes.written), homes.copied()
    assert_exactly_once(homes)
    log = homes.source.ggserr_log.read_text()
    assert "WARNING OGG-01224" in log and "retrying in 0.2 s" in log  # the links it lost
    pf = read_process_file(homes.source, "EXTRACT", "PMP")
    assert pf is not None and pf.state == State.RUNNING


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small file system needs root")
def test_target_disk_full_then_freed(homes: TwoHomes) -> None:
    rmt = homes.target.root / "dirrmt"
    rmt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(rmt)], check=True)
    try:
        homes.write(3000)  # about 1 MB of remote trail: it does not fit
        homes.start_target()
        homes.start_source()
        assert until(lambda: "ENOSPC" in homes.source.ggserr_log.read_text(), 60)
        pf = read_process_file(homes.source, "EXTRACT", "PMP")
        assert pf is not None and pf.state == State.RUNNING  # retrying, not abended
        subprocess.run(["mount", "-o", "remount,size=64m", str(rmt)], check=True)
        assert homes.wait_copied(3000), homes.copied()
        assert_exactly_once(homes)
    finally:
        homes.kill_all()
        wait_for(lambda: not homes.collector_pids(), 10)
        subprocess.run(["umount", "-l", str(rmt)], check=False)


def test_the_audit_sees_a_lost_and_a_doubled_transaction() -> None:
    """The mutation that proves the audit: it must catch what the tests say never happens."""
    expected = source_tranids(5)
    assert audit(expected, expected).clean
    lost = audit(expected, [t for t in expected if t != "T2"])
    assert lost.lost == ["T2"] and not lost.clean
    doubled = audit(expected, [*expected, "T3"])
    assert doubled.duplicated == ["T3"] and not doubled.clean
    assert audit(expected, [*expected, "X"]).foreign == ["X"]


def test_kill_9_soak_of_pump_and_collector(homes: TwoHomes) -> None:
    """The pump and the Collector killed (-9) in turn while the backlog grows; the source
    Manager restarts the pump (AUTORESTART), the pump reconnects to a new Collector."""
    (homes.source.dirprm / "mgr.prm").write_text(
        "PORT 0\nAUTORESTART EXTRACT *, RETRIES 1000, WAITMINUTES 0, RESETMINUTES 1\n"
    )
    homes.write(1500)
    homes.start_target()
    homes.start_source()
    kills = 0
    for round_ in range(8):

        def victims(r: int = round_) -> list[int]:
            pids = [homes.pump_pid()] if r % 2 else homes.collector_pids()
            return [p for p in pids if p]

        assert until(lambda: bool(victims()) and homes.copied() > 0, 60)
        time.sleep(0.2 + 0.1 * (round_ % 3))
        assert until(lambda: bool(victims()), 60)
        for pid in victims():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                kills += 1
        homes.write(150)
    assert kills >= 8
    assert homes.wait_copied(homes.written, 180), homes.copied()
    assert_exactly_once(homes)
    # the mutation: one transaction written twice into the real remote trail is caught
    homes.kill_all()
    pumps = ("engine.runtime.process", "PMP", str(homes.source.root))
    assert wait_for(lambda: not homes.collector_pids() and not pids_of(*pumps), 10)
    doubled = duplicate_last_transaction(homes.target)
    result = audit(source_tranids(homes.written), audit_tranids(homes.target))
    assert result.duplicated == [doubled] and not result.lost


# -- two network namespaces ---------------------------------------------------------------------


@pytest.fixture
def netns(tmp_path: Path) -> Iterator[tuple[TwoHomes, NetnsPair]]:
    if not netns_available():
        pytest.skip("network namespaces need root and ip netns")
    pair = NetnsPair()
    pair.up()
    homes = TwoHomes(
        Home(tmp_path / "source"),
        Home(tmp_path / "target"),
        target_host=pair.tgt_ip,
        mgr_port=7809,  # the namespace is the target's own host: GoldenGate's default port
        launch_source=pair.launcher(pair.src),
        launch_target=pair.launcher(pair.tgt),
    )
    homes.setup()
    try:
        yield homes, pair
    finally:
        homes.kill_all()
        pair.down()


def test_two_hosts_in_network_namespaces_and_a_stalled_link(
    netns: tuple[TwoHomes, NetnsPair],
) -> None:
    homes, pair = netns
    homes.write(400)
    homes.start_target()
    homes.start_source()
    assert homes.wait_copied(400), homes.copied()
    log = homes.target.ggserr_log.read_text()
    assert f"Collector started for {pair.src_ip}" in log  # it came over the veth link
    # the source host reaches the target only over the link: not on its own loopback
    probe = "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 2)"
    for host, reached in (("127.0.0.1", False), (pair.tgt_ip, True)):
        done = subprocess.run(
            [*pair.launcher(pair.src), sys.executable, "-c", probe, host, str(homes.mgr_port)],
            capture_output=True,
        )
        assert (done.returncode == 0) == reached, (host, done.stderr[-300:])
    pair.link(up=False)  # the link stalls: nothing passes, nothing is refused
    homes.write(300)
    assert until(lambda: "ETIMEDOUT" in homes.source.ggserr_log.read_text(), 30)
    pair.link(up=True)
    assert homes.wait_copied(700), homes.copied()
    assert_exactly_once(homes)


def test_retries_run_out_and_the_pump_abends_by_its_tcperrs(homes: TwoHomes) -> None:
    (homes.source.root / "tcperrs").write_text("ECONNREFUSED RETRY 10 2\n")
    homes.write(5)
    homes.start_source()  # no target Manager: nobody listens at MGRPORT
    assert wait_for_state(homes.source, "EXTRACT", "PMP", {State.ABENDED}, 60) == State.ABENDED
    log = homes.source.ggserr_log.read_text()
    assert "retry 1 of 2" in log and "retry 2 of 2" in log
    assert "(2 retries failed; TCPERRS ECONNREFUSED)" in log


def test_no_accessrule_no_collector_the_pump_abends(homes: TwoHomes) -> None:
    (homes.target.dirprm / "mgr.prm").write_text(f"PORT {homes.mgr_port}\n")  # no rule
    homes.write(5)
    homes.start_target()
    homes.start_source()
    assert wait_for_state(homes.source, "EXTRACT", "PMP", {State.ABENDED}, 60) == State.ABENDED
    log = homes.source.ggserr_log.read_text()
    assert "TCP/IP error EACCES" in log and "no retry for it" in log
    assert "no ACCESSRULE allows it" in homes.target.ggserr_log.read_text()
    assert not homes.collector_pids()
