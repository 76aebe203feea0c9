"""Bulk reading of redo frames: a byte range of one log, in a few large reads.

:func:`engine.embedded.logfile.read_frames` walks a log block by block and copies every
payload out; that costs about 4 µs per record in CPython. :func:`scan_frames` reads the
range with a handful of large reads, verifies the block headers, joins the payload areas
into one buffer and walks the frames over it, yielding where each payload lies *in that
buffer* (no copy): a decoder reads the payload in place with ``struct.unpack_from``.

Same contract as ``read_frames(path, start, end)`` (``strict=False``): the frames whose
first byte lies in ``[start, end)``, reading past ``end`` to finish the last one; every
checksum verified; a torn tail of a current log ends the scan and one of an archived log
raises :class:`~engine.embedded.errors.RedoCorruptError`. A test holds the two to the same
output on any split points, torn tails included.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from engine import storage
from engine._native import load as load_native
from engine.embedded.errors import RedoCorruptError
from engine.embedded.logfile import (
    BLOCK,
    BLOCK_HEAD,
    BLOCK_MAGIC,
    MAX_RECORD,
    PAYLOAD,
    FileHeader,
    first_boundary,
    logical_floor,
    logical_of,
    physical,
)

#: The C block check and payload join (engine/_native/redomine.c), when built.
_NATIVE: Final = load_native("redomine")
_BHEAD: Final = struct.Struct("<HHIII")  # magic, first, block, sequence, crc32
_FRAME: Final = struct.Struct("<II")  # payload length, crc32
FRAME_SIZE: Final = _FRAME.size
_SCN: Final = struct.Struct("<Q")
_SCN_AT: Final = 18  # offset of the SCN in a record payload (redo_codec REC_HEAD)
#: Blocks read at once past the end of the range, to finish its last records.
_MORE_BLOCKS: Final = 256
#: Blocks read at once to find a range's first record boundary from their headers.
_HEAD_BLOCKS: Final = 64
#: At most this much of the stream is loaded at once (a range may be a whole log).
_MAX_LOAD: Final = 64 << 20


class Window:
    """The logical record stream of one log from ``base`` on, loaded in large pieces."""

    def __init__(self, src: storage.Input, header: FileHeader, path: Path | str, size: int) -> None:
        self.src = src
        self.header = header
        self.path = storage.describe(path)  # as messages show it
        self.size = size
        self.buf = b""
        self.base = 0  # logical position of buf[0]
        self.next_block = 1
        self.eof = logical_floor(size)
        self._heads: tuple[int, bytes] = (0, b"")  # blocks read for their headers

    def block_first(self, blk: int) -> int | None:
        """The ``first`` field of block ``blk`` (None past EOF); verifies the header."""
        if blk * BLOCK + BLOCK_HEAD > self.size:
            return None
        at, data = self._heads
        if not (at <= blk and (blk - at) * BLOCK + BLOCK_HEAD <= len(data)):
            # the blocks from here on in one read: a record may cover many (one GET on S3)
            at, data = blk, self.src.read_at(blk * BLOCK, _HEAD_BLOCKS * BLOCK)
            self._heads = at, data
        return self._check(data, (blk - at) * BLOCK, blk)

    def _check(self, data: bytes, at: int, blk: int) -> int:
        magic, first, number, seq, crc = _BHEAD.unpack_from(data, at)
        where = f"{self.path}: block {blk} (RBA {blk * BLOCK})"
        if magic != BLOCK_MAGIC or zlib.crc32(data[at : at + 12]) != crc:
            raise RedoCorruptError(f"{where}: bad block header")
        if number != blk:  # a whole block's worth of redo gone (or doubled) before it
            raise RedoCorruptError(f"{where} holds block {number}: the block numbers jump")
        if seq != self.header.sequence:
            raise RedoCorruptError(f"{where} belongs to sequence {seq}")
        return int(first)

    def load(self, start: int, upto: int) -> None:
        """Hold logical ``[start, upto)`` (less where the file ends) in ``buf``."""
        self.base = (start // PAYLOAD) * PAYLOAD
        self.next_block = start // PAYLOAD + 1
        self.buf = self._read_blocks(upto, b"")

    def ensure(self, pos: int, n: int) -> bool:
        """Make logical ``[pos, pos + n)`` available; False if the file ends first."""
        want = pos + n
        if want <= self.base + len(self.buf):
            return True
        if self.next_block * BLOCK + BLOCK_HEAD > self.size:
            return False
        # Keep from ``pos`` on; read what is missing plus some more in one piece.
        assert pos >= self.base
        upto = max(want, self.base + len(self.buf) + _MORE_BLOCKS * PAYLOAD)
        keep = self.buf[pos - self.base :]
        self.base = pos
        self.buf = self._read_blocks(upto, keep)
        return want <= self.base + len(self.buf)

    def _read_blocks(self, upto: int, keep: bytes) -> bytes:
        """``keep`` plus the payload areas from ``next_block`` through the block holding
        logical position ``upto`` (or the end of the file), headers verified."""
        blk = self.next_block
        last = min(upto // PAYLOAD + 1, self.size // BLOCK)  # inclusive; may be partial
        data = self.src.read_at(
            blk * BLOCK, max(0, min((last - blk + 1) * BLOCK, self.size - blk * BLOCK))
        )
        check = self._check
        whole = (len(data) + BLOCK - BLOCK_HEAD) // BLOCK  # blocks with a header
        if _NATIVE is not None:
            joined, good = _NATIVE.payloads(keep, data, blk, self.header.sequence)
            if good < whole:
                check(data, good * BLOCK, blk + good)  # says what is wrong
                raise AssertionError(f"the C block check refused block {blk + good}")
            self.next_block = blk + good
            return bytes(joined)
        parts = [keep]
        for i in range(0, whole * BLOCK, BLOCK):
            check(data, i, blk)
            parts.append(data[i + BLOCK_HEAD : i + BLOCK])
            blk += 1
        self.next_block = blk
        return b"".join(parts)


def frames(win: Window, start: int, end: int | None) -> Iterator[tuple[int, int, bytes, int, int]]:
    """``(offset, end offset, buffer, payload index, payload length)`` of each frame
    starting in logical ``[start, end)`` (offsets in the file): the payload is
    ``buffer[index:index + length]``."""
    pos = start
    eof = win.eof
    unpack = _FRAME.unpack_from
    crc32 = zlib.crc32
    buf, base = win.buf, win.base
    while (end is None or pos < end) and pos < eof:
        lo = pos - base
        if pos + FRAME_SIZE > eof:
            _torn(win, pos, "partial frame header")
            return
        if lo + FRAME_SIZE > len(buf):
            if not win.ensure(pos, FRAME_SIZE):
                _torn(win, pos, "partial frame header")
                return
            buf, base = win.buf, win.base
            lo = pos - base
        length, crc = unpack(buf, lo)
        if length == 0 and pos + FRAME_SIZE >= eof:
            _torn(win, pos, "empty frame")
            return
        if length > MAX_RECORD:
            raise RedoCorruptError(f"{win.path}: record length {length} at {physical(pos)}")
        total = FRAME_SIZE + length
        if pos + total > eof:
            _torn(win, pos, "partial record")
            return
        if lo + total > len(buf):
            if not win.ensure(pos, total):
                _torn(win, pos, "partial record")
                return
            buf, base = win.buf, win.base
            lo = pos - base
        lo += FRAME_SIZE
        if crc32(memoryview(buf)[lo : lo + length]) != crc:
            if pos + total == eof and not win.header.archived:
                return  # torn tail: the last record of a current log, half written
            raise RedoCorruptError(f"{win.path}: checksum mismatch at {physical(pos)}")
        nxt = pos + total
        blk, within = divmod(pos, PAYLOAD)
        nblk, nwithin = divmod(nxt, PAYLOAD)
        yield (
            (blk + 1) * BLOCK + BLOCK_HEAD + within,
            (nblk + 1) * BLOCK + BLOCK_HEAD + nwithin,
            buf,
            lo,
            length,
        )
        pos = nxt


def _torn(win: Window, pos: int, what: str) -> None:
    if win.header.archived:
        raise RedoCorruptError(
            f"{win.path}: torn tail at offset {physical(pos)} ({what}) in an archived log"
        )


def _first_boundary(win: Window, start: int) -> int | None:
    def frames_from(candidate: int, target: int) -> Iterator[tuple[int, int]]:
        win.load(candidate, target + PAYLOAD)
        for offset, stop, _buf, _lo, _length in frames(win, candidate, None):
            yield logical_of(offset), logical_of(stop)

    return first_boundary(start, win.block_first, frames_from)


#: A bulk frame walker (see :meth:`Scan.walk`): ``(buf, base, pos, end, eof)`` to
#: ``(pos, frames, last stop)``, ``end`` -1 for none.
Step = Callable[[bytes, int, int, int, int], tuple[int, int, int]]
#: What :meth:`Scan.walk` does with a frame the step leaves: ``(offset, end, buf, lo, length)``.
Each = Callable[[int, int, bytes, int, int], None]


class Scan:
    """The frames of one byte range of a log (see :func:`scan_frames`).

    Iterate for ``(offset, end, buf, lo, length)``: the frame's file offset and the file
    offset just past it (as :class:`~engine.embedded.redo.LocatedRecord` has them), and the
    payload as ``buf[lo:lo + length]``. Or hand the frames to a bulk walker with
    :meth:`walk`."""

    def __init__(self, path: Path | str, start: int, end: int | None) -> None:
        self.path = path
        self.start = start
        self.end = end
        self.sequence = 0

    @contextmanager
    def _window(self) -> Iterator[tuple[Window, int, int | None] | None]:
        """The loaded window, the first frame's logical position and the logical end
        (None: the end of the log); None when the range holds no frame."""
        with storage.open_input(self.path) as src:
            header = FileHeader.unpack(src.read_at(0, BLOCK), storage.describe(self.path))
            self.sequence = header.sequence
            win = Window(src, header, self.path, src.size)
            begin = _first_boundary(win, self.start)
            end = None if self.end is None else logical_floor(self.end)
            if begin is None or (end is not None and begin >= end):
                yield None
                return
            stop = win.eof if end is None else end + _MORE_BLOCKS * PAYLOAD
            win.load(begin, min(stop, begin + _MAX_LOAD))
            yield win, begin, end

    def __iter__(self) -> Iterator[tuple[int, int, bytes, int, int]]:
        with self._window() as opened:
            if opened is not None:
                win, begin, end = opened
                yield from frames(win, begin, end)

    def walk(self, step: Step, each: Each) -> tuple[int, int | None]:
        """The frames in bulk: ``step`` takes the whole, well-formed frames that lie in the
        loaded window, as many as it will (a C kernel: :mod:`engine._native.redomine`); the
        frame it stops at (one that needs more of the file, a torn or corrupt one, a record
        it leaves to Python) goes through :func:`frames`, with its checks, to ``each``.
        Returns the number of frames and the file offset past the last one (None: none)."""
        count = 0
        resume: int | None = None
        with self._window() as opened:
            if opened is None:
                return count, resume
            win, pos, end = opened
            limit = -1 if end is None else end
            while True:
                pos, n, last = step(win.buf, win.base, pos, limit, win.eof)
                if n:
                    count += n
                    resume = last
                if pos >= win.eof or (end is not None and pos >= end):
                    break
                frame = next(frames(win, pos, end), None)
                if frame is None:
                    break
                each(*frame)
                count += 1
                resume = frame[1]
                pos = logical_of(frame[1])
        return count, resume


def first_scn_at(path: Path | str, offset: int) -> int | None:
    """SCN of the first whole record that starts at or after file offset ``offset`` of log
    ``path`` (any storage location; None: none yet). Reads a block or so past it."""
    with storage.open_input(path) as src:
        header = FileHeader.unpack(src.read_at(0, BLOCK), storage.describe(path))
        win = Window(src, header, path, src.size)
        begin = _first_boundary(win, offset)
        if begin is None:
            return None
        win.load(begin, begin + PAYLOAD)
        for _offset, _end, buf, lo, _length in frames(win, begin, None):
            return int(_SCN.unpack_from(buf, lo + _SCN_AT)[0])
    return None


def scan_frames(path: Path | str, start: int = 0, end: int | None = None) -> Scan:
    """The frames of log ``path`` whose first byte lies in file offsets ``[start, end)``."""
    return Scan(path, start, end)
