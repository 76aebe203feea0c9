"""Two homes as two hosts: a source home whose Manager runs the pump, a target home whose
Manager starts Collectors; over loopback, or each in a network namespace of its own joined by
a veth pair (:class:`NetnsPair`, root only), so that the Collector is reached only over that
link. And the independent audit: every source transaction exactly once among the whole
transactions of the remote trail, read as a Replicat reads it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.home.checkpoints import load_checkpoints
from engine.home.groups import GroupDef, GroupKind, GroupStore, SourceType, TrailDef, TrailKind
from engine.home.layout import Home
from engine.home.status import MANAGER, State, read_process_file
from engine.runtime.control import manager_request, start_manager, wait_for
from engine.trail.codec import encode_record
from engine.trail.txreader import TransactionReader
from engine.trail.writer import TrailWriter
from tests.replicat.replicat_helpers import ins, txn_records, upd, write_trail

SOURCE_TRAIL = "./dirdat/aa"
REMOTE_TRAIL = "./dirrmt/bb"
FAST_TCPERRS = (
    "-- retry at once and often: the faults below are made on purpose\n"
    "ECONNRESET RETRY 20 2000\nECONNREFUSED RETRY 20 2000\nETIMEDOUT RETRY 20 2000\n"
    "EPIPE RETRY 20 2000\nENOSPC RETRY 50 2000\nETRAILBUSY RETRY 20 2000\n"
    "EHOSTUNREACH RETRY 20 2000\nENETUNREACH RETRY 20 2000\n"
)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.create_server((host, 0)) as s:
        return int(s.getsockname()[1])


def backlog(home: Home, start: int, n: int) -> None:
    """``n`` more transactions (two rows each) in the source trail."""
    write_trail(
        home.root / "dirdat" / "aa",
        [txn_records(100 + i, [ins(i), upd(i, i)], f"T{i}") for i in range(start, start + n)],
    )


@dataclass
class TwoHomes:
    source: Home
    target: Home
    target_host: str = "127.0.0.1"
    mgr_port: int = 0
    options: str = ""
    launch_source: Sequence[str] = ()
    launch_target: Sequence[str] = ()
    written: int = 0
    started: list[Home] = field(default_factory=list)

    def setup(self) -> None:
        for home in (self.source, self.target):
            home.create_subdirs()
        self.mgr_port = self.mgr_port or free_port()
        (self.target.dirprm / "mgr.prm").write_text(
            f"PORT {self.mgr_port}\nDYNAMICPORTLIST {self.mgr_port + 1}-{self.mgr_port + 20}\n"
            "ACCESSRULE, PROG COLLECTOR, IPADDR *, ALLOW\n"
        )
        (self.source.dirprm / "mgr.prm").write_text("PORT 0\n")
        (self.source.root / "tcperrs").write_text(FAST_TCPERRS)
        (self.source.dirprm / "pmp.prm").write_text(
            f"EXTRACT pmp\nRMTHOST {self.target_host}, MGRPORT {self.mgr_port}, TIMEOUT 5"
            f"{self.options}\nRMTTRAIL {REMOTE_TRAIL}\nTABLE hr.*;\n"
        )
        GroupStore(self.source).save(
            GroupDef(
                kind=GroupKind.EXTRACT,
                name="PMP",
                source=SourceType.EXTTRAILSOURCE,
                created="2026-01-01 00:00:00",
                source_path=SOURCE_TRAIL,
                trails=(TrailDef(REMOTE_TRAIL, TrailKind.RMTTRAIL, 1),),
            )
        )

    def write(self, n: int) -> None:
        backlog(self.source, self.written, n)
        self.written += n

    def start_target(self) -> None:
        start_manager(self.target, 30, self.launch_target)

    def start_source(self) -> None:
        start_manager(self.source, 30, self.launch_source)
        reply = manager_request(self.source, "START EXTRACT PMP")
        assert reply.ok, reply.lines

    def pump_pid(self) -> int:
        pf = read_process_file(self.source, "EXTRACT", "PMP")
        return pf.pid if pf is not None and pf.state == State.RUNNING else 0

    def collector_pids(self) -> list[int]:
        return pids_of("engine.manager.collector", str(self.target.root))

    def copied(self) -> int:
        """Transactions the pump's checkpoint covers (in whole transactions of the remote
        trail, counted by the audit reader)."""
        return len(audit_tranids(self.target))

    def wait_copied(self, n: int, timeout: float = 240) -> bool:
        return wait_for(lambda: self.copied() >= n and self.checkpointed(), timeout)

    def checkpointed(self) -> bool:
        cps = load_checkpoints(self.source, "EXTRACT", "PMP")
        if cps is None or not cps.reads:
            return False
        end = (self.source.root / "dirdat").glob("aa*")
        last = max(end)
        read = cps.reads[0].current
        return read.seqno == int(last.name[2:]) and read.rba == last.stat().st_size

    def kill_all(self) -> None:
        for kind, name in ((MANAGER, MANAGER), ("EXTRACT", "PMP")):  # no AUTORESTART after
            for home in (self.source, self.target):
                pf = read_process_file(home, kind, name)
                if pf is not None and pf.state in (State.STARTING, State.RUNNING):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pf.pid, signal.SIGKILL)
        for pid in self.collector_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def pids_of(*words: str) -> list[int]:
    """Processes whose command line holds every one of ``words``."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        text = [a.decode(errors="replace") for a in argv]
        if all(any(w in a for a in text) for w in words):
            out.append(int(entry.name))
    return out


