"""Typed, frozen models of a parameter file: what the engine reads, after validation.

Built once by :mod:`params.build` from parsed statements; the engine never sees parser
output. Durations are seconds, sizes bytes. Every model of a statement keeps the
``line`` it came from (in the top-level file or the OBEY file that held it) for reports.
"""

from __future__ import annotations

import enum
import fnmatch
import re
from dataclasses import dataclass, field

from params.access import AccessRule
from params.expr import Assignment, Expr, Filter


class FileKind(enum.StrEnum):
    EXTRACT = "extract"
    REPLICAT = "replicat"
    MANAGER = "manager"
    GLOBALS = "globals"
    OTHER = "other"


@dataclass(frozen=True)
class ExpectedGroup:
    """The group a parameter file is read for: ``kind`` EXTRACT or REPLICAT, ``name`` the
    group (upper case), or None when any name will do (``ggsci extract paramfile FILE``)."""

    kind: str
    name: str | None = None

    @property
    def file_kind(self) -> FileKind:
        return FileKind.EXTRACT if self.kind == "EXTRACT" else FileKind.REPLICAT

    @property
    def first(self) -> str:
        return f"{self.kind} {self.name or 'group'}"

    def mismatch(self, found: str | None = None) -> str:
        """Why the file's first parameter (``found``: e.g. ``REPLICAT rep1``; None: missing)
        does not fit: the expected group's kind and name, never the other kind's."""
        if self.name is not None:
            whose = f"{self.kind} {self.name}"
            return f"this is the parameter file of {whose}; its first parameter must be {whose}"
        article = "an" if self.kind == "EXTRACT" else "a"
        text = f"{article} {self.kind.title()}'s parameter file must begin with {self.first}"
        if found is not None and not found.upper().startswith(self.kind):
            kind, _, name = found.partition(" ")
            other = "an Extract" if kind.upper() == "EXTRACT" else "a Replicat"
            text += f" (START {kind.upper()} {name} runs {other})"
        return text


@dataclass(frozen=True)
class ObjectName:
    """``[catalog.]owner.name``; parts keep their quotes' case rule.

    Unquoted parts are case-insensitive (stored upper case, as Oracle does); quoted parts
    are exact. ``*`` matches any run of characters and ``?`` exactly one (source side).
    """

    owner: str
    name: str
    catalog: str | None = None
    text: str = ""

    def matches(self, owner: str, name: str, catalog: str | None = None) -> bool:
        if self.catalog is not None and catalog is not None and not _match(self.catalog, catalog):
            return False
        return _match(self.owner, owner) and _match(self.name, name)

    @property
    def has_wildcard(self) -> bool:
        return any(_has_wild(p) for p in (self.owner, self.name, self.catalog or ""))

    def __str__(self) -> str:
        return self.text or ".".join(p for p in (self.catalog, self.owner, self.name) if p)


def _has_wild(part: str) -> bool:
    return bool(re.search(r"(?<!\\)[*?]", part))


def _match(pattern: str, value: str) -> bool:
    if pattern.startswith('"') and pattern.endswith('"'):
        pat, val = pattern[1:-1], value
    else:
        pat, val = pattern.upper(), value.upper()
    if not _has_wild(pat):
        return pat.replace("\\*", "*").replace("\\?", "?") == val
    regex = ""
    i = 0
    while i < len(pat):
        ch = pat[i]
        if ch == "\\" and i + 1 < len(pat):
            regex += re.escape(pat[i + 1])
            i += 2
            continue
        regex += ".*" if ch == "*" else "." if ch == "?" else re.escape(ch)
        i += 1
    return re.fullmatch(regex, val, flags=re.DOTALL) is not None


@dataclass(frozen=True)
class TableOption:
    """An option of a TABLE/MAP statement, its argument kept as text (``COLMAP (...)``)."""

    name: str
    value: str | None = None


