"""``LAG ... GLOBAL``: the heartbeat lag of the paths through a group, in GGSCI's format.

Read from the GG_LAG view (and GG_LAG_HISTORY for ``HISTORY``) of one database, normally the
target, where the incoming heartbeats land. A path goes through a group when one of its hops
(``EXT1 ==> PMP1 ==> REP1``) matches the group name, wildcards allowed. The screen::

    Lag Information From Heartbeat Table
    LAG      AGE          FROM   TO      PATH
    5.77s    10m 22.87s   ORCL   BIGDATA ETPC ==> PTPC ==> RTPC

and with HISTORY, per path, one line per day of GG_LAG_HISTORY (UTC days)::

    Lag History for ETPC ==> PTPC ==> RTPC
    DATE         MIN       AVG       MAX       COUNT
    2026-03-14   0.52s     0.81s     2.10s     1440

Negative lags (a target clock behind the source's) are shown as they are, with a minus sign.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.heartbeat.names import LAG_HISTORY_VIEW, LAG_VIEW
from engine.heartbeat.store import SqlStore

ARROW = " ==> "


@dataclass(frozen=True)
class LagRow:
    lag: float | None
    age: float | None
    remote: str
    local: str
    path: str


@dataclass(frozen=True)
class DayRow:
    path: str
    day: str
    low: float
    mean: float
    high: float
    count: int


def through(path: str | None, pattern: str) -> bool:
    """Whether ``path`` (``A ==> B ==> C``) has a hop matching ``pattern``."""
    pat = pattern.upper()
    return any(fnmatch.fnmatchcase(h.strip().upper(), pat) for h in (path or "").split(ARROW))


def _num(value: Any) -> float | None:
    return None if value is None else float(value)


def read_lag(store: SqlStore, pattern: str) -> list[LagRow]:
    view = store.dialect.table(store.names, LAG_VIEW)
    rows = store.rows(
        "SELECT INCOMING_LAG, INCOMING_HEARTBEAT_AGE, REMOTE_DATABASE, LOCAL_DATABASE, "
        f"INCOMING_PATH FROM {view} ORDER BY INCOMING_PATH"
    )
    return [
        LagRow(_num(lag), _num(age), str(remote or ""), str(local or ""), str(path))
        for lag, age, remote, local, path in rows
        if path is not None and through(str(path), pattern)
    ]


def read_history(store: SqlStore, pattern: str) -> list[DayRow]:
    view = store.dialect.table(store.names, LAG_HISTORY_VIEW)
    day = (
        "CAST(CAST(HEARTBEAT_RECEIVED_TS AS DATE) AS VARCHAR(10))"
        if store.dialect.name == "postgresql"
        else "substr(HEARTBEAT_RECEIVED_TS, 1, 10)"
    )
    rows = store.rows(
        f"SELECT INCOMING_PATH, {day}, min(INCOMING_LAG), avg(INCOMING_LAG), "
        f"max(INCOMING_LAG), count(*) FROM {view} WHERE INCOMING_LAG IS NOT NULL "
        f"GROUP BY INCOMING_PATH, {day} ORDER BY INCOMING_PATH, {day}"
    )
    return [
        DayRow(str(path), str(d), float(lo), float(avg), float(hi), int(n))
        for path, d, lo, avg, hi, n in rows
        if path is not None and through(str(path), pattern)
    ]


def duration(seconds: float | None) -> str:
    """``5.77s``, ``10m 22.87s``, ``2h 03m 04.00s``, ``1d 02h 03m 04.00s``; negative kept."""
    if seconds is None:
        return "unknown"
    sign = "-" if seconds < 0 else ""
    rest = round(abs(seconds), 2)
    days, rest = divmod(rest, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        text = f"{int(days)}d {int(hours):02d}h {int(minutes):02d}m {secs:05.2f}s"
    elif hours:
        text = f"{int(hours)}h {int(minutes):02d}m {secs:05.2f}s"
    elif minutes:
        text = f"{int(minutes)}m {secs:05.2f}s"
    else:
        text = f"{secs:.2f}s"
    return sign + text


def _table(
    header: tuple[str, ...], widths: tuple[int, ...], rows: Sequence[tuple[str, ...]]
) -> list[str]:
    """Fixed columns as GGSCI prints them, widened when a value is longer."""
    cols = [max(w, *(len(r[i]) + 1 for r in rows)) if rows else w for i, w in enumerate(widths)]

    def line(cells: tuple[str, ...]) -> str:
        head = "".join(c.ljust(w) for c, w in zip(cells[:-1], cols, strict=False))
        return (head + cells[-1]).rstrip()

    return [line(header), *(line(r) for r in rows)]


def lag_lines(rows: list[LagRow]) -> list[str]:
    body = [(duration(r.lag), duration(r.age), r.remote, r.local, r.path) for r in rows]
    return [
        "Lag Information From Heartbeat Table",
        *_table(("LAG", "AGE", "FROM", "TO", "PATH"), (9, 13, 7, 8), body),
    ]


def history_lines(rows: list[DayRow]) -> list[str]:
    out: list[str] = []
    for path in dict.fromkeys(r.path for r in rows):
        days = [r for r in rows if r.path == path]
        body = [
            (r.day, duration(r.low), duration(r.mean), duration(r.high), str(r.count)) for r in days
        ]
        out += ["", f"Lag History for {path}"]
        out += _table(("DATE", "MIN", "AVG", "MAX", "COUNT"), (13, 10, 10, 10), body)
    return out
