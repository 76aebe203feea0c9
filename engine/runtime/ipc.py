"""SEND requests over a Unix-domain socket: a tiny JSON request/reply protocol.

The client connects to ``dirpcs/<name>.sock``, writes one JSON object and a newline
(``{"text": "SHOWTRANS COUNT 5"}``) and reads one JSON reply line
(``{"ok": true, "lines": [...]}``). The server looks the first word of the text up in a
:class:`HandlerTable` (upper-cased) and runs the handler in its own thread; an unknown word gets
an error reply listing what the process understands. Sockets are created mode 0600, and a
request from any user but our own is refused (the kernel says who connected: ``SO_PEERCRED``).
A listener serves at most :data:`MAX_CONNECTIONS` clients at once and gives each
:data:`READ_TIMEOUT` seconds to send its line. The TCP listener (the Manager's PORT) puts every
request through a gate (the Manager's ACCESSRULEs, :mod:`engine.manager.access`), refusing by
default.

Errors: :class:`IpcError` (an ``OSError``) when nobody listens or the reply is malformed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
import socketserver
import struct
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_MESSAGE = 16 * 1024 * 1024
MAX_SOCKET_PATH = 107


class IpcError(OSError):
    """No process answers on the socket, or it answered something unreadable."""


@dataclass(frozen=True)
class Request:
    """One SEND request: the command word (upper-case), the words after it, the text as typed."""

    command: str
    args: tuple[str, ...]
    text: str
    peer: Peer | None = None
    """Who sent it (set by the listener; the Manager's COLLECTOR request serves that address)."""

    @classmethod
    def parse(cls, text: str) -> Request:
        words = text.replace(",", " ").split()
        if not words:
            return cls("", (), text)
        return cls(words[0].upper(), tuple(words[1:]), text)


@dataclass(frozen=True)
class Reply:
    lines: tuple[str, ...]
    ok: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "lines": list(self.lines)}

    @classmethod
    def from_json(cls, data: Any) -> Reply:
        if not isinstance(data, dict) or not isinstance(data.get("lines"), list):
            raise IpcError("malformed reply")
        return cls(tuple(str(x) for x in data["lines"]), bool(data.get("ok", False)))

    @classmethod
    def error(cls, *lines: str) -> Reply:
        return cls(tuple(lines), ok=False)


Handler = Callable[[Request], Reply]


class HandlerTable:
    """Request word → handler. Engines add theirs with :meth:`register` (a decorator too)."""

    def __init__(self, handlers: Mapping[str, Handler] | None = None) -> None:
        self._handlers: dict[str, Handler] = dict(handlers or {})

    def register(self, *names: str) -> Callable[[Handler], Handler]:
        def add(handler: Handler) -> Handler:
            for name in names:
                self._handlers[name.upper()] = handler
            return handler

        return add

    def add(self, name: str, handler: Handler) -> None:
        self._handlers[name.upper()] = handler

    def names(self) -> list[str]:
        return sorted(self._handlers)

    def dispatch(self, request: Request) -> Reply:
        handler = self._handlers.get(request.command)
        if handler is None:
            known = ", ".join(self.names())
            return Reply.error(
                f"ERROR: {request.command or 'empty request'} is not a valid request "
                f"for this process (valid: {known})."
            )
        return handler(request)


@contextlib.contextmanager
def _short_address(path: Path) -> Iterator[str]:
    """An address for ``path`` that fits a Unix socket (108 bytes): the path itself, or, for a
    long path, its name while the process's working directory is briefly its directory."""
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        yield str(path)
        return
    if len(os.fsencode(path.name)) > MAX_SOCKET_PATH:
        raise IpcError(f"socket name too long for a Unix socket: {path.name}")
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        yield path.name
    finally:
        os.chdir(cwd)


@dataclass(frozen=True)
class Peer:
    """Who is on the other end: for a Unix socket the kernel's word (``SO_PEERCRED``), for TCP
    the address (and, on loopback, the local user that owns the client socket, if known)."""

    address: str
    uid: int | None = None
    pid: int | None = None


Gate = Callable[[Peer, Request], Reply | None]
"""Decides per request: ``None`` lets it through, a reply refuses it (sent instead)."""


def owner_only(peer: Peer, _: Request) -> Reply | None:
    """The Unix-socket gate: only our own effective user may send requests."""
    if peer.uid == os.geteuid():
        return None
    return Reply.error(
        f"ERROR: access denied: only user {_user(os.geteuid())} may send requests to this process."
    )


def _user(uid: int | None) -> str:
    if uid is None:
        return "unknown"
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


MAX_CONNECTIONS = 16
"""Connections served at once per listener; more are answered "busy" and closed."""
READ_TIMEOUT = 10.0
"""Seconds a client has to send its request line (and to take the reply)."""


class _Handler(socketserver.StreamRequestHandler):
    server: _Server | _TcpServer
    timeout = READ_TIMEOUT

    def handle(self) -> None:
        try:
            raw = self.rfile.readline(self.server.max_message)
        except OSError:  # the client sent nothing in time: drop it
            return
        if raw and not raw.endswith(b"\n") and len(raw) >= self.server.max_message:
            self._reply(Reply.error("ERROR: request too long."))
            return
        try:
            data = json.loads(raw)
            request = Request.parse(str(data["text"]))
        except (ValueError, KeyError, TypeError):
            self._reply(Reply.error("ERROR: malformed request."))
            return
        peer = self.server.peer_of(self.request, self.client_address)
        request = dataclasses.replace(request, peer=peer)
        refusal = self.server.gate(peer, request)
        if refusal is not None:
            self.server.on_refused(request, refusal)
            self._reply(refusal)
            return
        try:
            reply = self.server.table.dispatch(request)
        except Exception as exc:  # a failing handler must not kill the server thread
            self.server.on_error(exc)
            reply = Reply.error(f"ERROR: request failed: {exc}")
        self._reply(reply)

    def _reply(self, reply: Reply) -> None:
        with contextlib.suppress(OSError):
            self.wfile.write((json.dumps(reply.to_json()) + "\n").encode())


