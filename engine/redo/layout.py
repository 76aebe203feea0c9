"""Every byte layout of Oracle's redo format, each stated once as a table.

A :class:`Layout` is a list of fields (name, offset, struct code) inside a fixed-size
structure. The reader unpacks with it, the writer packs with it, and the tests round-trip
through it; so a format fact lives here and nowhere else. Byte order is the file's
(``"<"`` little-endian, ``">"`` big-endian, detected from the file header's magic). Offsets
not named are bytes we do not interpret; the writer leaves them zero. Sources of each fact:
docs/redo_format.md.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Literal

Order = Literal["<", ">"]


@dataclass(frozen=True)
class Field:
    name: str
    offset: int
    fmt: str  # one struct code: B H I Q or Ns


@dataclass(frozen=True)
class Layout:
    """A fixed-size structure: ``size`` bytes, its ``fields`` (sorted, non-overlapping)."""

    name: str
    size: int
    fields: tuple[Field, ...]
    _structs: dict[str, struct.Struct] = field(default_factory=dict, compare=False, repr=False)
    _names: tuple[str, ...] = field(default=(), compare=False, repr=False)
    _tail: bytes = field(default=b"", compare=False, repr=False)

    def __post_init__(self) -> None:
        pos = 0
        parts: list[str] = []
        for f in self.fields:
            if f.offset < pos:
                raise ValueError(f"{self.name}.{f.name} overlaps the field before it")
            if f.offset > pos:
                parts.append(f"{f.offset - pos}x")
            parts.append(f.fmt)
            pos = f.offset + struct.calcsize("<" + f.fmt)
        if pos > self.size:
            raise ValueError(f"{self.name} fields end at {pos}, beyond its size {self.size}")
        body = "".join(parts)
        object.__setattr__(self, "_names", tuple(f.name for f in self.fields))
        for order in ("<", ">"):
            self._structs[order] = struct.Struct(order + body)
        object.__setattr__(self, "_tail", bytes(self.size - self._structs["<"].size))

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    def struct(self, order: Order) -> struct.Struct:
        """The struct of :attr:`names`' values in ``order`` (a reader's hot path: a tuple,
        no dict)."""
        return self._structs[order]

    def unpack(self, buf: bytes | bytearray | memoryview, pos: int, order: Order) -> dict[str, Any]:
        """The fields at ``buf[pos:]`` (the caller has checked ``size`` bytes are there)."""
        return dict(zip(self._names, self._structs[order].unpack_from(buf, pos), strict=True))

    def pack_into(self, buf: bytearray, pos: int, order: Order, values: dict[str, Any]) -> None:
        """Write the named fields (missing names are written as 0)."""
        vals = [values.get(f.name, b"" if f.fmt.endswith("s") else 0) for f in self.fields]
        self._structs[order].pack_into(buf, pos, *vals)

    def put(self, buf: bytearray, pos: int, order: Order, **values: Any) -> None:
        """Write only the named fields (the others keep their bytes)."""
        for name, value in values.items():
            f = self.fields[self._names.index(name)]
            struct.pack_into(order + f.fmt, buf, pos + f.offset, value)

    def pack_values(self, order: Order, *values: Any) -> bytes:
        """:meth:`pack` with every field's value given in field order (:attr:`names`): a
        writer's hot path, no names looked up."""
        return self._structs[order].pack(*values) + self._tail

    def pack(self, order: Order, values: dict[str, Any]) -> bytes:
        buf = bytearray(self.size)
        self.pack_into(buf, 0, order, values)
        return bytes(buf)


def _layout(name: str, size: int, *fields: tuple[str, int, str]) -> Layout:
    return Layout(name, size, tuple(Field(n, o, f) for n, o, f in fields))


# Limits every length is checked against before use.
BLOCK_SIZES = (512, 1024, 4096)
MAX_BLOCKS = 1 << 26  # 32 GB of 512-byte blocks: more than Oracle allows in one log
MAX_RECORD = 64 << 20  # one redo record: far beyond any LWN Oracle writes
MAX_FIELDS = 1 << 14  # fields in one change vector's length array

