"""The pump's side of the link: RMTHOST ==> the target's Manager ==> a Collector (RemoteSink).

``RMTHOST host, MGRPORT m``: the pump asks the Manager at ``host:m`` for a Collector (request
``COLLECTOR``; the target's ACCESSRULEs must allow PROG COLLECTOR from this host), which answers
with the Collector's port; ``RMTHOST host, PORT p``: a static Collector listens at ``p``. The
pump then speaks :mod:`engine.runtime.wire` to it. RMTHOST's options act here:

- ``TIMEOUT s`` (default 300): a frame not sent or answered within ``s`` seconds is a lost link
  (ETIMEDOUT); the Collector is told the same, and an idle pump sends PING every ``s/3``.
- ``TCPBUFSIZE n``: the socket buffers (SO_SNDBUF here, SO_RCVBUF at the Collector).
- ``TCPFLUSHBYTES n`` (default 30,000): records are gathered to ``n`` bytes per frame.
- ``COMPRESS`` / ``COMPRESSTHRESHOLD n`` (default 1,000): frames of ``n`` bytes or more are
  zlib-compressed when that makes them smaller.
- ``ENCRYPT AES128|AES192|AES256, KEYNAME k``: AES-GCM with keys derived from ENCKEYS key ``k``
  (both homes hold it); a wrong key is found at the first frame (EDECRYPT).
- ``STREAMING`` (default) sends block after block and waits only at a checkpoint (SYNC);
  ``NOSTREAMING`` waits for each block to be received (FLUSH) before the next.
- ``IPV4`` / ``IPV6``: the address family ``host`` is resolved in.

Every failure of the link is :class:`LinkLost` (a :class:`~engine.pump.PumpError` with the
TCPERRS error name): the runner (:mod:`engine.pump.runner`) retries by the tcperrs rules,
building the pump again from its last checkpoint, which the Collector acknowledged durable.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any

from engine.home.enckeys import EncryptError, key_material
from engine.home.layout import Home
from engine.pump import PumpError
from engine.pump.sink import TrailSink, TrailSpec
from engine.runtime.wire import VERSION, Kind, Link, WireError, derive_keys, error_name, new_nonce
from engine.trail.model import TableDef, TrailPosition
from engine.trail.recovery import CompletedTransaction, RecoveryResult
from engine.trail.releases import Release, parse_release
from params.models import RmtHost

DEFAULT_MGRPORT = 7809
DEFAULT_TIMEOUT = 300
DEFAULT_FLUSH_BYTES = 30_000
DEFAULT_COMPRESS_THRESHOLD = 1_000
LINK_CODE = "OGG-01224"
_PORT_REPLY = re.compile(r"Collector listening on port (\d+)")


class LinkLost(PumpError):
    """The link to the Collector failed; ``name`` is its TCPERRS error name."""

    def __init__(self, name: str, text: str) -> None:
        super().__init__(LINK_CODE, f"TCP/IP error {name}: {text}")
        self.name = name


def _connect(host: str, port: int, family: int, timeout: float) -> socket.socket:
    last: OSError | None = None
    try:
        infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
    except OSError as exc:
        raise LinkLost("EHOSTUNREACH", f"cannot resolve {host}: {exc.strerror or exc}") from exc
    for fam, kind, proto, _, address in infos:
        sock = socket.socket(fam, kind, proto)
        sock.settimeout(timeout)
        try:
            sock.connect(address)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    assert last is not None
    raise LinkLost(error_name(last), f"cannot connect to {host}:{port}: {last.strerror or last}")


def ask_manager(host: str, port: int, family: int, timeout: float) -> tuple[str, int]:
    """(the Manager's address, the port of the Collector it started for us)."""
    sock = _connect(host, port, family, timeout)
    try:
        address = str(sock.getpeername()[0])
        sock.sendall((json.dumps({"text": "COLLECTOR"}) + "\n").encode())
        reply = sock.makefile("rb").readline(65536)
    except OSError as exc:
        raise LinkLost(error_name(exc), f"Manager {host}:{port}: {exc.strerror or exc}") from exc
    finally:
        sock.close()
    try:
        data = json.loads(reply)
        lines = [str(x) for x in data["lines"]]
    except (ValueError, KeyError, TypeError):
        raise LinkLost("EPROTO", f"Manager {host}:{port} gave no readable reply") from None
    text = " ".join(lines)
    found = _PORT_REPLY.search(text)
    if data.get("ok") and found:
        return address, int(found.group(1))
    name = (
        "EACCES" if "access denied" in text else "NODYNPORTS" if "NODYNPORTS" in text else "EREMOTE"
    )
    raise LinkLost(
        name, f"Manager {host}:{port} did not start a Collector: {text.removeprefix('ERROR: ')}"
    )


class RemoteSink:
    """A Collector writing the trail on the target host."""

    def __init__(self, home: Home, rmt: RmtHost, spec: TrailSpec) -> None:
        self.rmt = rmt
        self.spec = spec
        self.timeout = float(rmt.timeout or DEFAULT_TIMEOUT)
        self.flush_bytes = rmt.tcp_flush_bytes or DEFAULT_FLUSH_BYTES
        self.streaming = rmt.streaming
        self.acks = 0
        self._buf: list[bytes] = []
        self._buffered = 0
        self._last_send = time.monotonic()
        self._broken = False
        family = {4: socket.AF_INET, 6: socket.AF_INET6}.get(rmt.ip_version or 0, socket.AF_UNSPEC)
        material = b""
        if rmt.encrypt is not None:
            try:
                material = key_material(home, rmt.keyname or "")
            except EncryptError as exc:
                raise PumpError("OGG-01031", f"RMTHOST KEYNAME {rmt.keyname}: {exc}") from exc
        if rmt.port is not None:
            host, port = rmt.host, rmt.port
        else:
            host, port = ask_manager(rmt.host, rmt.mgrport or DEFAULT_MGRPORT, family, self.timeout)
        sock = _connect(host, port, family, self.timeout)
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if rmt.tcp_buf_size:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, rmt.tcp_buf_size)
        self.address = f"{host}:{port}"
        self.link = Link(
            sock,
            timeout=self.timeout,
            compress=rmt.compress,
            compress_threshold=(
                rmt.compress_threshold
                if rmt.compress_threshold is not None
                else DEFAULT_COMPRESS_THRESHOLD
            ),
        )
        try:
            self._handshake(material)
        except BaseException:
            self.link.close()
            raise

    def _guard(self, action: Callable[[], Any]) -> Any:
        if self._broken:
            raise LinkLost("ENOTCONN", f"the link to {self.address} is down")
        try:
            return action()
        except WireError as exc:
            self._broken = True
            raise LinkLost(exc.name, f"{self.address}: {exc.text}") from exc

    def _handshake(self, material: bytes) -> None:
        rmt = self.rmt
        nonce = new_nonce()
        hello = {
            "version": VERSION,
            "trail": self.spec.to_json(),
            "timeout": self.timeout,
            "compress": rmt.compress,
            "compress_threshold": self.link.compress_threshold,
            "tcp_buf_size": rmt.tcp_buf_size,
            "cipher": rmt.encrypt,
            "keyname": rmt.keyname,
            "nonce": nonce.hex(),
        }
        hello_bytes = json.dumps(hello).encode()

        def talk() -> dict[str, Any]:
            self.link.send(Kind.HELLO, hello_bytes)
            welcome = self.link.expect(Kind.WELCOME)
            if rmt.encrypt is not None:
                theirs = bytes.fromhex(str(welcome.json().get("nonce", "")))
                to_server, to_client = derive_keys(
                    material, rmt.encrypt, hello_bytes, welcome.payload, nonce, theirs
                )
                self.link.seal(to_server, to_client, client=True)
            self.link.send(Kind.OPEN, b"{}")
            return self.link.expect(Kind.OPENED).json()

        opened = self._guard(talk)
        last = opened.get("last")
        resume = opened.get("resume") or [0, 0]
        self.recovery = RecoveryResult(
            (
                CompletedTransaction(TrailPosition(*last["end"]), last["logcsn"], last["tranid"])
                if last
                else None
            ),
            int(opened.get("torn_bytes", 0)),
            int(opened.get("partial_records", 0)),
            str(opened.get("action", "none")),
            TrailPosition(*resume),
        )
        self.release: Release = parse_release(str(opened["release"]))
        self.position = TrailPosition(*opened["position"])

    # -- the restart questions -------------------------------------------------------------
    def _ask(self, op: str, at: TrailPosition, **extra: Any) -> Any:
        def talk() -> Any:
            self.link.send_json(Kind.QUERY, {"op": op, "seqno": at.seqno, "rba": at.rba, **extra})
            return self.link.expect(Kind.ANSWER).json().get("result")

        return self._guard(talk)

    def gap(self, written: TrailPosition, name: str) -> str | None:
        result = self._ask("gap", written, name=name)
        return None if result is None else str(result)

    def reaches(self, at: TrailPosition) -> bool:
        return bool(self._ask("reaches", at))

    def transactions_after(self, at: TrailPosition) -> int:
        return int(self._ask("count_after", at))

    # -- writing ---------------------------------------------------------------------------
    def _send_block(self) -> None:
        if not self._buf:
            return
        block = b"".join(self._buf)
        self._buf.clear()
        self._buffered = 0

        def talk() -> None:
            self.link.send(Kind.RECORDS, block)
            if not self.streaming:
                self.link.send(Kind.FLUSH)
                self.link.expect(Kind.FLUSHED)

        self._guard(talk)
        self._last_send = time.monotonic()

    def set_release(self, release: Release) -> None:
        self._send_block()
        self._guard(lambda: self.link.send_json(Kind.RELEASE, {"release": release.name}))
        self.release = release

    def define_table(self, table: TableDef) -> None:
        self._send_block()
        self._guard(
            lambda: self.link.send_json(
                Kind.DEFINE, {"table": table.table, "columns": list(table.column_names)}
            )
        )

    def append_many(self, records: Iterable[bytes]) -> None:
        for data in records:
            self._buf.append(data)
            self._buffered += len(data)
            if self._buffered >= self.flush_bytes:
                self._send_block()

    def sync(self) -> TrailPosition:
        self._send_block()

        def talk() -> TrailPosition:
            self.link.send(Kind.SYNC)
            ack = self.link.expect(Kind.ACK).json()
            return TrailPosition(int(ack["seqno"]), int(ack["rba"]))

        self.position = self._guard(talk)
        self.acks += 1
        self._last_send = time.monotonic()
        return self.position

    def idle(self) -> None:
        """Keep an idle link alive (PING every TIMEOUT/3 seconds)."""
        if time.monotonic() - self._last_send >= self.timeout / 3:
            self._guard(lambda: self.link.send(Kind.PING))
            self._last_send = time.monotonic()

    def close(self) -> None:
        """Say goodbye (the Collector closes the trail) when the link is up; never raises."""
        if not self._broken:
            with contextlib.suppress(LinkLost):
                self._send_block()

                def talk() -> None:
                    self.link.send(Kind.BYE)
                    self.link.expect(Kind.BYE)

                self._guard(talk)
        self.link.close()


def remote_opener(home: Home, rmt: RmtHost) -> Callable[[TrailSpec], TrailSink]:
    def opener(spec: TrailSpec) -> TrailSink:
        return RemoteSink(home, rmt, spec)

    return opener
