"""Where a new Extract starts reading, and which source database it reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from engine import storage
from engine.changes import Position
from engine.embedded.catalog import RedoGapError, log_header, record_heads
from engine.embedded.clock import to_micros
from engine.embedded.errors import DatabaseError
from engine.embedded.logs import LogInfo, list_logs
from engine.embedded.ownfiles import check_database_files
from engine.errors import GGError
from engine.home.checkpoints import Checkpoints, ReadCheckpoint
from engine.home.layout import Home
from engine.trail.model import TrailPosition
from engine.trail.reader import reaches, write_gap
from engine.trail.writer import TrailWriter
from params.models import ParamFile


class ExtractError(GGError):
    """The run cannot start or go on; ``code`` is the OGG message to abend with."""


def source_root(home: Home, model: ParamFile) -> Path:
    """The embedded source database: SOURCEDB name, else the home's only database."""
    name = model.login.sourcedb
    if name is None:
        dbs = (
            sorted(p for p in home.dirdb.iterdir() if (p / "data.sqlite").exists())
            if home.dirdb.is_dir()
            else []
        )
        if len(dbs) == 1:
            return _owners(dbs[0])
        raise ExtractError(
            "OGG-00664",
            "No source database: add SOURCEDB <name> to the parameter file "
            f"({len(dbs)} databases in {home.dirdb}).",
        )
    root = home.dirdb / name.upper()  # database names are upper case, as Oracle's
    if not (root / "data.sqlite").exists():
        raise ExtractError("OGG-00664", f"Source database {name} does not exist in {home.dirdb}.")
    return _owners(root)


def _owners(root: Path) -> Path:
    """``root`` when every file of the database is the home's owner's (OGG-00664 naming the
    first that is not: engine/embedded/ownfiles.py)."""
    try:
        check_database_files(root)
    except DatabaseError as exc:
        raise ExtractError("OGG-00664", f"{exc.code}: {exc.message}") from None
    return root


def initial_positions(
    redo_dir: Path,
    reads: tuple[ReadCheckpoint, ...],
    threads: int,
    listing: Callable[[], list[LogInfo]] | None = None,
) -> dict[int, Position]:
    """Where a new Extract starts, per thread: EXTSEQNO/EXTRBA, else the first record at or
    after SCN / BEGIN time, else (no group definition) the start of the logs.

    The logs are ``listing``'s (:meth:`~engine.embedded.catalog.RedoCatalog.logs`: the online
    logs and the archived copies in the archive destinations, on any storage), else the
    online logs of ``redo_dir``; the SCN and time searches read them where they are. A
    begin point older than a thread's oldest available log, when that log had a
    predecessor (whose redo is gone), is :class:`ExtractError` OGG-00446
    (:func:`oldest_check`): the Extract cannot establish its start there."""
    logs = list_logs(redo_dir) if listing is None else listing()
    out: dict[int, Position] = {}
    by_thread = {i.thread for i in logs} | set(range(1, threads + 1))
    cur = {r.current.thread: r.current for r in reads}
    for t in sorted(by_thread):
        p = cur.get(t)
        mine = [i for i in logs if i.thread == t]
        first_seq = mine[0].sequence if mine else 1
        if p is None:
            out[t] = Position(t, first_seq, 0)
        elif p.seqno:
            out[t] = Position(t, p.seqno, p.rba)
        elif p.scn is not None or p.timestamp:
            begin = Begin.of(p.scn, p.timestamp)
            oldest_check(mine, t, begin)
            out[t] = _first_position(mine, begin) or _end_of(logs, t)
        else:
            out[t] = Position(t, first_seq, 0)
    return out


@dataclass(frozen=True)
class Begin:
    """A begin point: the first record with SCN >= ``scn``, or time >= ``time_us``."""

    scn: int | None
    time_us: int
    shown: str  # as the message names it: "SCN n" or "begin time ..."

    @classmethod
    def of(cls, scn: int | None, timestamp: str | None) -> Begin:
        if scn is not None:
            return cls(scn, 0, f"SCN {scn}")
        assert timestamp
        return cls(None, to_micros(datetime.fromisoformat(timestamp)), f"begin time {timestamp}")

    def accepts(self, scn: int, time_us: int) -> bool:
        return scn >= self.scn if self.scn is not None else time_us >= self.time_us

    def passes(self, info: LogInfo) -> bool:
        """Whether every record of ``info`` lies before the begin point, by its header
        alone: an archived log's records all have SCNs below its next SCN."""
        return self.scn is not None and info.archived and 0 < info.next_scn <= self.scn


def _first_position(logs: list[LogInfo], begin: Begin) -> Position | None:
    for info in logs:
        if begin.passes(info):
            continue
        for offset, scn, time_us in record_heads(info):
            if begin.accepts(scn, time_us):
                return Position(info.thread, info.sequence, offset)
    return None