@dataclass(frozen=True)
class TableSpec:
    """One TABLE / TABLEEXCLUDE / MAP / MAPEXCLUDE / SEQUENCE statement, resolved."""

    statement: str  # TABLE, TABLEEXCLUDE, MAP, MAPEXCLUDE, SEQUENCE, SEQUENCEEXCLUDE
    source: ObjectName
    target: ObjectName | None = None
    options: tuple[TableOption, ...] = ()
    get_truncates: bool = False
    get_update_befores: bool = False
    trail: str | None = None
    line: int = 0
    full_deletes: bool = False
    """NOCOMPRESSDELETES in force at this TABLE: its deletes carry every column (seed 003)."""
    # Replicat MAP behaviour, resolved where the MAP stands (the toggles before it, then
    # its own options): operations it skips (IGNOREINSERTS/UPDATES/DELETES), every
    # operation as an insert (INSERTALLRECORDS), HANDLECOLLISIONS, and the REPERROR rules
    # in force for it (its own first, then those of the file before it).
    ignore_ops: tuple[str, ...] = ()  # INSERT, UPDATE, DELETE (sorted)
    insert_all_records: bool = False
    handle_collisions: bool = False
    reperrors: tuple[RepError, ...] = ()
    # WHERE, FILTER and TOKENS parsed (params.expr; params.handlers_table.row_options);
    # every FILTER clause in order (a record must pass each, as GoldenGate ANDs them)
    where: Expr | None = None
    filters: tuple[Filter, ...] = ()
    tokens: tuple[Assignment, ...] = ()

    @property
    def filter(self) -> Filter | None:
        """The first FILTER clause (None: none)."""
        return self.filters[0] if self.filters else None

    @property
    def exclude(self) -> bool:
        return self.statement.endswith("EXCLUDE")

    def option(self, name: str) -> TableOption | None:
        return next((o for o in self.options if o.name == name), None)

    @property
    def cols(self) -> tuple[str, ...] | None:
        o = self.option("COLS")
        return _paren_list(o.value) if o and o.value else None

    @property
    def cols_except(self) -> tuple[str, ...] | None:
        o = self.option("COLSEXCEPT")
        return _paren_list(o.value) if o and o.value else None

    @property
    def keycols(self) -> tuple[str, ...] | None:
        o = self.option("KEYCOLS")
        return _paren_list(o.value) if o and o.value else None


def _paren_list(text: str) -> tuple[str, ...]:
    inner = text.strip()[1:-1]
    return tuple(p.strip() for p in inner.split(",") if p.strip())


@dataclass(frozen=True)
class Login:
    """How a process logs into its database."""

    userid: str | None = None
    password_given: bool = False
    alias: str | None = None
    domain: str = "OracleGoldenGate"
    sourcedb: str | None = None
    sysdba: bool = False

    def __repr__(self) -> str:  # never show a password
        return (
            f"Login(userid={self.userid!r}, alias={self.alias!r}, domain={self.domain!r}, "
            f"sourcedb={self.sourcedb!r})"
        )


@dataclass(frozen=True)
class Trail:
    path: str
    remote: bool = False
    format_release: str | None = None
    megabytes: int | None = None
    line: int = 0
    checksum: bool = True  # CHECKSUM (default) | NOCHECKSUM: a CRC-32 in each record
    objectdefs: bool = True  # OBJECTDEFS (default) | NO_OBJECTDEFS: DDR/TDR records (12.2+)


@dataclass(frozen=True)
class ExtFile:
    path: str
    remote: bool = False
    megabytes: int | None = None
    max_files: int | None = None
    purge: bool = False
    append: bool = False


@dataclass(frozen=True)
class RmtHost:
    """RMTHOST: where the pump's Collector is (the target's Manager at MGRPORT, or a static
    Collector at PORT) and how the link runs (engine/pump/remote.py)."""

    host: str
    mgrport: int | None = None
    port: int | None = None
    timeout: int | None = None
    encrypt: str | None = None
    compress: bool = False
    keyname: str | None = None
    compress_threshold: int | None = None
    tcp_buf_size: int | None = None
    tcp_flush_bytes: int | None = None
    streaming: bool = True
    ip_version: int | None = None  # IPV4 / IPV6: the address family to reach the host by


