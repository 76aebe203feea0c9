"""DISCARDFILE: records Replicat could not apply, with the error, in a readable text form.

The layout follows GoldenGate's discard file: the error, the operation and its trail
position, then the record's columns between ``*`` lines. APPEND keeps earlier content,
PURGE (the default when neither is given) empties the file at start-up; MEGABYTES or
MAXBYTES caps it (OGG-01172 when reached: the record is then only counted).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from engine.trail.model import TableDef, TrailPosition, TrailRecord


class DiscardFile:
    def __init__(
        self, path: Path, *, append: bool, megabytes: int | None, max_bytes: int | None = None
    ) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if not append and path.exists():
            path.unlink()
        self.limit = max_bytes or (megabytes or 50) * (1 << 20)
        self.discarded = 0
        self.full = False

    def write(
        self,
        when: datetime,
        record: TrailRecord,
        definition: TableDef | None,
        number: int,
        message: str,
        position: TrailPosition,
        target: str,
    ) -> None:
        self.discarded += 1
        name = definition.name_of if definition else str
        lines = [
            f"Current time: {when:%Y-%m-%d %H:%M:%S}",
            f"Discarded record from action DISCARD on error {number}",
            message,
            f"Problem replicating {record.table} to {target}",
            f"Operation: {record.op_name} at trail seqno {position.seqno} rba {position.rba}, "
            f"LOGCSN {record.logcsn or '-'}, IO time {record.io_time:%Y-%m-%d %H:%M:%S}",
        ]
        if record.before_columns:
            lines.append("Before image:")
            lines += [f"{name(i)} = {_text(v)}" for i, v in record.before_columns]
        lines.append("*")
        lines += [f"{name(i)} = {_text(v)}" for i, v in record.columns]
        lines += ["*", ""]
        text = "\n".join(lines) + "\n"
        size = self.path.stat().st_size if self.path.exists() else 0
        if size + len(text) > self.limit:
            self.full = True
            return
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(text)


def _text(value: str | None) -> str:
    return "NULL" if value is None else value
