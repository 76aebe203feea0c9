"""Group and trail definitions: ADD / ALTER / DELETE / INFO / STATUS EXTRACT|REPLICAT,
ADD / ALTER / DELETE / INFO EXTTRAIL|RMTTRAIL, INFO ALL, and the CHECKPOINTTABLE commands."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from typing import Any

from engine.home.checkpoints import (
    MOVED_READ,
    MOVED_RECOVERY,
    MOVED_WRITE,
    Checkpoints,
    Position,
    ReadCheckpoint,
    WriteCheckpoint,
    delete_checkpoints,
    save_checkpoints,
)
from engine.home.groups import (
    DEFAULT_MEGABYTES,
    GroupDef,
    GroupKind,
    GroupStore,
    SourceType,
    TrailDef,
    TrailKind,
    checked_checkpoints,
    normalize_trail,
)
from engine.home.names import InvalidGroupName, valid_group_name, valid_group_pattern
from engine.home.status import (
    MANAGER,
    State,
    foreign_lock,
    process_state,
    remove_process_file,
)
from engine.home.trust import BadFile
from engine.runtime.events import GGSCI_COMPONENT, Event, Severity, log_event
from ggsci.commands import models as M
from ggsci.render import screens
from ggsci.session import AlreadyReported, CommandFailed, Session
from params.catalog import FORMAT_RELEASES, format_release_name

TRAIL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]$")
STAMP = "%Y-%m-%d %H:%M:%S"


def store(session: Session) -> GroupStore:
    return GroupStore(session.home)


def check_pattern(pattern: str) -> None:
    """CommandFailed (one line, the rule) unless ``pattern`` is a group name or wildcard."""
    if not valid_group_pattern(pattern):
        raise CommandFailed(f"ERROR: {InvalidGroupName(pattern)}")


def get_group(session: Session, name: str) -> GroupDef | None:
    """The group ``name``; CommandFailed for a bad name or an unusable group file."""
    if not valid_group_name(name):
        raise CommandFailed(f"ERROR: {InvalidGroupName(name)}")
    try:
        return store(session).get(name)
    except BadFile as exc:
        raise CommandFailed(f"ERROR: {exc}") from exc


def resolve(
    session: Session, kind: str | None, pattern: str, report_bad: bool = True
) -> list[GroupDef]:
    """The groups ``pattern`` names (wildcards allowed); CommandFailed when there are none.

    Each matching group file that cannot be used is reported on its own line (naming the
    file) and left out, so one corrupt file does not stop the command for the others."""
    check_pattern(pattern)
    groups = store(session).match(pattern, GroupKind(kind) if kind else None)
    bad = store(session).unusable(pattern) if report_bad else []
    for problem in bad:
        session.say(f"ERROR: {problem}")
    if groups:
        return groups
    if bad:
        raise AlreadyReported(str(bad[-1]))
    if "*" in pattern or "?" in pattern:
        raise CommandFailed(f"ERROR: No {kind or 'EXTRACT or REPLICAT'} groups match {pattern}.")
    raise CommandFailed(f"ERROR: {kind or 'Group'} {pattern} does not exist.")


def view(session: Session, group: GroupDef, problems: list[str] | None = None) -> screens.GroupView:
    """What INFO / STATUS show of ``group``. An unusable checkpoint file is shown as none, and
    its one-line reason goes to ``problems`` (or is said at once when ``problems`` is None)."""
    pf, state = process_state(session.home, group.kind, group.name)
    foreign = foreign_lock(session.home, group.kind, group.name)
    if foreign is not None:
        line = (
            f"WARNING: The lock of {group.kind} {group.name} is held by {foreign}, not by a "
            "process of this home; the group does not run."
        )
        if problems is None:
            session.say(line)
        else:
            problems.append(line)
    try:
        cps = checked_checkpoints(session.home, group.kind, group.name)
    except BadFile as exc:
        cps = None
        if problems is None:
            session.say(f"ERROR: {exc}")
        else:
            problems.append(f"ERROR: {exc}")
    return screens.GroupView(group, cps, state, pf)


def resolve_begin(session: Session, begin: str | None) -> str | None:
    if begin is None:
        return None
    if begin == "NOW":
        return session.clock().strftime(STAMP)
    text = begin.replace("T", " ")
    if len(text) > 10 and text[10] == ":":
        text = text[:10] + " " + text[11:]
    try:
        when = datetime.fromisoformat(text)
    except ValueError as exc:
        raise CommandFailed(f"ERROR: Invalid BEGIN time {begin}.") from exc
    return when.strftime(STAMP) + (f".{when.microsecond:06d}" if when.microsecond else "")


def _initial_reads(
    group: GroupDef, opts: M.GroupOptions, begin: str | None
) -> tuple[ReadCheckpoint, ...]:
    if group.source in screens.TASK_SOURCES:
        return ()
    pos = Position(seqno=opts.extseqno or 0, rba=opts.extrba or 0, scn=opts.scn, timestamp=begin)
    if group.source == SourceType.TRANLOG:
        return tuple(
            ReadCheckpoint.at("TRANLOG", replace(pos, thread=t))
            for t in range(1, group.threads + 1)
        )
    return (ReadCheckpoint.at(group.source_path or "", pos),)


def add_group(session: Session, cmd: M.AddGroup) -> None:
    o = cmd.options
    kind = GroupKind(cmd.kind)
    if not valid_group_name(cmd.name):
        raise CommandFailed(f"ERROR: {InvalidGroupName(cmd.name)}")
    existing = get_group(session, cmd.name)
    if existing is not None:
        raise CommandFailed(f"ERROR: {existing.kind} {cmd.name} already exists.")
    if o.integrated or o.coordinated or o.parallel:
        mode = "INTEGRATED" if o.integrated else ("COORDINATED" if o.coordinated else "PARALLEL")
        raise CommandFailed(
            f"ERROR: {mode} {cmd.kind} needs Oracle's in-database capture/apply, "
            "which ggsci does not offer; add a classic group instead."
        )
    if o.lsn is not None:  # a PostgreSQL source: the LSN is its SCN (engine/postgres)
        from engine.postgres.lsn import BadLsn, parse_lsn

        if o.scn is not None:
            raise CommandFailed("ERROR: LSN and SCN are the same start point: give one.")
        try:
            o = replace(o, scn=parse_lsn(o.lsn))
        except BadLsn as exc:
            raise CommandFailed(f"ERROR: {exc}.") from exc
    if kind == GroupKind.EXTRACT:
        source = SourceType(o.source or "TRANLOG")
        if source == SourceType.TRANLOG and not (
            o.begin or o.scn is not None or o.extseqno is not None
        ):
            raise CommandFailed(
                "ERROR: TRANLOG needs a start point: BEGIN, SCN, LSN or EXTSEQNO/EXTRBA."
            )
    else:
        if o.source is None:
            raise CommandFailed("ERROR: ADD REPLICAT needs EXTTRAIL trail or SPECIALRUN.")
        source = SourceType(o.source)
    begin = resolve_begin(session, o.begin)
    now = session.clock()
    group = GroupDef(
        kind=kind,
        name=cmd.name,
        source=source,
        created=now.strftime(STAMP),
        source_path=o.source_path,
        begin=begin,
        scn=o.scn,
        extseqno=o.extseqno,
        extrba=o.extrba,
        threads=o.threads or 1,
        params=o.params,
        report=o.report,
        desc=o.desc,
        checkpoint_table=o.checkpointtable,
    )
    store(session).save(group)
    cps = Checkpoints(
        cmd.name, kind.value, _initial_reads(group, o, begin), updated=now.isoformat(" ", "seconds")
    )
    save_checkpoints(session.home, cps)
    session.say(f"{kind.value} added.")


def _running(session: Session, group: GroupDef) -> bool:
    state = process_state(session.home, group.kind, group.name)[1]
    return state in (State.RUNNING, State.STARTING)


def _cps(session: Session, group: GroupDef) -> Checkpoints | None:
    """The group's checkpoints; CommandFailed naming the file when it is unusable."""
    try:
        return checked_checkpoints(session.home, group.kind, group.name)
    except BadFile as exc:
        raise CommandFailed(f"ERROR: {exc}") from exc


