"""An Extract's checkpoint against what it names, checked at start before it is acted upon.

The checkpoint file is sealed (:mod:`engine.home.jsonfile`), which finds a changed digit. These
checks find a checkpoint whose seal was made to match but whose content cannot be true, at
the cost of reading the current redo log of each thread up to the read position once:

- the last commit written is not below the LOGCSN of the trail's last transaction when the
  checkpoint covers it, nor above the last SCN read;
- each read position lies in its redo log (not past its end) on a record boundary;
- the last commit written is not above the highest SCN of the records before the read
  positions (redo read up to there is all a commit can have come from).

The read positions are recorded once, as the read checkpoints GGSCI shows (the capture state
holds the rest), so they cannot disagree with it. A legitimate ``ALTER EXTRACT ...
EXTSEQNO/EXTRBA/SCN/BEGIN`` never meets these checks: it marks the checkpoint altered and says
what it moved, and the Extract then starts from the new position without the old capture
state.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.embedded.logfile import peek
from engine.embedded.logs import LogInfo
from engine.embedded.redo_scan import scan_frames
from engine.extract.capture import CaptureState
from engine.trail.recovery import CompletedTransaction


def trail_problem(saved: CaptureState, last: CompletedTransaction | None) -> str | None:
    """The last commit against the trail's last LOGCSN: when the trail's last transaction is
    one the checkpoint covers (it ends at or before the checkpoint's trail position), the
    checkpoint's last commit cannot be below it (a commit written is a commit made)."""
    if last is None or last.logcsn is None or not last.logcsn.isdigit():
        return None
    if last.end > saved.trail or int(last.logcsn) <= saved.last_commit_scn:
        return None  # written after the checkpoint (it is read again), or consistent
    return (
        f"its last commit SCN {saved.last_commit_scn} is below the LOGCSN {last.logcsn} of "
        f"the trail's last transaction, which it covers (Seqno {last.end.seqno}, RBA "
        f"{last.end.rba})"
    )


def commit_problem(saved: CaptureState, logs: Iterable[LogInfo]) -> str | None:
    """The capture state against the redo it names; None when it can be true."""
    if saved.last_scn and saved.last_commit_scn > saved.last_scn:
        return (
            f"its last commit SCN {saved.last_commit_scn} is above the last SCN it read "
            f"({saved.last_scn})"
        )
    by_key = {(i.thread, i.sequence): i for i in logs}
    bounds: list[int] = []
    known = True
    for t, p in sorted(saved.current.items()):
        info = by_key.get((t, p.sequence))
        if info is None:
            known = False  # archived away or purged: the redo reader says what is missing
            continue
        highest, boundary, size = _scan(info, p.offset)
        if p.offset > size:
            return (
                f"its read position on thread {t} (Seqno {p.sequence}, RBA {p.offset}) is "
                f"past the end of redo log {info.path.name} ({size} bytes)"
            )
        if not boundary:
            return (
                f"its read position on thread {t} (Seqno {p.sequence}, RBA {p.offset}) is not "
                f"on a record boundary of redo log {info.path.name}"
            )
        if highest is None:
            known = False  # at the start of its log: the bound lies in an earlier one
        else:
            bounds.append(highest)
    if known and bounds and saved.last_commit_scn > max(bounds):
        return (
            f"its last commit SCN {saved.last_commit_scn} is above every SCN of the redo before "
            f"its read positions (at most {max(bounds)})"
        )
    return None


def _scan(info: LogInfo, offset: int) -> tuple[int | None, bool, int]:
    """The highest SCN of the records before ``offset`` in ``info``, whether ``offset`` is
    a record boundary (a record's start or end, or the log's start) and where its records
    end."""
    highest: int | None = None
    boundary = offset == 0
    last_end = 0
    for start, end, buf, lo, length in scan_frames(info.location or info.path, 0, offset + 1):
        if start in (offset,) or end == offset:
            boundary = True
        if start < offset:
            scn = peek(bytes(buf[lo : lo + min(length, 64)]))[1]
            highest = scn if highest is None else max(highest, scn)
        last_end = max(last_end, end)
    return highest, boundary, max(last_end, info.end, info.size if info.archived else 0)
