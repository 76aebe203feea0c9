"""Merging redo threads (RAC): how far the Extract may apply, and a batch bounded to a
common SCN.

Threads are merged by SCN, and a record may be applied only once every open thread is
known to have nothing more below it: otherwise a commit of a thread read behind another
arrives later with a lower SCN than one already written (and, written in commit order,
it would be taken for one the trail already holds). Per thread, the SCN at or below which
it is complete once a batch is read comes from:

- the thread's *progress mark* (:class:`~engine.embedded.logfile.Progress`, in its current
  log's first block): the database rewrites it at every redo flush, for idle threads too,
  so an idle thread does not hold the others back; a *closed* thread (its instance
  crashed) holds nothing back;
- an archived log read to its end: what follows it has an SCN of at least its next SCN
  less one (a statement's records may straddle the switch);
- the first record of the range after the batch (:func:`first_scn_at`), and the last
  record the batch read (the driver: :class:`Horizon.low`).

The watermark never passes the highest mark read when the logs were listed: a thread
opened again, or written for the first time, after the listing writes records above it.
A listing that sees a new thread directory appear applies nothing (the next one reads
it). Redo without any mark (written before marks existed) is merged as it was before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine.changes import Position
from engine.embedded.errors import RedoFormatError
from engine.embedded.logfile import Progress, read_head
from engine.embedded.logs import LogInfo, list_logs
from engine.extract.redo_source import Split, logs_by_thread, positions_after, thread_splits
from engine.redo.scan import first_scn_at  # any storage (an archived copy on s3://)

NONE = -1  # nothing known of a thread
#: The cap of archived logs only: no mark bounds the watermark, the threads' logs do.
ARCHIVED_CAP = (1 << 63) - 1


@dataclass(frozen=True)
class Horizon:
    """What a batch of several threads may apply: per thread the SCN at or below which the
    thread is complete once the batch is read (``known``), the highest SCN any mark said
    when the logs were listed (``cap``), the threads a record must wait for."""

    threads: frozenset[int]
    cap: int
    known: dict[int, int] = field(default_factory=dict)
    hold_all: bool = False

    def low(self, seen: dict[int, int]) -> int:
        """The watermark, with ``seen`` (per thread, the SCN known complete otherwise)."""
        if self.hold_all:
            return NONE
        w = self.cap
        for t in self.threads:
            w = min(w, max(self.known.get(t, NONE), seen.get(t, NONE)))
        return w


@dataclass(frozen=True)
class Batch:
    splits: list[Split]
    horizon: Horizon | None  # None: one thread, or redo without marks: nothing to wait for


def _marks(redo_dir: Path) -> tuple[set[int], dict[tuple[int, int], Progress]]:
    """Thread directories and the progress mark of each thread's newest log, read before
    the logs' sizes are (a mark never covers more than the size read after it)."""
    threads: set[int] = set()
    marks: dict[tuple[int, int], Progress] = {}
    if not redo_dir.is_dir():
        return threads, marks
    for tdir in redo_dir.glob("t*"):
        if not tdir.name[1:].isdigit():
            continue
        threads.add(int(tdir.name[1:]))
        names = sorted(p.name for p in tdir.iterdir() if p.name.endswith(".log"))
        if not names:
            continue
        try:
            head, mark = read_head(tdir / names[-1])
        except (RedoFormatError, OSError):
            continue  # being created
        if mark is not None:
            marks[(head.thread, head.sequence)] = mark
    return threads, marks


def _still_closed(logs: list[LogInfo]) -> bool:
    try:
        return bool((m := read_head(logs[-1].path)[1]) and m.closed)
    except (RedoFormatError, OSError):
        return False