@dataclass(frozen=True)
class BoundedRecovery:
    """The BR parameter. ``interval`` is as written; ``effective_interval`` is rounded up
    to a whole multiple of CHECKPOINTSECS, as Extract runs it."""

    brdir: str = "BR"
    interval: int = 4 * 3600
    effective_interval: int = 4 * 3600
    keep_stale_files: bool = False
    off: bool = False
    off_on_failure: bool = False
    fs_option: str = "MS_SYNC"
    explicit: bool = False
    reset: bool = False  # BR BRRESET: normal recovery for this start (seed 000)

    @property
    def rounded(self) -> bool:
        return self.interval != self.effective_interval


@dataclass(frozen=True)
class WarnLongTrans:
    threshold: int = 3600
    check_interval: int = 300
    use_threads: bool = True
    use_last_read_time: bool = False
    skip_empty_trans: bool = False
    explicit: bool = False


@dataclass(frozen=True)
class TranlogOptions:
    """The TRANLOGOPTIONS the engine acts on; the others are kept in ``other``."""

    purge_orphaned: bool = False
    trans_cleanup_frequency: int = 10  # minutes
    exclude_users: tuple[str, ...] = ()
    exclude_user_ids: tuple[int, ...] = ()
    exclude_trans: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()
    include_tags: tuple[str, ...] = ()
    archived_log_only: bool = False
    alt_archive_log_dests: tuple[str, ...] = ()
    alt_archived_log_format: str | None = None  # ALTARCHIVEDLOGFORMAT (any archived-log source)
    path_map: tuple[tuple[str, str], ...] = ()  # PATHMAP: (driver prefix, Spark task prefix)
    bufsize: int = 1_024_000
    # FILTERTABLE: a transaction that changes one of these is a Replicat's (loop detection;
    # acted on by a PostgreSQL Extract, params/postgres_rules.py)
    filter_tables: tuple[str, ...] = ()
    other: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CacheMgr:
    cache_size: int | None = None  # bytes; None = engine default
    cache_directories: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReportCount:
    every: int
    unit: str  # RECORDS, SECONDS, MINUTES, HOURS
    rate: bool = False


@dataclass(frozen=True)
class Discard:
    path: str
    append: bool = False
    purge: bool = False
    megabytes: int | None = None
    max_bytes: int | None = None


@dataclass(frozen=True)
class RepError:
    error: str  # a number, DEFAULT or DEFAULT2
    response: str  # ABEND, DISCARD, EXCEPTION, IGNORE, RETRYOP, TRANSABORT, ...
    text: str = ""
    max_retries: int | None = None  # RETRYOP / TRANSABORT MAXRETRIES
    delay_secs: float = 0.0  # DELAYSECS / DELAYCSECS


@dataclass(frozen=True)
class DdlClause:
    action: str  # INCLUDE or EXCLUDE
    items: tuple[tuple[str, str], ...] = ()  # (keyword, value) e.g. ("OBJNAME", "hr.*")


@dataclass(frozen=True)
class Ddl:
    clauses: tuple[DdlClause, ...]
    text: str


@dataclass(frozen=True)
class AutoStart:
    process_type: str  # ER, EXTRACT, REPLICAT
    group: str  # may be a wildcard


@dataclass(frozen=True)
class AutoRestart:
    process_type: str
    group: str
    retries: int = 2
    wait_minutes: int = 2
    reset_minutes: int = 20


@dataclass(frozen=True)
class PurgeOldExtracts:
    trail: str
    use_checkpoints: bool = True
    min_keep_hours: int | None = None
    min_keep_days: int | None = None
    min_keep_files: int | None = None
    frequency_minutes: int = 60


@dataclass(frozen=True)
class Manager:
    port: int | None = None
    dynamic_ports: tuple[int, ...] = ()
    autostart: tuple[AutoStart, ...] = ()
    autorestart: tuple[AutoRestart, ...] = ()
    purge_old_extracts: tuple[PurgeOldExtracts, ...] = ()
    lag_report_minutes: int | None = None
    lag_info_seconds: int | None = None
    lag_critical_seconds: int | None = None
    access_rules: tuple[AccessRule, ...] = ()
    check_minutes: int | None = None
    startup_validation_seconds: int | None = None
    down_report_minutes: int | None = None
    down_critical: bool = False


