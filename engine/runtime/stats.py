"""Operation counts kept by a group process and the STATS screen drawn from them.

Each process (Extract, pump, Replicat) owns one :class:`StatsBook` and adds the operations it
writes or applies, per (source table, target table) and operation. The book keeps four windows
as GoldenGate does: TOTAL (since the process started), DAILY (since midnight), HOURLY (since the
hour began) and LATEST (since the last RESET). ``SEND``-style requests ``STATS ...`` reach the
process over its socket; :func:`parse_request` reads their words and :meth:`StatsBook.screen`
answers with GoldenGate's screen. Thread-safe: the engine adds, the request thread reads.
"""

from __future__ import annotations

import fnmatch
import functools
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from engine.runtime.events import Clock
from engine.runtime.ipc import Reply, Request

WINDOWS = ("TOTAL", "DAILY", "HOURLY", "LATEST")
TITLES = {"TOTAL": "Total", "DAILY": "Daily", "HOURLY": "Hourly", "LATEST": "Latest"}
RATE_UNITS = {"HR": 3600.0, "MIN": 60.0, "SEC": 1.0}
RATE_NAMES = {"HR": "hour", "MIN": "minute", "SEC": "second"}
OPS = ("INSERT", "UPDATE", "DELETE", "UPSERT", "DISCARD")
"""The operation names the engines add (io-type names map onto them with :func:`op_of`)."""
LABELS = {
    "INSERT": "inserts",
    "UPDATE": "updates",
    "DELETE": "deletes",
    "UPSERT": "upserts",
    "DISCARD": "discards",
}


class StatsRequestError(ValueError):
    """A STATS request the process cannot read (one line for the user)."""


@dataclass(frozen=True)
class StatsRequest:
    """What a STATS request asks for; no window named means all four."""

    windows: tuple[str, ...] = ()
    reset: bool = False
    table: str | None = None
    totals_only: str | None = None
    rate: str | None = None
    fetch: bool = False
    detail: bool = True

    def words(self) -> str:
        """The request as sent over the socket (``STATS`` first)."""
        parts = ["STATS", *self.windows]
        if self.table is not None:
            parts += ["TABLE", self.table]
        if self.totals_only is not None:
            parts += ["TOTALSONLY", self.totals_only]
        if self.rate is not None:
            parts += ["REPORTRATE", self.rate]
        if self.fetch:
            parts.append("REPORTFETCH")
        if not self.detail:
            parts.append("NOREPORTDETAIL")
        if self.reset:
            parts.append("RESET")
        return " ".join(parts)


def parse_request(args: Iterable[str]) -> StatsRequest:
    """The words after ``STATS`` (commas ignored, any case) as a :class:`StatsRequest`."""
    words = [w for a in args for w in a.replace(",", " ").split()]
    windows: list[str] = []
    values: dict[str, str] = {}
    flags: set[str] = set()
    i = 0
    while i < len(words):
        word = words[i].upper()
        if word in WINDOWS:
            if word not in windows:
                windows.append(word)
        elif word in ("TABLE", "TOTALSONLY", "REPORTRATE"):
            if i + 1 >= len(words):
                raise StatsRequestError(f"STATS {word} needs a value.")
            i += 1
            values[word] = words[i].upper()
            if word == "REPORTRATE" and values[word] not in RATE_UNITS:
                raise StatsRequestError(f"REPORTRATE takes HR, MIN or SEC, not {words[i]}.")
        elif word in ("RESET", "REPORTFETCH", "NOREPORTFETCH", "REPORTDETAIL", "NOREPORTDETAIL"):
            flags.add(word)
        else:
            raise StatsRequestError(f"Invalid STATS option: {words[i]}.")
        i += 1
    return StatsRequest(
        tuple(windows),
        "RESET" in flags,
        values.get("TABLE"),
        values.get("TOTALSONLY"),
        values.get("REPORTRATE"),
        "REPORTFETCH" in flags,
        "NOREPORTDETAIL" not in flags,
    )


@functools.lru_cache(maxsize=256)  # a handful of io-type names, asked per transaction
def op_of(io_name: str) -> str | None:
    """The STATS operation of an io-type name (``Insert``, ``FieldComp``, ``Delete``, ...)."""
    name = io_name.upper()
    if name in OPS:
        return name
    if name in ("FIELDCOMP", "PKUPDATE", "UPDATEAFTER", "UPDATEBEFORE", "SQLUPDATE",
                "GGSKEYFIELDCOMP", "GGSUNIFIEDUPDATE", "GGSUNIFIEDPKUPDATE"):  # fmt: skip
        return "UPDATE"
    if name in ("INSERTOVERWRITE",):
        return "INSERT"
    return None


