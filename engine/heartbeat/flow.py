"""The column rules of seed 001, applied as a heartbeat record passes each process.

The rules work on a record's columns by name (``dict`` of column -> trail text, None = NULL):

* Extract, OUTGOING_EXTRACT: its group name -> set OUTGOING_EXTRACT_TS; NULL -> set both;
  another name -> the record is discarded.
* pump, OUTGOING_ROUTING_PATH: NULL -> ``PUMP,*``; a list holding ``*`` -> the ``*`` becomes
  ``PUMP,*``; a list without ``*`` -> kept if it names this pump, else the record is discarded;
  OUTGOING_ROUTING_TS is set whenever the record goes on (so a chain of pumps leaves the last
  pump's time).
* Replicat, OUTGOING_REPLICAT: its group name or NULL -> the record is applied with the
  automatic column mapping (:func:`incoming_row`); another name -> discarded.

Extract also carries its restart position (LOGBSN: the begin SCN of the oldest open
transaction, and that transaction's redo time) on each heartbeat record, as the user tokens
:data:`RESTART_CSN` and :data:`RESTART_TS`; Replicat fills the RESTART_CSN / _TS columns of
GG_HEARTBEAT and GG_HEARTBEAT_HISTORY from them (seed 001) and its checkpoint table's LOG_BSN
(seed 004: "choose a LOGBSN from a heartbeat record").

A record of the remote database's GG_HEARTBEAT row (bidirectional) carries that row's
HEARTBEAT_RECEIVED_TS: when the remote database applied this database's heartbeat. It becomes
OUTGOING_RECEIVED_TS, from which GG_LAG_HISTORY's OUTGOING_REPLICAT_LAG and the OUTGOING_LAG
are computed. When both databases have the same name the OUTGOING_% columns stay NULL (seed
001's note).

Timestamps are UTC, microseconds, from the process's injected clock, written in the trail's
spelling ``YYYY-MM-DD:HH:MI:SS.fffffffff``. :class:`ExtractRule` and :class:`RoutingRule` adapt
the rules to Extract's LCRs and the pump's trail records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import datetime

from engine.changes import Lcr
from engine.heartbeat.names import HeartbeatNames, Role
from engine.heartbeat.schema import OUTGOING_RECEIVED
from engine.trail.codec import user_token, user_tokens
from engine.trail.layout import IOType
from engine.trail.model import Columns, TableDef, TrailRecord, micros_to_datetime

Row = dict[str, str | None]
Clock = Callable[[], datetime]
STAMPED = frozenset({IOType.INSERT, IOType.UPDATE, IOType.FIELDCOMP, IOType.KEYFIELDCOMP})
"""Operations the rules apply to; a delete of a heartbeat row passes through unchanged."""
RESTART_CSN = "GGS_RESTART_CSN"
RESTART_TS = "GGS_RESTART_TS"
"""The user tokens of Extract's restart position on a heartbeat record."""
Restart = Callable[[], tuple[int, int] | None]
"""(begin SCN, redo time in microseconds) of the oldest open transaction, None if none."""


def trail_time(moment: datetime) -> str:
    """A timestamp as the trail spells TIMESTAMP values (nanoseconds, as Extract writes)."""
    return moment.strftime("%Y-%m-%d:%H:%M:%S.%f") + "000"


def hops(path: str | None) -> list[str]:
    """The entries of a routing path list (``PMP1,PMP2,*``)."""
    return [h.strip() for h in (path or "").split(",") if h.strip()]


def extract_rule(row: Row, group: str, now: str) -> Row | None:
    """OUTGOING_EXTRACT (seed 001): the row as Extract writes it, or None to discard it."""
    name = row.get("OUTGOING_EXTRACT")
    if name is None or name == "":
        return {**row, "OUTGOING_EXTRACT": group, "OUTGOING_EXTRACT_TS": now}
    if name.strip().upper() == group.upper():
        return {**row, "OUTGOING_EXTRACT_TS": now}
    return None


def routing_rule(row: Row, group: str, now: str) -> Row | None:
    """OUTGOING_ROUTING_PATH (seed 001): the row as the pump writes it, or None to discard."""
    path = hops(row.get("OUTGOING_ROUTING_PATH"))
    if not path:
        path = [group, "*"]
    elif "*" in path:
        at = path.index("*")
        path = [*path[:at], group, "*", *path[at + 1 :]]
    elif group.upper() not in (h.upper() for h in path):
        return None
    return {**row, "OUTGOING_ROUTING_PATH": ",".join(path), "OUTGOING_ROUTING_TS": now}


def replicat_accepts(row: Row, group: str) -> bool:
    """OUTGOING_REPLICAT (seed 001): NULL or this Replicat's name."""
    name = row.get("OUTGOING_REPLICAT")
    return name is None or name == "" or name.strip().upper() == group.upper()


