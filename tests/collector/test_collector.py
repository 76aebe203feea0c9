"""The pump ==> Collector link in one process: a real Collector (the static one, on a loopback
port, in a thread) writing the target home's RMTTRAIL, and the pump's copy loop writing to it
through engine.pump.remote; RMTHOST's options, the ACCESSRULE gate, the acknowledgement that
alone moves the checkpoint, and a link lost at each point of the conversation."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.home.checkpoints import load_checkpoints
from engine.home.groups import GroupKind, SourceType
from engine.home.layout import Home
from engine.manager.collector import serve_dynamic, serve_static
from engine.pump import PumpError
from engine.pump.pump import Pump
from engine.pump.remote import LinkLost, RemoteSink, remote_opener
from engine.pump.sink import TrailSpec
from engine.pump.tcperrs import DEFAULTS, TcpErrsError, parse_tcperrs
from engine.runtime.events import Severity
from engine.trail.reader import TrailReader
from params.models import RmtHost
from tests.replicat.replicat_helpers import add_group, ins, model, txn_records, upd, write_trail

PRM = "EXTRACT pmp\nRMTHOST 127.0.0.1, PORT {port}{options}\nRMTTRAIL ./dirrmt/bb\nTABLE hr.emp;\n"
ALLOW = "PORT 0\nACCESSRULE, PROG COLLECTOR, IPADDR 127.0.0.1, ALLOW\n"
KEY = "k1  0x" + "42" * 32 + "\n"


def make_home(root: Path) -> Home:
    h = Home(root)
    h.create_subdirs()
    return h


@pytest.fixture
def source(tmp_path: Path) -> Home:
    return make_home(tmp_path / "source")


@pytest.fixture
def target(tmp_path: Path) -> Home:
    home = make_home(tmp_path / "target")
    (home.dirprm / "mgr.prm").write_text(ALLOW)
    return home


@pytest.fixture
def collector(target: Home) -> Iterator[int]:
    """A static Collector of the target home; its port."""
    sock = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    thread = threading.Thread(target=serve_static, args=(target, sock, stop), daemon=True)
    thread.start()
    yield int(sock.getsockname()[1])
    stop.set()
    thread.join(5)


def txns(n: int, start: int = 0) -> list[list]:  # type: ignore[type-arg]
    return [txn_records(100 + i, [ins(i), upd(i, i)]) for i in range(start, start + n)]


def pump_of(source: Home, port: int, options: str = "") -> tuple[Pump, list[tuple[str, str]]]:
    group = add_group(source, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    prm = model(source, "pmp", PRM.format(port=port, options=options))
    assert prm.rmthost is not None
    seen: list[tuple[str, str]] = []

    def emit(code: str, _sev: Severity, text: str) -> None:
        seen.append((code, text))

    opener = remote_opener(source, prm.rmthost)
    return Pump(source, prm, group, emit, durable=False, opener=opener), seen


def remote_keys(target: Home) -> list[str]:
    """Every row record of the target's RMTTRAIL, in order, as ``op:key``."""
    return [
        f"{rec.op_name}:{dict(rec.columns)[0]}"
        for _, rec in TrailReader(target.root / "dirrmt" / "bb").records()
        if rec.table == "HR.EMP"
    ]


def expected(n: int) -> list[str]:
    return [k for i in range(n) for k in (f"Insert:{i}", f"FieldComp:{i}")]


@pytest.mark.parametrize(
    "options",
    [
        "",
        ", COMPRESS, COMPRESSTHRESHOLD 0",
        ", ENCRYPT AES256, KEYNAME k1",
        ", ENCRYPT AES128, KEYNAME k1, COMPRESS, NOSTREAMING, TCPFLUSHBYTES 1000",
        ", TIMEOUT 5, TCPBUFSIZE 65536, IPV4",
    ],
)
def test_the_collector_writes_what_the_pump_sends(
    source: Home, target: Home, collector: int, options: str
) -> None:
    for home in (source, target):
        (home.root / "ENCKEYS").write_text(KEY)
        (home.root / "ENCKEYS").chmod(0o600)
    write_trail(source.root / "dirdat" / "aa", txns(40))
    pump, _ = pump_of(source, collector, options)
    sink = pump.writer
    assert isinstance(sink, RemoteSink)
    pump.run(lambda: False, stop_at_eof=True)
    cps = load_checkpoints(source, "EXTRACT", "PMP")
    assert cps is not None and sink.acks >= 1
    assert cps.writes[0].position.seqno == sink.position.seqno
    assert cps.writes[0].position.rba == sink.position.rba
    pump.close()
    assert remote_keys(target) == expected(40)
    assert not (source.root / "dirrmt").exists() or not list((source.root / "dirrmt").iterdir())
    if "COMPRESSTHRESHOLD 0" in options:  # the wire carried fewer bytes than the records
        assert sink.link.bytes_sent < sink.link.bytes_payload
    if "ENCRYPT" in options:  # no record's text is readable on the wire
        assert sink.link._send_aead is not None


