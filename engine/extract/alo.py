"""An attached Oracle database (``SOURCEDB NAME`` of one attached by ``ggsci db attach``) as
the source of the Extract's one driver, read from its archived logs only (GoldenGate's ALO
mode).

The Extract of an attached database is the embedded database's (:class:`~engine.extract.run.
ExtractRun` over :class:`~engine.extract.capture.Capture`: transaction cache, Bounded
Recovery, long transactions, SEND SHOWTRANS / SKIPTRANS / FORCETRANS, the RAC merge by SCN,
TABLE row options, EXCLUDEUSER, checkpoints with each position recorded once) with three
parts of its own, given here:

- :class:`ArchiveCatalog`, where the logs are: the archive location's files named by the
  LOG_ARCHIVE_FORMAT (``%t`` the thread: threads 1..n), known by their headers; from each
  thread's read position on, a missing sequence is OGG-00446 naming thread and sequence, a
  log of another incarnation (resetlogs id) is refused by name, a log shorter than its
  header says (being copied in) is not there yet;
- :class:`AttachedOrigin`, what the redo is decoded with: the attached dictionary (container
  ids, character sets, segment order) for the miner of real Oracle redo
  (:mod:`engine.extract.oracle_source`), and the same tables as the driver's dictionary
  (TABLE wildcards, keys, row options); a structure change of a captured table met in the
  redo stops the Extract once what came before it is in the trail;
- :func:`legacy_state`: a checkpoint written by the archived-log run of an earlier release
  (its capture state in ``extra["archive"]``, with a second copy of the recovery position)
  read as the driver's state, so that such a group restarts where it left off.

Requires ``TRANLOGOPTIONS ARCHIVEDLOGONLY``; ``ALTARCHIVELOGDEST`` (the first one given)
replaces the attached location and ``ALTARCHIVEDLOGFORMAT`` its format. Mined in Spark
tasks, as the embedded database's redo is: each range alone, from no redo-miner state, and
settled by the driver in order, which keeps each thread's state
(:class:`~engine.extract.oracle_source.MinerStates`) and mines a range again itself when its
result depended on a state the task did not have (docs/extract.md "Mined in Spark tasks");
in the Extract's own process without a session. Most records are mined by the task miner and
its C walk (``FastMiner``, docs/extract.md "The fast path").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from engine import storage
from engine.changes import Entry, Fragment, Kind, Lcr, Position
from engine.embedded.catalog import RedoGapError
from engine.embedded.dictionary import ColumnDef, TableDef
from engine.embedded.dictionary import Dictionary as DriverDictionary
from engine.embedded.logs import LogInfo
from engine.extract import containers
from engine.extract.cache import Txn
from engine.extract.oracle_source import MinerStates, OraclePlan
from engine.extract.start import ExtractError
from engine.extract.tasks.plan import MinePlan
from engine.home.layout import Home
from engine.redo.archnames import format_problem, format_regex
from engine.redo.attached import Attached, attached, source_problem
from engine.redo.catalog import IncarnationError, LogFile, list_logs
from engine.redo.dictionary import Dictionary
from engine.redo.errors import RedoError
from engine.redo.framing import LogHeader
from engine.trail.codec import decode_record
from engine.trail.writer import split_records
from params.models import ParamFile

STATE_KEY = "archive"  # where an earlier release kept the archived-log run's state


def attached_source(home: Home, model: ParamFile) -> Attached | None:
    """The attached database SOURCEDB names, None when it names none (or an embedded one);
    :class:`ExtractError` when its record is damaged or TRANLOGOPTIONS ARCHIVEDLOGONLY is
    missing."""
    name = model.login.sourcedb
    if name is None:
        return None
    try:
        found = attached(home.dirdb, name)
    except RedoError as exc:
        raise ExtractError("OGG-00664", exc.message) from None
    if found is None:
        return None
    problem = source_problem(home.dirdb, found.name, model.tranlog.archived_log_only)
    if problem is not None:
        raise ExtractError("OGG-00664", f"{problem}.")
    return found


@dataclass
class ArchiveCatalog:
    """The archived logs of an attached database, as the Extract's catalog (module
    docstring)."""

    location: str
    fmt: str | None
    resetlogs_id: int | None = None  # the incarnation read (of the first log read)
    fmt_name: str = "LOG_ARCHIVE_FORMAT"  # the parameter that gave ``fmt`` (said in errors)
    _headers: dict[tuple[str, int], LogHeader] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, source: Attached, model: ParamFile) -> ArchiveCatalog:
        tl = model.tranlog
        dests = tl.alt_archive_log_dests
        location = source.with_secret(dests[0]) if dests else source.archive
        if tl.alt_archived_log_format:
            return cls(location, tl.alt_archived_log_format, fmt_name=ALT_FORMAT)
        return cls(location, source.format)

    @property
    def where(self) -> str:
        return storage.describe(self.location)

    def listing(self) -> list[LogFile]:
        """Every log there now, whole or not. A format that cannot tell sequences apart is
        OGG-10144 naming the parameter that gave it; a location that is not there, OGG-00446
        naming it once; a file the format names that is not a readable log, its own code."""
        if self.fmt is not None:
            problem = format_problem(self.fmt, writing=False, name=self.fmt_name)
            if problem is not None:
                raise RedoGapError(f"{problem}.", "OGG-10144")
        try:
            return list_logs(self.location, self.fmt, self._headers)
        except storage.StorageError as exc:
            said = exc.message if self.where in exc.message else f"{self.where}: {exc.message}"
            raise RedoGapError(f"archive location {said}") from None
        except RedoError as exc:
            raise RedoGapError(exc.message, exc.code) from None

    def files(self) -> list[LogFile]:
        """The logs there now, whole (one being copied in, shorter than its header says, is
        left for a later listing)."""
        return [f for f in self.listing() if _whole(f)]

    def logs(self, thread: int | None = None) -> list[LogInfo]:
        return [_info(f) for f in self.files() if thread is None or f.thread == thread]

    def for_reading(self, positions: Mapping[int, Position]) -> list[LogInfo]:
        """The logs to read from ``positions`` (thread → next record) on: each thread's
        sequences consecutive from its position (the next one not archived yet: wait), one
        incarnation. A thread's logs are listed up to the first that cannot be read in turn,
        and that one is refused when the thread's reading reaches it, as GoldenGate reads
        what comes before it first: a sequence missing (OGG-00446 naming it), a log shorter
        than its header says with a later one there (not being copied in: cut short,
        OGG-00446 saying so, sizes and what to do), a log of another incarnation (OGG-02028,
        by name)."""
        every = self.listing()
        files = [f for f in every if _whole(f)]
        short = {(f.thread, f.sequence): f for f in every if not _whole(f)}
        later: dict[int, int] = {}  # thread → the first sequence not listed yet
        for t, pos in sorted(positions.items()):
            mine = [f for f in files if f.thread == t and f.sequence >= pos.sequence]
            expect = pos.sequence
            for f in mine:
                refusal = self._refusal(f, expect, short.get((t, expect)))
                if refusal is not None:
                    if expect == pos.sequence:  # reading has reached it
                        raise refusal
                    later[t] = f.sequence  # what comes before it is read first
                    break
                expect += 1
        return [_info(f) for f in files if f.sequence < later.get(f.thread, f.sequence + 1)]

    def _refusal(self, f: LogFile, expect: int, cut: LogFile | None) -> RedoGapError | None:
        """Why ``f``, the next whole log of its thread, cannot be read when sequence
        ``expect`` is the one due (``cut``: that one, there but cut short), or None."""
        t = f.thread
        if f.sequence != expect:
            if cut is not None:
                return RedoGapError(_cut_short(cut, f.sequence))
            return RedoGapError(
                f"Could not find archived log for sequence {expect} thread {t} under "
                f"{self.where} (sequence {f.sequence} is there)"
            )
        if self.resetlogs_id is None:
            self.resetlogs_id = f.header.resetlogs_id
        if f.header.resetlogs_id != self.resetlogs_id:
            return RedoGapError(
                IncarnationError(
                    f"{storage.describe(f.location)} (thread {t} sequence {f.sequence})"
                    f" belongs to incarnation {f.header.resetlogs_id}, not "
                    f"{self.resetlogs_id}: refused"
                ).message,
                IncarnationError.default_code,
            )
        return None

    def waiting(
        self, positions: Mapping[int, Position], since: Mapping[int, Position] | None = None
    ) -> str | None:
        """What a run that wrote nothing waits for (one line; None when every thread has a
        whole log from its position on): each thread with none, that did not move from
        ``since`` (a thread read to its end is not what the others wait on), its next
        sequence; and the files there that the format does not name."""
        files = self.files()
        blocked = [
            f"thread {t} sequence {p.sequence}"
            for t, p in sorted(positions.items())
            if (since is None or since.get(t) == p)
            and not any(f.thread == t and f.sequence >= p.sequence for f in files)
        ]
        if not blocked:
            return None
        named = f" named by {self.fmt_name} {self.fmt!r}" if self.fmt is not None else ""
        line = (
            f"Nothing read: waiting for {' and '.join(blocked)}, not archived under "
            f"{self.where}{named} yet"
        )
        others = self._unnamed()
        if others:
            line += f" ({others} other file{'s' if others > 1 else ''} there not named by it)"
        return line + "."

    def _unnamed(self) -> int:
        """How many files at the location the format does not name (0 without a format)."""
        if self.fmt is None:
            return 0
        pattern = format_regex(self.fmt)
        try:
            names = [e.location.rstrip("/").rsplit("/", 1)[-1] for e in storage.list_files(
                self.location)]  # fmt: skip
        except storage.StorageError:
            return 0
        return sum(1 for n in names if not pattern.match(n))


ALT_FORMAT = "TRANLOGOPTIONS ALTARCHIVEDLOGFORMAT"


def _whole(f: LogFile) -> bool:
    return f.size >= f.header.blocks * f.header.block_size


def _cut_short(f: LogFile, later: int) -> str:
    """A log shorter than its header says while a later sequence is archived: what it is
    and what to do."""
    h = f.header
    return (
        f"Archived log {storage.describe(f.location)} (thread {f.thread} sequence "
        f"{f.sequence}) is there but shorter than its header says ({f.size} of "
        f"{h.blocks * h.block_size} bytes) while sequence {later} is there: it was cut "
        f"short; copy it again whole from the database's archive (or restore it from a backup)"
    )


def _info(f: LogFile) -> LogInfo:
    h = f.header
    local = storage.is_local(f.location)
    return LogInfo(
        h.thread,
        h.sequence,
        storage.local_path(f.location) if local else Path(storage.describe(f.location)),
        h.first_scn,
        h.next_scn,
        True,
        f.size,
        location=f.location,
    )


def driver_dictionary(d: Dictionary) -> DriverDictionary:
    """The attached dictionary's tables as the driver's rules take them (TABLE wildcards,
    keys, row options, the trail's table definitions): columns in segment order, so that a
    column's index is the same for the miner and the driver; each with its container's name,
    which the TABLE statements' catalogs are matched with. Two containers' tables of one
    name: the last one listed (:func:`engine.extract.containers.selected` leaves only the
    captured one's). Its object numbers are its own
    (the n-th table's 2n + 1 and 2n + 2): the driver's plan keys tables by number, and two
    containers' objects may share one (the redo miner matches container and data object)."""
    out = DriverDictionary()
    for n, t in enumerate(d.tables):
        cols = tuple(
            ColumnDef(c.name, c.type.upper(), c.length, c.nullable, c.precision, c.scale)
            for c in t.columns
        )
        out.add(
            TableDef(
                t.owner, t.name, 2 * n + 1, 2 * n + 2, cols, key=tuple(t.key),
                catalog=containers.catalog_of(t),
            )
        )  # fmt: skip
    return out


class AttachedOrigin:
    """The attached database as :class:`~engine.extract.capture.RedoOrigin`."""

    def __init__(
        self, source: Attached, warn: Callable[[str], None], model: ParamFile | None = None
    ) -> None:
        self.source = source
        try:
            self.oracle = source.dictionary()
            if model is not None:  # the containers the TABLE statements' catalogs name
                self.oracle = containers.selected(self.oracle, model, warn)
        except RedoError as exc:
            raise ExtractError("OGG-00664", f"SOURCEDB {source.name}: {exc.message}") from None
        self.driver = driver_dictionary(self.oracle)
        self.states = MinerStates()
        self.warn = warn

    def dictionary(self) -> DriverDictionary:
        return self.driver

    def containers(self) -> Mapping[int, str]:
        return self.oracle.containers

    def plan(self, plan: MinePlan) -> OraclePlan:
        return OraclePlan(plan, self.oracle, self.states, self.warn)

    def restored(self, txns: list[tuple[Txn, list[Entry]]]) -> None:
        """The transactions Bounded Recovery put back in the cache: their changes not taken
        back yet, for the redo miner of their thread (a savepoint rollback after the
        restart takes them back)."""
        for txn, rows in txns:
            seeds = self.states.seeds.setdefault(txn.start.thread, [])
            for e in rows:
                if isinstance(e, Fragment):  # (the task miner's: its ROWIDs in its records)
                    seeds += [
                        (txn.xid, rid, ref)
                        for rid, ref in fragment_rows(e)
                        if rid and ref and ref not in txn.undone
                    ]
                elif (
                    isinstance(e, Lcr) and e.kind is Kind.ROW and e.rowid and e.ref
                    and e.ref not in txn.undone
                ):  # fmt: skip
                    seeds.append((txn.xid, e.rowid, e.ref))

    def bound(self) -> int | None:
        """The SCN at or below which a batch may be applied: below the stop the miner met
        (on any thread), None when it met none."""
        return self.states.stop_scn - 1 if self.states.stop is not None else None

    def check(self) -> None:
        """The stop the miner met (a structure change, a compressed row), raised."""
        stop = self.states.stop
        if stop is not None:
            raise ExtractError(stop.code, stop.message)


def fragment_rows(f: Fragment) -> list[tuple[str | None, str]]:
    """The (ROWID, ref) of each row of a fragment: its record templates read back."""
    return [
        (decode_record(t)[0].rowid, ref)
        for t, ref in zip(split_records(f.records), f.refs, strict=True)
    ]


def not_used(model: ParamFile) -> list[str]:
    """What the parameter file asks for that an attached database's Extract cannot do (each
    a "not used" warning at the start): there is no database to fetch a row from or to ask
    which transactions it still has open."""
    out = []
    if model.fetch_options:
        out.append("FETCHOPTIONS (no database to fetch a row from)")
    if model.tranlog.purge_orphaned:
        out.append("TRANLOGOPTIONS PURGEORPHANEDTRANSACTIONS (no database to ask which "
                   "transactions are still open)")  # fmt: skip
    return out


def legacy_state(extra: Mapping[str, object]) -> dict[str, object] | None:
    """The driver's ``extra["capture"]`` from an earlier release's archived-log run state
    (``extra["archive"]``): its last commit. Its recovery position is the read checkpoint's
    recovery position (it kept both), which the driver reads from."""
    old = extra.get(STATE_KEY)
    if not isinstance(old, dict):
        return None
    return {
        "last_commit_scn": int(str(old.get("last_commit_scn", 0))),
        "last_time_us": int(str(old.get("last_commit_time_us", 0))),
        "last_scn": int(str(old.get("last_commit_scn", 0))),
        "ignored": [],
        "last_commit_xids": [str(x) for x in old.get("last_commit_xids", []) or []],
    }
