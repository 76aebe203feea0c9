"""Data-only files: a tagged value codec and checked frames (never pickle, never code).

Everything the engine keeps on disk between runs that is not JSON or a trail goes through
here: Bounded Recovery persisted objects, transaction-cache page-out files, the embedded
source database's saved state. A file holds *values* — ``None``, booleans, integers, floats,
strings, bytes, ``Decimal``, ``datetime`` and lists, tuples, dicts and sets of those — which the
reading side turns back into its own frozen dataclasses with explicit, type-checked
functions. Nothing in a file can name a class or a function, so a crafted file can at worst be
refused.

A *frame* is ``magic · u64 payload length · payload · SHA-256(magic · length · payload)``.
Every length and count is checked against what is left of the input and against a limit
before anything is allocated; every failure — truncation, a flipped byte, a wrong type — is a
:class:`DataError`, never another exception.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import BinaryIO, Final, TypeVar

MAX_FRAME: Final = 1 << 30  # bytes of payload in one frame
MAX_DEPTH: Final = 32  # nesting of lists / tuples / dicts / sets
MAX_INT_BYTES: Final = 64  # an integer of up to 511 bits
MAX_TEXT: Final = 1 << 12  # characters of a Decimal or datetime text

_LEN: Final = struct.Struct("<Q")
_U32: Final = struct.Struct("<I")
_F64: Final = struct.Struct("<d")
_DIGEST: Final = 32

T = TypeVar("T")


class DataError(Exception):
    """A data file (or a value in it) is truncated, corrupt or not what was expected."""


# -- frames ------------------------------------------------------------------------------


def seal(magic: bytes, payload: bytes) -> bytes:
    """One frame around ``payload``."""
    if len(payload) > MAX_FRAME:
        raise DataError(f"frame of {len(payload)} bytes exceeds the limit of {MAX_FRAME}")
    head = magic + _LEN.pack(len(payload))
    return head + payload + hashlib.sha256(head + payload).digest()


def unseal(magic: bytes, data: bytes) -> bytes:
    """The payload of ``data``, which must be exactly one intact frame."""
    payload, end = _frame_at(magic, data, 0)
    if end != len(data):
        raise DataError(f"{len(data) - end} unexpected bytes after the frame")
    return payload


def _frame_at(magic: bytes, data: bytes, at: int) -> tuple[bytes, int]:
    head_end = at + len(magic) + _LEN.size
    if len(data) < head_end:
        raise DataError("truncated frame header")
    if data[at : at + len(magic)] != magic:
        raise DataError("not a frame of this kind (bad magic)")
    (size,) = _LEN.unpack_from(data, at + len(magic))
    if size > MAX_FRAME:
        raise DataError(f"frame length {size} exceeds the limit of {MAX_FRAME}")
    end = head_end + size + _DIGEST
    if len(data) < end:
        raise DataError("truncated frame")
    body_end = head_end + size
    if hashlib.sha256(data[at:body_end]).digest() != data[body_end:end]:
        raise DataError("checksum mismatch")
    return data[head_end:body_end], end


def frames(magic: bytes, data: bytes) -> list[bytes]:
    """The payloads of the frames that make up ``data``, in order."""
    out: list[bytes] = []
    at = 0
    while at < len(data):
        payload, at = _frame_at(magic, data, at)
        out.append(payload)
    return out


def read_frame(fh: BinaryIO, magic: bytes) -> bytes | None:
    """The next frame's payload from ``fh``; None at a clean end of file."""
    head = fh.read(len(magic) + _LEN.size)
    if not head:
        return None
    if len(head) < len(magic) + _LEN.size:
        raise DataError("truncated frame header")
    if head[: len(magic)] != magic:
        raise DataError("not a frame of this kind (bad magic)")
    (size,) = _LEN.unpack_from(head, len(magic))
    if size > MAX_FRAME:
        raise DataError(f"frame length {size} exceeds the limit of {MAX_FRAME}")
    rest = fh.read(size + _DIGEST)
    if len(rest) != size + _DIGEST:
        raise DataError("truncated frame")
    payload = rest[:size]
    if hashlib.sha256(head + payload).digest() != rest[size:]:
        raise DataError("checksum mismatch")
    return payload


# -- values ------------------------------------------------------------------------------

Value = object  # None | bool | int | float | str | bytes | Decimal | datetime | containers


def pack(value: Value) -> bytes:
    """``value`` in the tagged encoding (:func:`unpack` reads it back)."""
    out: list[bytes] = []
    _pack(value, out, 0)
    return b"".join(out)