@dataclass
class _Window:
    since: datetime
    counts: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)


class StatsBook:
    """Counts per (source, target) table and operation in the four windows."""

    def __init__(self, clock: Clock, output: str = "") -> None:
        self.clock = clock
        self.output = output
        """Where the process writes (``Output to ./dirdat/lt:``); empty for a Replicat."""
        self.verb = "Extracting"
        self._lock = threading.Lock()
        now = clock()
        self.started = now.replace(microsecond=0)
        """When the process started: no window begins before it (GoldenGate's "since")."""
        self._windows = {w: _Window(self._start(w, now)) for w in WINDOWS}
        self._keys: dict[tuple[str, str], tuple[str, str]] = {}
        # counts added since the windows last took them (:meth:`_fold`)
        self._pending: dict[tuple[tuple[str, str], str], int] = {}
        self._same_hour = (now, now)
        self._roll(now)

    def _start(self, window: str, now: datetime) -> datetime:
        """Where ``window`` begins at ``now``: midnight or the hour, but never before the
        process started (a process started at 09:31 counts its day and hour from 09:31)."""
        if window == "DAILY":
            start = now.replace(hour=0, minute=0, second=0, microsecond=0)
        elif window == "HOURLY":
            start = now.replace(minute=0, second=0, microsecond=0)
        else:
            start = now.replace(microsecond=0)
        return max(start, self.started)

    def _roll(self, now: datetime) -> None:
        self._fold()  # what came before belongs to the windows that end here
        for name in ("DAILY", "HOURLY"):
            start = self._start(name, now)
            if start != self._windows[name].since:
                self._windows[name] = _Window(start)
        hour = now.replace(minute=0, second=0, microsecond=0)  # the clock's hour, whatever
        self._same_hour = (hour, hour + timedelta(hours=1))  # the window's "since" says

    def add(self, counts: Iterable[tuple[str, str, str, int]]) -> None:
        """Add ``(source, target, operation, n)`` rows (operation in :data:`OPS`). Called
        for every transaction a process writes (an Extract: 10,000 calls per million
        changes of the benchmark), so it only sums into one pending count per (tables,
        operation); the four windows take those when they are read or roll
        (:meth:`_fold`), and roll only when the hour changes. Table names are upper-cased
        once."""
        rows = [r for r in counts if r[3]]
        if not rows:
            return
        keys = self._keys
        with self._lock:
            now = self.clock()
            start, end = self._same_hour
            if not start <= now < end:
                self._roll(now)
            pending = self._pending
            for source, target, op, n in rows:
                key = keys.get((source, target))
                if key is None:
                    key = keys[(source, target)] = (source.upper(), target.upper())
                pending[key, op] = pending.get((key, op), 0) + n

    def _fold(self) -> None:
        """Move the pending counts into every window (under the lock)."""
        if not self._pending:
            return
        windows = list(self._windows.values())
        for (key, op), n in self._pending.items():
            for window in windows:
                counts = window.counts.get(key)
                if counts is None:
                    counts = window.counts[key] = Counter()
                counts[op] += n
        self._pending.clear()

    def reset(self) -> None:
        with self._lock:
            self._fold()
            self._windows["LATEST"] = _Window(self._start("LATEST", self.clock()))

    def total(self, op: str) -> int:
        """The TOTAL count of ``op`` over every table (for tests and status lines)."""
        with self._lock:
            self._fold()
            return sum(c[op] for c in self._windows["TOTAL"].counts.values())

    def screen(self, request: StatsRequest) -> list[str]:
        """GoldenGate's STATS screen for ``request`` (RESET applies after the screen)."""
        with self._lock:
            now = self.clock()
            self._roll(now)
            lines = [f"Start of Statistics at {now:%Y-%m-%d %H:%M:%S}.", ""]
            if self.output:
                lines += [f"Output to {self.output}:", ""]
            windows = request.windows or WINDOWS
            pattern = request.totals_only or request.table
            keys = sorted(self._windows["TOTAL"].counts)
            if pattern is not None:
                keys = [k for k in keys if fnmatch.fnmatchcase(k[0], pattern)]
            if request.totals_only is not None:
                lines += self._block(
                    "Cumulative totals for specified table(s):", keys, windows, request, now
                )
            else:
                for key in keys:
                    title = f"{self.verb} from {key[0]} to {key[1]}:"
                    lines += self._block(title, [key], windows, request, now)
            if not keys:
                lines += ["No database operations have been performed.", ""]
            lines.append("End of Statistics.")
        if request.reset:
            self.reset()
        return lines

    def run_time_statistics(self) -> list[str]:
        """GoldenGate's ``Run Time Statistics`` block for the report: the operations of the
        whole run per table and operation (the TOTAL window), at stop, on SEND ... REPORT and
        on the REPORT / REPORTROLLOVER schedules."""
        with self._lock:
            now = self.clock()
            self._roll(now)
            stars = "*" * 71
            lines = [
                stars,
                "*" + "** Run Time Statistics **".center(69) + "*",
                stars,
                "",
                "",
                f"Report at {now:%Y-%m-%d %H:%M:%S} (activity since "
                f"{self.started:%Y-%m-%d %H:%M:%S})",
                "",
            ]
            if self.output:
                lines += [f"Output to {self.output}:", ""]
            totals = self._windows["TOTAL"].counts
            for key in sorted(totals):
                counts = totals[key]
                name = key[0] if key[0] == key[1] or not key[1] else f"{key[0]} to {key[1]}"
                lines.append(f"From Table {name}:")
                for op in OPS:
                    if op == "UPSERT" and not counts[op]:
                        continue
                    lines.append(f"       #{LABELS[op] + ':':>26}{counts[op]:>10}")
                lines.append("")
            if not totals:
                lines += ["No records were processed.", ""]
        return lines

    def _block(
        self,
        title: str,
        keys: list[tuple[str, str]],
        windows: tuple[str, ...],
        request: StatsRequest,
        now: datetime,
    ) -> list[str]:
        lines = [title, ""]
        for name in windows:
            window = self._windows[name]
            counts: Counter[str] = Counter()
            for key in keys:
                counts.update(window.counts.get(key, Counter()))
            lines.append(
                f"*** {TITLES[name]} statistics since {window.since:%Y-%m-%d %H:%M:%S} ***"
            )
            seconds = (now - window.since).total_seconds()
            lines += _figures(counts, request, seconds)
            lines.append("")
        return lines


