"""Orphaned transactions (TRANLOGOPTIONS PURGEORPHANEDTRANSACTIONS, TRANSCLEANUPFREQUENCY).

When a RAC instance dies, its open transactions are rolled back by another instance but no
rollback record ever appears in the dead instance's redo thread: Extract would cache them
for ever. Every TRANSCLEANUPFREQUENCY minutes (of redo time) Extract asks the source which
transactions are still active; a cached transaction of a crashed thread that the source no
longer has is a candidate, and a candidate found again at the next scan is purged (scan,
re-scan to confirm, purge, as GoldenGate does).

The source's state is read from its SQLite file, read-only; this module does not open the
database (which another process may hold). The saved values are data
(:mod:`engine.embedded.statefile`); a damaged or old-format one is a
:class:`~engine.home.datafile.DataError`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from engine.embedded.statefile import decode_sessions, decode_state_fields
from engine.extract.cache import Txn


@dataclass(frozen=True)
class SourceState:
    crashed_threads: frozenset[int]
    active_xids: frozenset[str]


def read_source_state(root: Path) -> SourceState:
    """Crashed threads and active transactions, as the source last saved them."""
    uri = f"file:{root / 'data.sqlite'}?mode=ro"
    with sqlite3.connect(uri, uri=True) as conn:
        rows = dict(
            conn.execute("SELECT key, value FROM _gg_state WHERE key IN ('state', 'sessions')")
        )
    crashed = cast(list[int], decode_state_fields(bytes(rows["state"])).get("crashed", []))
    sessions = decode_sessions(bytes(rows["sessions"]))
    active = frozenset(str(s.txn.xid) for s in sessions.values() if s.txn is not None)
    return SourceState(frozenset(crashed), active)


@dataclass
class OrphanScanner:
    """Scan / confirm bookkeeping; ``due`` and ``scan`` take redo time in microseconds."""

    frequency_min: int
    enabled: bool
    candidates: set[str] = field(default_factory=set)
    next_scan_us: int | None = None

    def due(self, now_us: int) -> bool:
        if not self.enabled or not now_us:
            return False
        if self.next_scan_us is None:
            self.next_scan_us = now_us + self.frequency_min * 60_000_000
            return False
        return now_us >= self.next_scan_us

    def scan(self, now_us: int, open_txns: Iterable[Txn], source: SourceState) -> list[Txn]:
        """The transactions to purge now (found orphaned at this scan and the one before)."""
        self.next_scan_us = now_us + self.frequency_min * 60_000_000
        found = {
            t.xid: t
            for t in open_txns
            if t.start.thread in source.crashed_threads and t.xid not in source.active_xids
        }
        purge = [t for x, t in found.items() if x in self.candidates]
        self.candidates = set(found) - {t.xid for t in purge}
        return purge
