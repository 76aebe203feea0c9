"""The pump ==> Collector wire protocol: frames, their kinds, compression and encryption.

A connection carries frames both ways. A frame on the wire is a 4-byte big-endian length and
that many bytes of body; the body is one byte of kind, one byte of flags (bit 0: the payload
is zlib-compressed) and the payload. Once encryption is agreed, each body is sealed with
AES-GCM (the 16-byte tag after it): the nonce is 4 bytes naming the direction and an 8-byte
frame counter, so a frame replayed, dropped, reordered or changed fails to open.

The conversation (client = pump, server = Collector):

1. ``HELLO`` (JSON, clear): protocol version, group, RMTTRAIL and its options, the cipher and
   KEYNAME (or none), 16 random bytes (hex). ``WELCOME`` (JSON, clear): the server's 16 random
   bytes, or ``ERROR``. With a cipher, both sides derive one key per direction with HKDF-SHA256
   from the ENCKEYS key of KEYNAME (the same name and bytes on both hosts), salted with both
   random strings and bound to the HELLO and WELCOME bytes; every later frame is sealed.
2. ``OPEN`` (JSON {}): the server opens RMTTRAIL with append-mode recovery; ``OPENED`` (JSON)
   says what recovery found and did.
3. ``QUERY`` (JSON {op, seqno, rba}) ==> ``ANSWER`` (JSON {result}): the pump's restart
   questions about the remote trail (``gap``, ``reaches``, ``count_after``).
4. ``RELEASE`` / ``DEFINE`` (JSON) and ``RECORDS`` (trail records, concatenated, as encoded):
   appended in order, not acknowledged one by one (streaming). ``FLUSH`` ==> ``FLUSHED``: the
   server has them (NOSTREAMING sends one after every block). ``SYNC`` ==> ``ACK`` (JSON
   {seqno, rba}): everything before is durable (fsync) up to that position; the pump's
   checkpoint moves only with it. ``PING``: keeps an idle link alive (no reply).
5. ``BYE`` ==> ``BYE`` and the server closes the trail. ``ERROR`` (JSON {code, name, text}):
   the server stops; ``name`` is the TCPERRS error the pump's retry rules look up.

Errors: :class:`WireError` (an ``OSError``: the link failed or spoke out of turn; ``name`` is
its TCPERRS error name).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import socket
import struct
import zlib
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

VERSION = 1
MAX_FRAME = 256 * 1024 * 1024
"""The largest body a side accepts (a frame holds whole records; one record may be large)."""
CIPHERS = {"AES128": 16, "AES192": 24, "AES256": 32}
_LENGTH = struct.Struct(">I")
_COMPRESSED = 1
_TAG = 16


class Kind(IntEnum):
    HELLO = 1
    WELCOME = 2
    OPEN = 3
    OPENED = 4
    QUERY = 5
    ANSWER = 6
    RELEASE = 7
    DEFINE = 8
    RECORDS = 9
    FLUSH = 10
    FLUSHED = 11
    SYNC = 12
    ACK = 13
    PING = 14
    BYE = 15
    ERROR = 16


class WireError(OSError):
    """The link failed, timed out, or the other side broke the protocol; ``name`` is the
    TCPERRS error name (ECONNRESET, ETIMEDOUT, ...) that decides whether to retry."""

    def __init__(self, name: str, text: str) -> None:
        super().__init__(text)
        self.name = name
        self.text = text


def error_name(exc: BaseException) -> str:
    """The TCPERRS name of an exception of the socket layer."""
    if isinstance(exc, WireError):
        return exc.name
    if isinstance(exc, TimeoutError | socket.timeout):
        return "ETIMEDOUT"
    if isinstance(exc, OSError) and exc.errno is not None:
        return errno.errorcode.get(exc.errno, f"E{exc.errno}")
    return "ECONNRESET"


@dataclass(frozen=True)
class Frame:
    kind: Kind
    payload: bytes

    def json(self) -> dict[str, Any]:
        try:
            data = json.loads(self.payload)
        except ValueError as exc:
            raise WireError("EPROTO", f"{self.kind.name} frame is not JSON") from exc
        if not isinstance(data, dict):
            raise WireError("EPROTO", f"{self.kind.name} frame is not a JSON object")
        return data


def derive_keys(
    material: bytes, cipher: str, hello: bytes, welcome: bytes, client: bytes, server: bytes
) -> tuple[bytes, bytes]:
    """(client ==> server key, server ==> client key) for ``cipher`` from a key's bytes."""
    size = CIPHERS[cipher]
    bound = hashlib.sha256(hello + b"\0" + welcome).digest()
    out = []
    for direction in (b"c2s", b"s2c"):
        kdf = HKDF(
            hashes.SHA256(),
            size,
            salt=client + server,
            info=b"ggsci collector " + cipher.encode() + b" " + direction + bound,
        )
        out.append(kdf.derive(material))
    return out[0], out[1]


