"""A read checkpoint's mark: what the bytes just before a reader's position in a trail were.

A pump or Replicat publishes, with its read position (Seqno, RBA), the SHA-256 of the
:data:`TAIL` bytes of the input file that end at that position (the end of the last record
it read). At its next start, before it reads anything, the file it names must still hold
those bytes there: a read position moved to another record boundary, or a file replaced
under it, is found, and the process abends naming both, instead of skipping (or reading
twice) the transactions between. A position ADD or ALTER set (the checkpoint says
``altered``) carries no mark and is not checked: the user asked for it.
"""

from __future__ import annotations

import hashlib
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from engine.home.checkpoints import (
    Checkpoints,
    Position,
    ReadCheckpoint,
    WriteCheckpoint,
    next_checkpoint,
    save_checkpoints,
)

if TYPE_CHECKING:
    from engine.home.layout import Home

TAIL: Final = 256
KEY: Final = "read_mark"


def tail_digest(path: Path, rba: int) -> str | None:
    """SHA-256 of the bytes of ``path`` in ``[rba - TAIL, rba)``; None when the file does
    not hold ``rba`` bytes (or is gone)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        if os.fstat(fd).st_size < rba:
            return None
        start = max(0, rba - TAIL)
        return hashlib.sha256(os.pread(fd, rba - start, start)).hexdigest()
    finally:
        os.close(fd)


def make_mark(path: Path, seqno: int, rba: int) -> dict[str, Any]:
    """The mark of position (``seqno``, ``rba``) in ``path`` (its file)."""
    return {"seqno": seqno, "rba": rba, "tail": tail_digest(path, rba)}


def mark_problem(mark: object, path: Path, seqno: int, rba: int) -> str | None:
    """Why the read position (``seqno``, ``rba``) in ``path`` is not the one ``mark``
    recorded, or None. A file gone or shorter than the position is not judged here (the
    reader's own checks say what is wrong with it)."""
    if not isinstance(mark, dict):
        return "the read position carries no mark of where it was read"
    if (mark.get("seqno"), mark.get("rba")) != (seqno, rba):
        return (
            f"the read position Seqno {seqno}, RBA {rba} is not the one that was read "
            f"(Seqno {mark.get('seqno')}, RBA {mark.get('rba')})"
        )
    now = tail_digest(path, rba)
    if now is None or mark.get("tail") is None:
        return None
    if now != mark.get("tail"):
        return (
            f"the {min(rba, TAIL)} bytes before Seqno {seqno}, RBA {rba} in {path} are not the "
            "ones that were read there (the file was replaced or the position moved)"
        )
    return None


def publish_read(
    home: Home,
    previous: Checkpoints | None,
    name: str,
    kind: str,
    *,
    source_path: str,
    source_file: Path,
    startup: Position,
    at: Position,
    write: WriteCheckpoint | None,
    batch_id: int,
    now: datetime,
    source_time: datetime | None,
) -> Checkpoints:
    """Save and return the checkpoint of a trail reader (a pump, a Replicat) whose read
    position is ``at`` in ``source_file`` (its trail ``source_path``), with the mark of the
    bytes before it, and the trail it writes (a pump's ``write``; None for a Replicat)."""
    cps = next_checkpoint(
        previous,
        name,
        kind,
        reads=(ReadCheckpoint(source_path, startup, at, at),),
        write=write,
        batch_id=batch_id,
        now=now,
        source_time=source_time,
        extra={KEY: make_mark(source_file, at.seqno, at.rba)},
    )
    save_checkpoints(home, cps)
    return cps
