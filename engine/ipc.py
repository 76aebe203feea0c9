"""SEND requests over a Unix-domain socket: a tiny JSON request/reply protocol.

The client connects to ``dirpcs/<name>.sock``, writes one JSON object and a newline
(``{"text": "SHOWTRANS COUNT 5"}``) and reads one JSON reply line
(``{"ok": true, "lines": [...]}``). The server looks the first word of the text up in a
:class:`HandlerTable` (upper-cased) and runs the handler in its own thread; an unknown word gets
an error reply listing what the process understands. Sockets are created mode 0600.

Errors: :class:`IpcError` (an ``OSError``) when nobody listens or the reply is malformed.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import socketserver
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


class _Handler(socketserver.StreamRequestHandler):
    server: _Server | _TcpServer

    def handle(self) -> None:
        raw = self.rfile.readline(MAX_MESSAGE)
        try:
            data = json.loads(raw)
            reply = self.server.table.dispatch(Request.parse(str(data["text"])))
        except (ValueError, KeyError, TypeError):
            reply = Reply.error("ERROR: malformed request.")
        except Exception as exc:  # a failing handler must not kill the server thread
            self.server.on_error(exc)
            reply = Reply.error(f"ERROR: request failed: {exc}")
        with contextlib.suppress(OSError):
            self.wfile.write((json.dumps(reply.to_json()) + "\n").encode())


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: Path, table: HandlerTable, on_error: Callable[[BaseException], None]):
        self.table = table
        self.on_error = on_error
        with _short_address(path) as address:
            super().__init__(address, _Handler)


class IpcServer:
    """Serves a :class:`HandlerTable` on a Unix socket (mode 0600) in a background thread."""

    def __init__(
        self,
        path: Path,
        table: HandlerTable,
        on_error: Callable[[BaseException], None] = lambda exc: None,
    ) -> None:
        self.path = path
        path.unlink(missing_ok=True)
        old = os.umask(0o177)
        try:
            self._server = _Server(path, table, on_error)
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


class _TcpServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, addr: tuple[str, int], table: HandlerTable, on_error: Callable[[BaseException], None]
    ):
        self.table = table
        self.on_error = on_error
        super().__init__(addr, _Handler)


class TcpListener:
    """The same protocol on a TCP port (the Manager's PORT), bound when constructed."""

    def __init__(self, host: str, port: int, table: HandlerTable) -> None:
        self._server = _TcpServer((host, port), table, lambda exc: None)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,), daemon=True)

    def start(self) -> TcpListener:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
