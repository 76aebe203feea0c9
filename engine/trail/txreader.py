"""Whole transactions from a trail that its writer may still be appending to, or recovering.

A reader of a live trail (a pump, Replicat) must act only on whole transactions: the writer's
recovery may cut away the records of a partly written transaction that a reader has already
seen (RECOVERYOPTIONS OVERWRITEMODE), and write the re-captured transaction again. So
:class:`TransactionReader` hands out a transaction only when its last record (TransInd 2 or 3)
has been read, and after each poll that ended inside a transaction it moves back to the end of
the last whole transaction, to read that transaction again from the trail as it then is.
A RestartAbend marker (APPEND recovery, the default) drops the open transaction: its
records stay in the trail and the writer writes the transaction again, whole, after the
marker. A transaction that begins while another is open with no marker between raises
CorruptRecordError (the pump and Replicat abend with one line).

Positions: :attr:`TransactionReader.position` is always the end of the last whole transaction
handed out (or the start position): the read checkpoint of a pump or Replicat.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from engine.trail.files import TrailName
from engine.trail.layout import IOType
from engine.trail.model import FileHeader, TableDef, TrailPosition, TrailRecord
from engine.trail.reader import TrailReader
from engine.trail.recovery import unended_transaction

#: Records outside transactions that do not close one: table definitions, Logdump SAVE's
#: comments.
_SKIPPED = frozenset({IOType.METADATA, IOType.GGS_COMMENT})


@dataclass(frozen=True, slots=True)
class Transaction:
    """The records of one source transaction, with where it is in the trail.

    ``logcsn`` and ``tranid`` come from its first record (Extract puts the LOGCSN and TRANID
    tokens there); ``end`` is the position just after its last record; ``positions`` that
    of each record (@GETENV ('RECORD', 'FILESEQNO' / 'FILERBA')).
    """

    records: tuple[TrailRecord, ...]
    start: TrailPosition
    end: TrailPosition
    positions: tuple[TrailPosition, ...] = ()
    header: FileHeader | None = None
    """The file header of the file its last record is in (@GETENV ('GGFILEHEADER', ...))."""

    @property
    def logcsn(self) -> str | None:
        return self.records[0].logcsn if self.records else None

    @property
    def tranid(self) -> str | None:
        return self.records[0].tranid if self.records else None

    @property
    def csn(self) -> int | None:
        """LOGCSN as a number (commit SCNs compare numerically), None if absent or not one."""
        text = self.logcsn
        return int(text) if text is not None and text.isdigit() else None

    @property
    def io_time_us(self) -> int:
        return self.records[-1].io_time_us if self.records else 0


class TransactionReader:
    """Poll a trail for whole transactions, from ``start``."""

    def __init__(
        self, trail: str | os.PathLike[str] | TrailName, start: TrailPosition | None = None
    ) -> None:
        self._reader = TrailReader(trail, start)
        self.position = self._reader.position
        self.records_read = 0

    @property
    def tables(self) -> dict[str, TableDef]:
        """Column names of the tables met so far (from the trail's TDRs)."""
        return self._reader.tables

    @property
    def header(self) -> FileHeader | None:
        """The file header of the input file being read (its FORMAT RELEASE)."""
        return self._reader.header

    def close(self) -> None:
        self._reader.close()

    def poll(self, limit: int | None = None) -> Iterator[Transaction]:
        """The whole transactions written since the last poll (at most ``limit``).

        Stopping the iteration early is allowed: the next poll resumes after the last
        transaction handed out.
        """
        open_records: list[TrailRecord] = []
        open_positions: list[TrailPosition] = []
        start = self.position
        handed = 0
        try:
            for entry in self._reader:
                record = entry.record
                if isinstance(record, FileHeader) or record.io_type in _SKIPPED:
                    continue
                self.records_read += 1
                if record.io_type == IOType.RESTART_ABEND:
                    open_records, open_positions = [], []
                    continue
                if record.begins_transaction:
                    if open_records:
                        raise unended_transaction(start, entry.position)
                    start = entry.position
                open_records.append(record)
                open_positions.append(entry.position)
                if record.ends_transaction:
                    txn = Transaction(
                        tuple(open_records),
                        start,
                        entry.end,
                        tuple(open_positions),
                        self._reader.header,
                    )
                    open_records, open_positions = [], []
                    self.position = entry.end
                    handed += 1
                    yield txn
                    if limit is not None and handed >= limit:
                        return
        finally:
            # Back to the end of the last whole transaction: a partial one is read again,
            # whole, by the next poll (its writer may also rewrite it after a recovery).
            self._reader.close()
            self._reader.position = self.position
