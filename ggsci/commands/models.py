"""Typed GGSCI commands: what the grammar produces and the handlers consume.

Each command is a frozen dataclass; parse results never leave :mod:`ggsci.commands.grammar`.
``kind`` on group commands is ``"EXTRACT"``, ``"REPLICAT"`` or ``None`` (``ER`` or a bare group
name: the group resolves to whichever kind it is). Group names may hold ``*`` wildcards.

Errors: :class:`CommandError` (a ``ValueError``) carries the 0-based column of the fault; the
grammar raises it for a well-formed but invalid option list (twice given, not valid here).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


class CommandError(ValueError):
    """A command that cannot be parsed or is invalid; ``column`` is 0-based."""

    def __init__(self, message: str, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


@dataclass(frozen=True)
class Option:
    """One option as written (name canonical, value converted), with its column."""

    name: str
    value: Any
    column: int


class Command:
    """Base of every command."""


@dataclass(frozen=True)
class GroupOptions:
    """The options of ADD/ALTER EXTRACT/REPLICAT, validated for the command they follow."""

    source: str | None = None
    source_path: str | None = None
    integrated: bool = False
    coordinated: bool = False
    maxthreads: int | None = None
    parallel: bool = False
    begin: str | None = None
    extseqno: int | None = None
    extrba: int | None = None
    scn: int | None = None
    lsn: str | None = None  # a PostgreSQL source's start: X/Y (kept as the SCN, 64-bit)
    threads: int | None = None
    thread: int | None = None
    etrollover: bool = False
    ioextseqno: int | None = None
    ioextrba: int | None = None
    upgrade: bool = False
    downgrade: bool = False
    checkpointtable: str | None = None
    nodbcheckpoint: bool = False
    params: str | None = None
    report: str | None = None
    desc: str | None = None

    @classmethod
    def build(cls, options: list[Option], allowed: tuple[str, ...], what: str) -> GroupOptions:
        values: dict[str, Any] = {}
        seen: set[str] = set()
        sources = {
            "TRANLOG",
            "SOURCEISTABLE",
            "EXTTRAILSOURCE",
            "EXTFILESOURCE",
            "EXTTRAIL",
            "SPECIALRUN",
        }
        names = {f.name for f in fields(cls)}
        for opt in options:
            if opt.name not in allowed:
                raise CommandError(f"{opt.name} is not an option of {what}.", opt.column)
            if opt.name in seen:
                raise CommandError(f"{opt.name} is given twice.", opt.column)
            seen.add(opt.name)
            if opt.name in sources:
                if values.get("source"):
                    raise CommandError(
                        f"{opt.name} conflicts with {values['source']}: one data source only.",
                        opt.column,
                    )
                values["source"] = opt.name
                if opt.value is not None:
                    values["source_path"] = opt.value
                continue
            key = opt.name.lower()
            if key in names:
                values[key] = True if opt.value is None else opt.value
        if "extrba" in values and "extseqno" not in values:
            column = next(o.column for o in options if o.name == "EXTRBA")
            raise CommandError("EXTRBA needs EXTSEQNO.", column)
        return cls(**values)


@dataclass(frozen=True)
class CreateSubdirs(Command):
    pass


@dataclass(frozen=True)
class InfoAll(Command):
    scope: str | None = None


@dataclass(frozen=True)
class Help(Command):
    topic: tuple[str, ...] = ()


@dataclass(frozen=True)
class Shell(Command):
    command: str


@dataclass(frozen=True)
class History(Command):
    count: int | None = None


@dataclass(frozen=True)
class Recall(Command):
    """``!`` (run again) or ``FC`` (edit, then run): ``ref`` is '', 'n', '-n' or a prefix."""

    ref: str
    edit: bool


@dataclass(frozen=True)
class Obey(Command):
    path: str


@dataclass(frozen=True)
class AllowNested(Command):
    allow: bool


@dataclass(frozen=True)
class Exit(Command):
    pass


@dataclass(frozen=True)
class AddCredentialStore(Command):
    pass


@dataclass(frozen=True)
class DeleteCredentialStore(Command):
    pass


@dataclass(frozen=True)
class AlterCredentialStore(Command):
    action: str
    user: str
    password: str | None = None
    alias: str | None = None
    domain: str | None = None


@dataclass(frozen=True)
class InfoCredentialStore(Command):
    domain: str | None = None


@dataclass(frozen=True)
class DbLogin(Command):
    userid: str | None = None
    password: str | None = None
    alias: str | None = None
    domain: str | None = None
    sourcedb: str | None = None
    encryptkey: str | None = None
    """PASSWORD is the output of ENCRYPT PASSWORD made with this key (DEFAULT or ENCKEYS)."""


@dataclass(frozen=True)
class ManagerCommand(Command):
    """START / STOP / INFO / STATUS MANAGER; ``force`` is the ``!`` of STOP MANAGER."""

    action: str
    force: bool = False


@dataclass(frozen=True)
class SendManager(Command):
    request: str


@dataclass(frozen=True)
class AddGroup(Command):
    kind: str
    name: str
    options: GroupOptions


@dataclass(frozen=True)
class AlterGroup(Command):
    kind: str | None
    name: str
    options: GroupOptions


@dataclass(frozen=True)
class DeleteGroup(Command):
    kind: str | None
    pattern: str
    force: bool = False


@dataclass(frozen=True)
class InfoGroup(Command):
    kind: str | None
    pattern: str
    detail: bool = False
    showch: int | None = None
    tasks: bool = False


@dataclass(frozen=True)
class StatusGroup(Command):
    kind: str | None
    pattern: str


@dataclass(frozen=True)
class StartGroup(Command):
    kind: str | None
    pattern: str
    atcsn: int | None = None
    aftercsn: int | None = None


@dataclass(frozen=True)
class StopGroup(Command):
    kind: str | None
    pattern: str
    force: bool = False


@dataclass(frozen=True)
class KillGroup(Command):
    kind: str | None
    pattern: str


@dataclass(frozen=True)
class LagGroup(Command):
    """LAG; ``global_``: from the heartbeat tables (GG_LAG), ``history``: per-day lag history
    and charts from GG_LAG_HISTORY (implies GLOBAL); ``file``: the charts as SVG too."""

    kind: str | None
    pattern: str
    global_: bool = False
    history: bool = False
    file: str | None = None


@dataclass(frozen=True)
class SendGroup(Command):
    """SEND EXTRACT/REPLICAT: ``request`` is the text after the group, as typed."""

    kind: str | None
    pattern: str
    request: str


@dataclass(frozen=True)
class AddTrail(Command):
    kind: str
    path: str
    extract: str
    megabytes: int | None = None
    seqno: int | None = None
    format_release: str | None = None


@dataclass(frozen=True)
class AlterTrail(Command):
    kind: str
    path: str
    extract: str | None = None
    megabytes: int | None = None


@dataclass(frozen=True)
class DeleteTrail(Command):
    kind: str
    path: str
    extract: str | None = None


@dataclass(frozen=True)
class InfoTrail(Command):
    kind: str
    path: str | None = None


@dataclass(frozen=True)
class CheckpointTableCommand(Command):
    """ADD / DELETE / INFO CHECKPOINTTABLE [owner.table]."""

    action: str
    table: str | None = None
    force: bool = False


@dataclass(frozen=True)
class HeartbeatOptions:
    """Options of ADD / ALTER HEARTBEATTABLE; None = not given. ``target_only`` is True for
    TARGETONLY and False for NOTARGETONLY."""

    frequency: int | None = None
    retention_time: int | None = None
    purge_frequency: int | None = None
    partitioned: bool = False
    noaddtrandata: bool = False
    target_only: bool | None = None


@dataclass(frozen=True)
class HeartbeatTableCommand(Command):
    """ADD / ALTER / INFO / DELETE HEARTBEATTABLE (in the DBLOGIN database)."""

    action: str
    options: HeartbeatOptions = HeartbeatOptions()
    force: bool = False


@dataclass(frozen=True)
class DeleteHeartbeatEntry(Command):
    """DELETE HEARTBEATENTRY group [!]: GG_HEARTBEAT rows whose paths name the group."""

    pattern: str
    force: bool = False


@dataclass(frozen=True)
class ViewParams(Command):
    target: str


@dataclass(frozen=True)
class EditParams(Command):
    target: str


@dataclass(frozen=True)
class ViewReport(Command):
    target: str


@dataclass(frozen=True)
class ViewGgsevt(Command):
    pass


@dataclass(frozen=True)
class NotOffered(Command):
    """A command for an Oracle-only feature: answered with one line, never executed.

    ``failure`` says whether a script should count it as a failed command (it does when the
    script cannot work as intended without it, e.g. integrated capture registration).
    """

    command: str
    reason: str
    failure: bool = False
    rest: str = ""  # what followed: a PostgreSQL login acts on REGISTER / TRANDATA


@dataclass(frozen=True)
class StatsGroup(Command):
    """STATS EXTRACT | REPLICAT | ER group, with its statistics and options."""

    kind: str | None
    pattern: str
    windows: tuple[str, ...] = ()
    reset: bool = False
    table: str | None = None
    totals_only: str | None = None
    rate: str | None = None
    fetch: bool = False
    detail: bool = True


@dataclass(frozen=True)
class EncryptPassword(Command):
    """ENCRYPT PASSWORD p [, AES128 | AES192 | AES256] [, ENCRYPTKEY {DEFAULT | name}]."""

    password: str
    algorithm: str | None = None
    key: str = "DEFAULT"


@dataclass(frozen=True)
class SetEditor(Command):
    editor: str


@dataclass(frozen=True)
class Versions(Command):
    pass


@dataclass(frozen=True)
class Show(Command):
    pass


@dataclass(frozen=True)
class Cleanup(Command):
    """CLEANUP EXTRACT | REPLICAT | ER group [, SAVE n]: drop run history from checkpoints."""

    kind: str | None
    pattern: str
    save: int = 0


@dataclass(frozen=True)
class ParamInfo(Command):
    """INFO PARAM name / GETPARAMINFO [name] [FILE f]: what ggsci knows of parameters."""

    name: str | None = None
    file: str | None = None