def _running_guard(session: Session, group: GroupDef, action: str) -> None:
    if _running(session, group):
        raise CommandFailed(
            f"ERROR: {group.kind} {group.name} is running; stop it before you {action} it."
        )


def alter_group(session: Session, cmd: M.AlterGroup) -> None:
    o = cmd.options
    (group,) = resolve(session, cmd.kind, cmd.name)[:1]
    if o.upgrade or o.downgrade:
        raise CommandFailed(
            "ERROR: UPGRADE/DOWNGRADE INTEGRATED TRANLOG needs integrated capture, "
            "which ggsci does not offer."
        )
    _running_guard(session, group, "alter")
    begin = resolve_begin(session, o.begin)
    try:
        cps = checked_checkpoints(session.home, group.kind, group.name)
    except BadFile as exc:
        if not (begin or o.extseqno is not None or o.scn is not None):
            raise CommandFailed(f"ERROR: {exc}") from exc
        # a damaged checkpoint file: a position given replaces it (docs/security.md)
        session.say(f"WARNING: {exc} It is replaced by the position given.")
        cps = Checkpoints(
            group.name,
            group.kind,
            _initial_reads(group, o, begin),
            writes=tuple(
                WriteCheckpoint(t.path, t.kind.value, Position(seqno=t.seqno), t.megabytes)
                for t in group.trails
            ),
        )
    cps = cps or Checkpoints(group.name, group.kind)
    changes: dict[str, Any] = {
        k: v
        for k, v in (
            ("params", o.params),
            ("report", o.report),
            ("desc", o.desc),
            ("checkpoint_table", o.checkpointtable),
        )
        if v
    }
    if o.source == "EXTTRAIL" or o.source == "EXTTRAILSOURCE":
        changes["source_path"] = o.source_path
    if o.threads:
        changes["threads"] = o.threads
    if begin:
        changes["begin"] = begin
    group = replace(group, **changes)
    reads = list(cps.reads)
    if "source_path" in changes and reads:
        reads = [replace(r, source=o.source_path or r.source) for r in reads]
    if o.threads and group.source == SourceType.TRANLOG and len(reads) != o.threads:
        base = reads[0].current if reads else Position()
        reads = [
            ReadCheckpoint.at("TRANLOG", replace(base, thread=t)) for t in range(1, o.threads + 1)
        ]
    if begin or o.extseqno is not None or o.scn is not None:
        reads = [
            _reposition(r, o, begin) if o.thread in (None, r.current.thread) else r for r in reads
        ]
    if o.ioextseqno is not None or o.ioextrba is not None:
        reads = [
            replace(
                r,
                recovery=replace(
                    r.recovery, seqno=o.ioextseqno or r.recovery.seqno, rba=o.ioextrba or 0
                ),
            )
            if o.thread in (None, r.current.thread)
            else r
            for r in reads
        ]
    writes = cps.writes
    if o.etrollover:
        writes = tuple(replace(w, position=Position(seqno=w.position.seqno + 1)) for w in writes)
    moved = set(cps.moved)
    if tuple(r.current for r in reads) != tuple(r.current for r in cps.reads):
        moved.add(MOVED_READ)
    if tuple(r.recovery for r in reads) != tuple(r.recovery for r in cps.reads):
        moved.add(MOVED_RECOVERY)
    if o.etrollover:
        moved.add(MOVED_WRITE)
    store(session).save(group)
    save_checkpoints(
        session.home,
        replace(cps, reads=tuple(reads), writes=writes, altered=True, moved=tuple(sorted(moved))),
    )
    if o.etrollover:
        log_event(
            session.home.ggserr_log,
            Event(
                "OGG-01520",
                Severity.INFO,
                "Rollover performed. For each affected output trail of Version 10 or higher "
                f"format, "
                f"after starting the source extract, issue ALTER EXTSEQNO for that trail's reader. "
                f"({group.name})",
                GGSCI_COMPONENT,
            ),
            session.clock,
        )
    session.say(f"{group.kind} altered.")


