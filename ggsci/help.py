"""HELP: one summary line per command and the syntax of each, from one table."""

from __future__ import annotations

HELP: dict[tuple[str, ...], tuple[str, str]] = {
    ("ADD", "EXTRACT"): (
        "Add an Extract group (primary, or a pump with EXTTRAILSOURCE).",
        "ADD EXTRACT group {, TRANLOG | , SOURCEISTABLE | , EXTTRAILSOURCE trail}\n"
        "  [, BEGIN {NOW | yyyy-mm-dd[ hh:mi[:ss[.cccccc]]]}] [, EXTSEQNO n, EXTRBA n] [, SCN n]\n"
        "  [, THREADS n] [, PARAMS file] [, REPORT file] [, DESC 'text']",
    ),
    ("ADD", "REPLICAT"): (
        "Add a Replicat group reading a trail.",
        "ADD REPLICAT group, {EXTTRAIL trail | SPECIALRUN} [, BEGIN {NOW | ts}]\n"
        "  [, EXTSEQNO n, EXTRBA n] [, CHECKPOINTTABLE owner.table | , NODBCHECKPOINT]\n"
        "  [, PARAMS file] [, REPORT file] [, DESC 'text']",
    ),
    ("ADD", "EXTTRAIL"): (
        "Bind a local trail to an Extract.",
        "ADD EXTTRAIL path/xx, EXTRACT group [, MEGABYTES n] [, SEQNO n] [, FORMAT RELEASE m.n]",
    ),
    ("ADD", "RMTTRAIL"): (
        "Bind a remote trail to an Extract (a pump).",
        "ADD RMTTRAIL path/xx, EXTRACT group [, MEGABYTES n] [, SEQNO n] [, FORMAT RELEASE m.n]",
    ),
    ("ADD", "CREDENTIALSTORE"): ("Create the credential store (dircrd/).", "ADD CREDENTIALSTORE"),
    ("ADD", "HEARTBEATTABLE"): (
        "Create the heartbeat tables, lag views and jobs in the DBLOGIN database.",
        "ADD HEARTBEATTABLE [, FREQUENCY s (0-7999, 60)] [, RETENTION_TIME d (1-2147483646, 30)]\n"
        "  [, PURGE_FREQUENCY d (1-199, 1)] [, PARTITIONED] [, NOADDTRANDATA] [, TARGETONLY]",
    ),
    ("ALTER", "EXTRACT"): (
        "Reposition or change an Extract (it must be stopped).",
        "ALTER EXTRACT group [, BEGIN {NOW | ts}] [, EXTSEQNO n, EXTRBA n] [, SCN n] [, THREAD n]\n"
        "  [, ETROLLOVER] [, IOEXTSEQNO n, IOEXTRBA n] [, PARAMS f] [, REPORT f] [, DESC 'x']",
    ),
    ("ALTER", "REPLICAT"): (
        "Reposition or change a Replicat (it must be stopped).",
        "ALTER REPLICAT group [, EXTTRAIL trail] [, BEGIN ts] [, EXTSEQNO n, EXTRBA n] ...",
    ),
    ("ALTER", "EXTTRAIL"): (
        "Change a trail's size.",
        "ALTER EXTTRAIL path, EXTRACT g, MEGABYTES n",
    ),
    ("ALTER", "CREDENTIALSTORE"): (
        "Add, replace or delete a user in the credential store.",
        "ALTER CREDENTIALSTORE {ADD | REPLACE} USER u [PASSWORD p] [ALIAS a] [DOMAIN d]\n"
        "ALTER CREDENTIALSTORE DELETE USER u [ALIAS a] [DOMAIN d]",
    ),
    ("ALTER", "HEARTBEATTABLE"): (
        "Change the heartbeat jobs' settings in the DBLOGIN database.",
        "ALTER HEARTBEATTABLE [, FREQUENCY s] [, RETENTION_TIME d] [, PURGE_FREQUENCY d]\n"
        "  [, TARGETONLY | NOTARGETONLY]",
    ),
    ("DELETE", "EXTRACT"): ("Delete stopped groups.", "DELETE {EXTRACT | REPLICAT | ER} group [!]"),
    ("DELETE", "HEARTBEATTABLE"): (
        "Drop the heartbeat tables, views and jobs of the DBLOGIN database.",
        "DELETE HEARTBEATTABLE [!]",
    ),
    ("DELETE", "HEARTBEATENTRY"): (
        "Delete GG_HEARTBEAT rows whose paths name a group.",
        "DELETE HEARTBEATENTRY group [!]   (! : no question when the name has wildcards)",
    ),
    ("DELETE", "EXTTRAIL"): ("Unbind a trail.", "DELETE {EXTTRAIL | RMTTRAIL} path [, EXTRACT g]"),
    ("INFO", "ALL"): ("Status of the Manager and all groups.", "INFO ALL [TASKS | ALLPROCESSES]"),
    ("INFO", "EXTRACT"): (
        "Status and positions of groups.",
        "INFO {EXTRACT | REPLICAT | ER} group [, SHOWCH [n]] [, DETAIL] [, TASKS | ALLPROCESSES]",
    ),
    ("INFO", "EXTTRAIL"): ("Trail definitions.", "INFO {EXTTRAIL | RMTTRAIL} [path | *]"),
    ("INFO", "CREDENTIALSTORE"): (
        "List aliases (never passwords).",
        "INFO CREDENTIALSTORE [DOMAIN d]",
    ),
    ("INFO", "MANAGER"): ("Whether the Manager runs.", "INFO MANAGER"),
    ("INFO", "HEARTBEATTABLE"): (
        "The heartbeat tables and job settings of the DBLOGIN database.",
        "INFO HEARTBEATTABLE",
    ),
    ("STATUS", "EXTRACT"): ("One status word per group.", "STATUS {EXTRACT | REPLICAT | ER} group"),
    ("STATUS", "MANAGER"): ("Whether the Manager runs.", "STATUS MANAGER"),
    ("START", "MANAGER"): ("Start the Manager daemon of this home.", "START MANAGER"),
    ("START", "EXTRACT"): (
        "Have the Manager start groups.",
        "START {EXTRACT | REPLICAT | ER} group [ATCSN n | AFTERCSN n]",
    ),
    ("STOP", "MANAGER"): ("Stop the Manager (groups keep running).", "STOP MANAGER [!]"),
    ("STOP", "EXTRACT"): ("Stop groups gracefully.", "STOP {EXTRACT | REPLICAT | ER} group"),
    ("KILL", "EXTRACT"): (
        "Kill group processes (no clean checkpoint).",
        "KILL {EXTRACT | REPLICAT | ER} group",
    ),
    ("LAG", "EXTRACT"): (
        "Ask groups for their lag; GLOBAL: end-to-end lag from the heartbeat tables.",
        "LAG {EXTRACT | REPLICAT | ER} group [, GLOBAL] [, HISTORY] [, FILE name.svg]\n"
        "  (GLOBAL and HISTORY read GG_LAG / GG_LAG_HISTORY of the DBLOGIN database;\n"
        "  HISTORY charts the lag per path and stage, FILE writes the charts as SVG)",
    ),
    ("STATS", "EXTRACT"): (
        "Operation counts per table kept by running groups.",
        "STATS {EXTRACT | REPLICAT | ER} group [, TOTAL] [, DAILY] [, HOURLY] [, LATEST]\n"
        "  [, TABLE schema.table | TOTALSONLY schema.table] [, REPORTRATE {HR | MIN | SEC}]\n"
        "  [, RESET] [, REPORTFETCH | NOREPORTFETCH] [, REPORTDETAIL | NOREPORTDETAIL]\n"
        "  (no statistic named: all four; RESET restarts LATEST after the screen)",
    ),
    ("SEND", "EXTRACT"): (
        "Send a request to running groups.",
        "SEND {EXTRACT | REPLICAT | ER} group, request\n"
        "  (STATUS, STOP, FORCESTOP, REPORT, GETLAG, ...)",
    ),
    ("SEND", "MANAGER"): (
        "Send a request to the Manager.",
        "SEND MANAGER [CHILDSTATUS | GETPORTINFO | GETPURGEOLDEXTRACTS]",
    ),
    ("DBLOGIN",): (
        "Log in to a database (embedded source, SQLite file or PostgreSQL URL).",
        "DBLOGIN {USERIDALIAS a [DOMAIN d] | USERID user[@db][, PASSWORD p] | SOURCEDB db}\n"
        "  (an encrypted password: PASSWORD x, ENCRYPTKEY {DEFAULT | key}, from ENCRYPT PASSWORD)",
    ),
    ("ENCRYPT", "PASSWORD"): (
        "Encrypt a password for DBLOGIN ... PASSWORD x, ENCRYPTKEY k.",
        "ENCRYPT PASSWORD p [, AES128 | AES192 | AES256] [, ENCRYPTKEY {DEFAULT | key}]\n"
        "  (AES-GCM; key: DEFAULT, or a 'name 0xHEX' line of the home's ENCKEYS file)",
    ),
    ("INFO", "PARAM"): (
        "What ggsci knows of a parameter: acted on, warned as not used, or not offered.",
        "INFO PARAM name",
    ),
    ("GETPARAMINFO",): (
        "INFO PARAM for one parameter or all of them, to the screen or a file.",
        "GETPARAMINFO [name] [FILE path]",
    ),
    ("SET", "EDITOR"): ("Set the editor EDIT PARAMS uses (this session).", "SET EDITOR program"),
    ("SHOW",): ("Show the session's settings and the home's directories.", "SHOW"),
    ("VERSIONS",): (
        "Show the versions of ggsci, Python, the system and the DBLOGIN database.",
        "VERSIONS",
    ),
    ("CLEANUP", "EXTRACT"): (
        "Delete a stopped group's run history (its positions stay).",
        "CLEANUP {EXTRACT | REPLICAT | ER} group [, SAVE n]",
    ),
    ("VIEW", "PARAMS"): ("Show a parameter file.", "VIEW PARAMS {group | file}"),
    ("EDIT", "PARAMS"): (
        "Edit a parameter file ($EDITOR), then check it.",
        "EDIT PARAMS {group | file}",
    ),
    ("VIEW", "REPORT"): ("Show a report file.", "VIEW REPORT {group | file}"),
    ("VIEW", "GGSEVT"): ("Show the event log ggserr.log.", "VIEW GGSEVT"),
    ("CREATE", "SUBDIRS"): ("Create the home's directories.", "CREATE SUBDIRS"),
    ("OBEY",): ("Run the commands of a file.", "OBEY file"),
    ("ALLOWNESTED",): ("Allow OBEY inside an OBEY file (this session).", "ALLOWNESTED"),
    ("NOALLOWNESTED",): ("Refuse nested OBEY (the default).", "NOALLOWNESTED"),
    ("SHELL",): ("Run an operating-system command.", "SHELL command"),
    ("HISTORY",): ("List this session's commands.", "HISTORY [n]"),
    ("!",): ("Run a previous command again.", "! [n | -n | text]"),
    ("FC",): (
        "Edit a previous command, then run it.",
        "FC [n | -n | text]   (edit keys: i text, r text, d, overtype; Enter runs, // cancels)",
    ),
    ("HELP",): ("Show this help.", "HELP [command [object]]"),
    ("EXIT",): ("Leave GGSCI.", "EXIT | QUIT"),
}


GROUP_ALIASES = ("REPLICAT", "REP", "ER", "EXT")
"""HELP's group entries are filed under EXTRACT; these name the same forms."""


def help_lines(topic: tuple[str, ...]) -> list[str] | None:
    """All summaries for ``()``, else the entries whose key starts with ``topic``."""
    if not topic:
        lines = ["GGSCI commands:", ""]
        for key, (summary, _) in HELP.items():
            lines.append(f"  {' '.join(key):<24}{summary}")
        lines += ["", "HELP command [object] shows the syntax."]
        return lines
    keys = [k for k in HELP if k[: len(topic)] == topic]
    asked = topic
    if not keys and len(topic) > 1 and topic[1] in GROUP_ALIASES:  # HELP LAG REPLICAT
        topic = (topic[0], "EXTRACT", *topic[2:])
        keys = [k for k in HELP if k[: len(topic)] == topic]
    if not keys:
        return None
    out: list[str] = []
    for key in keys:
        summary, syntax = HELP[key]
        title = " ".join(asked if key == topic else key)  # the heading says what was asked
        out += [f"{title}: {summary}", "", *("  " + s for s in syntax.splitlines()), ""]
    return out[:-1]
