"""The transactions at the end of a trail that share its last commit SCN.

On a multi-thread (RAC) source, two transactions on different threads may commit at the
same SCN; the Extract writes both, in thread order. After a restart it must know which of
those it wrote already, and the trail holds the answer: walking back from the end of the
last whole transaction (each record's Z trailer carries its length), every transaction
whose first record has that LOGCSN is collected, up to the first one with a lower LOGCSN.
Only the file the last transaction ends in is read (a file holds at least one whole
transaction at its end, and same-SCN commits are rare); the Extract's checkpoint carries
the same set as well (capture.py).
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

from engine.trail.codec import decode_piece
from engine.trail.errors import TrailError
from engine.trail.layout import NON_TRANSACTIONAL_IO_TYPES, IOType, TransInd
from engine.trail.model import TrailRecord

_SECTION = 4


def tranids_at(path: Path, end: int, logcsn: str) -> set[str]:
    """TRANIDs of the transactions whose first record has ``logcsn``, among those that end
    at or before RBA ``end`` of ``path`` and follow the last one with a lower LOGCSN."""
    found: set[str] = set()
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0 or end > size:
                return found
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                pos = end
                while pos > _SECTION:
                    z = data[pos - _SECTION : pos]
                    length = z[2] << 8 | z[3]
                    if z[0] != ord("Z") or length < 3 * _SECTION or length > pos:
                        break  # the file header, or not a record: stop looking
                    start = pos - length
                    record, _ = decode_piece(data, start)  # a continued row's base: its tokens
                    pos = start
                    if not isinstance(record, TrailRecord):
                        break
                    if record.io_type in NON_TRANSACTIONAL_IO_TYPES | {IOType.RECORD_FRAGMENT}:
                        continue
                    if record.trans_ind not in (TransInd.BEGIN, TransInd.WHOLE):
                        continue
                    if record.logcsn != logcsn:
                        break
                    if record.tranid:
                        found.add(record.tranid)
    except (OSError, TrailError, ValueError):
        return found  # what was found; the checkpoint's set covers the rest
    return found
