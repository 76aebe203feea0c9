"""Which databases of the home have heartbeat tables: ``dirchk/heartbeat.json``.

ADD HEARTBEATTABLE records the database it was run in (kind, SQLite path or PostgreSQL URL, the
DBLOGIN user, the object names); DELETE HEARTBEATTABLE removes it; ALTER rewrites it, which tells
the Manager to look at the settings again. The Manager runs the jobs of every database listed.
Passwords are never written: a PostgreSQL database is reached with its URL (and user), as
Replicat reaches it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from engine.heartbeat.names import HeartbeatNames
from engine.home import Home
from engine.jsonfile import read_json, write_json


@dataclass(frozen=True)
class Entry:
    kind: str  # "embedded" | "sqlite" | "postgresql"
    target: str  # database directory, SQLite file or PostgreSQL URL
    database: str
    owner: str | None
    table: str
    user: str | None = None
    version: int = 0  # bumped by ALTER HEARTBEATTABLE

    @property
    def names(self) -> HeartbeatNames:
        return HeartbeatNames(self.owner, self.table)

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.target)


def registry_path(home: Home) -> Path:
    return home.dirchk / "heartbeat.json"


def load(home: Home) -> list[Entry]:
    try:
        data = read_json(registry_path(home))
    except (OSError, ValueError):
        return []
    return [Entry(**item) for item in data.get("databases", [])]


def save(home: Home, entries: list[Entry]) -> None:
    home.dirchk.mkdir(parents=True, exist_ok=True)
    write_json(registry_path(home), {"databases": [asdict(e) for e in entries]})


def put(home: Home, entry: Entry) -> None:
    """Add ``entry`` or replace the one for the same database (bumping its version)."""
    entries = load(home)
    old = next((e for e in entries if e.key == entry.key), None)
    version = old.version + 1 if old else 0
    kept = [e for e in entries if e.key != entry.key]
    save(home, [*kept, Entry(**{**asdict(entry), "version": version})])


def remove(home: Home, kind: str, target: str) -> None:
    entries = load(home)
    kept = [e for e in entries if e.key != (kind, target)]
    if len(kept) != len(entries):
        save(home, kept)