def _reposition(rc: ReadCheckpoint, o: M.GroupOptions, begin: str | None) -> ReadCheckpoint:
    cur = rc.current
    pos = Position(
        seqno=o.extseqno if o.extseqno is not None else (0 if begin else cur.seqno),
        rba=o.extrba if o.extrba is not None else 0,
        scn=o.scn if o.scn is not None else (None if begin else cur.scn),
        timestamp=begin if begin else cur.timestamp,
        thread=cur.thread,
    )
    return ReadCheckpoint.at(rc.source, pos)


def delete_group(session: Session, cmd: M.DeleteGroup) -> None:
    check_pattern(cmd.pattern)
    bad = store(session).unusable(cmd.pattern)
    if bad:  # unusable group files match too: DELETE is how they go
        groups = store(session).match(cmd.pattern, GroupKind(cmd.kind) if cmd.kind else None)
    else:
        groups = resolve(session, cmd.kind, cmd.pattern)
    wildcard = "*" in cmd.pattern or "?" in cmd.pattern
    if (
        wildcard
        and not cmd.force
        and not session.confirm(
            f"Are you sure you want to delete all groups matching {cmd.pattern}? (y/n)"
        )
    ):
        session.say("Nothing deleted.")
        return
    failures = []
    for group in groups:
        if _running(session, group):
            failures.append(f"ERROR: {group.kind} {group.name} is running; stop it first.")
            continue
        refusal = _registered(session, group)
        if refusal is not None:
            failures.append(refusal)
            continue
        store(session).delete(group.name)
        delete_checkpoints(session.home, group.kind, group.name)
        remove_process_file(session.home, group.kind, group.name)
        session.say(f"Deleted {group.kind} {group.name}.")
    for problem in bad:
        failures.extend(_delete_unusable(session, cmd.kind, problem))
    if failures:
        raise CommandFailed("\n".join(failures))


