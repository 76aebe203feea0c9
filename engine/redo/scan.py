"""The Extract's window scan of an Oracle redo log: the records of one byte range, in place.

:func:`engine.redo.framing.iter_records` reads a whole log and builds a :class:`Record` with
its vectors per record. A Spark task reads one byte range ``[start, end)`` of a log, and
only needs each record's bytes: :class:`Scan` reads the blocks in a few large reads, checks
every block (checksum, signature, block number, sequence: in C when the kernel is built),
joins their payload areas (block headers removed) into one buffer and walks the records of
each LWN over it, yielding where each record lies *in that buffer* (no copy), with the SCN
and time of its LWN (a record's commit SCN and redo time are its LWN's).

The rules (docs/redo_format.md, "How the Extract reads"):

- an LWN starts at a block's byte 16 with an LWN record header (vld 0x04) whose
  ``lwn_len`` counts its blocks; its records follow one another; a record size of 0, or
  one that runs past the LWN, ends it (the rest of its last block is padding);
- a range yields the records whose first byte lies in ``[start, end)``, reading past
  ``end`` to finish the last one: a record spanning a split boundary belongs to the range
  where it starts. A range that starts inside an LWN finds that LWN's header by going back
  over the block headers (an LWN header sits at byte 16 of its first block, the block
  header's ``first`` says so) and walks its records from there, yielding those at or after
  ``start``;
- the extent: an archived log is read to the blocks its header counts, each one checked
  (a fault is :class:`~engine.redo.errors.RedoCorruptError`). A current log (next SCN
  unset) is read to its recorded end (``limit``, or the writer's side file beside it,
  :func:`engine.redo.onlinelog.read_side`) or, without one,
  to the end of the file; an LWN that is not all there or not all valid at the tail of a
  current log is a torn tail (the writer was writing it): the scan ends before it.

A test holds the records, offsets and SCNs to :func:`~engine.redo.framing.iter_records`'s on
any split points, on the corpus's real logs and on logs the framing writer builds.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from engine import storage
from engine._native import load as load_native
from engine.redo import layout as L
from engine.redo.errors import RedoCorruptError, RedoError
from engine.redo.framing import LogHeader, checksum_fold, read_header
from engine.redo.onlinelog import read_side
from engine.redo.payloads import datetime_of
from engine.trail.model import datetime_to_micros

#: The C block check and payload join (engine/_native/redomine.c), when built.
_NATIVE: Final = load_native("redomine")
_HEAD: Final = L.BLOCK_HEADER.size  # 16
_LWN_SIZE: Final = L.LWN_HEADER.size
_REC_SIZE: Final = L.RECORD_HEADER.size
#: Blocks loaded at once (one read; an LWN longer than this is loaded whole).
CHUNK_BLOCKS: Final = 4096
#: Blocks read at once going back to the header of the LWN a range starts in.
_BACK_BLOCKS: Final = 256
#: An SCN the writer leaves in the log header while the log is current (none yet).
_OPEN_SCN: Final = (0, L.OPEN_SCN, 0xFFFFFFFFFFFFFFFF)


def _field(layout: L.Layout, name: str) -> tuple[int, str]:
    f = layout.fields[layout.names.index(name)]
    return f.offset, f.fmt


# The record and LWN header fields the walk reads, from the layout tables.
SIZE_AT: Final = _field(L.RECORD_HEADER, "size")
VLD_AT: Final = _field(L.RECORD_HEADER, "vld")
SCN_AT: Final = _field(L.RECORD_HEADER, "scn")
SCN_WRAP_AT: Final = _field(L.RECORD_HEADER, "scn_wrap")
SUBSCN_AT: Final = _field(L.RECORD_HEADER, "subscn")
LWN_LEN_AT: Final = _field(L.LWN_HEADER, "lwn_len")
LWN_SCN_AT: Final = _field(L.LWN_HEADER, "lwn_scn")
LWN_SCN_WRAP_AT: Final = _field(L.LWN_HEADER, "lwn_scn_wrap")
LWN_TIME_AT: Final = _field(L.LWN_HEADER, "time")
FIRST_AT: Final = _field(L.BLOCK_HEADER, "first")


def is_current(header: LogHeader) -> bool:
    """A log still being written: its header has no next SCN yet."""
    return header.next_scn in _OPEN_SCN


class Blocks:
    """Checked blocks of one log and their payload areas joined (``buf``): blocks
    ``[first, first + count)``; block ``b``'s payload is ``buf[(b - first) * P:][:P]``."""

    def __init__(self, src: storage.Input, header: LogHeader, path: str, extent: int) -> None:
        self.src = src
        self.header = header
        self.path = path
        self.bs = header.block_size
        self.payload = self.bs - _HEAD
        self.extent = extent  # blocks that may hold redo (block 0 and 1 included)
        self.current = is_current(header)
        self.buf = b""
        self.first = 0
        self.count = 0
        self._bad: str | None = None
        u16 = struct.Struct(header.order + "H")
        self._u16 = u16.unpack_from

    # -- checks -----------------------------------------------------------------------
    def problem(self, data: bytes | memoryview, at: int, blk: int) -> str | None:
        """What is wrong with the block at ``data[at:]`` (block ``blk``), or None."""
        bs = self.bs
        where = f"block {blk} (RBA {blk * bs})"
        if at + bs > len(data):
            return f"{where} ends beyond the file"
        h = L.BLOCK_HEADER.unpack(data, at, self.header.order)
        if checksum_fold(memoryview(data)[at : at + bs], self.header.order) != 0:
            return f"{where}: checksum mismatch"
        if h["signature"] != L.BLOCK_SIGNATURE or h["block_type"] != L.BLOCK_TYPE_REDO:
            return f"{where} is not a redo block"
        if h["block"] != blk:
            return f"{where} holds block {h['block']}: the block numbers jump"
        if h["sequence"] != self.header.sequence:
            return f"{where} belongs to sequence {h['sequence']}, not {self.header.sequence}"
        return None

    def load(self, blk: int, count: int) -> int:
        """Hold blocks ``[blk, blk + count)`` (fewer where the extent ends or a block is
        bad); returns how many are held."""
        count = max(0, min(count, self.extent - blk))
        bs = self.bs
        data = self.src.read_at(blk * bs, count * bs) if count else b""
        whole = len(data) // bs
        if _NATIVE is not None:
            joined, good = _NATIVE.ora_payloads(
                data, blk, self.header.sequence, bs, self.header.order == ">"
            )
            buf, good = bytes(joined), int(good)
        else:
            parts = []
            good = 0
            view = memoryview(data)
            for i in range(whole):
                if self.problem(data, i * bs, blk + i) is not None:
                    break
                parts.append(view[i * bs + _HEAD : (i + 1) * bs])
                good += 1
            buf = b"".join(parts)
        self.buf, self.first, self.count = buf, blk, good
        self._bad = (
            None
            if good == count
            else (
                self.problem(data, good * bs, blk + good)
                if good < whole
                else f"block {blk + good} (RBA {(blk + good) * bs}) ends beyond the file"
            )
        )
        return good

    def fault(self, blk: int) -> RedoCorruptError:
        what = self._bad or f"block {blk} could not be read"
        return RedoCorruptError(f"{self.path}: {what}", blk * self.bs)


