"""PURGEOLDEXTRACTS: delete trail files every reader has finished with.

A trail file is ``<prefix><6 or 9 digits>``. With USECHECKPOINTS a file may go only when every
group reading that trail (a pump's EXTTRAILSOURCE, a Replicat's EXTTRAIL) has its recovery and
current read checkpoints in a later file; a trail nobody reads is kept. MINKEEPFILES keeps the
newest n files, MINKEEPHOURS keeps files modified within that many hours; the newest file (being
written) is never purged.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from engine.home.checkpoints import load_checkpoints
from engine.home.groups import GroupStore, normalize_trail
from engine.home.layout import Home
from engine.manager.params import PurgeRule

TRAIL_FILE_RE = re.compile(r"^(?P<prefix>.*[^0-9])(?P<seq>[0-9]{6}|[0-9]{9})$")


def _reader_min_seqno(home: Home, prefix: str) -> int | None:
    store = GroupStore(home)
    seqnos: list[int] = []
    for group in store.all():
        if group.source_path is None or normalize_trail(group.source_path) != prefix:
            continue
        cps = load_checkpoints(home, group.kind, group.name)
        if cps is None or not cps.reads:
            seqnos.append(0)
            continue
        seqnos.extend(min(r.recovery.seqno, r.current.seqno) for r in cps.reads)
    return min(seqnos) if seqnos else None


def purge_candidates(home: Home, rule: PurgeRule, now: datetime) -> list[Path]:
    """Trail files that ``rule`` allows to delete now, oldest first."""
    pattern = normalize_trail(rule.trail)
    parent = (home.root / pattern).parent
    if not parent.is_dir():
        return []
    by_prefix: dict[str, list[tuple[int, Path]]] = {}
    for path in parent.glob(Path(pattern).name):
        m = TRAIL_FILE_RE.match(path.name)
        if not m or not path.is_file():
            continue
        rel = path.relative_to(home.root).parent / m["prefix"]
        by_prefix.setdefault(rel.as_posix(), []).append((int(m["seq"]), path))
    out: list[Path] = []
    for prefix, files in by_prefix.items():
        files.sort()
        limit = len(files) - max(rule.min_keep_files, 1)
        if rule.use_checkpoints:
            min_read = _reader_min_seqno(home, prefix)
            if min_read is None:
                continue
        else:
            min_read = files[-1][0]
        for seq, path in files[: max(limit, 0)]:
            if seq >= min_read:
                break
            age_hours = (now.timestamp() - path.stat().st_mtime) / 3600
            if age_hours < rule.min_keep_hours:
                continue
            out.append(path)
    return out
