"""An online redo log written in Oracle's format, appended LWN by LWN, and its side file.

The writer of the embedded database's logs (one per redo thread and sequence)::

    block 0        file header (block size, blocks, magic)            framing / layout.py
    block 1        redo log header (thread, sequence, SCN range ...)  rewritten at the switch
    block 2 ...    LWNs: each from a fresh block, its first record with the 68-byte LWN
                   header (blocks, SCN, time), the others with the 24-byte record header;
                   records run on across blocks; the rest of an LWN's last block is zero

Each block from 1 on has its 16-byte header (block number, sequence, the offset of the first
record that starts in it) and its checksum, sealed when the LWN is written. While the log is
current, its header counts no blocks and its next SCN is unset (``layout.OPEN_SCN``); the log
switch (:meth:`OnlineLog.close` with ``archive``) writes the blocks in use, the next SCN and
time into blocks 0 and 1: the log is then a complete Oracle log, readable with no side file.

An LWN is one write: the records :meth:`OnlineLog.add` gathered since the last one, ended by
:meth:`OnlineLog.end_lwn` (the database ends one after each commit or rollback record, and
when it flushes). The LWN's SCN and time are its last record's.

The side file (``<log>.side``, ``layout.SIDE_FILE``) holds what a live reader needs beyond
Oracle's format: the recorded end (bytes written and flushed, whole LWNs), the progress mark
(every record of the thread with an SCN at or below ``progress_scn`` lies before
``progress_offset``), the previous sequence, whether the thread's instance is closed. A
crash can leave a torn LWN after the recorded end; reopening the log cuts it (every LWN
after the recorded end is checked: all its blocks there, numbered, of this sequence, with
good checksums; the log ends before the first that is not).
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from engine._native import load as load_native
from engine.redo import framing as F
from engine.redo import layout as L
from engine.redo.errors import RedoCorruptError
from engine.redo.framing import LogHeader, Rba, checksum_fold, read_header, seal

HEAD: Final = L.BLOCK_HEADER.size
#: The compiled twins of :func:`cut` and :meth:`OnlineLog.gather` (engine/_native/redopack.c
#: ``cut``, ``gather``: the same bytes, tests/source/test_source_redopack.py), when built.
_NATIVE: Final = load_native("redopack")
NO_SEQUENCE: Final = 0xFFFFFFFF
VERSION: Final = 0x13000000  # 19.0.0.0: 12c vector headers


# ---------------------------------------------------------------------------- side file


@dataclass(frozen=True, slots=True)
class Side:
    end: int
    first_scn: int
    progress_scn: int = 0
    progress_offset: int = 0
    prev_sequence: int = -1
    next_scn: int = 0
    archived: bool = False
    closed: bool = False

    def pack(self) -> bytes:
        buf = bytearray(L.SIDE_FILE.size)
        L.SIDE_FILE.pack_into(
            buf,
            0,
            "<",
            {
                "magic": L.SIDE_MAGIC,
                "status": int(self.archived),
                "closed": int(self.closed),
                "prev_sequence": NO_SEQUENCE if self.prev_sequence < 0 else self.prev_sequence,
                "end": self.end,
                "progress_scn": self.progress_scn,
                "progress_offset": self.progress_offset,
                "first_scn": self.first_scn,
                "next_scn": self.next_scn,
            },
        )
        struct.pack_into("<I", buf, 8, zlib.crc32(buf[L.SIDE_CRC_FROM :]))
        return bytes(buf)

    @classmethod
    def unpack(cls, data: bytes) -> Side | None:
        """None: not a side file, or caught being rewritten (its checksum fails)."""
        if len(data) < L.SIDE_FILE.size or data[:8] != L.SIDE_MAGIC:
            return None
        v = L.SIDE_FILE.unpack(data, 0, "<")
        if zlib.crc32(data[L.SIDE_CRC_FROM : L.SIDE_FILE.size]) != v["crc"]:
            return None
        prev = v["prev_sequence"]
        return cls(
            end=v["end"],
            first_scn=v["first_scn"],
            progress_scn=v["progress_scn"],
            progress_offset=v["progress_offset"],
            prev_sequence=-1 if prev == NO_SEQUENCE else prev,
            next_scn=v["next_scn"],
            archived=bool(v["status"]),
            closed=bool(v["closed"]),
        )


def side_path(log: Path | str) -> Path:
    return Path(log).with_suffix(".side")


def read_side(log: Path | str) -> Side | None:
    """The side file of a log (None: none, as for a real Oracle log, or unreadable now)."""
    try:
        with open(side_path(log), "rb") as fh:
            return Side.unpack(fh.read(L.SIDE_FILE.size))
    except FileNotFoundError:
        return None


def write_side(log: Path | str, side: Side, *, fsync: bool = False) -> None:
    """Rewrite a side file in place (one small write; a reader that catches it half
    written sees a checksum failure and takes it as absent for that read)."""
    path = side_path(log)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.pwrite(fd, side.pack(), 0)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------- blocks


def cut(
    stream: bytes | bytearray,
    starts: list[int],
    first_block: int,
    sequence: int,
    bs: int,
    order: L.Order,
) -> bytes:
    """An LWN's record stream cut into whole blocks from block ``first_block``: headers with
    the first record starting in each block (``starts``: offsets in the stream), zero
    padding, checksums."""
    payload = bs - HEAD
    n = max(1, -(-len(stream) // payload))
    out = bytearray(n * bs)
    si = 0
    for k in range(n):
        lo = k * payload
        chunk = stream[lo : lo + payload]
        out[k * bs + HEAD : k * bs + HEAD + len(chunk)] = chunk
        while si < len(starts) and starts[si] < lo:
            si += 1
        first = starts[si] - lo + HEAD if si < len(starts) and starts[si] < lo + payload else 0
        L.BLOCK_HEADER.pack_into(
            out,
            k * bs,
            order,
            {
                "signature": L.BLOCK_SIGNATURE,
                "block_type": L.BLOCK_TYPE_REDO,
                "block": first_block + k,
                "sequence": sequence,
                "first": L.FIRST_RECORD_FLAG | first,
            },
        )
        seal(out, k * bs, bs, order)
    return bytes(out)


def header_blocks(header: LogHeader, used: int, file_blocks: int) -> bytes:
    """Blocks 0 and 1 of a log: ``used`` blocks in use (block 0 included), the header's text
    the one Oracle writes for its thread, sequence and SCN range (:func:`description`)."""
    return F.header_blocks(header, used, file_blocks, description(header))


def description(h: LogHeader) -> str:
    """The header's text, as Oracle writes it: thread, sequence, SCN range."""
    nxt = "" if h.next_scn == L.OPEN_SCN else f"-0x{h.next_scn:016x}"
    return f"T {h.thread:04d}, S {h.sequence:010d}, SCN 0x{h.first_scn:016x}{nxt}"


