"""Replicat's progress in the target: the checkpoint table and its ``_lox`` table (seed 004).

One row per (GROUP_NAME, GROUP_KEY). It is written **in the same target transaction as the
data it covers**, so after any crash the target holds exactly the transactions the row says
were applied. Columns, as seed 004 defines them:

* SEQNO, RBA: the trail position after the last applied transaction (where to read next);
* LOG_CSN (high watermark) and LOG_CMPLT_CSN (low watermark): Replicat applies serially, so
  both are the CSN of the last applied transaction;
* LOG_CMPLT_XIDS: the transaction ids applied at that CSN (several transactions may share a
  CSN), comma-separated; what does not fit the column's 2,000 characters overflows into
  ``_lox`` rows (LOG_CMPLT_XIDS_SEQ 1, 2, ...) keyed by the same LOG_CMPLT_CSN;
* CREATE_TS: when the checkpoint table was created (the column default set by
  :func:`engine.replicat.checkpoint_table.ddl`; a table of an older version, without it, is upgraded
  in place on first use: :func:`engine.replicat.checkpoint_table.upgrade`), LAST_UPDATE_TS: when the
  row was last written;
* AUDIT_TS: the source commit time of the last applied transaction;
* LOG_BSN: where Extract could be repositioned to for this Replicat (seed 004): the begin SCN
  of the oldest transaction open in the source when Extract processed the last heartbeat
  record applied (its restart position, carried on the record as tokens; seed 001: "choose
  a LOGBSN from a heartbeat record"). Until a heartbeat has been applied, the LOGCSN of the
  last applied transaction (an Extract repositioned there could miss the earlier changes of
  a transaction that was open then: heartbeat tables make LOG_BSN exact).

:meth:`Progress.applied` is the filter: a transaction with a CSN below the low watermark,
or at it with its id in LOG_CMPLT_XIDS, was applied already (Extract's recovery may send a
little data again, or the trail may be read again from an older position) and is skipped.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from engine.heartbeat.flow import restart_of
from engine.replicat import ReplicatError
from engine.replicat import checkpoint_table as ct
from engine.targets import TargetError
from engine.targets.base import Target
from engine.trail.model import TrailPosition
from engine.trail.txreader import Transaction

XIDS_WIDTH = 2000
VERSION = 1


@dataclass(frozen=True, slots=True)
class Progress:
    position: TrailPosition
    csn: int | None = None
    xids: tuple[str, ...] = ()
    audit_ts: str | None = None
    bsn: int | None = None  # Extract's restart CSN from the last heartbeat record applied

    def applied(self, txn: Transaction) -> bool:
        csn = txn.csn
        if csn is None or self.csn is None:
            return False
        return csn < self.csn or (csn == self.csn and (txn.tranid or "") in self.xids)

    def after(self, txn: Transaction, audit_ts: str) -> Progress:
        csn = txn.csn
        tranid = txn.tranid or ""
        bsn = _restart_csn(txn)
        bsn = self.bsn if bsn is None else bsn
        if csn is None:
            return Progress(txn.end, self.csn, self.xids, audit_ts, bsn)
        xids = (*self.xids, tranid) if csn == self.csn else (tranid,)
        return Progress(txn.end, csn, xids, audit_ts, bsn)


def _restart_csn(txn: Transaction) -> int | None:
    """The newest restart CSN a heartbeat record of ``txn`` carries."""
    found = [c for r in txn.records if r.extra_tokens for c in [restart_of(r)[0]] if c]
    return int(found[-1]) if found and found[-1].isdigit() else None


def group_key(home_root: str, group: str) -> int:
    """A stable identifier of this group in this home (GoldenGate hashes its checkpoint file
    path the same way), so two homes can share one checkpoint table."""
    return zlib.crc32(f"{home_root}/{group.upper()}".encode())


def _chunks(xids: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    cur = ""
    for x in xids:
        piece = x if not cur else f"{cur},{x}"
        if len(piece) > XIDS_WIDTH:
            out.append(cur)
            cur = x
        else:
            cur = piece
    out.append(cur)
    return out


class CheckpointTable:
    """Reads and writes one group's row; every write happens in the caller's transaction."""

    def __init__(
        self,
        target: Target,
        name: str,
        group: str,
        key: int,
        current_dir: str,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.target = target
        self.table = ct.TableName.parse(name)
        self.group = group.upper()
        self.key = key
        self.current_dir = current_dir
        dialect = target.dialect
        self.main = self.table.qualified(dialect)
        self.lox = self.table.qualified(dialect, "_lox")
        try:
            target.query(f"SELECT count(*) FROM {self.main} WHERE 1 = 0")
        except TargetError as exc:
            raise ReplicatError(
                "OGG-00446",
                f"Checkpoint table {self.table} does not exist. Please create the table "
                "(ADD CHECKPOINTTABLE) or recreate the REPLICAT group with the correct "
                "checkpoint table.",
            ) from exc
        finally:
            target.rollback()
        self.upgraded = self._upgrade(clock)
        """Rows kept when this start gave an older version's table its CREATE_TS default."""
        self._row_present = False
        self._lox_rows = True  # unknown at start: clear once

    def _upgrade(self, clock: Callable[[], datetime]) -> int | None:
        target = self.target
        target.begin()
        try:
            kept = ct.upgrade(target.query, target.execute, self.table, target.dialect, clock())
        except TargetError as exc:
            target.rollback()
            raise ReplicatError(
                "OGG-00446", f"Checkpoint table {self.table} could not be upgraded: {exc}"
            ) from exc
        target.commit()
        return kept

    def _p(self, n: int) -> str:
        return ", ".join(self.target.placeholder for _ in range(n))

    def load(self) -> Progress | None:
        ph = self.target.placeholder
        rows = self.target.query(
            f"SELECT seqno, rba, log_cmplt_csn, log_cmplt_xids, audit_ts, log_bsn FROM {self.main} "
            f"WHERE group_name = {ph} AND group_key = {ph}",
            (self.group, self.key),
        )
        if not rows:
            self.target.rollback()
            return None
        seqno, rba, csn, xids, audit, bsn = rows[0]
        parts = [str(xids or "")]
        if csn is not None:
            extra = self.target.query(
                f"SELECT log_cmplt_xids FROM {self.lox} WHERE group_name = {ph} AND "
                f"group_key = {ph} AND log_cmplt_csn = {ph} ORDER BY log_cmplt_xids_seq",
                (self.group, self.key, str(csn)),
            )
            parts += [str(r[0]) for r in extra]
        self.target.rollback()
        self._row_present = True
        ids = tuple(x for p in parts for x in p.split(",") if x)
        return Progress(
            TrailPosition(int(seqno or 0), int(rba or 0)),
            int(csn) if csn not in (None, "") else None,
            ids,
            audit,
            int(bsn) if bsn and str(bsn).isdigit() and bsn != csn else None,  # csn: no heartbeat
        )

    def save(self, progress: Progress, now: datetime) -> None:
        """Write ``progress`` in the current target transaction (the caller commits)."""
        ph = self.target.placeholder
        chunks = _chunks(progress.xids)
        csn = str(progress.csn) if progress.csn is not None else None
        stamp = now.strftime("%Y-%m-%d %H:%M:%S.%f")
        values: dict[str, Any] = {
            "seqno": progress.position.seqno,
            "rba": progress.position.rba,
            "audit_ts": progress.audit_ts,
            "last_update_ts": stamp,
            "log_bsn": str(progress.bsn) if progress.bsn is not None else csn,
            "log_csn": csn,
            "log_cmplt_csn": csn,
            "log_cmplt_xids": chunks[0],
        }
        if self._row_present:
            sets = ", ".join(f"{k} = {ph}" for k in values)
            self.target.execute(
                f"UPDATE {self.main} SET {sets} WHERE group_name = {ph} AND group_key = {ph}",
                [*values.values(), self.group, self.key],
            )
        else:
            row = {
                "group_name": self.group,
                "group_key": self.key,  # CREATE_TS: the table's creation time (its default)
                "current_dir": self.current_dir,
                "log_xid": None,
                "version": VERSION,
                **values,
            }
            self.target.execute(
                f"INSERT INTO {self.main} ({', '.join(row)}) VALUES ({self._p(len(row))})",
                list(row.values()),
            )
            self._row_present = True
        if self._lox_rows:
            self.target.execute(
                f"DELETE FROM {self.lox} WHERE group_name = {ph} AND group_key = {ph}",
                (self.group, self.key),
            )
            self._lox_rows = False
        for seq, chunk in enumerate(chunks[1:], start=1):
            self.target.execute(
                f"INSERT INTO {self.lox} (group_name, group_key, log_cmplt_csn, "
                f"log_cmplt_xids_seq, log_cmplt_xids) VALUES ({self._p(5)})",
                (self.group, self.key, csn or "", seq, chunk),
            )
            self._lox_rows = True