def _registered(session: Session, group: GroupDef) -> str | None:
    """DELETE EXTRACT of a group registered with a PostgreSQL database (its replication slot
    holds the WAL) is refused until UNREGISTER EXTRACT ... DATABASE, as GoldenGate does."""
    from engine.postgres.slot import load_registration

    if group.kind != GroupKind.EXTRACT:
        return None
    try:
        reg = load_registration(session.home, group.name)
    except BadFile as exc:
        return f"ERROR: {exc}"
    if reg is None:
        return None
    return (
        f"ERROR: OGG-08100  EXTRACT {group.name} is registered with database {reg.database} "
        f"(replication slot '{reg.slot}'); DBLOGIN and UNREGISTER EXTRACT {group.name} "
        "DATABASE first."
    )


def _delete_unusable(session: Session, kind: str | None, problem: BadFile) -> list[str]:
    """DELETE of a group whose group file is unusable: its kind cannot be read from the file,
    so the command's kind is taken (both kinds' files go when it names none); refused while a
    process of that name runs."""
    name = problem.path.stem.upper()
    kinds = (kind,) if kind else ("EXTRACT", "REPLICAT")
    for k in ("EXTRACT", "REPLICAT"):
        if process_state(session.home, k, name)[1] in (State.STARTING, State.RUNNING):
            return [f"ERROR: {k} {name} is running; stop it first."]
    problem.path.unlink(missing_ok=True)
    for k in kinds:
        delete_checkpoints(session.home, k, name)
        remove_process_file(session.home, k, name)
    session.say(
        f"Deleted {kind or 'group'} {name} (its unusable group file {problem.path.name} removed)."
    )
    return []


def info_group(session: Session, cmd: M.InfoGroup) -> None:
    now = session.clock()
    for group in resolve(session, cmd.kind, cmd.pattern):
        v = view(session, group)
        if cmd.showch is not None:
            lines = screens.info_group(v, now, str(session.home.root), False)
            session.say(*lines, *screens.showch(v, now, cmd.showch))
        else:
            session.say(*screens.info_group(v, now, str(session.home.root), cmd.detail))


def status_group(session: Session, cmd: M.StatusGroup) -> None:
    for group in resolve(session, cmd.kind, cmd.pattern):
        session.say(f"{group.kind} {group.name}: {view(session, group).state.value}")


def info_all(session: Session, cmd: M.InfoAll) -> None:
    manager = process_state(session.home, MANAGER, MANAGER)[1]
    groups, bad = store(session).scan()
    problems: list[str] = []
    views = [view(session, g, problems) for g in groups]
    session.say(*screens.info_all(manager, views, session.clock(), cmd.scope))
    problems.extend(f"ERROR: {b}" for b in bad)
    if problems:
        session.say(*problems)
        raise AlreadyReported(problems[-1])


# --- trails -------------------------------------------------------------------------------


def _trail_check(path: str) -> None:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if not TRAIL_NAME.match(name):
        raise CommandFailed(
            f"ERROR: Trail name {path} must end in two characters, a letter "
            "then a letter or digit (e.g. ./dirdat/lt)."
        )


