"""The Extract group run of an attached Oracle database (``SOURCEDB NAME`` of one attached by
``ggsci db attach``), reading its archived logs only (GoldenGate's ALO mode).

A :class:`~engine.runtime.loop.GroupRun` around :class:`engine.extract.archive.ArchiveCapture`,
in process, with no Spark session: ``poll`` reads every archived log there now (0 when the
next sequence is not archived yet: the run waits for it), ``checkpoint`` publishes the read
and write positions through the group's checkpoint file (``dirchk/GROUP.cpe``) so that INFO,
SHOWCH, STATUS and a restart work: the read checkpoint's recovery position is the start of the
oldest open transaction, its current position where reading is; the capture state (recovery
position and the last commit written) rides in the file's ``extra["archive"]``, so a restart
writes nothing twice.

Where a new group starts (ADD EXTRACT ..., TRANLOG): ``EXTSEQNO s, EXTRBA r`` at that byte of
that sequence; ``SCN n`` the archived log whose SCN range holds n, from its start, with the
transactions that committed below n left out; ``BEGIN time`` the archived log whose time
range holds it, from its start (a transaction of that log committed before the time is
written: the log header's times are to the second, the records' times are not compared);
neither: the oldest archived log there.

Requires ``TRANLOGOPTIONS ARCHIVEDLOGONLY``; ``ALTARCHIVELOGDEST`` (the first one given)
replaces the attached location and ``ALTARCHIVEDLOGFORMAT`` its format. One redo thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from engine import storage
from engine.changes import Position
from engine.extract.archive import ArchiveCapture, ArchiveState
from engine.extract.start import ExtractError
from engine.home.checkpoints import (
    Checkpoints,
    CsnState,
    ReadCheckpoint,
    WriteCheckpoint,
    load_checkpoints,
    next_checkpoint,
    save_checkpoints,
)
from engine.home.checkpoints import Position as CpPosition
from engine.home.groups import DEFAULT_MEGABYTES, GroupDef, normalize_trail
from engine.home.layout import Home
from engine.redo.attached import Attached, attached, source_problem
from engine.redo.catalog import LogFile, list_logs
from engine.redo.errors import RedoError
from engine.redo.layout import redo_time
from engine.runtime.events import Severity
from engine.runtime.loop import GroupRun
from engine.trail.model import valid_datetime
from engine.trail.recovery import RecoveryMode
from engine.trail.releases import parse_release
from engine.trail.writer import TrailWriter
from params.models import ParamFile

Emit = Callable[[str, Severity, str], None]
STATE_KEY = "archive"

#: SEND requests an archived-log Extract does not serve, and why (one line each).
REFUSED = {
    "SHOWTRANS": "open transactions are not listed",
    "SKIPTRANS": "a transaction cannot be skipped",
    "FORCETRANS": "a transaction cannot be forced",
    "BR": "Bounded Recovery is not used (a restart reads again from the oldest open "
    "transaction's archived log)",
    "ROLLOVER": "the trail is rolled over at its size limit only",
    "TRANLOGOPTIONS": "TRANLOGOPTIONS cannot be changed while it runs",
}


def refusal(request: str, source: str) -> str:
    return (
        f"ERROR: {request} is not available for an Extract reading the archived logs of "
        f"attached database {source}: {REFUSED[request]}."
    )


def not_used(model: ParamFile) -> list[str]:
    """What the parameter file asks for that this run does not do (each a "not used" warning
    at the start): TABLE row options, and the TRANLOGOPTIONS that filter transactions."""
    out = []
    for t in model.tables:
        names = [o.name for o in t.options]
        names += ["WHERE"] * (t.where is not None) + ["FILTER"] * bool(t.filters)
        names += ["TOKENS"] * bool(t.tokens)
        if t.statement == "TABLE" and names:
            shown = ", ".join(sorted(set(names)))
            out.append(
                f"TABLE {t.source.text or t.source.owner + '.' + t.source.name} options ({shown})"
            )
    tl = model.tranlog
    for name, present in (
        ("EXCLUDEUSER", tl.exclude_users),
        ("EXCLUDEUSERID", tl.exclude_user_ids),
        ("EXCLUDETRANS", tl.exclude_trans),
        ("EXCLUDETAG", tl.exclude_tags),
        ("INCLUDETAG", tl.include_tags),
    ):
        if present:
            out.append(f"TRANLOGOPTIONS {name}")
    return out


def attached_source(home: Home, model: ParamFile) -> Attached | None:
    """The attached database SOURCEDB names, None when it names none (or an embedded one);
    :class:`ExtractError` when its record is damaged."""
    name = model.login.sourcedb
    if name is None:
        return None
    try:
        return attached(home.dirdb, name)
    except RedoError as exc:
        raise ExtractError("OGG-00664", exc.message) from None


def _time_us(value: int) -> int:
    y, mo, d, h, mi, s = redo_time(value)
    return int(datetime(y, mo, d, h, mi, s).timestamp() * 1_000_000) if value else 0


def initial_state(
    logs: list[LogFile], read: CpPosition | None, where: str, thread: int = 1
) -> ArchiveState:
    """Where a new group starts reading (module docstring), from its ADD EXTRACT position."""
    mine = sorted((f for f in logs if f.thread == thread), key=lambda f: f.sequence)
    if read is not None and read.seqno:
        return ArchiveState(Position(thread, read.seqno, read.rba))
    if read is None or (read.scn is None and not read.timestamp):
        if not mine:
            raise ExtractError(
                "OGG-00446",
                f"Not able to establish initial position on redo thread {thread}: no archived "
                f"log under {where} (give EXTSEQNO n, EXTRBA 0 to wait for sequence n).",
            )
        return ArchiveState(Position(thread, mine[0].sequence, 0))
    if read.scn is not None:
        shown, floor = f"SCN {read.scn}", read.scn
        bound, ends = read.scn, [f.header.next_scn for f in mine]
    else:
        assert read.timestamp is not None
        shown, floor = f"begin time {read.timestamp}", 0
        bound = int(datetime.fromisoformat(read.timestamp).timestamp() * 1_000_000)
        ends = [_time_us(f.header.next_time) for f in mine]
    if not mine:
        raise ExtractError(
            "OGG-00446",
            f"Not able to establish initial position for {shown} on redo thread {thread}: "
            f"no archived log under {where}.",
        )
    first = next((f for f, end in zip(mine, ends, strict=True) if bound < end), None)
    pos = Position(thread, first.sequence if first else mine[-1].sequence + 1, 0)
    return ArchiveState(pos, last_commit_scn=floor)


class AloRun(GroupRun):
    """One archived-log-only Extract run over a home, its parameter file and its group."""

    def __init__(
        self,
        home: Home,
        model: ParamFile,
        group: GroupDef | None,
        emit: Emit,
        source: Attached,
        *,
        durable: bool = True,
        clock: Callable[[], datetime] = datetime.now,
    ) -> None:
        tranlog = model.tranlog
        problem = source_problem(source.root.parent, source.name, tranlog.archived_log_only)
        if problem is not None:
            raise ExtractError("OGG-00664", f"{problem}.")
        if group is not None and group.threads != 1:
            raise ExtractError(
                "OGG-00664",
                f"EXTRACT {group.name} has {group.threads} threads: an attached database is "
                "read on one redo thread.",
            )
        if not model.trails:
            raise ExtractError("OGG-01044", "No EXTTRAIL or RMTTRAIL in the parameter file.")
        self.home, self.model, self.group, self.emit, self.clock = home, model, group, emit, clock
        self.source = source
        self.name = (model.group or (group.name if group else "EXTRACT")).upper()
        dests = tranlog.alt_archive_log_dests
        self.location: str = dests[0] if dests else source.archive
        self.fmt = tranlog.alt_archived_log_format or source.format
        trail = model.trails[0]
        added = next(
            (
                t
                for t in (group.trails if group else ())
                if normalize_trail(t.path) == normalize_trail(trail.path)
            ),
            None,
        )
        self.trail_path = trail.path
        self.trail_kind = "RMTTRAIL" if trail.remote else "EXTTRAIL"
        mb = (added.megabytes if added else None) or trail.megabytes
        self.megabytes: int = mb or DEFAULT_MEGABYTES
        release = trail.format_release or (added.format_release if added else None)
        target = Path(trail.path) if Path(trail.path).is_absolute() else home.root / trail.path
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            dictionary = source.dictionary()
            self.checkpoints = load_checkpoints(home, "EXTRACT", self.name)
        except RedoError as exc:
            raise ExtractError("OGG-00664", f"SOURCEDB {source.name}: {exc.message}") from None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ExtractError(
                "OGG-00444", f"Checkpoint file dirchk/{self.name}.cpe is corrupt ({exc})."
            ) from None
        self.writer = TrailWriter.open(
            target,
            megabytes=self.megabytes,
            header_info={"Producer": "ggsci", "GroupName": self.name, "DbName": source.name},
            durable=durable,
            checksum=trail.checksum,
            recovery=RecoveryMode.of_option(model.recovery_options),
            release=parse_release(release) if release else None,
            objectdefs=trail.objectdefs,
        )
        try:
            state = self._start_state(self.checkpoints)
        except (ExtractError, RedoError, storage.StorageError):
            self.writer.close()
            raise
        self.startup = state.recovery
        self.capture = ArchiveCapture(
            self.location,
            self.fmt,
            dictionary,
            lambda t: model.captured(t.owner, t.name) is not None,
            self.writer,
            home.dirtmp / self.name,
            state,
            warn=self._warn,
        )
        for what in not_used(model):
            emit(
                "OGG-10144",
                Severity.WARNING,
                f"{what} not used by an Extract reading the archived logs of attached "
                f"database {source.name}: its rows are written as captured.",
            )
        self.batch_id = self.checkpoints.batch_id if self.checkpoints else 0
        self.dirty = True
        self.last_checkpoint = 0.0

    def _warn(self, text: str) -> None:
        code, sep, rest = text.partition(": ")
        if sep and code.startswith("OGG-"):
            self.emit(code, Severity.WARNING, rest)
        else:
            self.emit("OGG-01431", Severity.WARNING, text)

    def _start_state(self, cps: Checkpoints | None) -> ArchiveState:
        if cps is not None and STATE_KEY in cps.extra and not cps.altered:
            self.emit(
                "OGG-01515",
                Severity.INFO,
                "Positioning to the recovery checkpoint (start of the oldest open transaction).",
            )
            return ArchiveState.from_json(cps.extra[STATE_KEY])
        reads = [r for r in (cps.reads if cps else ()) if r.source == "TRANLOG"]
        read = reads[0].current if reads else None
        if read is not None and read.thread != 1:
            read = None
        where = storage.describe(self.location)
        logs = [] if read is not None and read.seqno else list_logs(self.location, self.fmt)
        return initial_state(logs, read, where)

    # -- GroupRun ------------------------------------------------------------------------
    @property
    def checkpoint_secs(self) -> int:
        return self.model.checkpoint_secs

    def poll(self) -> int:
        before = self.capture.current
        try:
            n = self.capture.poll()
        except RedoError:  # what was written before it is published: a restart skips it
            self.dirty = True
            self.checkpoint()
            raise
        # a log without a captured commit still moves the position (published when idle)
        self.dirty = self.dirty or n > 0 or self.capture.current != before
        return n

    def checkpoint(self) -> None:
        """Publish the positions the durable trail covers (poll made it durable)."""
        cps = self.checkpoints
        if not self.dirty and cps is not None and not cps.altered:
            self.last_checkpoint = time.monotonic()
            return
        durable = self.writer.sync()
        state = self.capture.state
        cur = self.capture.current

        stamp = valid_datetime(state.last_commit_time_us) if state.last_commit_time_us else None
        shown = stamp.isoformat(" ") if stamp else None

        def at(p: Position) -> CpPosition:
            return CpPosition(seqno=p.sequence, rba=p.offset, thread=p.thread, timestamp=shown)

        read = ReadCheckpoint("TRANLOG", at(self.startup), at(state.recovery), at(cur))
        write = WriteCheckpoint(
            self.trail_path,
            self.trail_kind,
            CpPosition(seqno=durable.seqno, rba=durable.rba),
            self.megabytes,
        )
        latest = state.last_commit_xids[-1] if state.last_commit_xids else None
        self.batch_id += 1
        new = next_checkpoint(
            cps,
            self.name,
            "EXTRACT",
            reads=(read,),
            write=write,
            batch_id=self.batch_id,
            now=self.clock(),
            source_time=stamp,
            extra={STATE_KEY: state.to_json()},
            csn=CsnState(state.last_commit_scn or None, latest),
        )
        save_checkpoints(self.home, new)
        self.checkpoints = new
        self.dirty = False
        self.last_checkpoint = time.monotonic()

    def close(self) -> None:
        self.writer.close()

    def status_lines(self) -> list[str]:
        cur = self.capture.current
        w = self.writer.position
        return [
            f"EXTRACT {self.name}: RUNNING (archived logs of {self.source.name})",
            f"  Archive {storage.describe(self.location)}: thread {cur.thread}, next sequence "
            f"{cur.sequence}, RBA {cur.offset}",
            f"  {self.trail_kind} {self.trail_path}: {self.capture.transactions} "
            f"transaction(s), position {w.seqno}/{w.rba}",
        ]
