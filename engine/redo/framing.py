"""Oracle redo framing: file header, blocks and checksums, LWNs, records, change vectors.

Reader: :func:`read_header` (blocks 0 and 1), :func:`iter_records` (every record of a log,
its change vectors split out), :func:`parse_record` (one record given whole, as support
tickets and other tools' tests carry them). Writer: :func:`build_vector`,
:func:`build_record`, :func:`build_log` write the same layouts (``layout.py``) so that a
round trip holds them, and so that a writer of Oracle's format can be built on them.

Every length read is checked before use (against the bytes present and a named limit); a
fault is a :class:`~engine.redo.errors.RedoError` with its offset, never another exception,
never a hang: each loop advances by a positive, checked amount.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from engine._native import load as load_native
from engine.redo import layout as L
from engine.redo.errors import RedoCorruptError, RedoTrailingError, RedoTruncatedError
from engine.redo.frozen import quick_init


@dataclass(frozen=True)
class LogHeader:
    order: L.Order
    block_size: int
    file_blocks: int  # blocks after block 0, from block 0
    version: int
    dbid: int
    db_name: str
    thread: int
    sequence: int
    resetlogs_id: int
    resetlogs_scn: int
    first_scn: int
    next_scn: int
    first_time: int
    next_time: int
    blocks: int  # blocks in use, block 0 included
    activation: int = 0
    description: str = ""

    @property
    def version_text(self) -> str:
        v = (
            self.version
        )  # 18c on: one byte a part (0x17060000 = 23.6); before: 0x0B200300 = 11.2.0.3
        if v >> 24 >= 18:
            return f"{v >> 24}.{(v >> 16) & 0xFF}.{(v >> 8) & 0xFF}.{v & 0xFF}"
        return f"{v >> 24}.{(v >> 20) & 0xF}.{(v >> 16) & 0xF}.{(v >> 8) & 0xFF}"

    @property
    def layout(self) -> str:
        return "12c" if self.version >= L.VERSION_12C else "11g"


@dataclass(frozen=True, slots=True, order=True)
class Rba:
    """A redo byte address, Oracle's: log sequence, block of the log (of the log's block size),
    byte offset in the block. The one RBA type of the redo source: the reader's records, the
    redo model's records and the writer's positions all carry it."""

    sequence: int
    block: int
    offset: int

    @classmethod
    def parse(cls, text: str) -> Rba:
        """``0x000044.00000005.0010`` (Oracle's dump notation) to an RBA; ``ValueError`` if not."""
        m = _RBA_TEXT.fullmatch(text.strip())
        if not m:
            raise ValueError(f"bad RBA {text!r}")
        return cls(int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16))

    def dump(self) -> str:
        return f"0x{self.sequence:06x}.{self.block:08x}.{self.offset:04x}"


_RBA_TEXT: Final = re.compile(r"0x([0-9a-fA-F]+)\.([0-9a-fA-F]+)\.([0-9a-fA-F]+)")


@quick_init
@dataclass(frozen=True)
class Vector:
    layer: int
    code: int
    cls: int
    afn: int
    dba: int
    obj: int
    scn: int
    seq: int
    typ: int
    con_id: int
    fields: tuple[bytes, ...]
    order: L.Order = "<"
    flg: int = 0

    @property
    def op(self) -> str:
        key = self.layer << 8 | self.code
        text = _OPS.get(key)
        if text is None:
            text = _OPS[key] = f"{self.layer}.{self.code}"
        return text


@quick_init
@dataclass(frozen=True)
class Lwn:
    num: int
    nst: int
    length: int
    scn: int
    time: int


@quick_init
@dataclass(frozen=True)
class Record:
    rba: Rba
    scn: int
    subscn: int
    vld: int
    size: int
    vectors: tuple[Vector, ...]
    lwn: Lwn | None = None
    thread: int = 1


def checksum_fold(block: bytes | bytearray | memoryview, order: L.Order = "<") -> int:
    """XOR of the block's 16-bit words (= its 64-bit words folded to 16 bits, as Oracle sums
    them): 0 for a block whose checksum field is right. Halving a big integer keeps it to
    a few operations a block (block sizes are powers of two)."""
    x = int.from_bytes(block, "little" if order == "<" else "big")
    bits = len(block) * 8
    while bits > 16:
        bits //= 2
        x = (x >> bits) ^ (x & ((1 << bits) - 1))
    return x


