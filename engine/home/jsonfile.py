"""Durable small JSON files: sealed with a checksum, written whole, parsed within bounds.

Checkpoint, group-definition, process and registry files are replaced whole (a temporary
file, fsync, rename over the target), so a reader never sees a half-written file and a crash
leaves either the old or the new version. Every such file is *sealed*: its top-level object
carries ``"checksum": "sha256:<hex>"``, the SHA-256 of the object without that key in the
canonical form of :func:`canonical` (sorted keys, no spaces), so one changed digit is found
when the file is read (:func:`unseal`), not acted upon.

Reading is bounded (:func:`loads_bounded`): at most :data:`MAX_BYTES` bytes and
:data:`MAX_DEPTH` levels of nesting, checked before the parser runs, so a file nested
100,000 levels deep or of gigabytes is one :class:`JsonRefused` naming what is wrong, never a
``RecursionError`` or a process out of memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Final

MAX_BYTES: Final = 64 << 20  # a state file larger than this is refused unread
MAX_DEPTH: Final = 64  # nesting of objects and arrays
CHECKSUM_KEY: Final = "checksum"
_PREFIX: Final = "sha256:"
_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET: Final = re.compile(rb"[\[\]{}]")


class JsonRefused(ValueError):
    """A JSON file or text that is not parsed (too large, too deep, not JSON, bad seal);
    ``str()`` is a short reason."""


def canonical(data: Any) -> bytes:
    """The bytes a seal is computed over."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def seal(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its checksum."""
    body = {k: v for k, v in data.items() if k != CHECKSUM_KEY}
    return {**body, CHECKSUM_KEY: _PREFIX + hashlib.sha256(canonical(body)).hexdigest()}


def unseal(data: Any, *, required: bool = True) -> dict[str, Any]:
    """The sealed object without its checksum; :class:`JsonRefused` when it is not an object,
    its checksum does not match, or (``required``) it has none."""
    if not isinstance(data, dict):
        raise JsonRefused(f"not a JSON object but {type(data).__name__}")
    mark = data.get(CHECKSUM_KEY)
    body = {k: v for k, v in data.items() if k != CHECKSUM_KEY}
    if mark is None:
        if required:
            raise JsonRefused("no checksum")
        return body
    try:
        digest = hashlib.sha256(canonical(body)).hexdigest()
    except ValueError as exc:  # NaN or infinity: never written by a seal
        raise JsonRefused(f"checksum mismatch ({exc})") from None
    if mark != _PREFIX + digest:
        raise JsonRefused("checksum mismatch")
    return body


def nesting(raw: bytes, limit: int = MAX_DEPTH) -> int:
    """The deepest nesting of objects and arrays in JSON text ``raw`` (strings skipped),
    stopping as soon as it passes ``limit``."""
    depth = deepest = 0
    for m in _BRACKET.finditer(_STRING.sub(b'""', raw)):
        if m.group() in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def loads_bounded(
    raw: bytes | str, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH
) -> Any:
    """``json.loads`` of ``raw`` within bounds; :class:`JsonRefused` otherwise."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if len(data) > max_bytes:
        raise JsonRefused(f"larger than {max_bytes} bytes")
    if nesting(data, max_depth) > max_depth:
        raise JsonRefused(f"nested deeper than {max_depth} levels")
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise JsonRefused(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise JsonRefused(f"not JSON: {exc}") from None


def read_bounded(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of ``path``, :class:`JsonRefused` when it holds more than ``max_bytes``."""
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise JsonRefused(f"larger than {max_bytes} bytes")
    return data


def write_json(path: Path, data: Any, mode: int = 0o600, *, sealed: bool = True) -> None:
    """Atomically replace ``path`` with ``data`` as JSON (an object is sealed), durable once
    this returns. Mode 0600 (the home's owner only) whatever the umask."""
    body = seal(data) if sealed and isinstance(data, dict) else data
    write_private(path, (json.dumps(body, indent=1, sort_keys=True) + "\n").encode(), mode)


def write_private(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Atomically replace ``path`` with ``data``, durable once this returns, mode ``mode``
    whatever the umask; the temporary file beside it is never a link followed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    try:
        os.fchmod(fd, mode)  # the umask may have cut it, an older file may be wider
        _write_all(fd, data)
        os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from None  # the file, named
    os.close(fd)
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_json(path: Path, *, sealed: bool = False, max_bytes: int = MAX_BYTES) -> Any:
    """The parsed content of ``path`` (an object's checksum checked when it has one, and
    required when ``sealed``); raises ``OSError`` or :class:`JsonRefused` for callers to
    map."""
    data = loads_bounded(read_bounded(path, max_bytes), max_bytes=max_bytes)
    if isinstance(data, dict) and (sealed or CHECKSUM_KEY in data):
        return unseal(data, required=sealed)
    if sealed:
        raise JsonRefused(f"not a JSON object but {type(data).__name__}")
    return data
