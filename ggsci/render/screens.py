"""GGSCI screens as lists of lines: INFO ALL, INFO group (DETAIL, SHOWCH), INFO EXTTRAIL.

Pure functions of the data they show (group definition, checkpoints, status, "now"), so golden
tests need no processes. Layouts follow GG_REFERENCE.md §3.2: INFO ALL columns at 0/12/24/36/50,
labels of INFO padded to 21 characters, SCNs as ``wrap.base (decimal)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.home.checkpoints import Checkpoints, CsnState, Position, ReadCheckpoint
from engine.home.groups import GroupDef, SourceType
from engine.home.status import ProcessFile, State

LABEL = 21
TASK_SOURCES = (SourceType.SOURCEISTABLE, SourceType.SPECIALRUN)
SEQ_DIGITS = 9


def hms(seconds: float) -> str:
    """``hh:mm:ss`` with as many hour digits as needed (``529:05:45``)."""
    total = max(0, round(seconds))
    return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"


def scn_text(scn: int | None) -> str:
    value = scn or 0
    return f"{value >> 32}.{value & 0xFFFFFFFF} ({value})"


def _parse(ts: str | None) -> datetime | None:
    if not ts:
        return None
    try:
        return datetime.fromisoformat(ts)
    except ValueError:
        return None


def trail_file(trail: str, seqno: int) -> str:
    return f"{trail}{seqno:0{SEQ_DIGITS}d}"


def is_task(group: GroupDef) -> bool:
    return group.source in TASK_SOURCES


@dataclass(frozen=True)
class GroupView:
    """What INFO shows of one group: definition, checkpoints, state, process file."""

    group: GroupDef
    checkpoints: Checkpoints | None
    state: State
    process: ProcessFile | None


def lag_columns(view: GroupView, now: datetime) -> tuple[str, str]:
    cps = view.checkpoints
    if cps is None:
        return "", ""
    lag = "UNKNOWN" if cps.lag_seconds is None else hms(cps.lag_seconds)
    updated = _parse(cps.updated)
    since = "" if updated is None else hms((now - updated).total_seconds())
    return lag, since


def info_all(manager: State, views: list[GroupView], now: datetime, scope: str | None) -> list[str]:
    lines = [
        "",
        f"{'Program':<12}{'Status':<12}{'Group':<12}{'Lag at Chkpt':<14}Time Since Chkpt",
        "",
    ]
    lines.append(f"{'MANAGER':<12}{manager.value}")
    for view in views:
        task = is_task(view.group)
        if (scope is None and task) or (scope == "TASKS" and not task):
            continue
        lag, since = lag_columns(view, now)
        g = view.group
        row = f"{g.kind.value:<12}{view.state.value:<12}{g.name:<12}{lag:<14}{since}"
        lines.append(row.rstrip())
    return lines


def _position_lines(rc: ReadCheckpoint, group: GroupDef, threads: int) -> list[str]:
    pad = " " * LABEL
    pos = rc.current
    when = pos.timestamp[:19] if pos.timestamp else "First Record"
    if rc.source == "TRANLOG":
        thread = f"  Thread {pos.thread}" if threads > 1 else ""
        return [
            f"{'Log Read Checkpoint':<{LABEL}}Oracle Redo Logs{thread}",
            f"{pad}{when}  Seqno {pos.seqno}, RBA {pos.rba}",
            f"{pad}SCN {scn_text(pos.scn)}",
        ]
    return [
        f"{'Log Read Checkpoint':<{LABEL}}File {trail_file(rc.source, pos.seqno)}",
        f"{pad}{when}  RBA {pos.rba}",
    ]


def info_group(view: GroupView, now: datetime, home_root: str, detail: bool) -> list[str]:
    g, cps, pf = view.group, view.checkpoints, view.process
    if pf is not None:
        started = f"Last Started {pf.started[:16]}"
    else:
        started = f"Initialized  {g.created[:16]}"
    lines = ["", f"{g.kind.value:<11}{g.name:<10}{started}   Status {view.state.value}"]
    if g.desc:
        lines.append(f"{'Description':<{LABEL}}{g.desc}")
    if cps is not None and not is_task(g):
        lag, since = lag_columns(view, now)
        lines.append(f"{'Checkpoint Lag':<{LABEL}}{lag} (updated {since or '00:00:00'} ago)")
    if pf is not None and view.state in (State.STARTING, State.RUNNING):
        lines.append(f"{'Process ID':<{LABEL}}{pf.pid}")
    if is_task(g):
        lines.append(f"{'Task':<{LABEL}}{g.source.value}")
    elif cps is not None and isinstance(cps.extra.get("pg"), dict):
        lines += _postgres_lines(cps.extra, detail)
    elif cps is not None:
        for rc in cps.reads:
            lines += _position_lines(rc, g, len(cps.reads))
    if detail:
        lines += _detail(view, home_root)
    return lines


def _postgres_lines(extra: dict[str, Any], detail: bool) -> list[str]:
    """A PostgreSQL Extract's read position (engine/postgres/run.py's checkpoint): the LSN
    read through, and with DETAIL its replication slot as the last checkpoint saw it."""
    pad = " " * LABEL
    pg, slot = extra["pg"], extra.get("slot_status") or {}
    lines = [
        f"{'Log Read Checkpoint':<{LABEL}}PostgreSQL WAL",
        f"{pad}LSN {pg.get('read_lsn')} (last commit written {pg.get('last_commit_lsn')})",
    ]
    if detail:
        lines += [
            f"{'Replication Slot':<{LABEL}}{extra.get('slot')} ({slot.get('plugin', '?')}, "
            f"wal_status {slot.get('wal_status', '?')})",
            f"{'Confirmed LSN':<{LABEL}}{slot.get('confirmed_lsn', '?')}",
            f"{'WAL Retained':<{LABEL}}{slot.get('retained', '?')} bytes",
        ]
    return lines


def _detail(view: GroupView, root: str) -> list[str]:
    g, cps = view.group, view.checkpoints
    lines: list[str] = []
    if g.kind == "EXTRACT":
        lines += [
            "",
            "  Target Extract Trails:",
            "",
            f"  {'Trail Name':<40}{'Seqno':>10}{'RBA':>12}{'Max MB':>8} Trail Type",
            "",
        ]
        writes = cps.writes if cps else ()
        for w in sorted(writes, key=lambda w: w.trail):
            lines.append(
                f"  {w.trail:<40}{w.position.seqno:>10}{w.position.rba:>12}"
                f"{w.megabytes:>8} {w.kind}"
            )
        if not writes:
            lines.append("  (none; ADD EXTTRAIL or ADD RMTTRAIL binds one)")
    begin = g.begin or "Not Available"
    lines += [
        "",
        f"  {'Extract Source':<40}{'Begin':<18}End",
        "",
        f"  {g.source_path or 'Not Available':<40}{'* Initialized *':<18}{begin[:16]}",
    ]
    suffix = {"EXTRACT": ("cpe", "pce"), "REPLICAT": ("cpr", "pcr")}[g.kind.value]
    params = g.params or f"{root}/dirprm/{g.name.lower()}.prm"
    report = g.report or f"{root}/dirrpt/{g.name}.rpt"
    lines += [
        "",
        f"{'Current directory':<{LABEL}}{root}",
        "",
        f"{'Report file':<{LABEL}}{report}",
        f"{'Parameter file':<{LABEL}}{params}",
        f"{'Checkpoint file':<{LABEL}}{root}/dirchk/{g.name}.{suffix[0]}",
        f"{'Process file':<{LABEL}}{root}/dirpcs/{g.name}.{suffix[1]}",
        f"{'Stdout file':<{LABEL}}{root}/dirout/{g.name}.out",
        f"{'Error log':<{LABEL}}{root}/ggserr.log",
    ]
    if g.kind == "REPLICAT":
        table = g.checkpoint_table or "(none: checkpoints in the checkpoint file only)"
        lines.insert(0, f"{'Checkpoint table':<{LABEL}}{table}")
    return lines


def _pos_block(title: str, pos: Position, redo: bool) -> list[str]:
    lines = [f"  {title}:"]
    if redo:
        lines.append(f"    Thread #: {pos.thread}")
    lines += [
        f"    Sequence #: {pos.seqno}",
        f"    RBA: {pos.rba}",
        f"    Timestamp: {pos.timestamp or 'Not Available'}",
    ]
    if redo:
        lines.append(f"    SCN: {scn_text(pos.scn)}")
        if pos.redo_file:
            lines.append(f"    Redo File: {pos.redo_file}")
    return [*lines, ""]


def showch(view: GroupView, now: datetime, history: int = 0) -> list[str]:
    """The SHOWCH blocks: read checkpoints (startup/recovery/current), write, header, status;
    then the ``history`` previous checkpoints (``SHOWCH n``), newest first."""
    g, cps, pf = view.group, view.checkpoints, view.process
    lines = ["", "Current Checkpoint Detail:", ""]
    if cps is None:
        return [*lines, "  No checkpoints (this group is a task)."]
    lines += _checkpoint_blocks(cps)
    lines += _csn_block(cps.csn)
    source = 3 if any(r.source == "TRANLOG" for r in cps.reads) else 0
    stop = {State.RUNNING: "A", State.STARTING: "A", State.STOPPED: "G", State.ABENDED: "X"}
    lines += [
        "Header:",
        "  Version = 2",
        "  Record Source = A",
        f"  Type = {10 if g.kind == 'EXTRACT' else 4}",
        f"  # Input Checkpoints = {len(cps.reads)}",
        f"  # Output Checkpoints = {len(cps.writes)}",
        "",
        "Configuration:",
        f"  Data Source = {source}",
        "  Transaction Integrity = 1",
        "  Task Type = 0",
        "",
        "Status:",
        f"  Start Time = {pf.started if pf else 'Not Available'}",
        f"  Last Update Time = {cps.updated or 'Not Available'}",
        f"  Stop Status = {stop[view.state]}",
        f"  Batch ID = {cps.batch_id}",
    ]
    for i, old in enumerate(cps.history[:history], 1):
        lines += [
            "",
            f"Checkpoint History #{i} (Last Update Time = {old.updated or 'Not Available'}"
            f", Batch ID = {old.batch_id}):",
            "",
        ]
        lines += _checkpoint_blocks(old)
    if history > len(cps.history):
        lines += ["", f"({len(cps.history)} earlier checkpoint(s) kept.)"]
    return lines


def _csn_block(csn: CsnState | None) -> list[str]:
    """An Extract's "CSN state information" (GG_REFERENCE), with its restart position
    (LOGBSN: where the recovery checkpoint is, the value heartbeat records carry)."""
    if csn is None:
        return []
    na = "Not Available"
    latest = na if csn.latest_csn is None else str(csn.latest_csn)
    return [
        "CSN state information:",
        f"  CRC: {csn.crc()}",
        f"  Latest CSN: {latest}",
        f"  Latest TXN: {csn.latest_txn or na}",
        f"  Latest CSN of finished TXNs: {latest}",
        f"  Completed TXNs: {csn.latest_txn or na}",
        f"  LOGBSN (restart CSN): {na if csn.logbsn is None else scn_text(csn.logbsn)}",
        f"  LOGBSN Timestamp: {csn.logbsn_time or na}",
        "",
    ]


def _checkpoint_blocks(cps: Checkpoints) -> list[str]:
    lines: list[str] = []
    for i, rc in enumerate(cps.reads, 1):
        redo = rc.source == "TRANLOG"
        lines += [
            f"Read Checkpoint #{i}",
            "",
            "  Oracle Redo Log" if redo else "  GGS Log Trail",
            "",
        ]
        lines += _pos_block(
            "Startup Checkpoint (starting position in the data source)", rc.startup, redo
        )
        lines += _pos_block(
            "Recovery Checkpoint (position of oldest unprocessed transaction in the data source)",
            rc.recovery,
            redo,
        )
        lines += _pos_block(
            "Current Checkpoint (position of last record read in the data source)", rc.current, redo
        )
        br = cps.extra.get("br", {}).get(str(rc.current.thread)) if redo else None
        if isinstance(br, dict):
            lines += _pos_block(
                "BR Begin Recovery Checkpoint", Position.from_json(br["begin"]), redo
            )
            lines += _pos_block("BR End Recovery Checkpoint", Position.from_json(br["end"]), redo)
        if not redo:
            lines.insert(len(lines) - 1, f"    Extract Trail: {rc.source}")
    for i, w in enumerate(sorted(cps.writes, key=lambda w: w.trail), 1):
        lines += [
            f"Write Checkpoint #{i}",
            "",
            "  GGS Log Trail",
            "",
            "  Current Checkpoint (current write position):",
            f"    Sequence #: {w.position.seqno}",
            f"    RBA: {w.position.rba}",
            f"    Timestamp: {w.position.timestamp or 'Not Available'}",
            f"    Extract Trail: {w.trail}",
            f"    Trail Type: {w.kind}",
            "",
        ]
    return lines


def info_trail(
    path: str, kind: str, extract: str, seqno: int, rba: int, megabytes: int
) -> list[str]:
    return [
        "",
        f"{'Extract Trail':>20}: {path}",
        f"{'Trail Type':>20}: {kind}",
        f"{'Seqno Length':>20}: {SEQ_DIGITS}",
        f"{'Extract':>20}: {extract}",
        f"{'Seqno':>20}: {seqno}",
        f"{'RBA':>20}: {rba}",
        f"{'File Size':>20}: {megabytes}M",
    ]