def detect_order(data: bytes | bytearray | memoryview) -> L.Order:
    if len(data) < L.FILE_HEADER.size:
        raise RedoTruncatedError("a redo log is at least one file header block long", 0)
    orders: tuple[L.Order, ...] = ("<", ">")
    for order in orders:
        if L.FILE_HEADER.unpack(data, 0, order)["magic"] == L.MAGIC:
            return order
    raise RedoCorruptError("not an Oracle redo log: no 0x7A7B7C7D magic at 28 of block 0", 28)


def _check_block(data: bytes | bytearray | memoryview, start: int, bs: int, order: L.Order) -> None:
    if start + bs > len(data):
        raise RedoTruncatedError(f"block {start // bs} ends beyond the file", start)
    if checksum_fold(memoryview(data)[start : start + bs], order) != 0:
        raise RedoCorruptError(f"block {start // bs}: checksum mismatch", start + 14)


def read_header(data: bytes | bytearray | memoryview) -> LogHeader:
    """Blocks 0 and 1: byte order, block size, thread, sequence, SCN range, incarnation."""
    order = detect_order(data)
    fh = L.FILE_HEADER.unpack(data, 0, order)
    bs = fh["block_size"]
    if bs not in L.BLOCK_SIZES:
        raise RedoCorruptError(f"block size {bs} is not one of {L.BLOCK_SIZES}", 20)
    if fh["block_type"] != L.BLOCK_TYPE_REDO:
        raise RedoCorruptError(f"block 0 type 0x{fh['block_type']:02x} is not a redo log's", 1)
    if not 1 <= fh["blocks"] <= L.MAX_BLOCKS:
        raise RedoCorruptError(f"block count {fh['blocks']} out of range", 24)
    _check_block(data, 0, bs, order)
    _check_block(data, bs, bs, order)
    bh = L.BLOCK_HEADER.unpack(data, bs, order)
    if (
        bh["signature"] != L.BLOCK_SIGNATURE
        or bh["block_type"] != L.BLOCK_TYPE_REDO
        or bh["block"] != 1
    ):
        raise RedoCorruptError("block 1 is not a redo log header block", bs)
    h = L.LOG_HEADER.unpack(data, bs, order)
    if h["block_size"] not in (0, bs):
        raise RedoCorruptError(
            f"log header block size {h['block_size']} differs from {bs}", bs + 44
        )
    blocks = h["blocks"]
    if not 2 <= blocks <= fh["blocks"] + 1:
        raise RedoCorruptError(
            f"log header counts {blocks} blocks, the file {fh['blocks'] + 1}", bs + 156
        )
    return LogHeader(
        order=order,
        block_size=bs,
        file_blocks=fh["blocks"],
        version=h["version"],
        dbid=h["dbid"],
        db_name=bytes(h["db_name"]).rstrip(b"\0 ").decode("latin-1"),
        thread=h["thread"],
        sequence=bh["sequence"],
        resetlogs_id=h["resetlogs_id"],
        resetlogs_scn=L.scn8(h["resetlogs_scn"], h["resetlogs_scn_wrap"], h["resetlogs_scn_high"]),
        first_scn=L.scn8(h["first_scn"], h["first_scn_wrap"], h["first_scn_high"]),
        next_scn=L.scn8(h["next_scn"], h["next_scn_wrap"], h["next_scn_high"]),
        first_time=h["first_time"],
        next_time=h["next_time"],
        blocks=blocks,
        activation=h["activation"],
        description=bytes(h["description"]).split(b"\0")[0].decode("latin-1"),
    )


#: the change vector header's fields as the reader takes them from its struct's tuple
_VH_NAMES: Final = (
    "layer", "code", "cls", "afn", "dba", "obj_high", "obj_low", "scn", "scn_wrap", "seq", "typ",
    "con_id", "flg",
)  # fmt: skip
#: (struct, size, where each of _VH_NAMES is in its tuple: -1 not in this header, the
#: layout itself: its id stays its own) by (the layout's id, byte order), made once
_VH: dict[tuple[int, str], tuple[struct.Struct, int, tuple[int, ...], L.Layout]] = {}
#: the length arrays' structs by (byte order, count)
_LENS: dict[tuple[str, int], struct.Struct] = {}
_OPS: dict[int, str] = {}  # "layer.code" texts, made once