@dataclass(frozen=True, slots=True)
class Lwn:
    """One LWN loaded: its records lie in ``buf[base:hi]`` (block ``first_block``'s payload
    is at ``buf[0:]``); its SCN and redo time."""

    buf: bytes
    base: int
    hi: int
    first_block: int
    scn: int
    time: int


#: What :meth:`Scan.walk`'s step says of where it stopped.
LWN_DONE, DECLINED, ENDED = 0, 1, 2
#: The C walk of an LWN's records: ``(buf, pos, hi, base, first_block, block_size, start,
#: end, lwn_scn, lwn_time)`` to ``(pos, records, stop of the last or -1, state)``.
Step = Callable[[bytes, int, int, int, int, int, int, int, int, int], tuple[int, int, int, int]]
#: What :meth:`Scan.walk` does with a record the step leaves (as :class:`Scan` yields it).
Each = Callable[[int, int, bytes, int, int, int, int], None]


class Scan:
    """The records of one byte range of a log (see the module docstring).

    Iterate for ``(offset, stop, buf, lo, size, lwn_scn, lwn_time)``: the record's file
    offset (its RBA as ``block * block_size + offset``), the file offset just past it, the
    record as ``buf[lo:lo + size]`` (header included), its LWN's SCN and redo time."""

    def __init__(
        self,
        path: Path | str,
        start: int = 0,
        end: int | None = None,
        limit: int | None = None,
    ) -> None:
        self.path = path
        self.start = start
        self.end = end
        self.limit = limit  # the recorded end of a current log (bytes), from its side file
        self.header: LogHeader | None = None
        self.resume: int | None = None  # file offset past the last record yielded
        self.ended = False  # a record at or after ``end`` was met
        self.chunk = CHUNK_BLOCKS  # blocks loaded at once
        self._times: dict[int, int] = {}

    def micros(self, lwn_time: int) -> int:
        """A record's time, its LWN's redo time, as microseconds since 1970 (naive UTC, as
        the redo model's timestamp: :func:`engine.redo.payloads.datetime_of`)."""
        got = self._times.get(lwn_time)
        if got is None:
            if len(self._times) > 4096:
                self._times.clear()
            got = self._times[lwn_time] = datetime_to_micros(datetime_of(lwn_time))
        return got

    @property
    def sequence(self) -> int:
        return self.header.sequence if self.header else 0

    @property
    def thread(self) -> int:
        return self.header.thread if self.header else 0

    @contextmanager
    def _open(self) -> Iterator[Blocks]:
        where = storage.describe(self.path)
        with storage.open_input(self.path) as src:
            try:
                head = src.read_at(0, 2 * 4096)
                header = read_header(head)
            except RedoError as exc:
                raise RedoCorruptError(f"{where}: {exc.message}", exc.offset) from exc
            self.header = header
            bs = header.block_size
            if is_current(header):
                limit = self.limit
                if limit is None and "://" not in str(self.path):
                    side = read_side(self.path)  # the writer's recorded end, beside the log
                    limit = side.end if side is not None else None
                size = src.size if limit is None else min(limit, src.size)
                extent = size // bs
            else:
                extent = header.blocks
                if extent * bs > src.size:
                    raise RedoCorruptError(
                        f"{where}: the header counts {extent} blocks, the file holds "
                        f"{src.size // bs}",
                        src.size,
                    )
            yield Blocks(src, header, where, extent)

    def __iter__(self) -> Iterator[tuple[int, int, bytes, int, int, int, int]]:
        with self._open() as blocks:
            yield from self._records(blocks)

    # -- the walk ---------------------------------------------------------------------
    def _lwn_at(self, blocks: Blocks, blk: int) -> tuple[int, int] | None:
        """The LWN that holds block ``blk`` or starts after it: (first block, blocks), or
        None when none is there (the extent ends)."""
        if blk <= 2:
            return (2, 0) if blocks.extent > 2 else None
        # back to the nearest block at or before blk whose first record is an LWN header
        j = blk
        step = 8  # most LWNs are short: a few blocks back first, then more at a time
        while j > 2:
            lo = max(2, j - step + 1)
            step = min(2 * step, _BACK_BLOCKS)
            raw = blocks.src.read_at(lo * blocks.bs, (j - lo + 1) * blocks.bs)
            for k in range(j, lo - 1, -1):
                at = (k - lo) * blocks.bs
                if at + blocks.bs > len(raw):
                    continue
                if blocks._u16(raw, at + FIRST_AT[0])[0] & 0x7FFF != _HEAD:
                    continue
                if raw[at + _HEAD + VLD_AT[0]] & L.VLD_LWN and blocks.problem(raw, at, k) is None:
                    return (k, 0)
            j = lo - 1
        return (2, 0)

    def _lwns(self, blocks: Blocks) -> Iterator[Lwn]:
        """The LWNs from the one that holds ``start`` on, each loaded whole."""
        end = self.end
        bs, payload, order = blocks.bs, blocks.payload, blocks.header.order
        begin = self._lwn_at(blocks, self.start // bs)
        if begin is None:
            return
        lwn = begin[0]
        u32 = struct.Struct(order + "I").unpack_from
        u16 = struct.Struct(order + "H").unpack_from
        current = blocks.current
        while lwn < blocks.extent:
            if end is not None and lwn * bs >= end:
                return
            # the LWN's first block, then all of it
            held = blocks.first <= lwn < blocks.first + blocks.count
            if not held and blocks.load(lwn, self.chunk) == 0:
                if current:
                    return  # torn tail
                raise blocks.fault(lwn)
            base = (lwn - blocks.first) * payload
            buf = blocks.buf
            if buf[base + VLD_AT[0]] & L.VLD_LWN == 0:
                raise RedoCorruptError(
                    f"{blocks.path}: block {lwn}: the record at 16 does not start an LWN",
                    lwn * bs + _HEAD,
                )
            n = u32(buf, base + LWN_LEN_AT[0])[0]
            if not 1 <= n <= L.MAX_BLOCKS:
                raise RedoCorruptError(
                    f"{blocks.path}: block {lwn}: LWN of {n} blocks", lwn * bs + _HEAD + 28
                )
            if lwn + n > blocks.extent:
                if current:
                    return  # the log writer is writing this LWN
                raise RedoCorruptError(
                    f"{blocks.path}: block {lwn}: LWN of {n} blocks, {blocks.extent - lwn} left",
                    lwn * bs + _HEAD + 28,
                )
            if lwn + n > blocks.first + blocks.count:
                got = blocks.load(lwn, max(n, self.chunk))
                if got < n:
                    if current:
                        return
                    raise blocks.fault(lwn + got)
                base, buf = 0, blocks.buf
            lwn_scn = u32(buf, base + LWN_SCN_AT[0])[0] | (
                u16(buf, base + LWN_SCN_WRAP_AT[0])[0] << 32
            )
            lwn_time = u32(buf, base + LWN_TIME_AT[0])[0]
            yield Lwn(buf, base, base + n * payload, blocks.first, lwn_scn, lwn_time)
            lwn += n

    def _in_lwn(
        self, blocks: Blocks, w: Lwn, pos: int
    ) -> Iterator[tuple[int, int, bytes, int, int, int, int]]:
        """The records of LWN ``w`` from ``pos`` in its buffer on: those at or after
        ``start``; ``self.ended`` is set at the first one at or after ``end``."""
        start, end = self.start, self.end
        bs, payload = blocks.bs, blocks.payload
        buf, base, hi, first_block = w.buf, w.base, w.hi, w.first_block
        u32 = struct.Struct(blocks.header.order + "I").unpack_from
        while hi - pos >= _REC_SIZE:
            size = u32(buf, pos)[0]
            if size == 0 or size > hi - pos:
                break
            if size < _REC_SIZE or (pos != base and buf[pos + VLD_AT[0]] & L.VLD_LWN):
                b, at = divmod(pos, payload)
                raise RedoCorruptError(
                    f"{blocks.path}: record at block {first_block + b} offset {at + _HEAD}: "
                    f"size {size}"
                    + (" (an LWN header inside an LWN)" if size >= _REC_SIZE else ""),
                    (first_block + b) * bs + at + _HEAD,
                )
            b, at = divmod(pos, payload)
            offset = (first_block + b) * bs + _HEAD + at
            if end is not None and offset >= end:
                self.ended = True
                return
            nb, nat = divmod(pos + size, payload)
            stop = (first_block + nb) * bs + _HEAD + nat
            if offset >= start:
                self.resume = stop
                yield offset, stop, buf, pos, size, w.scn, w.time
            pos += size

    def _records(self, blocks: Blocks) -> Iterator[tuple[int, int, bytes, int, int, int, int]]:
        for w in self._lwns(blocks):
            yield from self._in_lwn(blocks, w, w.base)
            if self.ended:
                return

    def walk(self, step: Step, each: Each) -> int:
        """The records in bulk, an LWN at a time: ``step`` (the C walk,
        :class:`engine._native.redomine.Walker`) takes the records of the LWN from a
        position on, as many as it will; the record it leaves (one it does not read, or a
        malformed one) goes through :meth:`_in_lwn`, with its checks, to ``each``. Returns
        how many records were read."""
        count = 0
        with self._open() as blocks:
            bs, start = blocks.bs, self.start
            end = -1 if self.end is None else self.end
            for w in self._lwns(blocks):
                pos = w.base
                while True:
                    pos, n, last, state = step(
                        w.buf, pos, w.hi, w.base, w.first_block, bs, start, end, w.scn, w.time
                    )
                    count += n
                    if last >= 0:
                        self.resume = last
                    if state == LWN_DONE:
                        break
                    if state == ENDED:
                        return count
                    got = next(self._in_lwn(blocks, w, pos), None)
                    if got is None:
                        if self.ended:
                            return count
                        break
                    each(*got)
                    count += 1
                    pos = got[3] + got[4]
        return count


def scan(
    path: Path | str, start: int = 0, end: int | None = None, limit: int | None = None
) -> Scan:
    """The records of log ``path`` whose first byte lies in file offsets ``[start, end)``."""
    return Scan(path, start, end, limit)


def record_scn(buf: bytes, lo: int, order: L.Order = "<") -> int:
    """The SCN in the record header at ``buf[lo:]``."""
    h = L.RECORD_HEADER.unpack(buf, lo, order)
    return int(h["scn"]) | (int(h["scn_wrap"]) << 32)


def first_scn_at(path: Path | str, offset: int, limit: int | None = None) -> int | None:
    """SCN of the first whole record that starts at or after file offset ``offset`` of log
    ``path`` (any storage location; None: none yet)."""
    sc = Scan(path, offset, None, limit)
    sc.chunk = 16  # one record is wanted: read its LWN, not megabytes after it
    for _o, _s, buf, lo, _n, _ls, _lt in sc:
        assert sc.header is not None
        return record_scn(buf, lo, sc.header.order)
    return None