def _lwn_at(data: bytes | memoryview, b: int, h: LogHeader) -> int:
    """Blocks of the whole, valid LWN starting at block ``b`` of ``data`` (0: none there)."""
    bs, order = h.block_size, h.order
    payload_at = b * bs

    def ok(k: int) -> dict[str, int] | None:
        start = k * bs
        if start + bs > len(data):
            return None
        blk = data[start : start + bs]
        if checksum_fold(blk, order) != 0:
            return None
        bh = L.BLOCK_HEADER.unpack(blk, 0, order)
        if (
            bh["signature"] != L.BLOCK_SIGNATURE
            or bh["block_type"] != L.BLOCK_TYPE_REDO
            or bh["block"] != k
            or bh["sequence"] != h.sequence
        ):
            return None
        return bh

    bh = ok(b)
    if bh is None or bh["first"] & 0x7FFF != HEAD:
        return 0
    lw = L.LWN_HEADER.unpack(data, payload_at + HEAD, order)
    n = int(lw["lwn_len"])
    if not lw["vld"] & L.VLD_LWN or n < 1 or n > L.MAX_BLOCKS:
        return 0
    if all(ok(k) is not None for k in range(b + 1, b + n)):
        return n
    return 0


def whole_end(path: Path | str, h: LogHeader, start: int) -> int:
    """The end of the last whole LWN at or after byte ``start`` (a block boundary): where a
    torn tail begins."""
    with open(path, "rb") as fh:
        data = fh.read()
    bs = h.block_size
    b = max(2, start // bs)
    while True:
        n = _lwn_at(data, b, h)
        if not n:
            return b * bs
        b += n


# ---------------------------------------------------------------------------- the writer


class OnlineLog:
    """One online log open for appending (see the module docstring)."""

    def __init__(self, path: Path, header: LogHeader, end: int, side: Side, *, fsync: bool) -> None:
        self.path = path
        self.header = header
        self.fsync = fsync
        self._fd = os.open(path, os.O_WRONLY)
        self._end = end  # bytes of the log's ended LWNs (whole blocks)
        self._written = end  # of those, bytes handed to the OS
        self._blocks: list[bytes] = []  # ended LWNs not written yet
        self._side = side
        self._stream = bytearray()
        self._starts: list[int] = []
        self._lwn_scn = 0
        self._lwn_time = 0
        #: Bytes the side file says were flushed past where the whole LWNs now end: redo
        #: lost (the file cut short); 0 normally.
        self.lost = 0
        #: The SCN of the pending LWN's first record (meaningful while :attr:`pending`).
        self.pending_scn = 0

    # -- opening

    @classmethod
    def create(
        cls, path: Path, header: LogHeader, *, prev_sequence: int = -1, fsync: bool = False
    ) -> OnlineLog:
        """A new current log: blocks 0 and 1 (no blocks counted, next SCN unset), its side file."""
        head = replace(header, next_scn=L.OPEN_SCN, next_time=0, blocks=2, file_blocks=1)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # 0700 / 0600: the owner's
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(header_blocks(head, 2, 2))
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        bs = header.block_size
        side = Side(end=2 * bs, first_scn=header.first_scn, prev_sequence=prev_sequence)
        write_side(path, side, fsync=fsync)
        return cls(path, head, 2 * bs, side, fsync=fsync)

    @classmethod
    def reopen(cls, path: Path, *, fsync: bool = False) -> OnlineLog:
        """The current log again (after a restart or a crash): a torn LWN at its tail is cut."""
        with open(path, "rb") as fh:
            head = read_header(fh.read(2 * 4096))
        bs = head.block_size
        side = read_side(path) or Side(end=2 * bs, first_scn=head.first_scn)
        size = os.path.getsize(path)
        end = whole_end(path, head, side.end if size >= side.end else 2 * bs)
        if size != end:
            os.truncate(path, end)
        lost = max(0, side.end - end)
        if not lost:  # after redo was lost, the side file keeps the end that says so
            side = replace(side, end=end, archived=False)
            write_side(path, side, fsync=fsync)
        log = cls(path, head, end, side, fsync=fsync)
        log.lost = lost
        return log

    # -- appending

    @property
    def sequence(self) -> int:
        return self.header.sequence

    @property
    def size(self) -> int:
        """Bytes the log holds with what is gathered (its pending LWN in whole blocks)."""
        payload = self.header.block_size - HEAD
        pending = -(-len(self._stream) // payload) * self.header.block_size
        return self._end + pending

    @property
    def end(self) -> int:
        """Bytes of the log's ended LWNs (written or not yet)."""
        return self._end

    @property
    def written(self) -> int:
        """Bytes handed to the OS (whole LWNs)."""
        return self._written

    @property
    def pending(self) -> int:
        return len(self._stream)

    def where(self, pos: int) -> int:
        """The file offset of position ``pos`` of the pending LWN's record stream."""
        payload = self.header.block_size - HEAD
        blk, within = divmod(pos, payload)
        return self._end + blk * self.header.block_size + HEAD + within

    def next_rba(self) -> Rba:
        off = self.where(len(self._stream))
        return Rba(self.sequence, off // self.header.block_size, off % self.header.block_size)

    def add(
        self, scn: int, subscn: int, vectors: bytes, time: int, vld: int = 1
    ) -> tuple[int, int]:
        """Gather one record (its change vectors, encoded) into the pending LWN; returns the
        file offsets of its first byte and just past it."""
        pos = len(self._stream)
        self.gather(scn, subscn, vectors, time, vld)
        return self.where(pos), self.where(len(self._stream))

    def gather(self, scn: int, subscn: int, vectors: bytes, time: int, vld: int = 1) -> None:
        """:meth:`add` without the offsets (the embedded database's fast path)."""
        order = self.header.order
        first = not self._stream
        size = (L.LWN_HEADER.size if first else L.RECORD_HEADER.size) + len(vectors)
        if size > L.MAX_RECORD:
            raise RedoCorruptError(f"a record of {size} bytes is beyond {L.MAX_RECORD}")
        if _NATIVE is not None:  # the same bytes, appended by the compiled twin
            if first:
                self.pending_scn = scn
            _NATIVE.gather(self._stream, self._starts, vectors, scn, subscn, vld, order == ">")
            self._lwn_scn, self._lwn_time = scn, time
            return
        self._starts.append(len(self._stream))
        if first:  # fields in the layout's order: lwn_nst 1, the LWN's own at end_lwn
            self.pending_scn = scn
            self._stream += L.LWN_HEADER.pack_values(
                order, size, vld | L.VLD_LWN, scn >> 32, scn & 0xFFFFFFFF, subscn,
                0, 1, 0, 0, 0, 0,
            )  # fmt: skip
        else:
            self._stream += L.RECORD_HEADER.pack_values(
                order, size, vld & ~L.VLD_LWN, scn >> 32, scn & 0xFFFFFFFF, subscn
            )
        self._stream += vectors
        self._lwn_scn, self._lwn_time = scn, time

    def end_lwn(self) -> int:
        """End the pending LWN: its blocks cut and sealed, to be written at the next
        :meth:`flush`; returns its blocks."""
        if not self._stream:
            return 0
        h = self.header
        order, bs = h.order, h.block_size
        payload = bs - HEAD
        n = max(1, -(-len(self._stream) // payload))
        s = self._stream
        L.LWN_HEADER.put(s, 0, order, lwn_len=n, lwn_scn=self._lwn_scn & 0xFFFFFFFF,
                         lwn_scn_wrap=self._lwn_scn >> 32, time=self._lwn_time)  # fmt: skip
        first = self._end // bs
        if _NATIVE is None:
            blocks = cut(s, self._starts, first, h.sequence, bs, order)
        else:
            blocks = _NATIVE.cut(s, self._starts, first, h.sequence, bs, order == ">")
        self._blocks.append(blocks)
        self._end += len(blocks)
        self._stream = bytearray()
        self._starts = []
        return n

    def flush(
        self, *, progress: tuple[int, int] | None = None, end: bool = True, record: bool = True
    ) -> None:
        """Write the ended LWNs (and, with ``end``, the pending one first), make the log
        durable (with ``fsync``) and record its end (and the progress mark: ``(scn,
        offset)``) in the side file (not with ``record``: a crash between the two, as tests
        make it)."""
        self._write(end)
        if not record:
            return
        side = replace(self._side, end=max(self._end, self._side.end), closed=False)
        if progress is not None:
            side = replace(side, progress_scn=progress[0], progress_offset=progress[1])
        if side != self._side:
            write_side(self.path, side, fsync=self.fsync)
            self._side = side

    def _write(self, end: bool = True) -> None:
        if end:
            self.end_lwn()
        if self._blocks:
            os.pwrite(self._fd, b"".join(self._blocks), self._written)
            self._blocks = []
            self._written = self._end
            if self.fsync:
                os.fsync(self._fd)

    def mark(self, scn: int, offset: int | None = None, *, closed: bool = False) -> None:
        """Rewrite the progress mark only (an idle thread's, or a closed one's)."""
        side = replace(
            self._side,
            progress_scn=scn,
            progress_offset=self._written if offset is None else offset,
            closed=closed,
        )
        write_side(self.path, side, fsync=self.fsync)
        self._side = side

    def close(self, *, archive: bool = False, next_scn: int = 0, next_time: int = 0) -> None:
        """Close the log; ``archive``: the log switch (blocks 0 and 1 rewritten: blocks in
        use, next SCN and time; the side file says archived)."""
        try:
            self._write()
            if archive:
                bs = self.header.block_size
                used = self._end // bs
                self.header = replace(
                    self.header, next_scn=next_scn, next_time=next_time, blocks=used
                )
                os.pwrite(self._fd, header_blocks(self.header, used, used), 0)
            if self.fsync:
                os.fsync(self._fd)
            end = max(self._end, self._side.end) if self.lost else self._end
            side = replace(self._side, end=end, archived=archive,
                           next_scn=next_scn if archive else 0)  # fmt: skip
            write_side(self.path, side, fsync=self.fsync)
            self._side = side
        finally:
            os.close(self._fd)


def new_header(
    *,
    thread: int,
    sequence: int,
    first_scn: int,
    first_time: int,
    dbid: int,
    db_name: str,
    resetlogs_id: int,
    resetlogs_scn: int,
    order: L.Order = "<",
    block_size: int = 512,
) -> LogHeader:
    return LogHeader(
        order=order,
        block_size=block_size,
        file_blocks=1,
        version=VERSION,
        dbid=dbid,
        db_name=db_name,
        thread=thread,
        sequence=sequence,
        resetlogs_id=resetlogs_id,
        resetlogs_scn=resetlogs_scn,
        first_scn=first_scn,
        next_scn=L.OPEN_SCN,
        first_time=first_time,
        next_time=0,
        blocks=2,
    )