MAGIC = 0x7A7B7C7D  # block 0 at 28: reads as this in the file's own byte order
BLOCK_SIGNATURE = 0x01  # byte 0 of every redo block after block 0
BLOCK_TYPE_REDO = 0x22  # byte 1 of every block, block 0 included
FIRST_RECORD_FLAG = 0x8000  # set in the block header's ``first`` field of every redo block

# Block 0: the file header (not a redo block; its own checksum at 14 like every block).
FILE_HEADER = _layout(
    "file header",
    32,
    ("zero", 0, "B"),
    ("block_type", 1, "B"),
    ("file_type", 4, "I"),  # observed 0xFFC00000 (Linux 23ai): written as read
    ("checksum", 14, "H"),
    ("block_size", 20, "I"),
    ("blocks", 24, "I"),  # blocks after block 0
    ("magic", 28, "I"),
)
FILE_TYPE_REDO = 0xFFC00000

# The 16-byte header at the start of every block from block 1 on.
BLOCK_HEADER = _layout(
    "block header",
    16,
    ("signature", 0, "B"),
    ("block_type", 1, "B"),
    ("block", 4, "I"),
    ("sequence", 8, "I"),
    ("first", 12, "H"),  # FIRST_RECORD_FLAG | offset of the first record starting here (0: none)
    ("checksum", 14, "H"),
)

# Block 1: the redo log header (offsets from the start of the block, its block header included).
# SCNs here are 8 bytes: base (I), wrap (H, bit 15 = the 8-byte form), wrap high (H).
LOG_HEADER = _layout(
    "redo log header",
    208,
    ("version", 20, "I"),  # compatibility: 0x17060000 = 23.6.0.0, 0x13000000 = 19.0
    ("dbid", 24, "I"),
    ("db_name", 28, "8s"),
    ("control_seq", 36, "I"),
    ("file_blocks", 40, "I"),  # size of the online log the archive was copied from
    ("block_size", 44, "I"),
    ("activation", 52, "I"),
    ("description", 92, "64s"),  # "T 0001, S 0000000015, SCN 0x...-0x..."
    ("blocks", 156, "I"),  # blocks in use, block 0 included
    ("resetlogs_id", 160, "I"),
    ("resetlogs_scn", 164, "I"),
    ("resetlogs_scn_wrap", 168, "H"),
    ("resetlogs_scn_high", 170, "H"),
    ("thread", 176, "H"),
    ("first_scn", 180, "I"),
    ("first_scn_wrap", 184, "H"),
    ("first_scn_high", 186, "H"),
    ("first_time", 188, "I"),
    ("next_scn", 192, "I"),
    ("next_scn_wrap", 196, "H"),
    ("next_scn_high", 198, "H"),
    ("next_time", 200, "I"),
)

# The header of a redo record (in the record stream, block headers removed).
RECORD_HEADER = _layout(
    "record header",
    24,
    ("size", 0, "I"),  # bytes of the record in the stream, this header included
    ("vld", 4, "B"),  # bit 2 (0x04): an LWN starts here, header is LWN_HEADER
    ("scn_wrap", 6, "H"),
    ("scn", 8, "I"),
    ("subscn", 12, "H"),
)
VLD_LWN = 0x04

# The first record of a log writer write (LWN) has a 68-byte header.
LWN_HEADER = _layout(
    "LWN record header",
    68,
    ("size", 0, "I"),
    ("vld", 4, "B"),
    ("scn_wrap", 6, "H"),
    ("scn", 8, "I"),
    ("subscn", 12, "H"),
    ("lwn_num", 24, "H"),
    ("lwn_nst", 26, "H"),
    ("lwn_len", 28, "I"),  # blocks of this LWN, its first block included
    ("lwn_scn", 40, "I"),
    ("lwn_scn_wrap", 44, "H"),
    ("time", 64, "I"),  # redo time (see ``redo_time``)
)