def test_the_checkpoint_moves_only_with_the_acknowledgement(
    source: Home, target: Home, collector: int
) -> None:
    write_trail(source.root / "dirdat" / "aa", txns(10))
    pump, _ = pump_of(source, collector)
    pump.poll(limit=4)
    pump.checkpoint()
    before = load_checkpoints(source, "EXTRACT", "PMP")
    pump.poll(limit=4)  # sent, never acknowledged: the link drops before the SYNC
    sink = pump.writer
    assert isinstance(sink, RemoteSink)
    sink._send_block()
    sink.link.sock.shutdown(socket.SHUT_RDWR)
    with pytest.raises(LinkLost):
        pump.checkpoint()
    assert load_checkpoints(source, "EXTRACT", "PMP") == before
    pump.close()
    again, seen = pump_of(source, collector)  # the runner's retry: from the checkpoint
    again.run(lambda: False, stop_at_eof=True)
    again.close()
    assert remote_keys(target) == expected(10)  # each transaction once
    assert any(code == "OGG-01516" for code, _ in seen)  # the 4 unacknowledged were there


@pytest.mark.parametrize(
    ("options", "setup", "name"),
    [
        (", ENCRYPT AES128, KEYNAME k1", "other key", "EDECRYPT"),
        (", ENCRYPT AES128, KEYNAME k1", "no key at target", "ENOKEY"),
        ("", "refused", "EACCES"),
    ],
)
def test_what_the_collector_refuses(
    source: Home, target: Home, collector: int, options: str, setup: str, name: str
) -> None:
    (source.root / "ENCKEYS").write_text(KEY)
    (source.root / "ENCKEYS").chmod(0o600)
    if setup == "other key":
        (target.root / "ENCKEYS").write_text(KEY.replace("42", "43"))
        (target.root / "ENCKEYS").chmod(0o600)
    if setup == "refused":
        (target.dirprm / "mgr.prm").write_text(
            "PORT 0\nACCESSRULE, PROG COLLECTOR, IPADDR 10.*, ALLOW\n"
        )
    write_trail(source.root / "dirdat" / "aa", txns(2))
    with pytest.raises(LinkLost) as caught:
        pump, _ = pump_of(source, collector, options)
        pump.run(lambda: False, stop_at_eof=True)
    assert caught.value.name == name, caught.value.text
    assert not (target.root / "dirrmt" / "bb000000000").exists() or remote_keys(target) == []


def test_a_trail_outside_the_target_home_is_refused(
    source: Home, target: Home, collector: int
) -> None:
    write_trail(source.root / "dirdat" / "aa", txns(1))
    group = add_group(source, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    prm = model(
        source,
        "pmp",
        PRM.format(port=collector, options="").replace("./dirrmt/bb", "../elsewhere/bb"),
    )
    assert prm.rmthost is not None
    with pytest.raises(LinkLost) as caught:
        Pump(source, prm, group, lambda *a: None, opener=remote_opener(source, prm.rmthost))
    assert caught.value.name == "EACCES" and "OGG-01882" in caught.value.text
    assert "without ALLOWOUTPUTDIR in GLOBALS" in caught.value.text
    assert not (target.root.parent / "elsewhere").exists()


def test_nobody_listening_is_a_retryable_error(source: Home) -> None:
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = int(s.getsockname()[1])
    write_trail(source.root / "dirdat" / "aa", txns(1))
    with pytest.raises(LinkLost) as caught:
        pump_of(source, port)
    assert caught.value.name == "ECONNREFUSED"
    rmt = RmtHost("127.0.0.1", mgrport=port, timeout=2)  # no Manager there either
    with pytest.raises(LinkLost) as caught:
        RemoteSink(source, rmt, TrailSpec("./dirrmt/bb", "PMP", 10))
    assert caught.value.name == "ECONNREFUSED"


def test_a_remote_trail_shorter_than_the_checkpoint_abends_naming_positions(
    source: Home, target: Home, collector: int
) -> None:
    write_trail(source.root / "dirdat" / "aa", txns(6))
    pump, _ = pump_of(source, collector)
    pump.run(lambda: False, stop_at_eof=True)
    pump.close()
    for path in (target.root / "dirrmt").glob("bb*"):
        path.unlink()  # the target lost its trail files
    with pytest.raises(PumpError) as caught:
        pump_of(source, collector)
    assert caught.value.code == "OGG-01496"
    text = caught.value.text  # the Collector's new, empty file is shorter than the checkpoint
    assert "RMTTRAIL ./dirrmt/bb ends at Seqno 0, RBA " in text, text
    assert "but its write checkpoint is Seqno 0, RBA " in text, text


def test_tcperrs_file_rules_and_defaults() -> None:
    rules = parse_tcperrs("-- mine\nECONNRESET  ABEND 0 0\necONNrefused retry 250 3\n")
    assert not rules.rule("ECONNRESET").retry
    refused = rules.rule("ECONNREFUSED")
    assert refused.retry and (refused.delay_seconds, refused.max_retries) == (2.5, 3)
    assert rules.rule("ETIMEDOUT") == DEFAULTS["ETIMEDOUT"]  # not in the file: GoldenGate's
    assert rules.rule("ESOMETHING").retry  # unknown: retried as the fallback says
    with pytest.raises(TcpErrsError, match=r"tcperrs:2: expected"):
        parse_tcperrs("ECONNRESET RETRY 1 1\nEPIPE MAYBE 1 1\n")


def test_a_dynamic_collector_serves_only_the_address_that_asked(target: Home) -> None:
    sock = socket.create_server(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    done: list[int] = []
    thread = threading.Thread(
        target=lambda: done.append(serve_dynamic(target, sock, "10.9.9.9", 2.0)), daemon=True
    )
    thread.start()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as other:
        assert other.recv(10) == b""  # closed at once: this address did not ask
    thread.join(10)
    assert done == [1]
    log = target.ggserr_log.read_text()
    assert "Collector refused 127.0.0.1: it serves 10.9.9.9" in log