def _vh(hl: L.Layout, order: L.Order) -> tuple[struct.Struct, int, tuple[int, ...], L.Layout]:
    names = hl.names
    got = (
        hl.struct(order),
        hl.size,
        tuple(names.index(n) if n in names else -1 for n in _VH_NAMES),
        hl,
    )
    _VH[(id(hl), order)] = got
    return got


def _vector_at(rec: bytes, pos: int, end: int, hl: L.Layout, order: L.Order) -> tuple[Vector, int]:
    got = _VH.get((id(hl), order))
    if got is None or got[3] is not hl:
        got = _vh(hl, order)
    st, hs, at, _hl = got
    if end - pos < hs + 2:
        raise RedoCorruptError(
            f"a change vector header needs {hs + 2} bytes, {end - pos} left", pos
        )
    h = st.unpack_from(rec, pos)
    layer, code = h[at[0]], h[at[1]]
    alen = rec[pos + hs] | rec[pos + hs + 1] << 8 if order == "<" else (
        rec[pos + hs] << 8 | rec[pos + hs + 1])  # fmt: skip
    if alen < 2 or alen & 1 or (alen - 2) >> 1 > L.MAX_FIELDS:
        raise RedoCorruptError(
            f"change vector {layer}.{code}: length array of {alen} bytes", pos + hs
        )
    n = (alen - 2) >> 1
    if pos + hs + alen > end:
        raise RedoCorruptError("change vector length array runs past the record", pos + hs)
    ls = _LENS.get((order, n))
    if ls is None:
        ls = _LENS[(order, n)] = struct.Struct(f"{order}{n}H")
    lens = ls.unpack_from(rec, pos + hs + 2)
    fpos = pos + hs + ((alen + 3) & ~3)
    fields: list[bytes] = []
    add = fields.append
    for ln in lens:
        nxt = fpos + ln
        if nxt > end:
            raise RedoCorruptError(
                f"change vector {layer}.{code}: a field runs past the record", fpos
            )
        add(rec[fpos:nxt])
        fpos = (nxt + 3) & ~3
    if fpos > end:
        raise RedoCorruptError(f"change vector {layer}.{code}: padding runs past the record", end)
    con_at, flg_at = at[11], at[12]
    vec = Vector(
        layer,
        code,
        h[at[2]],
        h[at[3]],
        h[at[4]],
        (h[at[5]] << 16) | h[at[6]],
        h[at[7]] | (h[at[8]] << 32),
        h[at[9]],
        h[at[10]],
        h[con_at] if con_at >= 0 else 0,
        tuple(fields),
        order,
        h[flg_at] if flg_at >= 0 else 0,
    )
    return vec, fpos


def parse_record(
    rec: bytes, order: L.Order = "<", layout: str = "12c", rba: Rba | None = None, thread: int = 1
) -> Record:
    """One whole redo record (header and vectors, block headers already removed)."""
    rec = bytes(rec)  # (no copy of bytes; a bytearray or memoryview one given is copied)
    if len(rec) < L.RECORD_HEADER.size:
        raise RedoTruncatedError(f"a redo record is at least 24 bytes, got {len(rec)}", 0)
    size, vld, scn_wrap, scn, subscn = L.RECORD_HEADER.struct(order).unpack_from(rec, 0)
    lwn: Lwn | None = None
    hsize = L.RECORD_HEADER.size
    if vld & L.VLD_LWN:
        hsize = L.LWN_HEADER.size
        if len(rec) < hsize:
            raise RedoTruncatedError(f"an LWN record header is 68 bytes, got {len(rec)}", 0)
        w = L.LWN_HEADER.unpack(rec, 0, order)
        lwn = Lwn(
            w["lwn_num"],
            w["lwn_nst"],
            w["lwn_len"],
            w["lwn_scn"] | (w["lwn_scn_wrap"] << 32),
            w["time"],
        )
    if size < hsize or size > L.MAX_RECORD:
        raise RedoCorruptError(f"record size {size} out of range", 0)
    if size > len(rec):
        raise RedoTruncatedError(f"record of {size} bytes, {len(rec)} given", len(rec))
    if size < len(rec):
        raise RedoTrailingError(f"{len(rec) - size} bytes after a record of {size}", size)
    hl = L.VECTOR_HEADERS[layout]
    vectors: list[Vector] = []
    pos = hsize
    while pos < size:
        vec, pos = _vector_at(rec, pos, size, hl, order)
        vectors.append(vec)
    return Record(
        rba or _NO_RBA, scn | (scn_wrap << 32), subscn, vld, size, tuple(vectors), lwn, thread
    )


