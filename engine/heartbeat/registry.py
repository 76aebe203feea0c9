"""Which databases of the home have heartbeat tables: ``dirchk/heartbeat.json``.

ADD HEARTBEATTABLE records the database it was run in (kind, SQLite path or PostgreSQL URL, the
DBLOGIN user, the object names); DELETE HEARTBEATTABLE removes it; ALTER rewrites it, which tells
the Manager to look at the settings again. The Manager runs the jobs of every database listed.
Passwords are never written: a PostgreSQL URL is recorded without the password in its user
information or query (:func:`without_password`), and the Manager reaches the database with that
URL and the user, authenticating as libpq does without a password (``~/.pgpass`` or
``$PGPASSFILE``, peer or trust); the entry's key is that URL, so DELETE and ALTER find it
whether or not the login carried a password.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from engine.heartbeat.names import HeartbeatNames
from engine.home.jsonfile import read_json, write_json
from engine.home.layout import Home


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


def without_password(target: str) -> str:
    """``target`` with any password taken out of a URL's user information and query
    (``postgresql://gg:pw@h/db?password=x`` -> ``postgresql://gg@h/db``); other text as is."""
    parts = urlsplit(target)
    if not parts.scheme or not parts.netloc:
        return target
    netloc = parts.netloc
    if parts.password is not None:
        userinfo, _, hostport = netloc.rpartition("@")
        netloc = f"{userinfo.split(':', 1)[0]}@{hostport}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(k, v) for k, v in pairs if k.lower() != "password"]
    query = urlencode(kept) if len(kept) != len(pairs) else parts.query
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


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
    public = [replace(e, target=without_password(e.target)) for e in entries]
    write_json(registry_path(home), {"databases": [asdict(e) for e in public]})


def put(home: Home, entry: Entry) -> None:
    """Add ``entry`` or replace the one for the same database (bumping its version)."""
    entry = replace(entry, target=without_password(entry.target))
    entries = load(home)
    old = next((e for e in entries if e.key == entry.key), None)
    version = old.version + 1 if old else 0
    kept = [e for e in entries if e.key != entry.key]
    save(home, [*kept, Entry(**{**asdict(entry), "version": version})])


def remove(home: Home, kind: str, target: str) -> None:
    target = without_password(target)
    entries = load(home)
    kept = [e for e in entries if e.key != (kind, target)]
    if len(kept) != len(entries):
        save(home, kept)
