"""Heartbeat tables (seed 001): lag measured end to end by rows that flow like data.

Modules, one job each:

- :mod:`names`     object names (GG_HEARTBEAT, _SEED, _HISTORY, _SETTINGS, GG_LAG views) and
                   GLOBALS ``GGSCHEMA`` / ``HEARTBEATTABLE``; which trail tables are heartbeat ones
- :mod:`schema`    columns, DDL and the GG_LAG / GG_LAG_HISTORY views per dialect
- :mod:`settings`  FREQUENCY / RETENTION_TIME / PURGE_FREQUENCY / TARGETONLY and their table
- :mod:`store`     the objects in one database: SQLite or PostgreSQL (DB-API), or the embedded
                   source (through its sessions, so every change is in its redo)
- :mod:`jobs`      the update and purge jobs (GG_UPDATE_HEARTBEATS / GG_PURGE_HEARTBEATS)
- :mod:`registry`  which databases of the home have heartbeat tables (for the Manager)
- :mod:`schedule`  the Manager's side of the jobs
- :mod:`flow`      the column rules: Extract's OUTGOING_EXTRACT, the pump's
                   OUTGOING_ROUTING_PATH, Replicat's OUTGOING_REPLICAT and column mapping
- :mod:`apply`     Replicat's writes into the target GG_HEARTBEAT and GG_HEARTBEAT_HISTORY
- :mod:`lag`       ``LAG ... GLOBAL``: GG_LAG and GG_LAG_HISTORY in GGSCI's format

Timestamps are UTC with microseconds, always from an injected clock. Errors:
:class:`HeartbeatError` (a ``RuntimeError``) with an OGG-style ``code`` and one-line ``text``.
Nothing here imports pyspark.
"""

from __future__ import annotations

from engine.errors import GGError


class HeartbeatError(GGError, RuntimeError):
    """A heartbeat operation that cannot be done; ``text`` is the one line to show."""