def _evidence(
    logs: list[LogInfo], at: Position | None, mark: Progress | None, closed: bool, cap: int
) -> int:
    """The SCN at or below which a thread is complete once read up to ``at``."""
    known = NONE
    if at is None:
        return known
    for info in logs:
        if info.archived and info.sequence < at.sequence and info.next_scn:
            known = max(known, info.next_scn - 2)
    last = logs[-1]
    if mark is None or last.archived:
        return known
    if at.sequence > last.sequence or (at.sequence == last.sequence and at.offset >= mark.offset):
        known = max(known, cap if closed else mark.scn)
    return known


def plan_batch(
    redo_dir: Path,
    positions: dict[int, Position],
    split_bytes: int,
    max_splits: int | None,
    *,
    hold: frozenset[int] = frozenset(),
    listing: Callable[[], list[LogInfo]] | None = None,
    archived_only: bool = False,
) -> Batch:
    """The next batch from ``positions``: every thread's splits to the end of its logs, at
    most ``max_splits`` of a thread, cut to the SCN where the first thread cut stops (so
    that a thread does not run far ahead of another only to be held); threads in ``hold``
    (ahead already) are not read. ``listing`` lists the logs (after the marks are read),
    from where the Extract reads them (:class:`~engine.embedded.catalog.RedoCatalog`).
    ``archived_only``: the logs are a real database's archived logs (no progress marks): a
    thread is known complete only from the archived logs read to their end, and every
    thread of ``positions`` is waited for, archived yet or not."""
    dirs, marks = _marks(redo_dir) if not archived_only else (set(), {})
    by_thread = logs_by_thread(list_logs(redo_dir) if listing is None else listing())
    appeared = _new_threads(redo_dir, dirs) if not archived_only else set()
    per: dict[int, list[Split]] = {
        t: [] if t in hold else thread_splits(t, logs, positions.get(t), split_bytes)
        for t, logs in sorted(by_thread.items())
    }
    threads = set(by_thread) | (set(positions) if archived_only else set())
    if archived_only and len(threads) > 1:
        cap = ARCHIVED_CAP
    elif not marks or (len(by_thread) <= 1 and not appeared):
        out = [s for t in sorted(per) for s in per[t]]
        if max_splits is not None and len(by_thread) == 1 and len(out) > max_splits:
            out = out[:max_splits]
        return Batch(out, None)
    else:
        cap = max(m.scn for m in marks.values())
    closed = {
        t
        for t, logs in by_thread.items()
        if (m := marks.get((t, logs[-1].sequence))) is not None and m.closed
    }
    closed = {t for t in closed if _still_closed(by_thread[t])}  # not opened in between
    bound: dict[int, int] = {}  # thread -> SCN of the first record left for later
    if max_splits is not None:
        for t, splits in per.items():
            if len(splits) > max_splits:
                scn = _scn_at(splits[max_splits])
                del splits[max_splits:]
                if scn is not None:
                    bound[t] = scn
    if bound:  # cut every thread at the lowest of them (its own splits all start below)
        common = min(bound.values())
        for t, splits in per.items():
            for i in range(len(splits)):
                scn = _scn_at(splits[i])
                if scn is not None and scn > common:
                    bound[t] = min(bound.get(t, scn), scn)
                    del splits[i:]
                    break
    splits = [s for t in sorted(per) for s in per[t]]
    after = positions_after(splits, positions)
    known: dict[int, int] = {}
    for t in threads:
        logs = by_thread.get(t, [])
        mark = marks.get((t, logs[-1].sequence)) if logs else None
        k = _evidence(logs, after.get(t), mark, t in closed, cap) if logs else NONE
        if t in bound:
            k = max(k, bound[t] - 1)
        known[t] = k
    horizon = Horizon(frozenset(threads), cap, known, hold_all=bool(appeared))
    return Batch(splits, horizon)


def _scn_at(split: Split) -> int | None:
    return first_scn_at(split.path, split.start)


def _new_threads(redo_dir: Path, before: set[int]) -> set[int]:
    """Thread directories that appeared while the logs were listed."""
    if not redo_dir.is_dir():
        return set()
    now = {int(d.name[1:]) for d in redo_dir.glob("t*") if d.name[1:].isdigit()}
    return now - before