def incoming_row(row: Row, group: str, now: str, local_database: str) -> Row:
    """Seed 001's automatic column mapping: the target GG_HEARTBEAT row for a record.

    The record's outgoing side becomes the row's incoming side and the other way round; the
    ``*`` leaves the routing path; INCOMING_REPLICAT/_TS are this Replicat and now. Where the
    seed is silent: LOCAL_DATABASE is the record's REMOTE_DATABASE, or this database's name
    when that is NULL (a seed row has none); the outgoing timestamps mirror the incoming ones
    (the seed lists OUTGOING_HEARTBEAT_TS twice and no other outgoing timestamp).
    """
    routing = [h for h in hops(row.get("OUTGOING_ROUTING_PATH")) if h != "*"]
    local = row.get("REMOTE_DATABASE") or local_database
    remote = row.get("LOCAL_DATABASE")
    same = bool(remote) and (remote or "").strip().upper() == (local or "").strip().upper()
    out = {
        "REMOTE_DATABASE": row.get("LOCAL_DATABASE"),
        "INCOMING_EXTRACT": row.get("OUTGOING_EXTRACT"),
        "INCOMING_ROUTING_PATH": ",".join(routing) or None,
        "INCOMING_REPLICAT": group,
        "INCOMING_HEARTBEAT_TS": row.get("HEARTBEAT_TIMESTAMP"),
        "INCOMING_EXTRACT_TS": row.get("OUTGOING_EXTRACT_TS"),
        "INCOMING_ROUTING_TS": row.get("OUTGOING_ROUTING_TS"),
        "INCOMING_REPLICAT_TS": now,
        "LOCAL_DATABASE": row.get("REMOTE_DATABASE") or local_database,
        "OUTGOING_EXTRACT": row.get("INCOMING_EXTRACT"),
        "OUTGOING_ROUTING_PATH": row.get("INCOMING_ROUTING_PATH"),
        "OUTGOING_REPLICAT": row.get("INCOMING_REPLICAT"),
        "OUTGOING_HEARTBEAT_TS": row.get("INCOMING_HEARTBEAT_TS"),
        "OUTGOING_EXTRACT_TS": row.get("INCOMING_EXTRACT_TS"),
        "OUTGOING_ROUTING_TS": row.get("INCOMING_ROUTING_TS"),
        "OUTGOING_REPLICAT_TS": row.get("INCOMING_REPLICAT_TS"),
        OUTGOING_RECEIVED: row.get("HEARTBEAT_RECEIVED_TS"),  # the remote apply time
        "HEARTBEAT_TIMESTAMP": row.get("HEARTBEAT_TIMESTAMP"),
    }
    if same:  # seed 001: no OUTGOING_% data when both databases have the same name
        out.update({k: None for k in out if k.startswith("OUTGOING_")})
    return out


def restart_of(record: TrailRecord) -> tuple[str | None, str | None]:
    """The restart CSN and time a heartbeat record carries (None, None if it has none)."""
    tokens = dict(user_tokens(record))
    return tokens.get(RESTART_CSN), tokens.get(RESTART_TS)


def to_row(columns: Columns, names: tuple[str, ...]) -> Row:
    return {names[i].upper(): v for i, v in columns if i < len(names)}


def to_columns(row: Row, names: tuple[str, ...]) -> Columns:
    """The row's columns by index (a column the table does not have is left out)."""
    index = {n.upper(): i for i, n in enumerate(names)}
    return tuple(sorted((index[c], v) for c, v in row.items() if c in index))


class _Rule:
    """What both process-side rules share: the names, the group, the clock, and which trail
    tables are heartbeat tables (cached: asked once per record)."""

    def __init__(self, names: HeartbeatNames, group: str, clock: Clock) -> None:
        self.names = names
        self.group = group.upper()
        self.clock = clock
        self._roles: dict[str, Role | None] = {}

    def role(self, table: str) -> Role | None:
        try:
            return self._roles[table]
        except KeyError:
            role = self._roles[table] = self.names.role_of(table)
            return role


class ExtractRule(_Rule):
    """Extract's side: which tables are captured without a TABLE line, and the rule applied
    to each committed heartbeat row (``columns_of`` gives a table's column names). ``restart``
    (set by the Extract) gives its restart position, carried on the record as tokens."""

    def __init__(
        self, names: HeartbeatNames, group: str, clock: Clock, restart: Restart | None = None
    ) -> None:
        super().__init__(names, group, clock)
        self.restart: Restart = restart or (lambda: None)

    def owns(self, owner: str, name: str) -> bool:
        return self.role(f"{owner}.{name}") is not None

    def rows(
        self, rows: Iterable[Lcr], columns_of: Callable[[str], tuple[str, ...] | None]
    ) -> Iterator[Lcr]:
        for lcr in rows:
            if lcr.io_type not in STAMPED or self.role(lcr.table) is None:
                yield lcr
                continue
            names = columns_of(lcr.table)
            if names is None:
                yield lcr
                continue
            out = extract_rule(to_row(lcr.columns, names), self.group, trail_time(self.clock()))
            if out is not None:
                yield replace(
                    lcr, columns=to_columns(out, names), tokens=lcr.tokens + self._restart(lcr)
                )

    def _restart(self, lcr: Lcr) -> tuple[tuple[bytes, int, bytes], ...]:
        """LOGBSN: the oldest open transaction's begin, or this transaction's own change
        when none older is open."""
        point = self.restart()
        if point is None or point[0] > lcr.scn:
            point = (lcr.scn, lcr.time_us)
        scn, time_us = point
        when = trail_time(micros_to_datetime(time_us))
        return (user_token(RESTART_CSN, str(scn)), user_token(RESTART_TS, when))


class RoutingRule(_Rule):
    """The pump's side (:class:`engine.pump.pump.RecordHook`)."""

    def owns(self, table: str) -> bool:
        return self.role(table) is not None

    def __call__(self, record: TrailRecord, definition: TableDef | None) -> TrailRecord | None:
        if record.io_type not in STAMPED or self.role(record.table) is None or definition is None:
            return record
        names = definition.column_names
        out = routing_rule(to_row(record.columns, names), self.group, trail_time(self.clock()))
        return None if out is None else replace(record, columns=to_columns(out, names))