class Link:
    """One side of a connection: writes and reads frames, compressing (payloads of at least
    ``compress_threshold`` bytes when ``compress``) and sealing (after :meth:`seal`)."""

    def __init__(
        self,
        sock: socket.socket,
        *,
        timeout: float | None,
        compress: bool = False,
        compress_threshold: int = 1000,
    ) -> None:
        self.sock = sock
        sock.settimeout(timeout)
        self.compress = compress
        self.compress_threshold = compress_threshold
        self._send_aead: AESGCM | None = None
        self._recv_aead: AESGCM | None = None
        self._send_dir = b""
        self._recv_dir = b""
        self._sent = 0
        self._received = 0
        self.bytes_sent = 0
        self.bytes_payload = 0

    def seal(self, send_key: bytes, recv_key: bytes, *, client: bool) -> None:
        self._send_aead, self._recv_aead = AESGCM(send_key), AESGCM(recv_key)
        self._send_dir, self._recv_dir = (b"c2s\0", b"s2c\0") if client else (b"s2c\0", b"c2s\0")

    # -- writing ---------------------------------------------------------------------------
    def encode(self, kind: Kind, payload: bytes) -> bytes:
        flags = 0
        if self.compress and len(payload) >= self.compress_threshold:
            packed = zlib.compress(payload, 1)
            if len(packed) < len(payload):
                payload, flags = packed, _COMPRESSED
        body = bytes((kind, flags)) + payload
        if self._send_aead is not None:
            nonce = self._send_dir + self._sent.to_bytes(8, "big")
            self._sent += 1
            body = self._send_aead.encrypt(nonce, body, None)
        if len(body) > MAX_FRAME:
            raise WireError("EMSGSIZE", f"a frame of {len(body)} bytes is over {MAX_FRAME}")
        return _LENGTH.pack(len(body)) + body

    def send(self, kind: Kind, payload: bytes = b"") -> None:
        data = self.encode(kind, payload)
        self.bytes_payload += len(payload)
        self.bytes_sent += len(data)
        try:
            self.sock.sendall(data)
        except OSError as exc:
            raise WireError(error_name(exc), f"send failed: {exc.strerror or exc}") from exc

    def send_json(self, kind: Kind, data: dict[str, Any]) -> None:
        self.send(kind, json.dumps(data).encode())

    # -- reading ---------------------------------------------------------------------------
    def _exactly(self, n: int) -> bytes:
        chunks: list[bytes] = []
        left = n
        while left:
            try:
                chunk = self.sock.recv(min(left, 1 << 20))
            except OSError as exc:
                name = error_name(exc)
                raise WireError(name, f"receive failed: {exc.strerror or name}") from exc
            if not chunk:
                raise WireError("ECONNRESET", "the connection was closed by the other side")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def receive(self) -> Frame:
        (length,) = _LENGTH.unpack(self._exactly(_LENGTH.size))
        if length < 2 or length > MAX_FRAME:
            raise WireError("EPROTO", f"a frame of {length} bytes is not valid")
        body = self._exactly(length)
        if self._recv_aead is not None:
            nonce = self._recv_dir + self._received.to_bytes(8, "big")
            self._received += 1
            try:
                body = self._recv_aead.decrypt(nonce, body, None)
            except InvalidTag:
                raise WireError(
                    "EDECRYPT",
                    "a frame does not decrypt: the two hosts' ENCKEYS keys of this KEYNAME "
                    "differ, or the stream was changed",
                ) from None
        try:
            kind = Kind(body[0])
        except ValueError:
            raise WireError("EPROTO", f"unknown frame kind {body[0]}") from None
        payload = body[2:]
        if body[1] & _COMPRESSED:
            try:
                inflater = zlib.decompressobj()
                payload = inflater.decompress(payload, MAX_FRAME)
            except zlib.error as exc:
                raise WireError("EPROTO", f"a compressed frame is corrupt: {exc}") from exc
            if inflater.unconsumed_tail:
                raise WireError("EMSGSIZE", f"a frame inflates to over {MAX_FRAME} bytes")
        return Frame(kind, payload)

    def expect(self, *kinds: Kind) -> Frame:
        """The next frame, which must be one of ``kinds``; an ERROR frame raises its error."""
        frame = self.receive()
        if frame.kind == Kind.ERROR and Kind.ERROR not in kinds:
            data = frame.json()
            raise WireError(str(data.get("name", "EREMOTE")), str(data.get("text", "")))
        if frame.kind not in kinds:
            wanted = " or ".join(k.name for k in kinds)
            raise WireError("EPROTO", f"expected {wanted}, got {frame.kind.name}")
        return frame

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def new_nonce() -> bytes:
    return os.urandom(16)
