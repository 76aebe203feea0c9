"""Managing open transactions from the Extract's run: WARNLONGTRANS, orphan purge, and the
SEND requests SHOWTRANS, SKIPTRANS, FORCETRANS, TRANLOGOPTIONS and the STOP refusal.

A mixin of :class:`engine.extract.run.ExtractRun`; its methods run in the capture loop
(warnings, purge) or in the IPC thread (requests), always under ``self.lock``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

from engine.changes import Entry, Fragment
from engine.extract import longtrans as lt
from engine.extract.cache import Txn
from engine.extract.capture import Capture
from engine.extract.orphans import OrphanScanner, read_source_state
from engine.home.datafile import DataError
from engine.home.layout import Home
from engine.runtime.events import Severity
from params.models import ParamFile


class TransactionManagement:
    capture: Capture
    lock: threading.RLock
    model: ParamFile
    emit: Callable[[str, Severity, str], None]
    name: str
    home: Home
    root: Path
    orphans: OrphanScanner
    _next_check_us: int | None
    checkpoint: Callable[[], None]  # ExtractRun's: make the trail durable, then publish

    # -- long-running transactions ---------------------------------------------------
    def _age_us(self, txn: Txn) -> int:
        return self.capture.last_time_us - txn.start_time_us

    def _warn_long_transactions(self) -> None:
        """WARNLONGTRANS: every CHECKINTERVAL of redo time, OGG-01027 per transaction open
        longer than the threshold."""
        wl = self.model.warn_long_trans
        now = self.capture.last_time_us
        if not now:
            return
        if self._next_check_us is not None and now < self._next_check_us:
            return  # the first check is at the first batch, then every CHECKINTERVAL
        self._next_check_us = now + wl.check_interval * 1_000_000
        for txn in self.capture.cache.open_transactions():
            if self._age_us(txn) > wl.threshold * 1_000_000:
                self.emit("OGG-01027", Severity.WARNING, lt.warning_text(txn, self.name))

    def _purge_orphans(self) -> None:
        now = self.capture.last_time_us
        if not self.orphans.due(now):
            return
        try:
            source = read_source_state(self.root)
        except (OSError, sqlite3.Error, DataError, KeyError) as exc:
            self.emit("OGG-01967", Severity.WARNING, f"Orphaned transaction scan failed: {exc}.")
            return
        for txn in self.orphans.scan(now, self.capture.cache.open_transactions(), source):
            self.capture.skip(txn.xid)
            self.emit(
                "OGG-01972",
                Severity.INFO,
                f"Purged orphaned transaction {lt.describe(txn)}, Items {txn.captured_rows}.",
            )

    def tranlog_request(self, args: tuple[str, ...]) -> list[str]:
        """SEND EXTRACT g, TRANLOGOPTIONS {PURGEORPHANEDTRANSACTIONS |
        NOPURGEORPHANEDTRANSACTIONS | TRANSCLEANUPFREQUENCY minutes}."""
        words = [w.upper() for w in args]
        with self.lock:
            if words == ["PURGEORPHANEDTRANSACTIONS"]:
                self.orphans.enabled = True
                return ["Purging of orphaned transactions is on."]
            if words == ["NOPURGEORPHANEDTRANSACTIONS"]:
                self.orphans.enabled = False
                self.orphans.candidates.clear()
                return ["Purging of orphaned transactions is off."]
            if len(words) == 2 and words[0] == "TRANSCLEANUPFREQUENCY" and words[1].isdigit():
                minutes = int(words[1])
                if not 1 <= minutes <= 43_200:
                    raise lt.RequestError(
                        "ERROR: TRANSCLEANUPFREQUENCY must be 1 to 43200 minutes."
                    )
                self.orphans.frequency_min = minutes
                self.orphans.next_scan_us = None
                return [f"Orphaned transactions are scanned for every {minutes} minute(s)."]
        raise lt.RequestError(f"ERROR: invalid TRANLOGOPTIONS request: {' '.join(args)}")

    def long_running(self) -> list[Txn]:
        limit = self.model.warn_long_trans.threshold * 1_000_000
        return [t for t in self.capture.cache.open_transactions() if self._age_us(t) > limit]

    def showtrans(self, args: tuple[str, ...]) -> list[str]:
        req = lt.parse_showtrans(args)
        with self.lock:
            txns = self.capture.cache.open_transactions()
            header = lt.oldest_log_header(txns, self.capture.positions)
            if req.xid is not None:
                txns = [t for t in txns if t.xid == req.xid]
            if req.thread is not None:
                txns = [t for t in txns if t.start.thread == req.thread]
            if req.duration is not None:
                txns = [t for t in txns if self._age_us(t) >= req.duration * 1_000_000]
            if req.count is not None:
                txns = txns[: req.count]
            if not txns:
                return [*header, "No transactions found."]
            if req.tabular:
                lines = [lt.TABULAR_HEADER, *(lt.tabular_line(t, self.name) for t in txns)]
            else:
                lines = [ln for t in txns for ln in lt.block(t, self.name)]
            lines = [*header, *lines]
            if req.file is None:
                return lines
            if req.detail:
                for t in txns:
                    lines += ["", f"Items of {t.xid} (in memory):"]
                    lines += [ln for r in t.rows for ln in _item_lines(r)]
                    if t.spilled:
                        lines.append(f"  ... and {t.spilled} paged out to {t.spill_path}")
        target = Path(req.file) if Path(req.file).is_absolute() else self.home.root / req.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines) + "\n")
        return [f"Transaction information written to file {req.file}."]

    def transaction_action(self, word: str, args: tuple[str, ...]) -> list[str]:
        """SKIPTRANS / FORCETRANS: only the oldest open transaction (of THREAD n if given)."""
        req = lt.parse_action(word, args)
        with self.lock:
            txns = self.capture.cache.open_transactions()
            if req.thread is not None:
                txns = [t for t in txns if t.start.thread == req.thread]
            target = next((t for t in txns if t.xid == req.xid), None)
            if target is None:
                raise lt.RequestError(
                    f"ERROR: OGG-01012  Failed to {word.lower()[:-5]} {req.xid} due to error "
                    "(no such open transaction)."
                )
            if txns[0].xid != req.xid:
                if word == "SKIPTRANS":
                    msg = (
                        f"Cannot skip transaction {req.xid} because it's not the oldest one. "
                        "Only the oldest transaction can be skipped"
                    )
                    code = "OGG-25140"
                else:
                    msg = (
                        f"Cannot force transaction {req.xid} to trail file because it's not the "
                        "oldest one. Only the oldest transaction can be forced to trail file"
                    )
                    code = "OGG-25141"
                self.emit(code, Severity.ERROR, msg)
                raise lt.RequestError(f"ERROR: {code}  {msg}")
            desc = lt.describe(target)
            if req.validate:
                return [desc]
            if word == "SKIPTRANS":
                self.capture.skip(req.xid)
                done = f"Transaction [{desc}] skipped."
            else:
                self.capture.force(req.xid)
                done = f"Transaction [{desc}] forced to trail file."
            self.emit("OGG-01029", Severity.INFO, done)
            self.checkpoint()
        return [done]

    def stop_refusal(self) -> list[str] | None:
        with self.lock:
            if not self.long_running():
                return None
        return [
            "There are open, long-running transactions. Before you stop Extract, make the "
            "archives containing data for those transactions available for when Extract "
            f"restarts. To force Extract to stop, use the SEND EXTRACT {self.name}, FORCESTOP "
            "command."
        ]


def _item_lines(entry: Entry) -> list[str]:
    """SHOWTRANS DETAIL's lines for a cached item: a change, or a fragment's counts."""
    if isinstance(entry, Fragment):
        p = entry.pos
        where = f"fragment: thread {p.thread} seqno {p.sequence} RBA {p.offset}"
        return [f"  {table} {io_type} x{k} ({where})" for table, io_type, k in entry.table_ops]
    return [f"  {entry.table} {entry.io_type} {entry.rowid}"]