_NO_RBA: Final = Rba(0, 0, 0)
# (the reader takes these structs' values by position)
assert L.RECORD_HEADER.names == ("size", "vld", "scn_wrap", "scn", "subscn")
assert L.BLOCK_HEADER.names == ("signature", "block_type", "block", "sequence", "first", "checksum")


@dataclass
class ReadStats:
    """What a read met besides records (the dump prints it; nothing here is an error)."""

    lwns: int = 0
    blocks: int = 0
    notes: list[str] = field(default_factory=list)


def iter_records(
    data: bytes | bytearray | memoryview,
    header: LogHeader | None = None,
    stats: ReadStats | None = None,
    after_scn: int = -1,
) -> Iterator[Record]:
    """Every record of a log, in order. Blocks are checked (number, sequence, checksum).
    ``after_scn``: records with an SCN at or below it are stepped over, their headers
    checked but their change vectors not read (a reader that wants what came after a
    checkpoint: instance recovery's roll forward)."""
    hdr = header or read_header(data)
    order, bs = hdr.order, hdr.block_size
    payload = bs - L.BLOCK_HEADER.size
    used = hdr.blocks
    if used * bs > len(data):
        raise RedoTruncatedError(
            f"the header counts {used} blocks, the file holds {len(data) // bs}", len(data)
        )
    st = stats if stats is not None else ReadStats()
    mv = memoryview(data)

    bh_struct = L.BLOCK_HEADER.struct(order)
    rh_struct = L.RECORD_HEADER.struct(order)
    checked = [2]  # blocks below this were checked by the C kernel already

    def block_header(b: int) -> int:
        """Block ``b`` checked; its header's ``first`` field."""
        start = b * bs
        if b < checked[0]:
            return int(bh_struct.unpack_from(data, start)[4])
        if _NATIVE is not None:  # (the C check of the blocks from b on; the first bad one
            n = min(CHECK_BLOCKS, used - b)  # is checked again here, for its message)
            good = _NATIVE.ora_payloads(
                bytes(mv[start : start + n * bs]), b, hdr.sequence, bs, order == ">"
            )[1]
            checked[0] = b + int(good)
            if good:
                return int(bh_struct.unpack_from(data, start)[4])
        _check_block(data, start, bs, order)
        signature, block_type, block, sequence, first, _sum = bh_struct.unpack_from(data, start)
        if signature != L.BLOCK_SIGNATURE or block_type != L.BLOCK_TYPE_REDO:
            raise RedoCorruptError(f"block {b} is not a redo block", start)
        if block != b:
            raise RedoCorruptError(f"block {b} says it is block {block}", start + 4)
        if sequence != hdr.sequence:
            raise RedoCorruptError(
                f"block {b} belongs to sequence {sequence}, not {hdr.sequence}", start + 8
            )
        return int(first)

    b = 2
    while b < used:
        first = block_header(b) & 0x7FFF
        if first < L.BLOCK_HEADER.size or first >= bs:
            raise RedoCorruptError(
                f"block {b}: no record starts where an LWN should (first={first})", b * bs + 12
            )
        start = b * bs + first
        if bs - first < L.LWN_HEADER.size:
            raise RedoCorruptError(f"block {b}: LWN header does not fit at offset {first}", start)
        lw = L.LWN_HEADER.unpack(data, start, order)
        if not lw["vld"] & L.VLD_LWN:
            raise RedoCorruptError(
                f"block {b}: the record at {first} does not start an LWN", start + 4
            )
        nblocks = lw["lwn_len"]
        if not 1 <= nblocks <= used - b:
            raise RedoCorruptError(
                f"block {b}: LWN of {nblocks} blocks, {used - b} left", start + 28
            )
        parts = [mv[start : (b + 1) * bs]]
        for k in range(b + 1, b + nblocks):
            block_header(k)
            parts.append(mv[k * bs + L.BLOCK_HEADER.size : (k + 1) * bs])
        stream = b"".join(parts)
        st.lwns += 1
        st.blocks += nblocks
        pos = 0
        while len(stream) - pos >= L.RECORD_HEADER.size:
            size, vld, scn_wrap, scn, _sub = rh_struct.unpack_from(stream, pos)
            if size == 0 or size > len(stream) - pos:
                break  # the LWN ends; what follows in its last block is padding or stale
            if scn | scn_wrap << 32 <= after_scn and size >= L.RECORD_HEADER.size:
                if pos and vld & L.VLD_LWN:
                    raise RedoCorruptError("an LWN header inside an LWN", b * bs + first + pos)
                pos += size  # (before the checkpoint: not read)
                continue
            # position of the record in the file: block and offset
            if pos < bs - first:
                rb, ro = b, first + pos
            else:
                k, r = divmod(pos - (bs - first), payload)
                rb, ro = b + 1 + k, L.BLOCK_HEADER.size + r
            try:
                rec = parse_record(
                    bytes(stream[pos : pos + size]),
                    order,
                    hdr.layout,
                    Rba(hdr.sequence, rb, ro),
                    hdr.thread,
                )
            except RedoTruncatedError as exc:
                raise RedoCorruptError(exc.message, rb * bs + ro) from exc
            except (RedoCorruptError, RedoTrailingError) as exc:
                raise type(exc)(
                    f"record at RBA {Rba(hdr.sequence, rb, ro).dump()}: {exc.message}", rb * bs + ro
                ) from exc
            if pos and rec.vld & L.VLD_LWN:
                raise RedoCorruptError("an LWN header inside an LWN", rb * bs + ro)
            yield rec
            pos += size
        b += nblocks