# Change vector headers: 24 bytes up to 11g, 32 bytes from 12c (con_id added).
_VECTOR_FIELDS = (
    ("layer", 0, "B"),
    ("code", 1, "B"),
    ("cls", 2, "H"),
    ("afn", 4, "H"),
    ("obj_high", 6, "H"),
    ("dba", 8, "I"),
    ("scn", 12, "I"),
    ("scn_wrap", 16, "H"),
    ("seq", 20, "B"),
    ("typ", 21, "B"),
    ("obj_low", 22, "H"),
)
VECTOR_HEADER_11G = _layout("change vector header (11g)", 24, *_VECTOR_FIELDS)
VECTOR_HEADER_12C = _layout(
    "change vector header (12c)", 32, *_VECTOR_FIELDS, ("con_id", 24, "H"), ("flg", 28, "H")
)
VECTOR_HEADERS = {"11g": VECTOR_HEADER_11G, "12c": VECTOR_HEADER_12C}
VERSION_12C = 0x0C100000  # compatibility from which vectors carry the 32-byte header


def vector_header_for(version: int) -> Layout:
    return VECTOR_HEADER_12C if version >= VERSION_12C else VECTOR_HEADER_11G


def align4(n: int) -> int:
    return (n + 3) & ~3


def scn8(base: int, wrap: int, high: int) -> int:
    """An SCN stored in 8 bytes (file header): bit 15 of ``wrap`` marks the wide form."""
    if wrap & 0x8000:
        return base | (high << 32) | ((wrap & 0x7FFF) << 48)
    return base | (wrap << 32)


def split_scn8(scn: int) -> tuple[int, int, int]:
    """The inverse of :func:`scn8`, always in the wide form Oracle 12.2+ writes."""
    return scn & 0xFFFFFFFF, 0x8000 | ((scn >> 48) & 0x7FFF), (scn >> 32) & 0xFFFF


def redo_time(value: int) -> tuple[int, int, int, int, int, int]:
    """Oracle's redo time (seconds in a 31-day-month calendar from 1988) as Y, M, D, h, m, s."""
    sec = value % 60
    value //= 60
    minute = value % 60
    value //= 60
    hour = value % 24
    value //= 24
    day = value % 31 + 1
    value //= 31
    month = value % 12 + 1
    year = value // 12 + 1988
    return year, month, day, hour, minute, sec


def to_redo_time(year: int, month: int, day: int, hour: int, minute: int, sec: int) -> int:
    return (
        ((((year - 1988) * 12 + month - 1) * 31 + day - 1) * 24 + hour) * 60 + minute
    ) * 60 + sec


# ---------------------------------------------------------------------------- ours, beside a log
# The side file beside each online log the embedded database writes (``<log>.side``): what a
# live reader needs that Oracle's format does not say (the recorded end, the progress mark
# across threads). Never inside a log: an archived log, like Oracle's, needs none of it.
SIDE_MAGIC = b"GGSIDE01"
SIDE_FILE = _layout(
    "side file",
    64,
    ("magic", 0, "8s"),
    ("crc", 8, "I"),  # crc32 of bytes 12..64
    ("status", 12, "B"),  # 0 current, 1 archived
    ("closed", 13, "B"),  # the thread's instance crashed: it writes nothing until reopened
    ("prev_sequence", 16, "I"),  # the thread's log before this one (0xFFFFFFFF: none)
    ("end", 24, "Q"),  # bytes of the log written and flushed (whole LWNs)
    ("progress_scn", 32, "Q"),  # every record of the thread with an SCN at or below it ...
    ("progress_offset", 40, "Q"),  # ... lies before this offset of this log (or earlier)
    ("first_scn", 48, "Q"),
    ("next_scn", 56, "Q"),  # 0 while current
)
SIDE_CRC_FROM = 12
OPEN_SCN = 0xFFFFFFFFFFFF  # the next SCN a current log's header holds (none yet)
