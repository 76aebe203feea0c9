"""The Collector: receives a pump's trail records over TCP and writes its RMTTRAIL on this host.

Started two ways, as in GoldenGate:

- **dynamic**: the target's Manager, asked by a pump (request ``COLLECTOR`` on its PORT, allowed
  by an ``ACCESSRULE, PROG COLLECTOR`` rule), binds a port of DYNAMICPORTLIST (or one the system
  chooses) and starts ``python -m engine.manager.collector --home H --fd N --peer ADDRESS``: it
  serves that one connection, from that one address, and ends with it;
- **static**: ``python -m engine.manager.collector --home H --port P`` (GoldenGate's ``server -p
  P``) serves every pump that connects to P and that the home's mgr.prm ACCESSRULEs allow
  (PROG COLLECTOR or SERVER), one thread each; the pump names it with ``RMTHOST host, PORT P``.

A session (:class:`CollectorSession`) follows :mod:`engine.runtime.wire`: it checks the HELLO
(the trail must resolve inside this home; a cipher needs its KEYNAME in this home's ENCKEYS),
opens the trail with append-mode recovery (waiting up to the pump's TIMEOUT for a Collector
that still holds it after a lost link), answers the pump's restart questions, appends what
arrives and acknowledges a SYNC only after fsync. A failure to write (a full disk) is sent to
the pump as an ERROR with its TCPERRS name (ENOSPC) and the session ends; what was appended and
not acknowledged is recovered by the next session (append-mode recovery), and the pump resends
from its checkpoint, skipping what the trail already holds whole.

Events go to this home's ggserr.log (component "Oracle GoldenGate Collector").
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from engine.home.enckeys import EncryptError, key_material
from engine.home.layout import Home
from engine.manager.access import AccessPolicy
from engine.manager.outputdirs import OutputRefused, check_output
from engine.manager.params import ManagerParamError, check_manager_params
from engine.pump.sink import TrailSpec, transactions_after
from engine.runtime.events import Event, Severity, log_event
from engine.runtime.wire import (
    CIPHERS,
    VERSION,
    Frame,
    Kind,
    Link,
    WireError,
    derive_keys,
    new_nonce,
)
from engine.trail.errors import TrailError
from engine.trail.model import TableDef, TrailPosition
from engine.trail.reader import reaches, write_gap
from engine.trail.releases import parse_release
from engine.trail.writer import TrailWriter, split_records

COLLECTOR_COMPONENT = "Oracle GoldenGate Collector"
DEFAULT_TIMEOUT = 300.0
"""Seconds without a frame before the link counts as lost (RMTHOST TIMEOUT overrides)."""
LOCK_POLL = 0.1

Emit = Callable[[str, Severity, str], None]


class Refused(Exception):
    """The session cannot go on; ``name`` is the TCPERRS name the pump sees, ``code`` the
    OGG message ggserr.log gets."""

    def __init__(self, name: str, text: str, code: str = "OGG-01232") -> None:
        super().__init__(text)
        self.name = name
        self.text = text
        self.code = code


def trail_path(home: Home, text: str, emit: Emit | None = None) -> Path:
    """``text`` (RMTTRAIL as the pump's file writes it) on this host: relative names are in
    the home; the directory must be one GLOBALS ALLOWOUTPUTDIR allows (without it: inside the
    home, never in the home's own directories: engine/manager/outputdirs.py)."""
    if any(ord(c) < 32 for c in text) or len(text.encode("utf-8", "surrogatepass")) > 4096:
        raise Refused("EACCES", f"RMTTRAIL {text[:80]!r} is not a file name")
    path = Path(text)
    try:
        full = (path if path.is_absolute() else home.root / path).resolve()
    except (OSError, ValueError) as exc:  # a loop of links, a name too long
        raise Refused("EACCES", f"RMTTRAIL {text[:80]!r} is not usable ({exc})") from None
    try:
        check_output(home, full, text, emit or home_emit(home))
    except OutputRefused as exc:
        raise Refused("EACCES", exc.text, exc.code) from None
    return full


def home_emit(home: Home) -> Emit:
    def emit(code: str, severity: Severity, text: str) -> None:
        log_event(home.ggserr_log, Event(code, severity, text, COLLECTOR_COMPONENT))

    return emit


class CollectorSession:
    """One pump's connection, served to its end."""

    def __init__(self, home: Home, sock: socket.socket, peer: str, emit: Emit) -> None:
        self.home = home
        self.peer = peer
        self.emit = emit
        self.link = Link(sock, timeout=DEFAULT_TIMEOUT)
        self.writer: TrailWriter | None = None
        self.spec: TrailSpec | None = None

    def serve(self) -> None:
        try:
            self._serve()
        except Refused as exc:
            self.emit(exc.code, Severity.ERROR, f"Collector for {self.peer}: {exc.text}.")
            told = exc.text if exc.code == "OGG-01232" else f"{exc.code} {exc.text}"
            with contextlib.suppress(WireError):  # the pump's abend line names the code
                self.link.send_json(Kind.ERROR, {"name": exc.name, "text": told})
        except WireError as exc:
            self.emit(
                "OGG-01232",
                Severity.WARNING,
                f"Collector for {self.peer}: the link ended ({exc.name}: {exc.text}).",
            )
            if exc.name in ("EDECRYPT", "EPROTO"):  # tell the pump (sealed, if keys differ:
                with contextlib.suppress(WireError):  # then it fails to open it, EDECRYPT)
                    self.link.send_json(Kind.ERROR, {"name": exc.name, "text": exc.text})
        finally:
            self._close()

    def _close(self) -> None:
        if self.writer is not None:
            with contextlib.suppress(TrailError, OSError):
                self.writer.close()
            self.writer = None
        self.link.close()

    def _serve(self) -> None:
        hello_frame = self.link.expect(Kind.HELLO)
        hello = hello_frame.json()
        if hello.get("version") != VERSION:
            raise Refused("EPROTO", f"protocol version {hello.get('version')} is not {VERSION}")
        try:
            self.spec = TrailSpec.from_json(hello["trail"])
        except (KeyError, TypeError, ValueError) as exc:
            raise Refused("EPROTO", f"HELLO names no usable trail ({exc})") from None
        timeout = hello.get("timeout")
        if isinstance(timeout, int | float) and timeout > 0:
            self.link.sock.settimeout(float(timeout))
        self.link.compress = bool(hello.get("compress"))
        threshold = hello.get("compress_threshold")
        if isinstance(threshold, int):
            self.link.compress_threshold = threshold
        if isinstance(hello.get("tcp_buf_size"), int):
            with contextlib.suppress(OSError):
                self.link.sock.setsockopt(
                    socket.SOL_SOCKET, socket.SO_RCVBUF, hello["tcp_buf_size"]
                )
        cipher, keyname = hello.get("cipher"), hello.get("keyname")
        material = b""
        if cipher is not None:
            if cipher not in CIPHERS or not isinstance(keyname, str):
                raise Refused("EPROTO", f"cipher {cipher} with KEYNAME {keyname} is not usable")
            try:
                material = key_material(self.home, keyname)
            except EncryptError as exc:
                raise Refused("ENOKEY", f"KEYNAME {keyname}: {exc}") from None
        path = trail_path(self.home, self.spec.path, self.emit)
        server_nonce = new_nonce()
        welcome = Frame(Kind.WELCOME, b'{"nonce": "' + server_nonce.hex().encode() + b'"}')
        self.link.send(welcome.kind, welcome.payload)
        if cipher is not None:
            try:
                client_nonce = bytes.fromhex(str(hello.get("nonce", "")))
            except ValueError:
                raise Refused("EPROTO", "HELLO nonce is not hex") from None
            to_server, to_client = derive_keys(
                material, cipher, hello_frame.payload, welcome.payload, client_nonce, server_nonce
            )
            self.link.seal(to_client, to_server, client=False)
        self.link.expect(Kind.OPEN)
        self.writer = self._open(path, float(timeout or DEFAULT_TIMEOUT))
        rec = self.writer.recovery
        last = rec.last_transaction if rec is not None else None
        self.link.send_json(
            Kind.OPENED,
            {
                "action": rec.action if rec else "none",
                "partial_records": rec.partial_records if rec else 0,
                "torn_bytes": rec.torn_bytes if rec else 0,
                "resume": _pos(rec.resume) if rec else None,
                "last": (
                    {"end": _pos(last.end), "logcsn": last.logcsn, "tranid": last.tranid}
                    if last is not None
                    else None
                ),
                "release": self.writer.release.name,
                "position": _pos(self.writer.position),
            },
        )
        self.emit(
            "OGG-01229",
            Severity.INFO,
            f"Connected to {self.peer}: writing {self.spec.path} for {self.spec.group}.",
        )
        self._loop()

    def _open(self, path: Path, wait: float) -> TrailWriter:
        assert self.spec is not None
        deadline = time.monotonic() + wait
        while True:
            try:
                return self.spec.open_writer(path)
            except TrailError as exc:
                busy = "being written by another writer" in str(exc)
                if not busy:
                    raise Refused(_trail_error_name(exc), f"cannot open {path}: {exc}") from None
                if time.monotonic() >= deadline:
                    raise Refused(
                        "ETRAILBUSY", f"{path} is still written by another Collector"
                    ) from None
                time.sleep(LOCK_POLL)

    def _loop(self) -> None:
        writer = self.writer
        assert writer is not None
        handlers: dict[Kind, Callable[[Frame], object]] = {
            Kind.QUERY: self._query,
            Kind.RELEASE: lambda f: writer.set_release(parse_release(str(f.json()["release"]))),
            Kind.DEFINE: self._define,
            Kind.RECORDS: lambda f: writer.append_many(split_records(f.payload)),
            Kind.FLUSH: lambda f: self.link.send(Kind.FLUSHED),
            Kind.SYNC: self._sync,
            Kind.PING: lambda f: None,
        }
        while True:
            frame = self.link.receive()
            if frame.kind == Kind.BYE:
                writer.close()
                self.writer = None
                self.link.send(Kind.BYE)
                self.emit("OGG-01230", Severity.INFO, f"{self.peer} closed its connection.")
                return
            handler = handlers.get(frame.kind)
            if handler is None:
                raise Refused("EPROTO", f"unexpected {frame.kind.name} frame")
            try:
                handler(frame)
            except (TrailError, OSError) as exc:
                if isinstance(exc, WireError):
                    raise
                raise Refused(
                    _trail_error_name(exc), f"cannot write {self.spec_path}: {exc}"
                ) from None
            except (KeyError, TypeError, ValueError) as exc:
                raise Refused("EPROTO", f"bad {frame.kind.name} frame: {exc}") from None

    @property
    def spec_path(self) -> str:
        return self.spec.path if self.spec else "?"

    def _define(self, frame: Frame) -> None:
        assert self.writer is not None
        data = frame.json()
        self.writer.define_table(
            TableDef(str(data["table"]), tuple(str(c) for c in data["columns"]))
        )

    def _sync(self, _: Frame) -> None:
        assert self.writer is not None
        durable = self.writer.sync()
        self.link.send_json(Kind.ACK, {"seqno": durable.seqno, "rba": durable.rba})

    def _query(self, frame: Frame) -> None:
        assert self.writer is not None
        data = frame.json()
        at = TrailPosition(int(data["seqno"]), int(data["rba"]))
        trail = self.writer.trail
        op = data.get("op")
        result: object
        if op == "gap":
            result = write_gap(trail, at, str(data.get("name", "RMTTRAIL")))
        elif op == "reaches":
            result = reaches(trail, at)
        elif op == "count_after":
            result = transactions_after(trail, at)
        else:
            raise Refused("EPROTO", f"unknown QUERY {op}")
        self.link.send_json(Kind.ANSWER, {"result": result})


def _pos(p: TrailPosition) -> list[int]:
    return [p.seqno, p.rba]


def _trail_error_name(exc: BaseException) -> str:
    """ENOSPC for a full disk (however deep the OSError), else the errno's name."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno is not None:
            return errno.errorcode.get(seen.errno, "EIO")
        if "No space left" in str(seen):
            return "ENOSPC"
        seen = seen.__cause__ or seen.__context__
    return "EIO"


# -- the processes -------------------------------------------------------------------------
def serve_dynamic(home: Home, sock: socket.socket, peer: str, wait: float) -> int:
    """Accept one connection from ``peer`` (within ``wait`` seconds) and serve it."""
    emit = home_emit(home)
    deadline = time.monotonic() + wait
    try:
        while True:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                conn, address = sock.accept()
            except OSError:
                emit("OGG-01232", Severity.WARNING, f"No pump connected from {peer} in {wait:g} s.")
                return 1
            if address[0] == peer:
                break
            emit(
                "OGG-00912", Severity.WARNING, f"Collector refused {address[0]}: it serves {peer}."
            )
            conn.close()
    finally:
        sock.close()
    CollectorSession(home, conn, peer, emit).serve()
    return 0


def serve_static(home: Home, sock: socket.socket, stop: threading.Event | None = None) -> int:
    """Serve every allowed pump that connects, one thread each, until ``stop``."""
    emit = home_emit(home)
    sock.settimeout(0.2)
    emit("OGG-01678", Severity.INFO, f"Collector listening on port {sock.getsockname()[1]}.")
    while stop is None or not stop.is_set():
        try:
            conn, address = sock.accept()
        except TimeoutError:
            continue
        except OSError:
            return 1
        peer = str(address[0])
        try:
            params = check_manager_params(home.dirprm / "mgr.prm", home.root)
        except ManagerParamError as exc:
            emit("OGG-00303", Severity.ERROR, f"Problem in param file [mgr.prm]: {exc}.")
            conn.close()
            continue
        rule = AccessPolicy.of(params.access_rules).decide("COLLECTOR", peer)
        if rule is None or not rule.allow:
            emit(
                "OGG-00912", Severity.WARNING, f"Collector refused {peer}: no ACCESSRULE allows it."
            )
            with contextlib.suppress(OSError, WireError):
                Link(conn, timeout=5).send_json(
                    Kind.ERROR, {"name": "EACCES", "text": f"access denied to {peer}"}
                )
            conn.close()
            continue
        session = CollectorSession(home, conn, peer, emit)
        threading.Thread(target=session.serve, daemon=True).start()
    sock.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.manager.collector")
    parser.add_argument("--home", required=True)
    parser.add_argument("--port", type=int, help="a static Collector on this port")
    parser.add_argument("--host", default="", help="the address to listen on (default: all)")
    parser.add_argument("--fd", type=int, help="the listening socket the Manager bound")
    parser.add_argument("--peer", help="the only address the dynamic Collector serves")
    parser.add_argument("--wait", type=float, default=60.0)
    args = parser.parse_args(argv)
    home = Home(Path(args.home).resolve())
    if args.fd is not None and args.peer:
        sock = socket.socket(fileno=args.fd)
        return serve_dynamic(home, sock, args.peer, args.wait)
    if args.port is None:
        parser.error("give --port (static) or --fd and --peer (started by the Manager)")
    try:
        sock = socket.create_server((args.host, args.port), reuse_port=False)
    except OSError as exc:
        sys.stderr.write(f"Collector cannot listen on port {args.port}: {exc.strerror or exc}\n")
        return 2
    started = datetime.now().isoformat(" ", "seconds")
    sys.stdout.write(f"Collector listening on port {sock.getsockname()[1]} since {started}.\n")
    sys.stdout.flush()
    return serve_static(home, sock)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