def oldest_check(logs: list[LogInfo], thread: int, begin: Begin) -> None:
    """ExtractError OGG-00446 when redo at or after ``begin`` may lie in a log of
    ``thread`` older than its oldest available one (``logs[0]``): that log had a
    predecessor (the thread's first log has none), and ``begin`` is below its first SCN,
    or at or before the time it was started or its first record's time, whichever is
    earlier (a record of its predecessor may carry that time: an imported log is started
    after its records' times). Where GoldenGate cannot find the log it would start in, it
    abends with OGG-00446 "Not able to establish initial position for begin time ..."."""
    if not logs:
        return
    oldest = logs[0]
    # unknown (an archived copy has no side file): the sequence before it, as Oracle numbers
    prev = oldest.prev_sequence if oldest.prev_sequence >= 0 else oldest.sequence - 1
    if prev < 1:
        return
    head = log_header(oldest)
    heads = record_heads(oldest)
    first = next(heads, None)
    heads.close()  # the log stays open no longer
    since = min(head.created_us, first[2]) if first is not None else head.created_us
    if begin.scn is not None:
        if begin.scn >= oldest.first_scn:
            return
    elif begin.time_us > since:
        return
    started = datetime(1970, 1, 1) + timedelta(microseconds=since)
    where = storage.describe(oldest.location or oldest.path)
    raise ExtractError(
        "OGG-00446",
        f"Not able to establish initial position for {begin.shown} on redo thread {thread}: "
        f"its oldest available log is sequence {oldest.sequence} (first SCN "
        f"{oldest.first_scn}, from {started:%Y-%m-%d %H:%M:%S.%f}, {where}); sequence "
        f"{prev} and older are no longer online or in an archive destination.",
    )


def _end_of(logs: list[LogInfo], thread: int) -> Position:
    mine = [i for i in logs if i.thread == thread]
    if not mine:
        return Position(thread, 1, 0)
    last = mine[-1]
    return Position(thread, last.sequence, last.size)


# -- the trail against its write checkpoint ---------------------------------------------------
@dataclass(frozen=True)
class Recapture:
    """A trail that lost committed data: where to read the redo again from, and the last
    commit the trail still holds (transactions committed at or before it are not written
    again); ``message`` is what the report says."""

    positions: dict[int, Position]
    last_commit_scn: int
    message: str


def _trail_write(cps: Checkpoints, trail: str) -> TrailPosition | None:
    for w in cps.writes:
        if Path(w.trail).as_posix().lstrip("./") == Path(trail).as_posix().lstrip("./"):
            return TrailPosition(w.position.seqno, w.position.rba)
    return None


def recapture_lost_trail(
    cps: Checkpoints,
    written: TrailPosition,
    trail: str,
    writer: TrailWriter,
    redo_dir: Path,
    threads: int,
    listing: Callable[[], list[LogInfo]] | None = None,
) -> Recapture | None:
    """Compare the trail's end (after append-mode recovery) with ``written``, the write
    position the previous run published. None when the trail holds it all. Otherwise the
    trail lost committed transactions (a file cut short or removed): re-read the redo from
    the newest checkpoint (the current one or one of its history) whose write position the
    trail still reaches, skipping what committed at or before the trail's last transaction,
    so each missing transaction is written again exactly once. ExtractError (OGG-01496,
    naming the files and positions) when that cannot be done: no such checkpoint is left,
    or its redo is gone. Only when ``written`` is this trail's: its write checkpoint is at
    or after it (ALTER ... ETROLLOVER moves it to the next file). ``listing``: the logs
    where the Extract reads them (:meth:`~engine.embedded.catalog.RedoCatalog.logs`, archived
    copies included), else the online logs of ``redo_dir``."""
    rec = writer.recovery
    published = _trail_write(cps, trail)
    if published is None or published < written:
        return None  # the state is of another trail (ADD EXTTRAIL of a new one since)
    lost = write_gap(writer.trail, written, f"Trail {trail}")
    if rec is None or lost is None:
        return None
    last = rec.last_transaction
    last_scn = int(last.logcsn) if last and last.logcsn and last.logcsn.isdigit() else 0
    for candidate in (cps, *cps.history):
        at = _trail_write(candidate, trail)
        reads = tuple(r for r in candidate.reads if r.source == "TRANLOG")
        if at is None or not reaches(writer.trail, at) or not reads:
            continue
        if last is None and writer.trail.seqnos()[:1] != [0]:
            break  # no transaction left, early files purged: what they held is unknown
        again = tuple(ReadCheckpoint.at(r.source, r.recovery) for r in reads)
        try:
            every = list_logs(redo_dir) if listing is None else listing()
            positions = initial_positions(redo_dir, again, threads, every.copy)
        except RedoGapError as exc:  # an archive destination unreadable
            raise ExtractError(exc.code, exc.message) from exc
        for t, p in sorted(positions.items()):
            logs = [i for i in every if i.thread == t]
            if not logs or p.sequence < logs[0].sequence:
                oldest = f"Seqno {logs[0].sequence}" if logs else "none"
                raise ExtractError(
                    "OGG-01496",
                    f"{lost}. The redo to capture it again (thread {t} from Seqno "
                    f"{p.sequence}, RBA {p.offset}) is no longer available (oldest: {oldest}).",
                )
        where = ", ".join(
            f"thread {t} Seqno {p.sequence}, RBA {p.offset}" for t, p in sorted(positions.items())
        )
        return Recapture(
            positions,
            last_scn,
            f"{lost}. Capturing again from the checkpoint of {candidate.updated} ({where}): "
            f"the transactions committed after SCN {last_scn} are written again.",
        )
    raise ExtractError(
        "OGG-01496",
        f"{lost}. No checkpoint left is from before the missing data, so it cannot be "
        "captured again: restore the trail file, or reposition with ALTER EXTRACT.",
    )