def add_trail(session: Session, cmd: M.AddTrail) -> None:
    _trail_check(cmd.path)
    owner = store(session).trail_owner(cmd.path)
    if owner is not None:
        raise CommandFailed(
            f"ERROR: Trail {cmd.path} already exists for {owner.kind} {owner.name}."
        )
    group = get_group(session, cmd.extract)
    if group is None or group.kind != GroupKind.EXTRACT:
        raise CommandFailed(f"ERROR: EXTRACT {cmd.extract} does not exist.")
    megabytes = cmd.megabytes or DEFAULT_MEGABYTES
    if not 1 <= megabytes <= 2000:
        raise CommandFailed("ERROR: MEGABYTES must be between 1 and 2000.")
    seqno = cmd.seqno or 0
    release = None
    if cmd.format_release is not None:
        release = format_release_name(cmd.format_release)
        if release is None:
            raise CommandFailed(
                f"ERROR: FORMAT RELEASE {cmd.format_release} is not a trail format release "
                f"(known: {', '.join(FORMAT_RELEASES)})."
            )
    trail = TrailDef(cmd.path, TrailKind(cmd.kind), megabytes, seqno, release)
    store(session).save(group.with_trail(trail))
    cps = _cps(session, group) or Checkpoints(group.name, group.kind)
    write = WriteCheckpoint(cmd.path, cmd.kind, Position(seqno=seqno), megabytes)
    save_checkpoints(session.home, cps.with_write(write))
    session.say(f"{cmd.kind} added.")


def _trail_owner(session: Session, kind: str, path: str, extract: str | None) -> GroupDef:
    owner = store(session).trail_owner(path)
    if owner is None or not any(
        normalize_trail(t.path) == normalize_trail(path) and t.kind == kind for t in owner.trails
    ):
        raise CommandFailed(f"ERROR: {kind} {path} does not exist.")
    if extract is not None and owner.name != extract:
        raise CommandFailed(f"ERROR: {kind} {path} belongs to EXTRACT {owner.name}, not {extract}.")
    return owner


def _trail_def(owner: GroupDef, path: str) -> TrailDef:
    return next(t for t in owner.trails if normalize_trail(t.path) == normalize_trail(path))


def alter_trail(session: Session, cmd: M.AlterTrail) -> None:
    owner = _trail_owner(session, cmd.kind, cmd.path, cmd.extract)
    trail = _trail_def(owner, cmd.path)
    megabytes = cmd.megabytes or trail.megabytes
    store(session).save(owner.with_trail(replace(trail, megabytes=megabytes)))
    cps = _cps(session, owner)
    if cps is not None:
        writes = tuple(
            replace(w, megabytes=megabytes) if w.trail == trail.path else w for w in cps.writes
        )
        save_checkpoints(session.home, replace(cps, writes=writes))
    session.say(f"{cmd.kind} altered.")


def delete_trail(session: Session, cmd: M.DeleteTrail) -> None:
    owner = _trail_owner(session, cmd.kind, cmd.path, cmd.extract)
    trail = _trail_def(owner, cmd.path)
    if _running(session, owner):  # its process writes the trail: GGSCI refuses too
        raise CommandFailed(
            f"ERROR: {cmd.kind} {trail.path} is written by EXTRACT {owner.name}, which is "
            "running; stop it before you delete the trail."
        )
    store(session).save(owner.without_trail(trail.path))
    cps = _cps(session, owner)
    if cps is not None:
        save_checkpoints(session.home, cps.without_write(trail.path))
    session.say(f"Deleting {cmd.kind.lower()} {trail.path} for EXTRACT {owner.name}.")


def info_trail(session: Session, cmd: M.InfoTrail) -> None:
    shown = 0
    for group in store(session).all():
        try:
            cps = _cps(session, group)
        except CommandFailed as exc:
            session.say(str(exc))
            cps = None
        for trail in group.trails:
            if trail.kind != cmd.kind:
                continue
            if cmd.path not in (None, "*") and normalize_trail(trail.path) != normalize_trail(
                cmd.path
            ):
                continue
            write = next((w for w in (cps.writes if cps else ()) if w.trail == trail.path), None)
            pos = write.position if write else Position(seqno=trail.seqno)
            session.say(
                *screens.info_trail(
                    trail.path, trail.kind.value, group.name, pos.seqno, pos.rba, trail.megabytes
                )
            )
            shown += 1
    if not shown:
        what = cmd.path if cmd.path not in (None, "*") else "trails"
        raise CommandFailed(f"ERROR: No {cmd.kind} {what} exist.")


HANDLERS: dict[type[M.Command], Any] = {
    M.AddGroup: add_group,
    M.AlterGroup: alter_group,
    M.DeleteGroup: delete_group,
    M.InfoGroup: info_group,
    M.StatusGroup: status_group,
    M.InfoAll: info_all,
    M.AddTrail: add_trail,
    M.AlterTrail: alter_trail,
    M.DeleteTrail: delete_trail,
    M.InfoTrail: info_trail,
}