#: The C block check (engine/_native/redomine.c ``ora_payloads``, scan.py's), when built:
#: the same checks as :func:`_check_block` and ``iter_records``' header checks.
_NATIVE: Final = load_native("redomine")
CHECK_BLOCKS: Final = 8192  # blocks checked at once by it


# ---------------------------------------------------------------------------- writer


def build_vector(layout: str, order: L.Order, fields: Sequence[bytes], **hdr: int) -> bytes:
    """A change vector: header (``layer``, ``code``, ``cls`` ... ``obj``), lengths, fields."""
    hl = L.VECTOR_HEADERS[layout]
    obj = hdr.pop("obj", 0)
    scn = hdr.pop("scn", 0)
    values = dict(
        hdr, obj_high=obj >> 16, obj_low=obj & 0xFFFF, scn=scn & 0xFFFFFFFF, scn_wrap=scn >> 32
    )
    out = bytearray(hl.pack(order, values))
    alen = 2 + 2 * len(fields)
    arr = struct.pack(f"{order}{len(fields) + 1}H", alen, *(len(f) for f in fields))
    out += arr + bytes(L.align4(alen) - alen)
    for f in fields:
        out += f + bytes(L.align4(len(f)) - len(f))
    return bytes(out)


def build_record(
    order: L.Order,
    scn: int,
    subscn: int,
    vectors: Sequence[bytes],
    lwn: Lwn | None = None,
    vld: int = 1,
) -> bytes:
    hl = L.LWN_HEADER if lwn else L.RECORD_HEADER
    size = hl.size + sum(len(v) for v in vectors)
    values = {
        "size": size,
        "vld": vld | (L.VLD_LWN if lwn else 0),
        "scn": scn & 0xFFFFFFFF,
        "scn_wrap": scn >> 32,
    }
    values["subscn"] = subscn
    if lwn:
        values.update(lwn_num=lwn.num, lwn_nst=lwn.nst, lwn_len=lwn.length, time=lwn.time)
        values.update(lwn_scn=lwn.scn & 0xFFFFFFFF, lwn_scn_wrap=lwn.scn >> 32)
    return hl.pack(order, values) + b"".join(vectors)


def seal(buf: bytearray, start: int, bs: int, order: L.Order) -> None:
    """Write the checksum of the block at ``start`` (the XOR of its 16-bit words is 0)."""
    struct.pack_into(order + "H", buf, start + 14, 0)
    struct.pack_into(
        order + "H", buf, start + 14, checksum_fold(memoryview(buf)[start : start + bs], order)
    )