@dataclass(frozen=True)
class SparkParams:
    """SPARKMASTER, SPARKCONF and SPARKPROPERTIES (params/handlers_spark.py)."""

    master: str | None = None
    conf: tuple[tuple[str, str], ...] = ()  # in file order, one per key (the last wins)
    properties: str | None = None


@dataclass(frozen=True)
class Unused:
    """A real GoldenGate parameter this engine accepts but does not act on."""

    name: str
    text: str
    line: int


@dataclass(frozen=True)
class FetchOptions:
    """FETCHOPTIONS (Extract), in force for the TABLE statements after it: how the key of an
    update the redo does not carry is fetched from the source by ROWID. MISSINGROW: ALLOW,
    IGNORE (the default), REPORT, DISCARD or ABEND; NOFETCH / NOUSEROWID: no fetch (the row
    counts as missing)."""

    missing_row: str = "IGNORE"
    nofetch: bool = False
    use_rowid: bool = True


@dataclass(frozen=True)
class HandlerPropsFile:
    """TARGETDB LIBFILE ... SET property=PATH: the handler's properties file, as written
    (relative to the home), and where PATH begins in the parameter file."""

    path: str
    line: int
    col: int
    source: str


@dataclass(frozen=True)
class ParamFile:
    """The effective content of one parameter file (after OBEY, macros and substitution)."""

    path: str
    kind: FileKind
    group: str | None = None
    login: Login = field(default_factory=Login)
    source_catalog: str | None = None
    trails: tuple[Trail, ...] = ()
    ext_files: tuple[ExtFile, ...] = ()
    rmthost: RmtHost | None = None
    tables: tuple[TableSpec, ...] = ()
    checkpoint_secs: int = 10
    cachemgr: CacheMgr = field(default_factory=CacheMgr)
    br: BoundedRecovery = field(default_factory=BoundedRecovery)
    warn_long_trans: WarnLongTrans = field(default_factory=WarnLongTrans)
    tranlog: TranlogOptions = field(default_factory=TranlogOptions)
    report_count: ReportCount | None = None
    report_schedule: tuple[str, ...] = ()
    report_rollover: tuple[str, ...] = ()  # REPORTROLLOVER AT/ON: a new report file then
    discard: Discard | None = None
    log_all_sup_cols: bool = False
    update_record_format: str | None = None
    recovery_options: str = "APPENDMODE"  # RECOVERYOPTIONS: APPENDMODE | OVERWRITEMODE
    ddl: Ddl | None = None
    assume_target_defs: bool = False
    handle_collisions: bool = False
    passthru: bool = False
    reperrors: tuple[RepError, ...] = ()
    group_trans_ops: int = 1000
    max_trans_ops: int | None = None
    target_db: str | None = None
    handler_props: HandlerPropsFile | None = None  # TARGETDB LIBFILE ... SET property=
    manager: Manager = field(default_factory=Manager)
    spark: SparkParams = field(default_factory=SparkParams)
    unused: tuple[Unused, ...] = ()
    # FETCHOPTIONS statements: (how many TABLE/MAP statements precede it, its options)
    fetch_options: tuple[tuple[int, FetchOptions], ...] = ()
    # GETREPLICATES / IGNOREREPLICATES (a PostgreSQL Extract's TRANLOGOPTIONS FILTERTABLE)
    get_replicates: bool = False
    # GLOBALS ALLOWOUTPUTDIR: where a Collector may write remote trails (engine/manager/outputdirs)
    allow_output_dirs: tuple[str, ...] = ()

    def captured(self, owner: str, name: str, catalog: str | None = None) -> TableSpec | None:
        """The TABLE/MAP statement that selects ``owner.name``, TABLEEXCLUDE applied first."""
        for t in self.tables:
            if t.exclude and t.source.matches(owner, name, catalog):
                return None
        for t in self.tables:
            if (
                not t.exclude
                and t.statement != "SEQUENCE"
                and t.source.matches(owner, name, catalog)
            ):
                return t
        return None


def fnmatch_group(pattern: str, group: str) -> bool:
    """Group-name wildcard match (case-insensitive), as GGSCI and AUTOSTART use it."""
    return fnmatch.fnmatchcase(group.upper(), pattern.upper())
