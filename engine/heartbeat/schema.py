"""Columns, table DDL and the lag views, per dialect.

Dialects: ``sqlite`` and ``postgresql`` (targets, reached through DB-API) and ``embedded`` (the
source database: its tables are created through its dictionary, its storage is SQLite with
tables named ``OWNER$NAME``, and the views live in that storage).

Tables (GoldenGate's columns, seed 001; ``HEARTBEAT_RECEIVED_TS`` is in the heartbeat table too,
since the lag is ``received - generated``):

* seed: the 17 core columns, one row per local database (key LOCAL_DATABASE);
* heartbeat: core + HEARTBEAT_RECEIVED_TS + the four CSN columns + OUTGOING_RECEIVED_TS, one
  row per path;
* history: core + HEARTBEAT_RECEIVED_TS + the history's four CSN columns + OUTGOING_RECEIVED_TS,
  one row per heartbeat;
* settings (ours): one row of job settings.

Views (lags and ages in seconds, as numbers; paths ``E ==> P ==> R``):

* GG_LAG over the heartbeat table: age = now - HEARTBEAT_RECEIVED_TS, lag =
  HEARTBEAT_RECEIVED_TS - INCOMING_HEARTBEAT_TS; negative values are kept (clock skew shows).
* GG_LAG_HISTORY over the history table, with the lag split per component: extract
  (EXTRACT_TS - HEARTBEAT_TS), routing (ROUTING_TS - EXTRACT_TS), replicat read
  (REPLICAT_TS - ROUTING_TS, or EXTRACT_TS when there is no pump), replicat apply
  (RECEIVED_TS - REPLICAT_TS); the outgoing side the same with the remote database's
  received time, OUTGOING_RECEIVED_TS (ours: GoldenGate's 17 core columns have no place for
  it), so OUTGOING_REPLICAT_LAG and OUTGOING_LAG are "persistently inserted at the remote
  database" minus the earlier time, as INCOMING_% are at this one (seed 001).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from engine.heartbeat.names import LAG_HISTORY_VIEW, LAG_VIEW, HeartbeatNames, Role


class Kind(StrEnum):
    NAME = "name"
    PATH = "path"
    TS = "ts"
    NUM = "num"
    FLAG = "flag"


Column = tuple[str, Kind]

CORE: tuple[Column, ...] = (
    ("LOCAL_DATABASE", Kind.NAME),
    ("HEARTBEAT_TIMESTAMP", Kind.TS),
    ("REMOTE_DATABASE", Kind.NAME),
    ("INCOMING_EXTRACT", Kind.NAME),
    ("INCOMING_ROUTING_PATH", Kind.PATH),
    ("INCOMING_REPLICAT", Kind.NAME),
    ("INCOMING_HEARTBEAT_TS", Kind.TS),
    ("INCOMING_EXTRACT_TS", Kind.TS),
    ("INCOMING_ROUTING_TS", Kind.TS),
    ("INCOMING_REPLICAT_TS", Kind.TS),
    ("OUTGOING_EXTRACT", Kind.NAME),
    ("OUTGOING_ROUTING_PATH", Kind.PATH),
    ("OUTGOING_REPLICAT", Kind.NAME),
    ("OUTGOING_HEARTBEAT_TS", Kind.TS),
    ("OUTGOING_EXTRACT_TS", Kind.TS),
    ("OUTGOING_ROUTING_TS", Kind.TS),
    ("OUTGOING_REPLICAT_TS", Kind.TS),
)


@dataclass(frozen=True)
class CsnColumns:
    """The four CSN columns, whose names differ between the heartbeat and history tables."""

    low_watermark: str
    heartbeat_csn: str
    restart_csn: str
    restart_ts: str

    def columns(self) -> tuple[Column, ...]:
        return (
            ("HEARTBEAT_RECEIVED_TS", Kind.TS),
            (self.low_watermark, Kind.NAME),
            (self.heartbeat_csn, Kind.NAME),
            (self.restart_csn, Kind.NAME),
            (self.restart_ts, Kind.TS),
        )


HEARTBEAT_CSN = CsnColumns(
    "INCOMING_REPLICAT_LW_CSN",
    "INCOMING_EXTRACT_HEARTBEAT_CSN",
    "INCOMING_EXTRACT_RESTART_CSN",
    "INCOMING_EXTRACT_RESTART_TS",
)
HISTORY_CSN = CsnColumns(
    "REPLICAT_LOW_WATERMARK_CSN",
    "SOURCE_EXTRACT_HEARTBEAT_CSN",
    "SOURCE_EXTRACT_RESTART_CSN",
    "SOURCE_EXTRACT_RESTART_CSN_TS",
)
OUTGOING_RECEIVED = "OUTGOING_RECEIVED_TS"
"""When the remote database applied this database's heartbeat: the remote GG_HEARTBEAT row's
HEARTBEAT_RECEIVED_TS, carried back by its record (bidirectional; NULL otherwise)."""
SETTINGS: tuple[Column, ...] = (
    ("FREQUENCY", Kind.NUM),
    ("RETENTION_TIME", Kind.NUM),
    ("PURGE_FREQUENCY", Kind.NUM),
    ("TARGET_ONLY", Kind.FLAG),
    ("PARTITIONED", Kind.FLAG),
    ("ADD_TRANDATA", Kind.FLAG),
    ("CREATE_TS", Kind.TS),
    ("LAST_PURGE_TS", Kind.TS),
)
COLUMNS: dict[Role, tuple[Column, ...]] = {
    Role.SEED: CORE,
    Role.HEARTBEAT: CORE + HEARTBEAT_CSN.columns() + ((OUTGOING_RECEIVED, Kind.TS),),
    Role.HISTORY: CORE + HISTORY_CSN.columns() + ((OUTGOING_RECEIVED, Kind.TS),),
    Role.SETTINGS: SETTINGS,
}
KEYS: dict[Role, tuple[str, ...]] = {Role.SEED: ("LOCAL_DATABASE",)}
TABLE_ORDER = (Role.SEED, Role.HEARTBEAT, Role.HISTORY, Role.SETTINGS)
PATH_KEY = (
    "REMOTE_DATABASE",
    "INCOMING_EXTRACT",
    "INCOMING_ROUTING_PATH",
    "INCOMING_REPLICAT",
    "OUTGOING_EXTRACT",
    "OUTGOING_ROUTING_PATH",
    "OUTGOING_REPLICAT",
)
"""What identifies a GG_HEARTBEAT row: the remote database and both paths (seed 001)."""

_TYPES: dict[str, dict[Kind, str]] = {
    "sqlite": {
        Kind.NAME: "VARCHAR(128)",
        Kind.PATH: "VARCHAR(4000)",
        Kind.TS: "TIMESTAMP",
        Kind.NUM: "NUMERIC",
        Kind.FLAG: "CHAR(1)",
    },
    "postgresql": {
        Kind.NAME: "VARCHAR(128)",
        Kind.PATH: "VARCHAR(4000)",
        Kind.TS: "TIMESTAMP(6)",
        Kind.NUM: "NUMERIC",
        Kind.FLAG: "CHAR(1)",
    },
    "embedded": {
        Kind.NAME: "VARCHAR2(128)",
        Kind.PATH: "VARCHAR2(4000)",
        Kind.TS: "TIMESTAMP(6)",
        Kind.NUM: "NUMBER",
        Kind.FLAG: "CHAR(1)",
    },
}


@dataclass(frozen=True)
class Dialect:
    """How one kind of database spells names, parameters, time and null-safe equality."""

    name: str

    @property
    def placeholder(self) -> str:
        return "%s" if self.name == "postgresql" else "?"

    @property
    def same(self) -> str:
        """Null-safe equality (a path column is NULL when there is no pump)."""
        return "IS NOT DISTINCT FROM" if self.name == "postgresql" else "IS"

    def type_of(self, kind: Kind) -> str:
        return _TYPES[self.name][kind]

    def table(self, names: HeartbeatNames, name: str) -> str:
        if self.name == "embedded":
            return f'"{(names.owner or "GG").upper()}${name.upper()}"'
        if self.name == "postgresql" and names.owner:
            return f'"{names.owner.lower()}"."{name.lower()}"'
        return f'"{name.lower()}"'

    @property
    def now(self) -> str:
        if self.name == "postgresql":
            return "CAST(now() AT TIME ZONE 'UTC' AS TIMESTAMP(6))"
        return "strftime('%Y-%m-%d %H:%M:%f', 'now')"

    def seconds(self, later: str, earlier: str) -> str:
        """``later - earlier`` in seconds (microseconds kept), NULL when either is NULL."""
        if self.name == "postgresql":
            return f"EXTRACT(EPOCH FROM ({later} - {earlier}))"
        return f"ROUND({_epoch(later)} - {_epoch(earlier)}, 6)"


def _epoch(ts: str) -> str:
    """SQLite: stored ``YYYY-MM-DD HH:MM:SS[.ffffff]`` text as exact seconds (julianday alone
    is a double of about 2.46e6 days, too coarse for microseconds)."""
    return (
        f"(ROUND((julianday(substr({ts}, 1, 19)) - 2440587.5) * 86400) + "
        f"CASE WHEN length({ts}) > 20 THEN CAST('0' || substr({ts}, 20) AS REAL) ELSE 0 END)"
    )


def create_table(dialect: Dialect, names: HeartbeatNames, role: Role) -> str:
    cols = ", ".join(f"{c} {dialect.type_of(k)}" for c, k in COLUMNS[role])
    key = KEYS.get(role)
    pk = f", PRIMARY KEY ({', '.join(key)})" if key else ""
    return f"CREATE TABLE {dialect.table(names, names.name(role))} ({cols}{pk})"


def oracle_ddl(names: HeartbeatNames, role: Role) -> str:
    """The DDL text the embedded source logs (its redo carries DDL text, as Oracle's does)."""
    cols = ", ".join(f"{c} {_TYPES['embedded'][k]}" for c, k in COLUMNS[role])
    key = KEYS.get(role)
    pk = f", PRIMARY KEY ({', '.join(key)})" if key else ""
    return f"CREATE TABLE {names.owner}.{names.name(role)} ({cols}{pk})"


def _path(extract: str, routing: str, replicat: str) -> str:
    return (
        f"{extract} || COALESCE(' ==> ' || REPLACE({routing}, ',', ' ==> '), '') "
        f"|| ' ==> ' || {replicat}"
    )


def _lag_columns(d: Dialect, second: str) -> list[str]:
    now = d.now
    applied = f"COALESCE({OUTGOING_RECEIVED}, OUTGOING_REPLICAT_TS)"  # at the remote database
    return [
        "LOCAL_DATABASE",
        second,
        "REMOTE_DATABASE",
        f"{d.seconds(now, 'HEARTBEAT_RECEIVED_TS')} AS INCOMING_HEARTBEAT_AGE",
        f"{_path('INCOMING_EXTRACT', 'INCOMING_ROUTING_PATH', 'INCOMING_REPLICAT')}"
        " AS INCOMING_PATH",
        f"{d.seconds('HEARTBEAT_RECEIVED_TS', 'INCOMING_HEARTBEAT_TS')} AS INCOMING_LAG",
        f"{d.seconds(now, applied)} AS OUTGOING_HEARTBEAT_AGE",
        f"{_path('OUTGOING_EXTRACT', 'OUTGOING_ROUTING_PATH', 'OUTGOING_REPLICAT')}"
        " AS OUTGOING_PATH",
        f"{d.seconds(applied, 'OUTGOING_HEARTBEAT_TS')} AS OUTGOING_LAG",
    ]


def lag_view(d: Dialect, names: HeartbeatNames) -> str:
    c = HEARTBEAT_CSN
    cols = [
        *_lag_columns(d, f"{d.now} AS CURRENT_LOCAL_TS"),
        # seed 001: "REMOTE_DATABASE DB_UNIQUE_NAME"; no unique name here: DB_NAME's value
        "REMOTE_DATABASE AS DB_UNIQUE_NAME",
        f"{c.low_watermark} AS LOCAL_REPLICAT_LWM_CSN",
        f"{c.restart_csn} AS REMOTE_EXTRACT_RESTART_CSN",
        f"{c.restart_ts} AS REMOTE_EXTRACT_RESTART_CSN_TIME",
        f"{d.seconds(d.now, c.restart_ts)} AS REMOTE_DB_OLDEST_OPEN_TXN_AGE",
    ]
    return (
        f"CREATE VIEW {d.table(names, LAG_VIEW)} AS SELECT {', '.join(cols)} "
        f"FROM {d.table(names, names.heartbeat)}"
    )


def lag_history_view(d: Dialect, names: HeartbeatNames) -> str:
    c = HISTORY_CSN

    def parts(side: str) -> list[str]:
        s = side
        read_from = f"COALESCE({s}_ROUTING_TS, {s}_EXTRACT_TS)"
        applied = "HEARTBEAT_RECEIVED_TS" if side == "INCOMING" else OUTGOING_RECEIVED
        return [
            f"{d.seconds(f'{s}_EXTRACT_TS', f'{s}_HEARTBEAT_TS')} AS {s}_EXTRACT_LAG",
            f"{d.seconds(f'{s}_ROUTING_TS', f'{s}_EXTRACT_TS')} AS {s}_ROUTING_LAG",
            f"{d.seconds(f'{s}_REPLICAT_TS', read_from)} AS {s}_REPLICAT_READ_LAG",
            f"{d.seconds(applied, f'{s}_REPLICAT_TS')} AS {s}_REPLICAT_LAG",
        ]

    cols = [
        *_lag_columns(d, "HEARTBEAT_RECEIVED_TS"),
        "REMOTE_DATABASE AS DB_NAME",
        "REMOTE_DATABASE AS DB_UNIQUE_NAME",
        *parts("INCOMING"),
        *parts("OUTGOING"),
        f"{c.low_watermark} AS LOCAL_REPLICAT_LWM_CSN",
        f"{c.restart_csn} AS REMOTE_EXTRACT_RESTART_CSN",
        f"{c.restart_ts} AS REMOTE_EXTRACT_RESTART_CSN_TIME",
        f"{d.seconds(d.now, c.restart_ts)} AS REMOTE_DB_OLDEST_OPEN_TXN_AGE",
    ]
    return (
        f"CREATE VIEW {d.table(names, LAG_HISTORY_VIEW)} AS SELECT {', '.join(cols)} "
        f"FROM {d.table(names, names.history)}"
    )


def create_statements(d: Dialect, names: HeartbeatNames) -> list[str]:
    """Every CREATE for a target database (tables, then views)."""
    out = []
    if d.name == "postgresql" and names.owner:
        out.append(f'CREATE SCHEMA IF NOT EXISTS "{names.owner.lower()}"')
    out += [create_table(d, names, r) for r in TABLE_ORDER]
    return [*out, lag_view(d, names), lag_history_view(d, names)]


def drop_views(d: Dialect, names: HeartbeatNames) -> list[str]:
    return [
        f"DROP VIEW IF EXISTS {d.table(names, LAG_HISTORY_VIEW)}",
        f"DROP VIEW IF EXISTS {d.table(names, LAG_VIEW)}",
    ]
