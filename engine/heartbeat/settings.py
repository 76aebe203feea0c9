"""What ADD / ALTER HEARTBEATTABLE set, as kept in the settings table (one row).

GoldenGate keeps FREQUENCY in its scheduler job and RETENTION_TIME in its purge procedure; our
databases have no scheduler (the embedded one has a small one, :mod:`engine.embedded.scheduler`),
so the values live in ``<name>_SETTINGS`` in the same database as the tables they govern: INFO
HEARTBEATTABLE, the Manager and the in-database jobs all read them there. LAST_PURGE_TS is when
the purge job last ran (it runs again PURGE_FREQUENCY days later).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from engine.targets.base import parse_temporal

DEFAULT_FREQUENCY = 60
DEFAULT_RETENTION_DAYS = 30
DEFAULT_PURGE_DAYS = 1


@dataclass(frozen=True)
class Settings:
    frequency: int = DEFAULT_FREQUENCY  # seconds between heartbeats; 0 pauses the update job
    retention_days: int = DEFAULT_RETENTION_DAYS
    purge_days: int = DEFAULT_PURGE_DAYS
    target_only: bool = False  # no update job (a database that is only ever a target)
    partitioned: bool = False  # accepted and recorded; the history table is not partitioned
    add_trandata: bool = True  # NOADDTRANDATA: recorded; the embedded source logs everything
    created: datetime | None = None
    last_purge: datetime | None = None

    def altered(
        self,
        frequency: int | None = None,
        retention_days: int | None = None,
        purge_days: int | None = None,
        target_only: bool | None = None,
    ) -> Settings:
        s = self
        if frequency is not None:
            s = replace(s, frequency=frequency)
        if retention_days is not None:
            s = replace(s, retention_days=retention_days)
        if purge_days is not None:
            s = replace(s, purge_days=purge_days)
        if target_only is not None:
            s = replace(s, target_only=target_only)
        return s

    @property
    def updates(self) -> bool:
        """Whether the update job runs at all."""
        return not self.target_only and self.frequency > 0

    def row(self) -> tuple[Any, ...]:
        """Values in the settings table's column order (timestamps as datetimes)."""
        return (
            self.frequency,
            self.retention_days,
            self.purge_days,
            _flag(self.target_only),
            _flag(self.partitioned),
            _flag(self.add_trandata),
            self.created,
            self.last_purge,
        )

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Settings:
        freq, retention, purge, target_only, partitioned, trandata, created, purged = row
        return cls(
            int(freq),
            int(retention),
            int(purge),
            _is(target_only),
            _is(partitioned),
            _is(trandata),
            to_datetime(created),
            to_datetime(purged),
        )


def _flag(value: bool) -> str:
    return "Y" if value else "N"


def _is(value: object) -> bool:
    return str(value or "").strip().upper() == "Y"


def to_datetime(value: object) -> datetime | None:
    """A stored timestamp (datetime from PostgreSQL, ISO text from SQLite) as a datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    return parse_temporal(str(value))


def stamp(moment: datetime) -> str:
    """A timestamp as stored in SQLite and bound for PostgreSQL: always six fraction digits."""
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def utc_now() -> datetime:
    """The default heartbeat clock: UTC, naive, microseconds."""
    return datetime.now(UTC).replace(tzinfo=None)