class _Bounded(socketserver.ThreadingMixIn):
    """At most :data:`MAX_CONNECTIONS` handler threads; the rest are told "busy" at once."""

    daemon_threads = True
    block_on_close = False
    slots: threading.BoundedSemaphore

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.sendall(
                    (
                        json.dumps(Reply.error("ERROR: too many connections; retry.").to_json())
                        + "\n"
                    ).encode()
                )
            self.shutdown_request(request)  # type: ignore[attr-defined]
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


def _no_refusal_log(request: Request, reply: Reply) -> None:
    return None


class _Server(_Bounded, socketserver.UnixStreamServer):
    max_message = MAX_MESSAGE

    def __init__(
        self,
        path: Path,
        table: HandlerTable,
        on_error: Callable[[BaseException], None],
        gate: Gate = owner_only,
        on_refused: Callable[[Request, Reply], None] = _no_refusal_log,
    ):
        self.table = table
        self.on_error = on_error
        self.gate = gate
        self.on_refused = on_refused
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        with _short_address(path) as address:
            super().__init__(address, _Handler)

    def peer_of(self, sock: socket.socket, _: Any) -> Peer:
        try:
            pid, uid, _gid = struct.unpack(
                "3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            )
        except OSError:
            return Peer("unix")
        return Peer("unix", uid, pid)


class IpcServer:
    """Serves a :class:`HandlerTable` on a Unix socket (mode 0600) in a background thread.

    Requests from a user other than our own are refused whatever the socket's mode
    (:func:`owner_only`, the kernel's ``SO_PEERCRED``); ``on_refused`` is told of each."""

    def __init__(
        self,
        path: Path,
        table: HandlerTable,
        on_error: Callable[[BaseException], None] = lambda exc: None,
        on_refused: Callable[[Request, Reply], None] = _no_refusal_log,
    ) -> None:
        self.path = path
        path.unlink(missing_ok=True)
        old = os.umask(0o177)
        try:
            self._server = _Server(path, table, on_error, owner_only, on_refused)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,), daemon=True)

    def start(self) -> IpcServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.path.unlink(missing_ok=True)


@contextlib.contextmanager
def serving(path: Path, table: HandlerTable) -> Iterator[IpcServer]:
    server = IpcServer(path, table).start()
    try:
        yield server
    finally:
        server.close()


def send_request(path: Path, text: str, timeout: float = 30.0) -> Reply:
    """Send ``text`` to the process listening on ``path`` and return its reply."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            with _short_address(path) as address:
                sock.connect(address)
            sock.sendall((json.dumps({"text": text}) + "\n").encode())
            chunks: list[bytes] = []
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                if chunk.endswith(b"\n"):
                    break
    except OSError as exc:
        raise IpcError(f"no process answers on {path.name}: {exc.strerror or exc}") from exc
    try:
        return Reply.from_json(json.loads(b"".join(chunks)))
    except ValueError as exc:
        raise IpcError(f"unreadable reply from {path.name}") from exc


TCP_MAX_MESSAGE = 64 * 1024


def deny_all(peer: Peer, request: Request) -> Reply | None:
    return Reply.error(
        f"ERROR: access denied to {request.command or 'request'} from {peer.address}."
    )


class _TcpServer(_Bounded, socketserver.TCPServer):
    allow_reuse_address = True
    max_message = TCP_MAX_MESSAGE

    def __init__(
        self,
        addr: tuple[str, int],
        table: HandlerTable,
        gate: Gate,
        on_refused: Callable[[Request, Reply], None],
    ):
        self.table = table
        self.on_error: Callable[[BaseException], None] = lambda exc: None
        self.gate = gate
        self.on_refused = on_refused
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(addr, _Handler)

    def peer_of(self, sock: socket.socket, client_address: Any) -> Peer:
        host, port = str(client_address[0]), int(client_address[1])
        return Peer(host, loopback_uid(host, port, self.server_address[1]))


def loopback_uid(host: str, port: int, server_port: int) -> int | None:
    """On loopback, the uid owning the client's socket (``/proc/net/tcp``), else ``None``."""
    if host != "127.0.0.1":
        return None
    local = f"0100007F:{port:04X}"
    remote = f"0100007F:{server_port:04X}"
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 7 and fields[1] == local and fields[2] == remote:
            return int(fields[7])
    return None


class TcpListener:
    """The same protocol on a TCP port (the Manager's PORT), bound when constructed; every
    request goes through ``gate`` first (default: all refused)."""

    def __init__(
        self,
        host: str,
        port: int,
        table: HandlerTable,
        gate: Gate = deny_all,
        on_refused: Callable[[Request, Reply], None] = _no_refusal_log,
    ) -> None:
        self._server = _TcpServer((host, port), table, gate, on_refused)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,), daemon=True)

    def start(self) -> TcpListener:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
