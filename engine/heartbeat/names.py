"""The names of the heartbeat objects, and which trail tables are heartbeat tables.

Default names are GoldenGate's: ``GG_HEARTBEAT``, ``GG_HEARTBEAT_SEED``,
``GG_HEARTBEAT_HISTORY``, the views ``GG_LAG`` and ``GG_LAG_HISTORY``, the jobs
``GG_UPDATE_HEARTBEATS`` / ``GG_PURGE_HEARTBEATS``. GLOBALS may name them (GoldenGate 12.2-19c):

* ``HEARTBEATTABLE owner.name`` - the heartbeat table; the seed and history tables are
  ``name_SEED`` and ``name_HISTORY``;
* ``GGSCHEMA schema`` - the owner, when HEARTBEATTABLE gives none.

Without either, the owner is the DBLOGIN user (GoldenGate 21c and later). Our addition is the
settings table ``name_SETTINGS`` (one row: FREQUENCY, RETENTION_TIME, PURGE_FREQUENCY, ...), where
the Manager and INFO HEARTBEATTABLE read what ADD/ALTER HEARTBEATTABLE set.

Capture, pump and Replicat know heartbeat records by their table's name: ``name_SEED`` and
``name`` of any owner, or of the GLOBALS owner when GLOBALS names one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

DEFAULT_TABLE = "GG_HEARTBEAT"
LAG_VIEW = "GG_LAG"
LAG_HISTORY_VIEW = "GG_LAG_HISTORY"
UPDATE_JOB = "GG_UPDATE_HEARTBEATS"
PURGE_JOB = "GG_PURGE_HEARTBEATS"
UPDATE_PROCEDURE = "GG_UPDATE_HB_TAB"
PURGE_PROCEDURE = "GG_PURGE_HB_TAB"

_HBTABLE = re.compile(r"^\s*HEARTBEATTABLE\s+(\S+)", re.IGNORECASE | re.MULTILINE)
_GGSCHEMA = re.compile(r"^\s*GGSCHEMA\s+(\S+)", re.IGNORECASE | re.MULTILINE)


class Role(StrEnum):
    """What a heartbeat object is for."""

    SEED = "seed"
    HEARTBEAT = "heartbeat"
    HISTORY = "history"
    SETTINGS = "settings"


@dataclass(frozen=True)
class HeartbeatNames:
    """``owner`` None: no schema (SQLite), or, when matching trail tables, any owner."""

    owner: str | None
    table: str = DEFAULT_TABLE

    @property
    def heartbeat(self) -> str:
        return self.table

    @property
    def seed(self) -> str:
        return f"{self.table}_SEED"

    @property
    def history(self) -> str:
        return f"{self.table}_HISTORY"

    @property
    def settings(self) -> str:
        return f"{self.table}_SETTINGS"

    def name(self, role: Role) -> str:
        return {
            Role.SEED: self.seed,
            Role.HEARTBEAT: self.heartbeat,
            Role.HISTORY: self.history,
            Role.SETTINGS: self.settings,
        }[role]

    def role_of(self, qualified: str) -> Role | None:
        """SEED or HEARTBEAT when the trail table ``OWNER.NAME`` carries heartbeats."""
        owner, _, name = qualified.upper().rpartition(".")
        if self.owner is not None and owner != self.owner.upper():
            return None
        if name == self.seed.upper():
            return Role.SEED
        if name == self.heartbeat.upper():
            return Role.HEARTBEAT
        return None

    def owns(self, owner: str, name: str) -> bool:
        return self.role_of(f"{owner}.{name}") is not None

    def without_owner(self) -> HeartbeatNames:
        """SQLite has no schemas: the same names, owner dropped."""
        return HeartbeatNames(None, self.table)

    def shown(self, name: str) -> str:
        """``OWNER.name`` as INFO HEARTBEATTABLE prints it (owner upper, table lower)."""
        return f"{self.owner.upper()}.{name.lower()}" if self.owner else name.lower()


def _globals_text(globals_file: Path) -> str:
    try:
        return globals_file.read_text()
    except OSError:
        return ""


def from_globals(globals_file: Path, user: str | None = None) -> HeartbeatNames:
    """The names to create in a database logged in as ``user`` (the owner's fallback)."""
    text = _globals_text(globals_file)
    table, owner = DEFAULT_TABLE, None
    m = _HBTABLE.search(text)
    if m:
        owner_part, dot, name = m.group(1).rpartition(".")
        table = name.upper()
        owner = owner_part.upper() if dot else None
    if owner is None and (s := _GGSCHEMA.search(text)):
        owner = s.group(1).upper()
    if owner is None and user:
        owner = user.upper()
    return HeartbeatNames(owner, table)


def for_capture(globals_file: Path) -> HeartbeatNames:
    """The names Extract, pump and Replicat recognise: owner only when GLOBALS gives one."""
    return from_globals(globals_file, None)
