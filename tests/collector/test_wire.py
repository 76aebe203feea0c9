"""The pump ==> Collector frames (engine/runtime/wire.py) as a codec: what is sent is what is
received, compressed or not, sealed or not; a changed, replayed or cut frame is an error,
never a wrong frame or a hang."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.runtime.wire import MAX_FRAME, Kind, Link, WireError, derive_keys


@contextmanager
def pair(
    *, compress: bool = False, threshold: int = 0, sealed: bool = False
) -> Iterator[tuple[Link, Link]]:
    a, b = socket.socketpair()
    client = Link(a, timeout=5, compress=compress, compress_threshold=threshold)
    server = Link(b, timeout=5, compress=compress, compress_threshold=threshold)
    if sealed:
        c2s, s2c = derive_keys(b"k" * 32, "AES256", b"hello", b"welcome", b"c" * 16, b"s" * 16)
        client.seal(c2s, s2c, client=True)
        server.seal(s2c, c2s, client=False)
    try:
        yield client, server
    finally:
        client.close()
        server.close()


@settings(max_examples=60, deadline=None)
@given(
    frames=st.lists(
        st.tuples(st.sampled_from(list(Kind)), st.binary(max_size=3000)), min_size=1, max_size=6
    ),
    compress=st.booleans(),
    sealed=st.booleans(),
    threshold=st.integers(0, 2000),
)
def test_what_is_sent_is_received(
    frames: list[tuple[Kind, bytes]], compress: bool, sealed: bool, threshold: int
) -> None:
    with pair(compress=compress, threshold=threshold, sealed=sealed) as (client, server):
        for kind, payload in frames:
            client.send(kind, payload)
            got = server.receive()
            assert (got.kind, got.payload) == (kind, payload)
            server.send(kind, payload)  # and back, with the other direction's key
            back = client.receive()
            assert (back.kind, back.payload) == (kind, payload)


@given(position=st.integers(0, 200), bit=st.integers(0, 7))
@settings(max_examples=40, deadline=None)
def test_a_changed_sealed_frame_does_not_open(position: int, bit: int) -> None:
    with pair(sealed=True) as (client, server):
        data = bytearray(client.encode(Kind.RECORDS, b"x" * 100))
        at = 4 + position % (len(data) - 4)  # the body: the length stays right
        data[at] ^= 1 << bit
        client.sock.sendall(bytes(data))
        with pytest.raises(WireError) as caught:
            server.receive()
        assert caught.value.name == "EDECRYPT"


def test_a_replayed_sealed_frame_does_not_open() -> None:
    with pair(sealed=True) as (client, server):
        data = client.encode(Kind.SYNC, b"")
        client.sock.sendall(data)
        assert server.receive().kind == Kind.SYNC
        client.sock.sendall(data)  # the same bytes again: the counter has moved on
        with pytest.raises(WireError, match="does not decrypt"):
            server.receive()


def test_bad_lengths_and_cut_frames_are_errors_not_hangs() -> None:
    with pair() as (client, server):
        client.sock.sendall(struct.pack(">I", MAX_FRAME + 1))
        with pytest.raises(WireError) as caught:
            server.receive()
        assert caught.value.name == "EPROTO"
    with pair() as (client, server):
        client.sock.sendall(struct.pack(">I", 50) + b"\x09\x00abc")
        client.sock.shutdown(socket.SHUT_WR)
        with pytest.raises(WireError) as caught:
            server.receive()
        assert caught.value.name == "ECONNRESET"
    with pair() as (client, server):
        client.sock.sendall(struct.pack(">I", 3) + b"\xff\x00a")
        with pytest.raises(WireError, match="unknown frame kind"):
            server.receive()
    with pair() as (client, server):
        client.sock.sendall(struct.pack(">I", 5) + b"\x09\x01abc")  # "compressed": it is not
        with pytest.raises(WireError, match="compressed frame is corrupt"):
            server.receive()


def test_a_silent_peer_is_a_timeout() -> None:
    a, b = socket.socketpair()
    link = Link(b, timeout=0.2)
    try:
        with pytest.raises(WireError) as caught:
            link.receive()
        assert caught.value.name == "ETIMEDOUT"
    finally:
        a.close()
        link.close()


def test_encrypt_without_keyname_uses_the_master_key_name_with_a_warning(tmp_path: Path) -> None:
    """A real pump file (corpus: karayv pol01) says ``ENCRYPT AES192`` without KEYNAME:
    GoldenGate then uses its wallet's master key; here that key of the ENCKEYS file."""
    from params.check import check_file

    f = tmp_path / "pol01.prm"
    f.write_text(
        "EXTRACT pol01\nRMTHOST kogg01, MGRPORT 7809 ENCRYPT AES192\nRMTTRAIL ./dirdat/rt\n"
        "TABLE OLEG.DEPT;\n"
    )
    r = check_file(f)
    assert r.ok and r.model is not None and r.model.rmthost is not None
    assert (r.model.rmthost.encrypt, r.model.rmthost.keyname) == ("AES192", "OGG_DEFAULT_MASTERKEY")
    assert any("OGG_DEFAULT_MASTERKEY" in d.message for d in r.diagnostics if not d.is_error)
