"""The GGSCI command grammar (pyparsing), producing :mod:`ggsci.commands.models` objects.

Pure: no I/O, no engine imports. Keywords are case-insensitive and come from
:mod:`ggsci.commands.keywords`; every production is named so errors read well, and ``-`` follows
a keyword once the command is unambiguous, so an error points at the real fault. Commas between
options are optional, as in GGSCI. The BNF is in ``docs/grammar.md`` ("GGSCI commands").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyparsing as pp

from ggsci.commands import keywords as K
from ggsci.commands import models as M

IDENT_CHARS = pp.alphanums + "_$#"


def kw(word: str, *extra: str) -> pp.ParserElement:
    """A case-insensitive keyword (with its abbreviations) that yields its canonical spelling."""
    names = (*K.spellings(word), *extra)
    expr = pp.MatchFirst([pp.CaselessKeyword(n, ident_chars=IDENT_CHARS) for n in names])
    expr.set_parse_action(pp.replace_with(word))
    return expr.set_name(word)


def one_of(*words: str) -> pp.ParserElement:
    return pp.MatchFirst([kw(w) for w in words]).set_name(" | ".join(words))


COMMA = pp.Opt(pp.Suppress(",")).set_name("','")
END = pp.StringEnd().set_name("end of command")
BANG = pp.Literal("!").set_name("'!'")
INT = pp.Regex(r"[0-9]+").set_name("number").set_parse_action(lambda t: int(t[0]))
SIGNED = pp.Regex(r"-?[0-9]+").set_name("number")
GROUP = (
    pp.Regex(r"[A-Za-z0-9_$#*?]+").set_name("group name").set_parse_action(lambda t: t[0].upper())
)
QUOTED = (pp.QuotedString("'", esc_quote="''") | pp.QuotedString('"', esc_quote='""')).set_name(
    "quoted text"
)
WORD = pp.Regex(r"[^\s,'\"]+").set_name("word")
PATH = (QUOTED | WORD).set_name("file name")
VALUE = (QUOTED | WORD).set_name("value")
REST = pp.Regex(r"\S.*").set_name("text").set_parse_action(lambda t: t[0].strip())
TIMESTAMP = pp.Regex(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[ :T][0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?)?"
).set_name("timestamp yyyy-mm-dd[ hh:mi[:ss[.cccccc]]]")
BEGIN_VALUE = (kw("NOW") | TIMESTAMP).set_name("NOW or a timestamp")
GROUP_KIND = one_of("EXTRACT", "REPLICAT", "ER").set_name("EXTRACT | REPLICAT | ER")

NOT_OFFERED: dict[str, tuple[str, bool]] = {
    "WALLET": (
        "the Oracle wallet is not offered: ggsci keeps passwords in its credential store "
        "(dircrd/, mode 0600); nothing done.",
        False,
    ),
    "MASTERKEY": (
        "master keys belong to the Oracle wallet, which ggsci does not offer; nothing done.",
        False,
    ),
    "TRANDATA": (
        "supplemental logging is an Oracle database setting; the embedded source "
        "logs every column of every table already, so nothing is needed.",
        False,
    ),
    "SCHEMATRANDATA": (
        "supplemental logging is an Oracle database setting; the embedded source "
        "logs every column of every table already, so nothing is needed.",
        False,
    ),
    "TRACETABLE": (
        "trace tables mark Replicat's own transactions in an Oracle database for bidirectional "
        "replication; ggsci does not offer it (exclude the Replicat's user with TRANLOGOPTIONS "
        "EXCLUDEUSER instead). Nothing done.",
        False,
    ),
    "SEQUENCE": (
        "FLUSH SEQUENCE updates Oracle sequence caches through GoldenGate's database procedures; "
        "the embedded source has no sequences. Nothing done.",
        False,
    ),
    "DUMPDDL": (
        "DUMPDDL reads the history table of GoldenGate's DDL trigger inside an Oracle database, "
        "which ggsci does not have. Nothing done.",
        False,
    ),
    "MININGDBLOGIN": (
        "a downstream mining database is part of integrated capture inside Oracle, which ggsci "
        "does not offer; use classic TRANLOG capture.",
        True,
    ),
    "MARKER": (
        "DDL markers come from GoldenGate's DDL trigger inside an Oracle database, which "
        "ggsci does not have; the embedded source logs DDL in its redo.",
        False,
    ),
    "REGISTER": (
        "registration is for integrated capture/apply inside an Oracle database, "
        "which ggsci does not offer; use classic TRANLOG capture.",
        True,
    ),
}


def option(
    name: str,
    value: pp.ParserElement | None = None,
    keyword: pp.ParserElement | None = None,
    canonical: str | None = None,
) -> pp.ParserElement:
    """An option keyword, optionally followed (after ``-``) by its value, yielding an Option."""
    key = keyword if keyword is not None else kw(name)
    expr = key - value if value is not None else key
    opt_name = canonical or name

    def act(s: str, loc: int, toks: pp.ParseResults) -> M.Option:
        return M.Option(opt_name, toks[-1] if value is not None else None, loc)

    return expr.set_parse_action(act).set_name(opt_name)


def _value_for(arg: K.Arg) -> pp.ParserElement | None:
    return {
        K.Arg.NONE: None,
        K.Arg.INT: INT,
        K.Arg.PATH: PATH,
        K.Arg.TRAIL: PATH,
        K.Arg.GROUP: GROUP,
        K.Arg.TEXT: VALUE,
        K.Arg.WORD: VALUE,
        K.Arg.BEGIN: BEGIN_VALUE,
    }[arg]


def _group_option(spec: K.OptionSpec) -> pp.ParserElement:
    if spec.name == "INTEGRATED":
        return option("INTEGRATED", keyword=kw("INTEGRATED") + pp.Opt(pp.Suppress(kw("TRANLOG"))))
    if spec.name in ("UPGRADE", "DOWNGRADE"):
        tail = pp.Opt(pp.Suppress(kw("INTEGRATED") + kw("TRANLOG")))
        return option(spec.name, keyword=kw(spec.name) + tail)
    return option(spec.name, _value_for(spec.arg))


GROUP_OPTION = pp.MatchFirst([_group_option(s) for s in K.GROUP_OPTIONS.values()]).set_name(
    "group option"
)
GROUP_OPTIONS = pp.ZeroOrMore(COMMA + GROUP_OPTION)


def not_offered(verb: str, feature: str) -> pp.ParserElement:
    """``VERB FEATURE anything``: parsed, answered with one line, never executed."""
    key = "REGISTER" if verb in ("REGISTER", "UNREGISTER") else feature
    expr = kw(feature) + pp.Opt(REST)
    reason, failure = NOT_OFFERED[key]

    def act(s: str, loc: int, toks: pp.ParseResults) -> M.Command:
        rest = str(toks[1]) if len(toks) > 1 else ""
        return M.NotOffered(f"{verb} {feature}", reason, failure, rest)

    return expr.set_parse_action(act).set_name(feature)


# --- group commands -----------------------------------------------------------------------


def _add_group(kind: str) -> pp.ParserElement:
    def act(s: str, loc: int, toks: pp.ParseResults) -> M.Command:
        opts = list(toks[2:])
        allowed = K.ALLOWED_GROUP_OPTIONS[("ADD", kind)]
        return M.AddGroup(kind, toks[1], M.GroupOptions.build(opts, allowed, f"ADD {kind}"))

    return (kw(kind) - (GROUP + GROUP_OPTIONS + END)).set_parse_action(act).set_name(kind)


def _alter_group(kind: str | None) -> pp.ParserElement:

    def act(s: str, loc: int, toks: pp.ParseResults) -> M.Command:
        name, opts = (toks[1], list(toks[2:])) if kind else (toks[0], list(toks[1:]))
        allowed = K.ALLOWED_GROUP_OPTIONS[("ALTER", kind)]
        what = f"ALTER {kind}" if kind else "ALTER"
        return M.AlterGroup(kind, name, M.GroupOptions.build(opts, allowed, what))

    body = GROUP + GROUP_OPTIONS + END
    expr = (kw(kind) - body) if kind else body
    return expr.set_parse_action(act).set_name(kind or "group name")


def _kind(tok: str) -> str | None:
    return None if tok == "ER" else tok


def _targeted(
    tail: pp.ParserElement,
    build: Callable[[str | None, str, list[Any]], M.Command],
    bare: bool = True,
) -> pp.ParserElement:
    """``EXTRACT|REPLICAT|ER group tail`` (and ``group tail`` when ``bare``)."""
    with_kind = (GROUP_KIND - (GROUP + tail + END)).set_parse_action(
        lambda t: build(_kind(t[0]), t[1], list(t[2:]))
    )
    if not bare:
        return with_kind
    bare_group = (GROUP + tail + END).set_parse_action(lambda t: build(None, t[0], list(t[1:])))
    return (with_kind | bare_group).set_name("EXTRACT | REPLICAT | ER | group name")


INFO_OPTION = pp.MatchFirst(
    [
        option("SHOWCH", pp.Opt(INT, default=0)),
        option("DETAIL"),
        option("TASKS"),
        option("ALLPROCESSES"),
        option("UPGRADE"),
        option("DOWNGRADE"),
    ]
).set_name("SHOWCH | DETAIL | TASKS | ALLPROCESSES")


def _info_group(kind: str | None, pattern: str, opts: list[Any]) -> M.Command:
    names = {o.name: o for o in opts}
    showch = names["SHOWCH"].value if "SHOWCH" in names else None
    return M.InfoGroup(
        kind,
        pattern,
        detail="DETAIL" in names,
        showch=showch,
        tasks="TASKS" in names or "ALLPROCESSES" in names,
    )


def _start_group(kind: str | None, pattern: str, opts: list[Any]) -> M.Command:
    names = {o.name: o.value for o in opts}
    return M.StartGroup(kind, pattern, names.get("ATCSN"), names.get("AFTERCSN"))


STATUS_OPTIONS = pp.ZeroOrMore(COMMA + (option("TASKS") | option("ALLPROCESSES")))
START_OPTIONS = pp.Opt(COMMA + (option("ATCSN", INT) | option("AFTERCSN", INT)))
FORCE = pp.Opt(BANG).set_parse_action(lambda t: [bool(t)])

# --- trails -------------------------------------------------------------------------------

TRAIL_KIND = one_of("EXTTRAIL", "RMTTRAIL")
TRAIL_OPTION = pp.MatchFirst(
    [
        option("EXTRACT", GROUP),
        option("MEGABYTES", INT),
        option("SEQNO", INT),
        option("FORMAT", keyword=kw("FORMAT") - kw("RELEASE"), value=WORD),
    ]
).set_name("EXTRACT | MEGABYTES | SEQNO | FORMAT RELEASE")
TRAIL_OPTIONS = pp.ZeroOrMore(COMMA + TRAIL_OPTION)


def _trail_opts(opts: list[Any], allowed: tuple[str, ...], what: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for opt in opts:
        if opt.name not in allowed:
            raise M.CommandError(f"{opt.name} is not an option of {what}.", opt.column)
        if opt.name in values:
            raise M.CommandError(f"{opt.name} is given twice.", opt.column)
        values[opt.name] = opt.value
    return values


def _add_trail(s: str, loc: int, t: pp.ParseResults) -> M.Command:
    kind, path = t[0], t[1]
    v = _trail_opts(list(t[2:]), ("EXTRACT", "MEGABYTES", "SEQNO", "FORMAT"), f"ADD {kind}")
    if "EXTRACT" not in v:
        raise M.CommandError(f"ADD {kind} needs EXTRACT group.", len(s.rstrip()))
    return M.AddTrail(kind, path, v["EXTRACT"], v.get("MEGABYTES"), v.get("SEQNO"), v.get("FORMAT"))


def _alter_trail(s: str, loc: int, t: pp.ParseResults) -> M.Command:
    v = _trail_opts(list(t[2:]), ("EXTRACT", "MEGABYTES"), f"ALTER {t[0]}")
    return M.AlterTrail(t[0], t[1], v.get("EXTRACT"), v.get("MEGABYTES"))


def _delete_trail(s: str, loc: int, t: pp.ParseResults) -> M.Command:
    v = _trail_opts(list(t[2:]), ("EXTRACT",), f"DELETE {t[0]}")
    return M.DeleteTrail(t[0], t[1], v.get("EXTRACT"))


# --- credential store and DBLOGIN -----------------------------------------------------------

CRED_OPTION = pp.MatchFirst(
    [option("PASSWORD", VALUE), option("ALIAS", VALUE), option("DOMAIN", VALUE)]
).set_name("PASSWORD | ALIAS | DOMAIN")


def _alter_credstore(s: str, loc: int, t: pp.ParseResults) -> M.Command:
    action, user = t[1], t[3]
    values: dict[str, str] = {}
    for opt in t[4:]:
        if opt.name in values:
            raise M.CommandError(f"{opt.name} is given twice.", opt.column)
        values[opt.name] = opt.value
    if action == "DELETE" and "PASSWORD" in values:
        raise M.CommandError("PASSWORD is not an option of ALTER CREDENTIALSTORE DELETE.", loc)
    return M.AlterCredentialStore(
        action, user, values.get("PASSWORD"), values.get("ALIAS"), values.get("DOMAIN")
    )


DBLOGIN_OPTION = pp.MatchFirst(
    [
        option("USERIDALIAS", VALUE),
        option("USERID", VALUE),
        option("PASSWORD", VALUE),
        option("DOMAIN", VALUE),
        option("SOURCEDB", VALUE),
        option("SYSDBA"),
        option("SQLID", VALUE),
        option("SESSIONCHARSET", VALUE),
        option("ENCRYPTKEY", VALUE),
        *(option(name) for name in K.ENCRYPT_ALGORITHMS),
    ]
).set_name("USERIDALIAS | USERID | PASSWORD | DOMAIN | SOURCEDB | ENCRYPTKEY")


def _dblogin(s: str, loc: int, t: pp.ParseResults) -> M.Command:
    values: dict[str, Any] = {}
    for opt in t[1:]:
        if opt.name in values:
            raise M.CommandError(f"{opt.name} is given twice.", opt.column)
        values[opt.name] = opt.value
        if {"USERID", "USERIDALIAS"} <= values.keys():
            raise M.CommandError("use either USERIDALIAS or USERID, not both.", opt.column)
        if opt.name == "PASSWORD" and "USERID" not in values:
            raise M.CommandError("PASSWORD goes with USERID.", opt.column)
        if opt.name == "ENCRYPTKEY" and "PASSWORD" not in values:
            raise M.CommandError("ENCRYPTKEY goes with PASSWORD.", opt.column)
    if not ({"USERID", "USERIDALIAS", "SOURCEDB"} & values.keys()):
        raise M.CommandError("DBLOGIN needs USERIDALIAS, USERID or SOURCEDB.", len(s.rstrip()))
    return M.DbLogin(
        values.get("USERID"),
        values.get("PASSWORD"),
        values.get("USERIDALIAS"),
        values.get("DOMAIN"),
        values.get("SOURCEDB"),
        values.get("ENCRYPTKEY"),
    )


ENCRYPT_OPTIONS = pp.ZeroOrMore(
    COMMA + (option("ENCRYPTKEY", VALUE) | pp.MatchFirst([option(a) for a in K.ENCRYPT_ALGORITHMS]))
)
CONNECT_REASON = (
    "this is the classic GGSCI interface, which acts on its home directly; CONNECT belongs "
    "to the Admin Client of the Microservices Architecture. Nothing done."
)


def _encrypt(s: str, loc: int, t: pp.ParseResults) -> M.Command:
    algorithm: str | None = None
    key = "DEFAULT"
    for opt in t[3:]:
        if opt.name == "ENCRYPTKEY":
            key = opt.value
        elif algorithm is not None:
            raise M.CommandError("give one algorithm.", opt.column)
        elif opt.name == "BLOWFISH":
            raise M.CommandError(
                "BLOWFISH is not offered (a 64-bit block cipher); use AES128, AES192 or AES256.",
                opt.column,
            )
        else:
            algorithm = opt.name
    return M.EncryptPassword(t[2], algorithm, key)


# --- heartbeat tables ----------------------------------------------------------------------

HEARTBEAT_OPTION = pp.MatchFirst(
    [option(name, INT) for name in K.HEARTBEAT_LIMITS]
    + [option(name) for name in ("PARTITIONED", "NOADDTRANDATA", "TARGETONLY", "NOTARGETONLY")]
).set_name(" | ".join(K.HEARTBEAT_ADD_OPTIONS))
HEARTBEAT_OPTIONS = pp.ZeroOrMore(COMMA + HEARTBEAT_OPTION)


def _heartbeat_options(s: str, opts: list[Any], action: str) -> M.HeartbeatOptions:
    allowed = K.HEARTBEAT_ADD_OPTIONS if action == "ADD" else K.HEARTBEAT_ALTER_OPTIONS
    values = _trail_opts(opts, allowed, f"{action} HEARTBEATTABLE")
    for opt in opts:
        limits = K.HEARTBEAT_LIMITS.get(opt.name)
        if limits is not None and not limits[0] <= opt.value <= limits[1]:
            low, high, unit = limits
            at = s.find(str(opt.value), opt.column + len(opt.name))
            raise M.CommandError(
                f"{opt.name} must be from {low} to {high} {unit} (got {opt.value}).",
                at if at >= 0 else opt.column,
            )
    if "TARGETONLY" in values and "NOTARGETONLY" in values:
        raise M.CommandError("TARGETONLY and NOTARGETONLY exclude each other.", len(s.rstrip()))
    if action == "ALTER" and not values:
        raise M.CommandError(
            "ALTER HEARTBEATTABLE needs FREQUENCY, RETENTION_TIME, PURGE_FREQUENCY, "
            "TARGETONLY or NOTARGETONLY.",
            len(s.rstrip()),
        )
    target_only = True if "TARGETONLY" in values else False if "NOTARGETONLY" in values else None
    return M.HeartbeatOptions(
        frequency=values.get("FREQUENCY"),
        retention_time=values.get("RETENTION_TIME"),
        purge_frequency=values.get("PURGE_FREQUENCY"),
        partitioned="PARTITIONED" in values,
        noaddtrandata="NOADDTRANDATA" in values,
        target_only=target_only,
    )


def _heartbeat_table(action: str) -> pp.ParserElement:
    def act(s: str, loc: int, t: pp.ParseResults) -> M.Command:
        return M.HeartbeatTableCommand(action, _heartbeat_options(s, list(t[1:]), action))

    return (kw("HEARTBEATTABLE") - (HEARTBEAT_OPTIONS + END)).set_parse_action(act)


def _lag(kind: str | None, pattern: str, opts: list[Any]) -> M.Command:
    names = {o.name for o in opts}
    file = next((str(o.value) for o in opts if o.name == "FILE"), None)
    history = "HISTORY" in names or file is not None
    return M.LagGroup(kind, pattern, "GLOBAL" in names or history, history, file)


LAG_OPTIONS = pp.ZeroOrMore(COMMA + (option("GLOBAL") | option("HISTORY") | option("FILE", PATH)))

STATS_OPTION = pp.MatchFirst(
    [option(name, WORD) for name in ("TABLE", "TOTALSONLY")]
    + [option("REPORTRATE", one_of(*K.STATS_RATES))]
    + [option(name) for name in (*K.STATS_WINDOWS, *K.STATS_FLAGS)]
).set_name(" | ".join(K.STATS_OPTIONS))
STATS_OPTIONS = pp.ZeroOrMore(COMMA + STATS_OPTION)


def _stats(kind: str | None, pattern: str, opts: list[Any]) -> M.Command:
    windows: list[str] = []
    values: dict[str, Any] = {}
    for opt in opts:
        if opt.name in K.STATS_WINDOWS:
            windows.append(opt.name)
        elif opt.name in values:
            raise M.CommandError(f"{opt.name} is given twice.", opt.column)
        values[opt.name] = opt.value
    if "TABLE" in values and "TOTALSONLY" in values:
        raise M.CommandError("use either TABLE or TOTALSONLY, not both.", opts[-1].column)
    if {"REPORTFETCH", "NOREPORTFETCH"} <= values.keys():
        raise M.CommandError("REPORTFETCH and NOREPORTFETCH exclude each other.", opts[-1].column)
    if {"REPORTDETAIL", "NOREPORTDETAIL"} <= values.keys():
        raise M.CommandError("REPORTDETAIL and NOREPORTDETAIL exclude each other.", opts[-1].column)
    return M.StatsGroup(
        kind,
        pattern,
        tuple(dict.fromkeys(windows)),
        reset="RESET" in values,
        table=values["TABLE"].upper() if "TABLE" in values else None,
        totals_only=values["TOTALSONLY"].upper() if "TOTALSONLY" in values else None,
        rate=values.get("REPORTRATE"),
        fetch="REPORTFETCH" in values,
        detail="NOREPORTDETAIL" not in values,
    )


# --- verbs --------------------------------------------------------------------------------


VERB_EXPECTS: dict[str, str] = {}
"""Verb → what may follow it, for the error when the second word is wrong."""


def _verb(name: str, body: pp.ParserElement, what: str) -> pp.ParserElement:
    VERB_EXPECTS[name] = what
    return (kw(name) - body.set_name(what)).set_name(name)


def _t(command: M.Command) -> Callable[[pp.ParseResults], M.Command]:
    return lambda t: command


CHECKPOINTTABLE_NAME = pp.Opt(WORD, default=None)

ADD = _verb(
    "ADD",
    pp.MatchFirst(
        [
            _add_group("EXTRACT"),
            _add_group("REPLICAT"),
            (TRAIL_KIND - (PATH + TRAIL_OPTIONS + END)).set_parse_action(_add_trail),
            (kw("CHECKPOINTTABLE") - (CHECKPOINTTABLE_NAME + END)).set_parse_action(
                lambda t: M.CheckpointTableCommand("ADD", t[1])
            ),
            _heartbeat_table("ADD"),
            (kw("CREDENTIALSTORE") + END).set_parse_action(_t(M.AddCredentialStore())),
            not_offered("ADD", "TRANDATA"),
            not_offered("ADD", "SCHEMATRANDATA"),
            not_offered("ADD", "MASTERKEY"),
            not_offered("ADD", "TRACETABLE"),
        ]
    ),
    "EXTRACT | REPLICAT | EXTTRAIL | RMTTRAIL | CHECKPOINTTABLE | HEARTBEATTABLE | CREDENTIALSTORE",
)

ALTER = _verb(
    "ALTER",
    pp.MatchFirst(
        [
            (
                kw("CREDENTIALSTORE")
                - one_of(*K.CREDENTIAL_ACTIONS)
                - kw("USER")
                - (VALUE + pp.ZeroOrMore(COMMA + CRED_OPTION) + END)
            ).set_parse_action(_alter_credstore),
            _alter_group("EXTRACT"),
            _alter_group("REPLICAT"),
            (TRAIL_KIND - (PATH + TRAIL_OPTIONS + END)).set_parse_action(_alter_trail),
            _heartbeat_table("ALTER"),
            _alter_group(None),
        ]
    ),
    "EXTRACT | REPLICAT | EXTTRAIL | RMTTRAIL | HEARTBEATTABLE | CREDENTIALSTORE | group name",
)

DELETE = _verb(
    "DELETE",
    pp.MatchFirst(
        [
            (GROUP_KIND - (GROUP + FORCE + END)).set_parse_action(
                lambda t: M.DeleteGroup(_kind(t[0]), t[1], t[2])
            ),
            (TRAIL_KIND - (PATH + TRAIL_OPTIONS + END)).set_parse_action(_delete_trail),
            (kw("CHECKPOINTTABLE") - (CHECKPOINTTABLE_NAME + FORCE + END)).set_parse_action(
                lambda t: M.CheckpointTableCommand("DELETE", t[1], t[2])
            ),
            (kw("HEARTBEATTABLE") - (FORCE + END)).set_parse_action(
                lambda t: M.HeartbeatTableCommand("DELETE", force=t[1])
            ),
            (kw("HEARTBEATENTRY") - (GROUP + FORCE + END)).set_parse_action(
                lambda t: M.DeleteHeartbeatEntry(t[1], t[2])
            ),
            (kw("CREDENTIALSTORE") + END).set_parse_action(_t(M.DeleteCredentialStore())),
            not_offered("DELETE", "TRANDATA"),
            not_offered("DELETE", "SCHEMATRANDATA"),
            not_offered("DELETE", "MASTERKEY"),
            not_offered("DELETE", "TRACETABLE"),
        ]
    ),
    "EXTRACT | REPLICAT | ER | EXTTRAIL | RMTTRAIL | CHECKPOINTTABLE | HEARTBEATTABLE"
    " | HEARTBEATENTRY | CREDENTIALSTORE",
)

INFO = _verb(
    "INFO",
    pp.MatchFirst(
        [
            (
                kw("ALL") + pp.Opt(COMMA + one_of(*K.INFO_ALL_OPTIONS), default=None) + END
            ).set_parse_action(lambda t: M.InfoAll(t[1])),
            (kw("MANAGER") + END).set_parse_action(_t(M.ManagerCommand("INFO"))),
            (TRAIL_KIND + pp.Opt(PATH, default=None) + END).set_parse_action(
                lambda t: M.InfoTrail(t[0], t[1])
            ),
            (kw("CHECKPOINTTABLE") + CHECKPOINTTABLE_NAME + END).set_parse_action(
                lambda t: M.CheckpointTableCommand("INFO", t[1])
            ),
            (kw("HEARTBEATTABLE") + END).set_parse_action(_t(M.HeartbeatTableCommand("INFO"))),
            (
                kw("CREDENTIALSTORE")
                + pp.Opt(pp.Suppress(kw("DOMAIN")) - VALUE, default=None)
                + END
            ).set_parse_action(lambda t: M.InfoCredentialStore(t[1])),
            not_offered("INFO", "TRANDATA"),
            not_offered("INFO", "SCHEMATRANDATA"),
            not_offered("INFO", "MASTERKEY"),
            not_offered("INFO", "MARKER"),
            not_offered("INFO", "TRACETABLE"),
            (kw("PARAM") - (WORD + END)).set_parse_action(lambda t: M.ParamInfo(t[1].upper())),
            _targeted(pp.ZeroOrMore(COMMA + INFO_OPTION), _info_group),
        ]
    ),
    "ALL | EXTRACT | REPLICAT | ER | EXTTRAIL | RMTTRAIL | CHECKPOINTTABLE | HEARTBEATTABLE"
    " | CREDENTIALSTORE | MANAGER | group name",
)

STATUS = _verb(
    "STATUS",
    pp.MatchFirst(
        [
            (kw("MANAGER") + END).set_parse_action(_t(M.ManagerCommand("STATUS"))),
            _targeted(STATUS_OPTIONS, lambda k, g, o: M.StatusGroup(k, g)),
        ]
    ),
    "EXTRACT | REPLICAT | ER | MANAGER | group name",
)

START = _verb(
    "START",
    pp.MatchFirst(
        [
            (kw("MANAGER") + END).set_parse_action(_t(M.ManagerCommand("START"))),
            _targeted(START_OPTIONS, _start_group),
        ]
    ),
    "EXTRACT | REPLICAT | ER | MANAGER | group name",
)

STOP = _verb(
    "STOP",
    pp.MatchFirst(
        [
            (kw("MANAGER") + FORCE + END).set_parse_action(
                lambda t: M.ManagerCommand("STOP", t[1])
            ),
            _targeted(FORCE, lambda k, g, o: M.StopGroup(k, g, bool(o and o[0]))),
        ]
    ),
    "EXTRACT | REPLICAT | ER | MANAGER | group name",
)

KILL = _verb(
    "KILL",
    _targeted(pp.Empty(), lambda k, g, o: M.KillGroup(k, g)),
    "EXTRACT | REPLICAT | ER | group name",
)

LAG = _verb(
    "LAG",
    _targeted(LAG_OPTIONS, _lag),
    "EXTRACT | REPLICAT | ER | group name",
)

STATS = _verb(
    "STATS",
    _targeted(STATS_OPTIONS, _stats),
    "EXTRACT | REPLICAT | ER | group name",
)

SEND_REQUEST = (COMMA + REST).set_name("request")
SEND = _verb(
    "SEND",
    pp.MatchFirst(
        [
            (kw("MANAGER") + pp.Opt(COMMA + REST, default="") + END).set_parse_action(
                lambda t: M.SendManager(t[1])
            ),
            (GROUP_KIND - (GROUP - SEND_REQUEST + END)).set_parse_action(
                lambda t: M.SendGroup(_kind(t[0]), t[1], t[2])
            ),
            (GROUP + SEND_REQUEST + END).set_parse_action(lambda t: M.SendGroup(None, t[0], t[1])),
        ]
    ),
    "EXTRACT | REPLICAT | ER | MANAGER | group name",
)

VIEW = _verb(
    "VIEW",
    pp.MatchFirst(
        [
            (kw("PARAMS") - (PATH + END)).set_parse_action(lambda t: M.ViewParams(t[1])),
            (kw("REPORT") - (PATH + END)).set_parse_action(lambda t: M.ViewReport(t[1])),
            (kw("GGSEVT") + END).set_parse_action(_t(M.ViewGgsevt())),
        ]
    ),
    "PARAMS | REPORT | GGSEVT",
)

EDIT = _verb(
    "EDIT", (kw("PARAMS") - (PATH + END)).set_parse_action(lambda t: M.EditParams(t[1])), "PARAMS"
)

CREATE = _verb(
    "CREATE",
    pp.MatchFirst(
        [
            (kw("SUBDIRS") + END).set_parse_action(_t(M.CreateSubdirs())),
            not_offered("CREATE", "WALLET"),
        ]
    ),
    "SUBDIRS",
)


def _simple(
    name: str, body: pp.ParserElement, build: Callable[[pp.ParseResults], M.Command]
) -> pp.ParserElement:
    return (kw(name) - (body + END)).set_parse_action(build).set_name(name)


OTHERS = [
    _verb("OPEN", not_offered("OPEN", "WALLET"), "WALLET"),
    _verb("PURGE", not_offered("PURGE", "WALLET"), "WALLET"),
    _verb("RENEW", not_offered("RENEW", "MASTERKEY"), "MASTERKEY"),
    (kw("REGISTER") - GROUP_KIND + pp.Opt(REST))
    .set_parse_action(
        lambda t: M.NotOffered(f"REGISTER {t[1]}", *NOT_OFFERED["REGISTER"], " ".join(t[2:]))
    )
    .set_name("REGISTER"),
    (kw("UNREGISTER") - GROUP_KIND + pp.Opt(REST))
    .set_parse_action(
        lambda t: M.NotOffered(f"UNREGISTER {t[1]}", *NOT_OFFERED["REGISTER"], " ".join(t[2:]))
    )
    .set_name("UNREGISTER"),
    (kw("DBLOGIN") + pp.ZeroOrMore(COMMA + DBLOGIN_OPTION) + END)
    .set_parse_action(_dblogin)
    .set_name("DBLOGIN"),
    (kw("ENCRYPT") - kw("PASSWORD") - (VALUE + ENCRYPT_OPTIONS + END))
    .set_parse_action(_encrypt)
    .set_name("ENCRYPT"),
    (kw("SET") - kw("EDITOR") - (PATH + END))
    .set_parse_action(lambda t: M.SetEditor(t[2]))
    .set_name("SET"),
    _simple("VERSIONS", pp.Empty(), _t(M.Versions())),
    _simple("SHOW", pp.Empty(), _t(M.Show())),
    _verb(
        "CLEANUP",
        GROUP_KIND - (GROUP + pp.Opt(COMMA + pp.Suppress(kw("SAVE")) - INT, default=0) + END),
        "EXTRACT | REPLICAT | ER",
    ).set_parse_action(lambda t: M.Cleanup(_kind(t[1]), t[2], t[3])),
    _simple(
        "GETPARAMINFO",
        pp.Opt(~kw("FILE") + WORD, default=None)
        + pp.Opt(pp.Suppress(kw("FILE")) - PATH, default=None),
        lambda t: M.ParamInfo(t[1].upper() if t[1] else None, t[2]),
    ),
    _verb("FLUSH", not_offered("FLUSH", "SEQUENCE"), "SEQUENCE"),
    (kw("DUMPDDL") + pp.Opt(REST))
    .set_parse_action(lambda t: M.NotOffered("DUMPDDL", *NOT_OFFERED["DUMPDDL"]))
    .set_name("DUMPDDL"),
    (kw("MININGDBLOGIN") + pp.Opt(REST))
    .set_parse_action(lambda t: M.NotOffered("MININGDBLOGIN", *NOT_OFFERED["MININGDBLOGIN"]))
    .set_name("MININGDBLOGIN"),
    (kw("CONNECT") + pp.Opt(REST))
    .set_parse_action(lambda t: M.NotOffered("CONNECT", CONNECT_REASON, True))
    .set_name("CONNECT"),
    _simple("OBEY", PATH, lambda t: M.Obey(t[1])),
    _simple("SHELL", REST, lambda t: M.Shell(t[1])),
    _simple("HELP", pp.Opt(WORD) + pp.Opt(WORD), lambda t: M.Help(tuple(w.upper() for w in t[1:]))),
    _simple("HISTORY", pp.Opt(INT, default=None), lambda t: M.History(t[1])),
    _simple("FC", pp.Opt(REST, default=""), lambda t: M.Recall(t[1], edit=True)),
    (pp.Literal("!") + pp.Opt(REST, default="") + END)
    .set_parse_action(lambda t: M.Recall(t[1], edit=False))
    .set_name("!"),
    _simple("ALLOWNESTED", pp.Empty(), _t(M.AllowNested(True))),
    _simple("NOALLOWNESTED", pp.Empty(), _t(M.AllowNested(False))),
    _simple("EXIT", pp.Empty(), _t(M.Exit())),
    _simple("QUIT", pp.Empty(), _t(M.Exit())),
]

VERB_COMMANDS = [ADD, ALTER, DELETE, INFO, STATUS, START, STOP, KILL, LAG, STATS, SEND, VIEW]
COMMAND = pp.MatchFirst([*VERB_COMMANDS, EDIT, CREATE, *OTHERS]).set_name("command")
