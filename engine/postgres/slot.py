"""REGISTER / UNREGISTER EXTRACT g DATABASE for a PostgreSQL source: the group's logical
replication slot, and what the home remembers of it.

GoldenGate for PostgreSQL names the slot after the group, in lower case, with a generated
suffix that keeps two deployments on one database apart; ours is the first 16 hex digits of
SHA-1 over the database's system identifier, the database name and the home's path, so that
REGISTER in another home, or of the same group name in another database, gets its own slot.

The home remembers the registration in ``dirchk/<GROUP>.pgslot`` (JSON: slot, database,
system identifier, plugin, the LSN the slot was created at, when); DELETE EXTRACT refuses
while it is there, as GoldenGate refuses to delete a registered Extract.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.errors import GGError
from engine.home.jsonfile import write_json
from engine.home.layout import Home
from engine.home.trust import BadFile, read_trusted_json
from engine.postgres.lsn import format_lsn, parse_lsn

PLUGIN = "test_decoding"
SUFFIX = ".pgslot"


class SlotError(GGError):
    """A registration that cannot be done; ``code`` and one line."""


@dataclass(frozen=True)
class Registration:
    group: str
    slot: str
    database: str
    system_id: str
    plugin: str
    created_lsn: int
    created: str

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "slot": self.slot,
            "database": self.database,
            "system_id": self.system_id,
            "plugin": self.plugin,
            "created_lsn": format_lsn(self.created_lsn),
            "created": self.created,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Registration:
        return cls(
            str(d["group"]),
            str(d["slot"]),
            str(d["database"]),
            str(d["system_id"]),
            str(d.get("plugin", PLUGIN)),
            parse_lsn(str(d["created_lsn"])),
            str(d.get("created", "")),
        )


@dataclass(frozen=True)
class SlotState:
    """A slot as ``pg_replication_slots`` shows it; ``retained`` is the WAL it holds back
    (bytes from its restart LSN to the current WAL position)."""

    name: str
    plugin: str
    database: str
    active: bool
    restart_lsn: int | None
    confirmed_lsn: int | None
    wal_status: str | None
    retained: int | None
    current_lsn: int


def registration_path(home: Home, group: str) -> Path:
    return home.dirchk / f"{group.upper()}{SUFFIX}"


def load_registration(home: Home, group: str) -> Registration | None:
    path = registration_path(home, group)
    if not path.exists():
        return None
    data = read_trusted_json(path, home, "Registration file")
    try:
        return Registration.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BadFile(path, home, f"is not a registration ({exc})", "Registration file") from exc


def slot_name(group: str, system_id: str, database: str, home_root: Path) -> str:
    base = re.sub(r"[^a-z0-9_]", "_", group.lower())
    digest = hashlib.sha1(f"{system_id}/{database}/{home_root.resolve()}".encode()).hexdigest()
    return f"{base}_{digest[:16]}"


def _identity(conn: Any) -> tuple[str, str]:
    row = conn.execute(
        "SELECT system_identifier::text, current_database() FROM pg_control_system()"
    ).fetchone()
    return str(row[0]), str(row[1])


def register(conn: Any, home: Home, group: str, now: datetime) -> Registration:
    """Create the group's slot (``test_decoding``) and remember it; OGG-25355 follows."""
    existing = load_registration(home, group)
    if existing is not None:
        raise SlotError(
            "OGG-25356",
            f"Extract group {group} is already registered with database {existing.database} "
            f"(replication slot '{existing.slot}').",
        )
    system_id, database = _identity(conn)
    name = slot_name(group, system_id, database, home.root)
    try:
        row = conn.execute(
            "SELECT lsn::text FROM pg_create_logical_replication_slot(%s, %s)", (name, PLUGIN)
        ).fetchone()
    except Exception as exc:  # psycopg.Error: wal_level, max_replication_slots, privileges
        raise SlotError(
            "OGG-25357", f"Cannot create replication slot '{name}': {_first(exc)}"
        ) from exc
    reg = Registration(
        group.upper(),
        name,
        database,
        system_id,
        PLUGIN,
        parse_lsn(row[0]),
        now.isoformat(" ", "seconds"),
    )
    write_json(registration_path(home, group), reg.to_json())
    return reg


def unregister(conn: Any, home: Home, group: str) -> Registration:
    reg = load_registration(home, group)
    if reg is None:
        raise SlotError("OGG-25358", f"Extract group {group} is not registered with a database.")
    system_id, database = _identity(conn)
    if (system_id, database) != (reg.system_id, reg.database):
        raise SlotError(
            "OGG-25358",
            f"Extract group {group} is registered with database {reg.database} "
            f"(system {reg.system_id}), not with the database logged in to ({database}).",
        )
    try:
        exists = conn.execute(
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (reg.slot,)
        ).fetchone()
        if exists:
            conn.execute("SELECT pg_drop_replication_slot(%s)", (reg.slot,))
    except Exception as exc:  # active (the Extract runs), privileges
        raise SlotError(
            "OGG-25358", f"Cannot drop replication slot '{reg.slot}': {_first(exc)}"
        ) from exc
    registration_path(home, group).unlink()
    return reg


SLOT_SQL = """
SELECT slot_name, plugin, database, active, restart_lsn::text, confirmed_flush_lsn::text,
       wal_status, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint,
       pg_current_wal_lsn()::text
FROM pg_replication_slots WHERE slot_name = %s
"""


def slot_state(conn: Any, slot: str) -> SlotState | None:
    row = conn.execute(SLOT_SQL, (slot,)).fetchone()
    if row is None:
        return None

    def lsn(v: object) -> int | None:
        return None if v is None else parse_lsn(str(v))

    return SlotState(
        str(row[0]),
        str(row[1]),
        str(row[2]),
        bool(row[3]),
        lsn(row[4]),
        lsn(row[5]),
        None if row[6] is None else str(row[6]),
        None if row[7] is None else int(row[7]),
        parse_lsn(str(row[8])),
    )


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