def _figures(counts: Counter[str], request: StatsRequest, seconds: float) -> list[str]:
    """The figure lines of one window. REPORTFETCH adds the row-fetch counts (the engines
    never fetch: the source logs every column); NOREPORTDETAIL leaves discards out."""
    rate = request.rate
    values = {op: float(counts[op]) for op in (*OPS, "FETCH", "FETCHFAIL")}
    values["TOTAL"] = float(counts["INSERT"] + counts["UPDATE"] + counts["DELETE"])
    values["TOTAL"] += counts["UPSERT"]
    suffix = ""
    if rate is not None:
        per = max(seconds, 1.0) / RATE_UNITS[rate]
        values = {k: v / per for k, v in values.items()}
        suffix = f"/{RATE_NAMES[rate]}"
    shown = OPS if request.detail else tuple(op for op in OPS if op != "DISCARD")
    rows = [(f"Total {LABELS[op]}{suffix}", values[op]) for op in shown]
    rows.append((f"Total operations{suffix}", values["TOTAL"]))
    if request.fetch:
        rows.append((f"Total row fetch attempts{suffix}", values["FETCH"]))
        rows.append((f"Total row fetch failures{suffix}", values["FETCHFAIL"]))
    return [f"\t{label:<32}\t{value:14.2f}" for label, value in rows]


def handler(book: StatsBook) -> Callable[[Request], Reply]:
    """The ``STATS`` request handler of a group process over ``book``."""

    def answer(request: Request) -> Reply:
        try:
            return Reply(tuple(book.screen(parse_request(request.args))))
        except StatsRequestError as exc:
            return Reply.error(f"ERROR: {exc}")

    return answer


def counted(
    rows: Iterable[tuple[str, str, int]] | Counter[tuple[str, str]],
) -> list[tuple[str, str, str, int]]:
    """``(table, io-type name, n)`` rows (or a Counter of ``(table, io-type name)``) as book
    rows; an Extract or pump writes each table under its own name (source = target)."""
    items = [(t, o, n) for (t, o), n in rows.items()] if isinstance(rows, Counter) else list(rows)
    out: list[tuple[str, str, str, int]] = []
    for table, io_name, n in items:
        op = op_of(io_name)
        if op is not None:
            out.append((table, table, op, n))
    return out
