"""The keyword tables of the GGSCI command language, shared by the grammar and the completer.

Everything the parser accepts as a word and everything the shell suggests comes from here, so
the two cannot drift apart. Each keyword lists its canonical spelling first, then the
abbreviations GGSCI accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Arg(StrEnum):
    """What follows an option keyword (drives both the grammar and completion)."""

    NONE = "none"
    INT = "int"
    PATH = "path"
    GROUP = "group"
    TEXT = "text"
    WORD = "word"
    BEGIN = "begin"
    TRAIL = "trail"


@dataclass(frozen=True)
class OptionSpec:
    name: str
    arg: Arg
    aliases: tuple[str, ...] = ()


ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "EXTRACT": ("EXT",),
    "REPLICAT": ("REP",),
    "MANAGER": ("MGR",),
    "PARAMS": ("PARAM", "PARAMETERS"),
    "CREDENTIALSTORE": (),
    "CHECKPOINTTABLE": (),
    "HEARTBEATTABLE": (),
    "HEARTBEATENTRY": (),
    "EXTTRAIL": (),
    "RMTTRAIL": (),
    "HISTORY": ("HIST",),
    "ALLPROCESSES": (),
    "MARKER": ("MARKERS",),
    "VERSIONS": ("VERSION",),
}

GROUP_OBJECTS = ("EXTRACT", "REPLICAT", "ER")

# verb -> the objects that may follow it (completion order = display order)
VERB_OBJECTS: dict[str, tuple[str, ...]] = {
    "ADD": (
        "EXTRACT",
        "REPLICAT",
        "EXTTRAIL",
        "RMTTRAIL",
        "CHECKPOINTTABLE",
        "HEARTBEATTABLE",
        "CREDENTIALSTORE",
        "TRANDATA",
        "SCHEMATRANDATA",
        "MASTERKEY",
        "TRACETABLE",
    ),
    "ALTER": ("EXTRACT", "REPLICAT", "EXTTRAIL", "RMTTRAIL", "HEARTBEATTABLE", "CREDENTIALSTORE"),
    "DELETE": (
        "EXTRACT",
        "REPLICAT",
        "ER",
        "EXTTRAIL",
        "RMTTRAIL",
        "CHECKPOINTTABLE",
        "HEARTBEATTABLE",
        "HEARTBEATENTRY",
        "CREDENTIALSTORE",
        "TRANDATA",
        "SCHEMATRANDATA",
        "MASTERKEY",
        "TRACETABLE",
    ),
    "INFO": (
        "ALL",
        "EXTRACT",
        "REPLICAT",
        "ER",
        "EXTTRAIL",
        "RMTTRAIL",
        "CHECKPOINTTABLE",
        "HEARTBEATTABLE",
        "CREDENTIALSTORE",
        "MANAGER",
        "TRANDATA",
        "SCHEMATRANDATA",
        "MASTERKEY",
        "TRACETABLE",
        "PARAM",
        "MARKER",
    ),
    "STATUS": ("EXTRACT", "REPLICAT", "ER", "MANAGER"),
    "START": ("EXTRACT", "REPLICAT", "ER", "MANAGER"),
    "STOP": ("EXTRACT", "REPLICAT", "ER", "MANAGER"),
    "KILL": ("EXTRACT", "REPLICAT", "ER"),
    "LAG": ("EXTRACT", "REPLICAT", "ER"),
    "STATS": ("EXTRACT", "REPLICAT", "ER"),
    "SEND": ("EXTRACT", "REPLICAT", "ER", "MANAGER"),
    "VIEW": ("PARAMS", "REPORT", "GGSEVT"),
    "EDIT": ("PARAMS",),
    "CREATE": ("SUBDIRS", "WALLET"),
    "OPEN": ("WALLET",),
    "PURGE": ("WALLET",),
    "RENEW": ("MASTERKEY",),
    "REGISTER": ("EXTRACT", "REPLICAT"),
    "UNREGISTER": ("EXTRACT", "REPLICAT"),
    "DBLOGIN": (),
    "ENCRYPT": ("PASSWORD",),
    "SET": ("EDITOR",),
    "VERSIONS": (),
    "SHOW": (),
    "CLEANUP": ("EXTRACT", "REPLICAT", "ER"),
    "GETPARAMINFO": (),
    "CONNECT": (),
    "FLUSH": ("SEQUENCE",),
    "DUMPDDL": (),
    "MININGDBLOGIN": (),
    "OBEY": (),
    "SHELL": (),
    "HELP": (),
    "HISTORY": (),
    "FC": (),
    "!": (),
    "ALLOWNESTED": (),
    "NOALLOWNESTED": (),
    "EXIT": (),
    "QUIT": (),
}

VERBS: tuple[str, ...] = tuple(VERB_OBJECTS)

GROUP_OPTIONS: dict[str, OptionSpec] = {
    spec.name: spec
    for spec in (
        OptionSpec("TRANLOG", Arg.NONE),
        OptionSpec("INTEGRATED", Arg.NONE),
        OptionSpec("SOURCEISTABLE", Arg.NONE),
        OptionSpec("EXTTRAILSOURCE", Arg.TRAIL),
        OptionSpec("EXTFILESOURCE", Arg.PATH),
        OptionSpec("EXTTRAIL", Arg.TRAIL),
        OptionSpec("SPECIALRUN", Arg.NONE),
        OptionSpec("COORDINATED", Arg.NONE),
        OptionSpec("MAXTHREADS", Arg.INT),
        OptionSpec("PARALLEL", Arg.NONE),
        OptionSpec("BEGIN", Arg.BEGIN),
        OptionSpec("EXTSEQNO", Arg.INT),
        OptionSpec("EXTRBA", Arg.INT),
        OptionSpec("SCN", Arg.INT),
        OptionSpec("LSN", Arg.WORD),
        OptionSpec("THREADS", Arg.INT),
        OptionSpec("THREAD", Arg.INT),
        OptionSpec("ETROLLOVER", Arg.NONE),
        OptionSpec("IOEXTSEQNO", Arg.INT),
        OptionSpec("IOEXTRBA", Arg.INT),
        OptionSpec("UPGRADE", Arg.NONE),
        OptionSpec("DOWNGRADE", Arg.NONE),
        OptionSpec("CHECKPOINTTABLE", Arg.WORD),
        OptionSpec("NODBCHECKPOINT", Arg.NONE),
        OptionSpec("PARAMS", Arg.PATH),
        OptionSpec("REPORT", Arg.PATH),
        OptionSpec("DESC", Arg.TEXT),
    )
}

EXTRACT_ADD = (
    "TRANLOG",
    "INTEGRATED",
    "SOURCEISTABLE",
    "EXTTRAILSOURCE",
    "EXTFILESOURCE",
    "BEGIN",
    "EXTSEQNO",
    "EXTRBA",
    "SCN",
    "LSN",
    "THREADS",
    "PARAMS",
    "REPORT",
    "DESC",
)
EXTRACT_ALTER = (
    "TRANLOG",
    "INTEGRATED",
    "EXTTRAILSOURCE",
    "BEGIN",
    "EXTSEQNO",
    "EXTRBA",
    "SCN",
    "THREADS",
    "THREAD",
    "ETROLLOVER",
    "IOEXTSEQNO",
    "IOEXTRBA",
    "UPGRADE",
    "DOWNGRADE",
    "PARAMS",
    "REPORT",
    "DESC",
)
REPLICAT_ADD = (
    "EXTTRAIL",
    "SPECIALRUN",
    "INTEGRATED",
    "COORDINATED",
    "MAXTHREADS",
    "PARALLEL",
    "BEGIN",
    "EXTSEQNO",
    "EXTRBA",
    "CHECKPOINTTABLE",
    "NODBCHECKPOINT",
    "PARAMS",
    "REPORT",
    "DESC",
)
REPLICAT_ALTER = (
    "EXTTRAIL",
    "BEGIN",
    "EXTSEQNO",
    "EXTRBA",
    "CHECKPOINTTABLE",
    "NODBCHECKPOINT",
    "PARAMS",
    "REPORT",
    "DESC",
)

# (verb, object) -> the options valid after the group name; object None = bare group name
ALLOWED_GROUP_OPTIONS: dict[tuple[str, str | None], tuple[str, ...]] = {
    ("ADD", "EXTRACT"): EXTRACT_ADD,
    ("ADD", "REPLICAT"): REPLICAT_ADD,
    ("ALTER", "EXTRACT"): EXTRACT_ALTER,
    ("ALTER", "REPLICAT"): REPLICAT_ALTER,
    ("ALTER", None): tuple(dict.fromkeys(EXTRACT_ALTER + REPLICAT_ALTER)),
}

TRAIL_OPTIONS: dict[str, OptionSpec] = {
    spec.name: spec
    for spec in (
        OptionSpec("EXTRACT", Arg.GROUP, ("EXT",)),
        OptionSpec("MEGABYTES", Arg.INT, ("MEGS",)),
        OptionSpec("SEQNO", Arg.INT),
        OptionSpec("FORMAT", Arg.WORD),
    )
}

INFO_OPTIONS = ("SHOWCH", "DETAIL", "TASKS", "ALLPROCESSES", "UPGRADE", "DOWNGRADE")
STATUS_OPTIONS = ("TASKS", "ALLPROCESSES")
START_OPTIONS = ("ATCSN", "AFTERCSN")
LAG_OPTIONS = ("GLOBAL", "HISTORY", "FILE")
STATS_WINDOWS = ("TOTAL", "DAILY", "HOURLY", "LATEST")
STATS_FLAGS = ("RESET", "REPORTFETCH", "NOREPORTFETCH", "REPORTDETAIL", "NOREPORTDETAIL")
STATS_VALUED = ("TABLE", "TOTALSONLY", "REPORTRATE")
STATS_RATES = ("HR", "MIN", "SEC")
STATS_OPTIONS = (*STATS_WINDOWS, *STATS_VALUED, *STATS_FLAGS)
HEARTBEAT_LIMITS: dict[str, tuple[int, int, str]] = {
    "FREQUENCY": (0, 7999, "seconds"),
    "RETENTION_TIME": (1, 2147483646, "days"),
    "PURGE_FREQUENCY": (1, 199, "days"),
}
"""ADD / ALTER HEARTBEATTABLE numeric options: (lowest, highest, unit), GoldenGate's ranges."""
HEARTBEAT_ADD_OPTIONS = (
    "FREQUENCY",
    "RETENTION_TIME",
    "PURGE_FREQUENCY",
    "PARTITIONED",
    "NOADDTRANDATA",
    "TARGETONLY",
)
HEARTBEAT_ALTER_OPTIONS = (
    "FREQUENCY",
    "RETENTION_TIME",
    "PURGE_FREQUENCY",
    "TARGETONLY",
    "NOTARGETONLY",
)
INFO_ALL_OPTIONS = ("TASKS", "ALLPROCESSES")
ENCRYPT_ALGORITHMS = ("AES128", "AES192", "AES256", "BLOWFISH")
DBLOGIN_OPTIONS = (
    "USERIDALIAS",
    "USERID",
    "PASSWORD",
    "DOMAIN",
    "SOURCEDB",
    "SYSDBA",
    "SQLID",
    "SESSIONCHARSET",
    "ENCRYPTKEY",
)
CREDENTIAL_ACTIONS = ("ADD", "REPLACE", "DELETE")
CREDENTIAL_OPTIONS = ("USER", "PASSWORD", "ALIAS", "DOMAIN")

# The first word of SEND requests GGSCI documents (the handlers live in the group processes).
SEND_EXTRACT_REQUESTS = (
    "STATUS",
    "STOP",
    "FORCESTOP",
    "REPORT",
    "GETLAG",
    "ROLLOVER",
    "SHOWTRANS",
    "SKIPTRANS",
    "FORCETRANS",
    "BR",
    "LOGEND",
    "LOGSTATS",
    "CACHEMGR",
    "GETPARAMINFO",
    "TRANLOGOPTIONS",
    "RESUME",
)
SEND_MANAGER_REQUESTS = ("CHILDSTATUS", "GETPORTINFO", "GETPURGEOLDEXTRACTS")


def spellings(word: str) -> tuple[str, ...]:
    """The canonical spelling and every accepted abbreviation of ``word``."""
    return (word, *ABBREVIATIONS.get(word, ()))