def audit_tranids(target: Home) -> list[str]:
    """The TRANID of every whole transaction of the remote trail, in order, as the Replicat
    reads them (a transaction cut short and closed by a RestartAbend marker is not one)."""
    path = target.root / "dirrmt" / "bb"
    if not path.parent.exists() or not any(path.parent.glob("bb*")):
        return []
    reader = TransactionReader(path)
    try:
        return [t.tranid or "" for t in reader.poll(None)]
    finally:
        reader.close()


@dataclass(frozen=True)
class Audit:
    lost: list[str]
    duplicated: list[str]
    foreign: list[str]

    @property
    def clean(self) -> bool:
        return not (self.lost or self.duplicated or self.foreign)


def audit(expected: Sequence[str], seen: Sequence[str]) -> Audit:
    counts: dict[str, int] = {}
    for t in seen:
        counts[t] = counts.get(t, 0) + 1
    want = set(expected)
    return Audit(
        lost=[t for t in expected if t not in counts],
        duplicated=sorted(t for t, c in counts.items() if c > 1),
        foreign=sorted(t for t in counts if t not in want),
    )


def source_tranids(n: int) -> list[str]:
    return [f"T{i}" for i in range(n)]


class NetnsPair:
    """Two network namespaces joined by a veth pair: ``src`` 10.x.0.1, ``tgt`` 10.x.0.2."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:6]
        self.src, self.tgt = f"ggs{tag}", f"ggt{tag}"
        self.veth_src, self.veth_tgt = f"vs{tag}", f"vt{tag}"
        octet = int(tag[:2], 16) % 200 + 20
        self.src_ip, self.tgt_ip = f"10.{octet}.0.1", f"10.{octet}.0.2"

    def up(self) -> None:
        for cmd in (
            ["ip", "netns", "add", self.src],
            ["ip", "netns", "add", self.tgt],
            ["ip", "link", "add", self.veth_src, "type", "veth", "peer", "name", self.veth_tgt],
            ["ip", "link", "set", self.veth_src, "netns", self.src],
            ["ip", "link", "set", self.veth_tgt, "netns", self.tgt],
            *self.ns(self.src, "ip", "addr", "add", f"{self.src_ip}/24", "dev", self.veth_src),
            *self.ns(self.tgt, "ip", "addr", "add", f"{self.tgt_ip}/24", "dev", self.veth_tgt),
            *self.ns(self.src, "ip", "link", "set", self.veth_src, "up"),
            *self.ns(self.tgt, "ip", "link", "set", self.veth_tgt, "up"),
            *self.ns(self.src, "ip", "link", "set", "lo", "up"),
            *self.ns(self.tgt, "ip", "link", "set", "lo", "up"),
        ):
            subprocess.run(cmd, check=True, capture_output=True)

    @staticmethod
    def ns(name: str, *argv: str) -> list[list[str]]:
        return [["ip", "netns", "exec", name, *argv]]

    def launcher(self, name: str) -> list[str]:
        return ["ip", "netns", "exec", name]

    def link(self, up: bool) -> None:
        """The target's end of the link up or down (a stalled link, as seen by the pump)."""
        state = "up" if up else "down"
        subprocess.run(
            ["ip", "netns", "exec", self.tgt, "ip", "link", "set", self.veth_tgt, state],
            check=True,
            capture_output=True,
        )

    def down(self) -> None:
        for name in (self.src, self.tgt):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


def netns_available() -> bool:
    if os.geteuid() != 0:
        return False
    probe = NetnsPair()
    try:
        subprocess.run(["ip", "netns", "add", probe.src], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return False
    subprocess.run(["ip", "netns", "del", probe.src], capture_output=True)
    return True


def until(predicate: Callable[[], bool], timeout: float, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return predicate()


def duplicate_last_transaction(target: Home) -> str:
    """Write the remote trail's last whole transaction once more (a deliberate duplicate, as
    a broken pump would); its TRANID."""
    reader = TransactionReader(target.root / "dirrmt" / "bb")
    try:
        last = list(reader.poll(None))[-1]
    finally:
        reader.close()
    writer = TrailWriter.open(target.root / "dirrmt" / "bb", durable=False)
    writer.append_many([encode_record(r) for r in last.records])
    writer.close()
    return last.tranid or ""
