"""The file header record at RBA 0 of every trail file: a G ... Z envelope around one F
section of tokens (``id:1 info:1 length:2 value``, ids in ``layout.HEADER_TOKENS``).

Unknown token ids are skipped by readers, so newer writers can add tokens (seed 003,
"Trail File Header Record"). FirstCSN/LastCSN, FirstIOTime/LastIOTime, FileSize and
RecordCount are only known when a file is finished: they are written with a fixed width
and rewritten in place by the writer when it rolls over or closes the file, so the
header's length never changes. A file whose writer crashed keeps zeros there.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.trail.envelope import Buffer, record_length, section, sections, wrap
from engine.trail.errors import CorruptRecordError, FileVersionError, RecordLimitError
from engine.trail.layout import (
    COMPATIBILITY_LEVEL,
    HEADER_I64,
    HEADER_TOKEN_IDS,
    HEADER_TOKENS,
    HEADER_U32,
    HEADER_U64,
    MAX_TOKEN_LENGTH,
    PATCHABLE_TEXT_WIDTH,
    SIGNATURE,
    TAG_FILE_HEADER,
    TOKEN,
    TOKEN_SIZE,
    HeaderKind,
)
from engine.trail.model import FileHeader
from engine.trail.releases import DEFAULT_RELEASE, Release, level_name

_NUMERIC = {
    HeaderKind.U32: HEADER_U32,
    HeaderKind.U64: HEADER_U64,
    HeaderKind.I64: HEADER_I64,
}

# Tokens every file header carries, with their values until the file is finished.
PATCHED_DEFAULTS: dict[str, str | int] = {
    "FileSize": 0,
    "FirstCSN": "",
    "LastCSN": "",
    "FirstIOTime": 0,
    "LastIOTime": 0,
    "RecordCount": 0,
}


def _encode_value(name: str, kind: HeaderKind, value: str | int) -> bytes:
    if kind in _NUMERIC:
        if not isinstance(value, int):
            raise RecordLimitError(f"file header token {name} needs an integer, got {value!r}")
        try:
            return _NUMERIC[kind].pack(value)
        except Exception as exc:
            raise RecordLimitError(f"file header token {name}={value} out of range") from exc
    text = str(value).encode("utf-8")
    if kind is HeaderKind.PATCHED_TEXT:
        if len(text) > PATCHABLE_TEXT_WIDTH:
            raise RecordLimitError(f"file header token {name} longer than {PATCHABLE_TEXT_WIDTH}")
        return text.ljust(PATCHABLE_TEXT_WIDTH, b"\x00")
    if len(text) > MAX_TOKEN_LENGTH:
        raise RecordLimitError(f"file header token {name} longer than {MAX_TOKEN_LENGTH}")
    return text


def encode_file_header(tokens: Mapping[str, str | int]) -> bytes:
    """Encode a file header record; token order follows the layout table."""
    unknown = set(tokens) - set(HEADER_TOKEN_IDS)
    if unknown:
        raise RecordLimitError(f"unknown file header tokens: {sorted(unknown)}")
    parts: list[bytes] = []
    for tid, (name, kind) in HEADER_TOKENS.items():
        if name not in tokens:
            continue
        value = _encode_value(name, kind, tokens[name])
        parts.append(TOKEN.pack(tid, 0, len(value)))
        parts.append(value)
    return wrap([section(TAG_FILE_HEADER, b"".join(parts))])


def new_file_header(
    *,
    seqno: int,
    file_name: str,
    creation_time_us: int,
    info: Mapping[str, str | int] | None = None,
    release: Release = DEFAULT_RELEASE,
) -> dict[str, str | int]:
    """The tokens of a fresh trail file: fixed identity, producer info, patchable slots.
    ``release`` (FORMAT RELEASE) sets Compatibility; from 21.1 the database's unique
    name (DbUniqueName, from DbName) is there too."""
    tokens: dict[str, str | int] = {
        "Signature": SIGNATURE,
        "Compatibility": release.level,
        "CharSet": "UTF-8",
        "CreationTime": creation_time_us,
        "FileName": file_name,
        "MultiPart": 0,
        "Seqno": seqno,
    }
    tokens.update(info or {})
    if release.db_unique_name and "DbName" in tokens:
        tokens.setdefault("DbUniqueName", tokens["DbName"])
    else:
        tokens.pop("DbUniqueName", None)
    for name, default in PATCHED_DEFAULTS.items():
        tokens.setdefault(name, default)
    return tokens


def _decode_value(buf: Buffer, start: int, size: int, kind: HeaderKind, name: str) -> str | int:
    if kind in _NUMERIC:
        fmt = _NUMERIC[kind]
        if size != fmt.size:
            raise CorruptRecordError(f"file header token {name} has {size} bytes", offset=start)
        value: int = fmt.unpack_from(buf, start)[0]
        return value
    raw = bytes(buf[start : start + size])
    if kind is HeaderKind.PATCHED_TEXT:
        raw = raw.rstrip(b"\x00")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptRecordError(f"file header token {name} is not UTF-8", offset=start) from exc


def decode_file_header_section(buf: Buffer, start: int, size: int) -> FileHeader:
    tokens: dict[str, str | int] = {}
    unknown: list[tuple[bytes, bytes]] = []
    pos, end = start, start + size
    while pos < end:
        if pos + TOKEN_SIZE > end:
            raise CorruptRecordError("file header token crosses the section end", offset=pos)
        tid, _info, tlen = TOKEN.unpack_from(buf, pos)
        pos += TOKEN_SIZE
        if pos + tlen > end:
            raise CorruptRecordError("file header token overruns its section", offset=pos)
        spec = HEADER_TOKENS.get(tid)
        if spec is None:
            unknown.append((tid, bytes(buf[pos : pos + tlen])))
        else:
            tokens[spec[0]] = _decode_value(buf, pos, tlen, spec[1], spec[0])
        pos += tlen
    header = FileHeader(tokens, tuple(unknown))
    if header.get("Signature") != SIGNATURE:
        raise CorruptRecordError("file header without the ggsci trail signature", offset=start)
    if header.compatibility > COMPATIBILITY_LEVEL:
        raise FileVersionError(
            f"trail format level {header.compatibility} is newer than this reader "
            f"(supports up to {level_name(COMPATIBILITY_LEVEL)})",
            offset=start,
        )
    return header


def decode_file_header(buf: Buffer, offset: int = 0) -> tuple[FileHeader, int]:
    """Decode the file header record at ``offset``; return it and its length."""
    length = record_length(buf, offset)
    parts = sections(buf, offset, length)
    if len(parts) != 1 or parts[0][0] != TAG_FILE_HEADER:
        raise CorruptRecordError("not a file header record", offset=offset)
    _, start, size = parts[0]
    return decode_file_header_section(buf, start, size), length