def lwn_blocks(record_sizes: Sequence[int], block_size: int) -> int:
    payload = block_size - L.BLOCK_HEADER.size
    return max(1, -(-sum(record_sizes) // payload))


def header_blocks(
    header: LogHeader, used: int, file_blocks: int, description: str | None = None
) -> bytes:
    """Blocks 0 and 1 of a log of ``file_blocks`` blocks, ``used`` of them in use (block 0
    included), with ``description`` (default: the header's) as the log header's text."""
    order, bs = header.order, header.block_size
    out = bytearray(2 * bs)
    L.FILE_HEADER.pack_into(
        out,
        0,
        order,
        {
            "block_type": L.BLOCK_TYPE_REDO,
            "file_type": L.FILE_TYPE_REDO,
            "block_size": bs,
            "blocks": file_blocks - 1,
            "magic": L.MAGIC,
        },
    )
    seal(out, 0, bs, order)
    text = header.description if description is None else description
    rl, fs, ns = (
        L.split_scn8(s) for s in (header.resetlogs_scn, header.first_scn, header.next_scn)
    )
    L.LOG_HEADER.pack_into(
        out,
        bs,
        order,
        {
            "version": header.version,
            "dbid": header.dbid,
            "db_name": header.db_name.encode("latin-1")[:8],
            "control_seq": 0,
            "file_blocks": file_blocks,
            "block_size": bs,
            "activation": header.activation,
            "description": text.encode("latin-1")[:64],
            "blocks": used,
            "resetlogs_id": header.resetlogs_id,
            "resetlogs_scn": rl[0],
            "resetlogs_scn_wrap": rl[1],
            "resetlogs_scn_high": rl[2],
            "thread": header.thread,
            "first_scn": fs[0],
            "first_scn_wrap": fs[1],
            "first_scn_high": fs[2],
            "first_time": header.first_time,
            "next_scn": ns[0],
            "next_scn_wrap": ns[1],
            "next_scn_high": ns[2],
            "next_time": header.next_time,
        },
    )
    L.BLOCK_HEADER.pack_into(
        out,
        bs,
        order,
        {
            "signature": L.BLOCK_SIGNATURE,
            "block_type": L.BLOCK_TYPE_REDO,
            "block": 1,
            "sequence": header.sequence,
            "first": L.FIRST_RECORD_FLAG,
        },
    )
    seal(out, bs, bs, order)
    return bytes(out)


def build_log(header: LogHeader, lwns: Sequence[Sequence[bytes]]) -> bytes:
    """A whole log: block 0, the log header, then each LWN (its records, the first with the
    LWN header and the right ``lwn_len``) from a fresh block, checksums sealed."""
    order, bs = header.order, header.block_size
    payload = bs - L.BLOCK_HEADER.size
    body: list[tuple[bytearray, list[int]]] = []  # per LWN: stream, record start offsets
    for records in lwns:
        starts, pos = [], 0
        for r in records:
            starts.append(pos)
            pos += len(r)
        body.append((bytearray(b"".join(records)), starts))
    total = 2 + sum(lwn_blocks([len(s)], bs) for s, _ in body)
    out = bytearray(total * bs)
    out[: 2 * bs] = header_blocks(header, total, total)
    b = 2
    for stream, starts in body:
        n = lwn_blocks([len(stream)], bs)
        if len(stream) >= L.LWN_HEADER.size:  # the LWN's length in blocks, known only now
            L_len = L.LWN_HEADER.fields[L.LWN_HEADER.names.index("lwn_len")]
            struct.pack_into(order + L_len.fmt, stream, L_len.offset, n)
        for k in range(n):
            lo, hi = k * payload, (k + 1) * payload
            first = next((s for s in starts if lo <= s < hi), None)
            blk = (b + k) * bs
            out[blk + 16 : blk + 16 + len(stream[lo:hi])] = stream[lo:hi]
            L.BLOCK_HEADER.pack_into(
                out,
                blk,
                order,
                {
                    "signature": 1,
                    "block_type": L.BLOCK_TYPE_REDO,
                    "block": b + k,
                    "sequence": header.sequence,
                    "first": L.FIRST_RECORD_FLAG | (0 if first is None else first - lo + 16),
                },
            )
            seal(out, blk, bs, order)
        b += n
    return bytes(out)