def _pack(v: Value, out: list[bytes], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise DataError(f"values nested deeper than {MAX_DEPTH}")
    if v is None:
        out.append(b"N")
    elif v is True:
        out.append(b"T")
    elif v is False:
        out.append(b"F")
    elif type(v) is int:
        n = (v.bit_length() + 8) // 8
        if n > MAX_INT_BYTES:
            raise DataError(f"integer of {v.bit_length()} bits is too large")
        out.append(b"i" + bytes((n,)) + v.to_bytes(n, "little", signed=True))
    elif type(v) is float:
        out.append(b"f" + _F64.pack(v))
    elif type(v) is str:
        _blob(b"s", v.encode("utf-8", "surrogatepass"), out)
    elif type(v) is bytes:
        _blob(b"b", v, out)
    elif type(v) is Decimal:
        _blob(b"D", str(v).encode(), out)
    elif type(v) is datetime:
        _blob(b"t", v.isoformat().encode(), out)
    elif isinstance(v, list | tuple | set | frozenset) and type(v) in _SEQUENCE_TAGS:
        out.append(_SEQUENCE_TAGS[type(v)] + _U32.pack(len(v)))
        for item in v:
            _pack(item, out, depth + 1)
    elif type(v) is dict:
        out.append(b"d" + _U32.pack(len(v)))
        for key, item in v.items():
            _pack(key, out, depth + 1)
            _pack(item, out, depth + 1)
    else:
        raise DataError(f"a {type(v).__name__} cannot be written to a data file")


_SEQUENCE_TAGS: Final[dict[type, bytes]] = {list: b"l", tuple: b"u", set: b"e", frozenset: b"e"}


def _blob(tag: bytes, data: bytes, out: list[bytes]) -> None:
    if len(data) > MAX_FRAME:
        raise DataError(f"value of {len(data)} bytes exceeds the limit of {MAX_FRAME}")
    out.append(tag + _U32.pack(len(data)))
    out.append(data)


def unpack(data: bytes) -> Value:
    """The one value ``data`` holds; :class:`DataError` if it is not exactly that."""
    value, end = _unpack(memoryview(data), 0, 0)
    if end != len(data):
        raise DataError(f"{len(data) - end} unexpected bytes after the value")
    return value


def _need(data: memoryview, at: int, n: int) -> int:
    if n < 0 or at + n > len(data):
        raise DataError(f"truncated value at byte {at}")
    return at + n


def _unpack(data: memoryview, at: int, depth: int) -> tuple[Value, int]:
    if depth > MAX_DEPTH:
        raise DataError(f"values nested deeper than {MAX_DEPTH}")
    end = _need(data, at, 1)
    tag = data[at]
    reader = _READERS.get(tag)
    if reader is None:
        raise DataError(f"unknown value tag {tag:#04x} at byte {at}")
    return reader(data, end, depth)


def _count(data: memoryview, at: int) -> tuple[int, int]:
    end = _need(data, at, 4)
    (n,) = _U32.unpack_from(data, at)
    if n > len(data) - end:  # every item takes at least one byte
        raise DataError(f"count {n} at byte {at} exceeds the data left")
    return n, end


def _bytes_at(data: memoryview, at: int) -> tuple[bytes, int]:
    n, start = _count(data, at)
    end = _need(data, start, n)
    return bytes(data[start:end]), end


def _read_int(data: memoryview, at: int, _depth: int) -> tuple[Value, int]:
    start = _need(data, at, 1)
    n = data[at]
    if n == 0 or n > MAX_INT_BYTES:
        raise DataError(f"integer of {n} bytes at byte {at}")
    end = _need(data, start, n)
    return int.from_bytes(data[start:end], "little", signed=True), end


def _read_float(data: memoryview, at: int, _depth: int) -> tuple[Value, int]:
    end = _need(data, at, _F64.size)
    return _F64.unpack_from(data, at)[0], end


def _read_str(data: memoryview, at: int, _depth: int) -> tuple[Value, int]:
    raw, end = _bytes_at(data, at)
    try:
        return raw.decode("utf-8", "surrogatepass"), end
    except UnicodeDecodeError as exc:
        raise DataError(f"invalid text at byte {at}") from exc


def _read_bytes(data: memoryview, at: int, _depth: int) -> tuple[Value, int]:
    return _bytes_at(data, at)


def _read_text(data: memoryview, at: int) -> tuple[str, int]:
    raw, end = _bytes_at(data, at)
    if len(raw) > MAX_TEXT or not raw.isascii():
        raise DataError(f"invalid text at byte {at}")
    return raw.decode("ascii"), end


def _read_decimal(data: memoryview, at: int, _depth: int) -> tuple[Value, int]:
    text, end = _read_text(data, at)
    try:
        return Decimal(text), end
    except InvalidOperation as exc:
        raise DataError(f"invalid decimal at byte {at}") from exc


def _read_datetime(data: memoryview, at: int, _depth: int) -> tuple[Value, int]:
    text, end = _read_text(data, at)
    try:
        return datetime.fromisoformat(text), end
    except ValueError as exc:
        raise DataError(f"invalid datetime at byte {at}") from exc


def _items(data: memoryview, at: int, depth: int) -> tuple[list[Value], int]:
    n, at = _count(data, at)
    items: list[Value] = []
    for _ in range(n):
        item, at = _unpack(data, at, depth + 1)
        items.append(item)
    return items, at


def _read_list(data: memoryview, at: int, depth: int) -> tuple[Value, int]:
    return _items(data, at, depth)


def _read_tuple(data: memoryview, at: int, depth: int) -> tuple[Value, int]:
    items, end = _items(data, at, depth)
    return tuple(items), end


def _read_set(data: memoryview, at: int, depth: int) -> tuple[Value, int]:
    items, end = _items(data, at, depth)
    try:
        return set(items), end
    except TypeError as exc:
        raise DataError(f"unhashable set member at byte {at}") from exc


def _read_dict(data: memoryview, at: int, depth: int) -> tuple[Value, int]:
    n, at = _count(data, at)
    out: dict[object, Value] = {}
    for _ in range(n):
        key, at = _unpack(data, at, depth + 1)
        value, at = _unpack(data, at, depth + 1)
        try:
            out[key] = value
        except TypeError as exc:
            raise DataError(f"unhashable dict key at byte {at}") from exc
    return out, at


def _const(value: Value) -> Callable[[memoryview, int, int], tuple[Value, int]]:
    return lambda _data, at, _depth: (value, at)


_READERS: Final[dict[int, Callable[[memoryview, int, int], tuple[Value, int]]]] = {
    ord("N"): _const(None),
    ord("T"): _const(True),
    ord("F"): _const(False),
    ord("i"): _read_int,
    ord("f"): _read_float,
    ord("s"): _read_str,
    ord("b"): _read_bytes,
    ord("D"): _read_decimal,
    ord("t"): _read_datetime,
    ord("l"): _read_list,
    ord("u"): _read_tuple,
    ord("e"): _read_set,
    ord("d"): _read_dict,
}


# -- typed access (for the explicit from-functions) -------------------------------------


def expect(value: object, kind: type[T], what: str) -> T:
    """``value`` if it is a ``kind`` (``bool`` is not an ``int`` here), else a DataError."""
    if type(value) is not kind:
        raise DataError(f"{what}: expected {kind.__name__}, found {type(value).__name__}")
    return value


def field_of(d: dict[object, object], key: str, kind: type[T]) -> T:
    """``d[key]`` checked to be a ``kind``."""
    if key not in d:
        raise DataError(f"missing field {key!r}")
    return expect(d[key], kind, key)


def record(value: object, what: str) -> dict[object, object]:
    return expect(value, dict, what)


# -- checks: a table of field codecs for the explicit from-functions ----------------------

Check = Callable[[object, str], object]
"""Validates a decoded value (``what`` names it in the error) and returns it, converted."""


def is_(kind: type) -> Check:
    def check(value: object, what: str) -> object:
        return expect(value, kind, what)

    return check


def optional(inner: Check) -> Check:
    return lambda value, what: None if value is None else inner(value, what)


def list_of(inner: Check) -> Check:
    def check(value: object, what: str) -> object:
        return [inner(v, what) for v in expect(value, list, what)]

    return check


def set_of(inner: Check) -> Check:
    def check(value: object, what: str) -> object:
        return {inner(v, what) for v in expect(value, set, what)}

    return check


def tuple_of(*inners: Check) -> Check:
    """A tuple of exactly these items."""

    def check(value: object, what: str) -> object:
        items = expect(value, tuple, what)
        if len(items) != len(inners):
            raise DataError(f"{what}: expected {len(inners)} items, found {len(items)}")
        return tuple(c(v, what) for c, v in zip(inners, items, strict=True))

    return check


def tuple_all(inner: Check) -> Check:
    """A tuple of any length, every item checked by ``inner``."""

    def check(value: object, what: str) -> object:
        return tuple(inner(v, what) for v in expect(value, tuple, what))

    return check


def dict_of(key: Check, inner: Check) -> Check:
    def check(value: object, what: str) -> object:
        return {key(k, what): inner(v, what) for k, v in expect(value, dict, what).items()}

    return check


def one_of(*kinds: type) -> Check:
    def check(value: object, what: str) -> object:
        if type(value) not in kinds:
            names = " or ".join(k.__name__ for k in kinds)
            raise DataError(f"{what}: expected {names}, found {type(value).__name__}")
        return value

    return check


def fields_from(d: dict[object, object], table: dict[str, Check]) -> dict[str, object]:
    """The fields of ``table`` found in ``d``, each checked (missing ones are left out)."""
    return {name: check(d[name], name) for name, check in table.items() if name in d}
