"""The parameter-file grammar (pyparsing), statement by statement.

Pure: no I/O, no models, no engine. :func:`parse_statement` turns one logical statement
(see :mod:`params.text`) into a :class:`Parsed` value of plain tokens that carry their
offset in the statement text; :mod:`params.build` turns those into typed models and
positioned diagnostics. ``docs/grammar.md`` is this module written down as BNF; keep the
two in step.

Most parameters share one shape, ``NAME [positional ...] {[,] OPTION [argument]}``, so
they are described by a :class:`Spec` (data) and their grammar is generated from it. The
irregular ones (``TABLE``/``MAP``, ``REPORTCOUNT``, ``DYNAMICPORTLIST``, ``AUTOSTART``...)
have hand-written productions. Commas between options are optional, as GoldenGate reads
them (``RMTHOST host MGRPORT 7809`` and ``RMTHOST host, MGRPORT 7809`` are the same).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pyparsing as pp

from params.catalog import MAP_OPTIONS, TABLE_OPTIONS, data_specs, did_you_mean, tranlog_options


@dataclass(frozen=True)
class Tok:
    """A token's text and its offset in the statement text."""

    text: str
    loc: int

    @property
    def upper(self) -> str:
        return self.text.upper()


@dataclass(frozen=True)
class Option:
    """``KEYWORD [argument]`` as parsed; ``args`` is empty for a flag."""

    name: str
    loc: int
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Parsed:
    keyword: Tok
    positional: tuple[Any, ...] = ()
    options: tuple[Option, ...] = ()


@dataclass(frozen=True)
class Spec:
    """The shape of a regular parameter.

    ``positional`` lists argument kinds that follow the keyword (a kind ending in ``?`` is
    optional); ``options`` maps option keywords to argument kinds (``flag`` for none).
    """

    positional: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict)


class GrammarError(Exception):
    """A statement does not match its grammar; ``loc`` is the offending offset."""

    def __init__(self, message: str, loc: int) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc


# --------------------------------------------------------------------------- lexemes


def _tok(s: str, loc: int, toks: pp.ParseResults) -> Tok:
    return Tok(str(toks[0]), loc)


def _named(expr: pp.ParserElement, name: str) -> pp.ParserElement:
    return expr.set_name(name)


COMMA = pp.Suppress(",")
OPT_COMMA = pp.Opt(COMMA)
SEMI = pp.Suppress(pp.Opt(";"))

QUOTED = _named(
    pp.Regex(r'"(?:[^"\\]|\\.)*"') | pp.Regex(r"'(?:[^'\\]|\\.)*'"), "quoted string"
).set_parse_action(_tok)
BARE = pp.Regex(r"[^\s,;()\"']+")
WORD = _named(QUOTED | BARE.copy().set_parse_action(_tok), "a word")
PATH = _named(QUOTED | BARE.copy().set_parse_action(_tok), "a path")
INT = _named(pp.Regex(r"[+-]?\d+(?![^\s,;()])").set_parse_action(_tok), "a whole number")
#: ``<int><unit>`` with no space (WARNLONGTRANS); the unit is checked by the builder.
DURATION = _named(
    # A unit after a blank is read (to say the blank is wrong) only if it is a unit word,
    # so that ``WARNLONGTRANS 2 CHECKINTERVAL 10M`` does not take CHECKINTERVAL as a unit.
    pp.Regex(
        r"\d+(?:[A-Za-z]+|\s+(?i:SECONDS?|SECS?|S|MINUTES?|MINS?|M|HOURS?|H|DAYS?|D)\b)?"
        r"(?![^\s,;()])"
    ).set_parse_action(_tok),
    "a duration like 2H",
)
#: ``<int>[ ]{M|H}`` (BRINTERVAL); the unit is checked by the builder.
INTERVAL = _named(
    pp.Regex(r"\d+(?:[A-Za-z]+|\s+[MmHh]\b)?(?![^\s,;()])").set_parse_action(_tok),
    "an interval like 4H",
)
#: ``<int>[unit]`` sizes such as ``64GB`` or ``500 MB``.
SIZE = _named(
    pp.Regex(r"\d+(?:\s*(?:[KMGT]B?|BYTES?|B)\b)?", flags=2).set_parse_action(_tok), "a size"
)


class Balanced(pp.Token):
    """A parenthesised group, nested parentheses and quoted strings inside it skipped.

    Written as a token rather than with ``nested_expr`` because option lists such as
    ``COLMAP (...)`` and ``FILTER (...)`` are kept as text anyway, and a plain scan is
    about ten times faster (benchmarks/params_parse.py).
    """

    def __init__(self) -> None:
        super().__init__()
        self.mayReturnEmpty = False
        self.mayIndexError = False

    def parseImpl(self, instring: str, loc: int, do_actions: bool = True) -> tuple[int, str]:
        if loc >= len(instring) or instring[loc] != "(":
            raise pp.ParseException(instring, loc, self.errmsg, self)
        depth = 0
        quote = ""
        i = loc
        while i < len(instring):
            ch = instring[i]
            if quote:
                if ch == "\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = ""
            elif ch in "'\"":
                quote = ch
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return i + 1, instring[loc : i + 1]
            i += 1
        raise pp.ParseException(instring, loc, "unclosed '('", self)


PARENS = _named(Balanced(), "a (...) list").set_parse_action(_tok)
VERSION = _named(pp.Regex(r"\d+(?:\.\d+)*").set_parse_action(_tok), "a release like 12.2")
TIME = _named(pp.Regex(r"\d{1,2}:\d{2}").set_parse_action(_tok), "a time hh:mi")

NAME_PART = pp.Regex(r'"(?:[^"\\]|\\.)*"') | pp.Regex(r'[^\s.,;()"]+')
OBJECT_NAME = _named(
    pp.Combine(NAME_PART + pp.ZeroOrMore("." + NAME_PART)).set_parse_action(_tok),
    "an object name like owner.table",
)

_KINDS: dict[str, pp.ParserElement] = {
    "word": WORD,
    "group": _named(WORD.copy(), "a group name"),
    "path": PATH,
    "int": INT,
    "duration": DURATION,
    "interval": INTERVAL,
    "size": SIZE,
    "parens": PARENS,
    "name": OBJECT_NAME,
    "time": TIME,
    # FORMAT RELEASE m.n | FORMAT LEVEL n
    "format": pp.Suppress(pp.CaselessKeyword("RELEASE") | pp.CaselessKeyword("LEVEL")) + VERSION,
    # CACHEDIRECTORY path [size]
    "path_size": PATH + pp.Opt(SIZE),
    # PASSWORD pw [algorithm ENCRYPTKEY {key | DEFAULT}]
    # (11.2 files put commas between them: PASSWORD pw, BLOWFISH, ENCRYPTKEY DEFAULT)
    "password": WORD
    + pp.Opt(OPT_COMMA + pp.Regex(r"(?i)(AES128|AES192|AES256|BLOWFISH)\b").set_parse_action(_tok))
    + pp.Opt(OPT_COMMA + pp.Suppress(pp.CaselessKeyword("ENCRYPTKEY")) + WORD),
    # ENCRYPT algorithm
    "cipher": _named(
        pp.Regex(r"(?i)(AES128|AES192|AES256|BLOWFISH|NONE)\b").set_parse_action(_tok),
        "an encryption algorithm (AES128, AES192, AES256, BLOWFISH)",
    ),
    "fsoption": _named(
        pp.Regex(r"(?i)MS_SYNC|MS_ASYNC").set_parse_action(_tok) + pp.WordEnd(),
        "MS_SYNC or MS_ASYNC",
    ),
    "choice_format": _named(
        pp.Regex(r"(?i)(FULL|COMPACT)\b").set_parse_action(_tok), "FULL or COMPACT"
    ),
    "choice_fetch": _named(
        pp.Regex(r"(?i)(ALLOW|IGNORE|REPORT|DISCARD|ABEND)\b").set_parse_action(_tok),
        "ALLOW, IGNORE, REPORT, DISCARD or ABEND",
    ),
    "choice_recovery": _named(
        pp.Regex(r"(?i)(APPENDMODE|OVERWRITEMODE)\b").set_parse_action(_tok),
        "APPENDMODE or OVERWRITEMODE",
    ),
}


def _kind(kind: str) -> pp.ParserElement:
    return _KINDS[kind]


# --------------------------------------------------------------------------- specs

_LOGIN = {"USERIDALIAS": "word", "USERID": "word", "PASSWORD": "password", "DOMAIN": "word",
          "SESSIONCHARSET": "word", "SYSDBA": "flag"}  # fmt: skip

# CHECKSUM | NOCHECKSUM (ours): per-record CRC-32 in the trail, default CHECKSUM.
# OBJECTDEFS | NO_OBJECTDEFS: DDR/TDR metadata records in 12.2+ trails, default OBJECTDEFS.
_TRAIL_OPTIONS = {"FORMAT": "format", "MEGABYTES": "int", "CHECKSUM": "flag", "NOCHECKSUM": "flag",
                  "OBJECTDEFS": "flag", "NO_OBJECTDEFS": "flag"}  # fmt: skip

_FETCH_FLAGS = ("FETCHPKUPDATECOLS", "MISSINGCOLS", "NOFETCH", "SUPPRESSDUPLICATES", "USEKEY",
                "NOUSEKEY", "USELATESTVERSION", "NOUSELATESTVERSION", "USESNAPSHOT",
                "NOUSESNAPSHOT", "USEROWID", "NOUSEROWID")  # fmt: skip

SPECS: dict[str, Spec] = {
    "EXTRACT": Spec(("group",)),
    "REPLICAT": Spec(("group",)),
    "SOURCEDB": Spec(("word",), _LOGIN),
    "TARGETDB": Spec(("word?",), {**_LOGIN, "LIBFILE": "path", "SET": "word"}),
    "USERID": Spec(("word",), {"PASSWORD": "password", "SYSDBA": "flag"}),
    "USERIDALIAS": Spec(("word",), {"DOMAIN": "word", "SYSDBA": "flag"}),
    "EXTTRAIL": Spec(("path",), _TRAIL_OPTIONS),
    "RMTTRAIL": Spec(("path",), _TRAIL_OPTIONS),
    "EXTFILE": Spec(
        ("path",),
        {
            "MEGABYTES": "int",
            "MAXFILES": "int",
            "PURGE": "flag",
            "APPEND": "flag",
            "FORMAT": "format",
        },
    ),
    "RMTFILE": Spec(
        ("path",),
        {
            "MEGABYTES": "int",
            "MAXFILES": "int",
            "PURGE": "flag",
            "APPEND": "flag",
            "FORMAT": "format",
        },
    ),
    "RMTHOST": Spec(
        ("word",),
        {
            "MGRPORT": "int",
            "PORT": "int",
            "TIMEOUT": "int",
            "ENCRYPT": "cipher",
            "KEYNAME": "word",
            "COMPRESS": "flag",
            "COMPRESSTHRESHOLD": "int",
            "TCPBUFSIZE": "int",
            "TCPFLUSHBYTES": "int",
            "IPV4": "flag",
            "IPV6": "flag",
            "STREAMING": "flag",
            "NOSTREAMING": "flag",
            "PARAMS": "word",
        },
    ),
    "SOURCECATALOG": Spec(("word",)),
    "CHECKPOINTSECS": Spec(("int",)),
    "CACHEMGR": Spec(
        (),
        {
            "CACHESIZE": "size",
            "CACHEDIRECTORY": "path_size",
            "CACHEBUFFERSIZE": "size",
            "CACHEPAGEOUTSIZE": "size",
        },
    ),
    "REPORT": Spec((), {"AT": "time", "ON": "word"}),
    "DISCARDFILE": Spec(
        ("path",), {"APPEND": "flag", "PURGE": "flag", "MEGABYTES": "int", "MAXBYTES": "int"}
    ),
    "UPDATERECORDFORMAT": Spec(("choice_format?",)),
    "RECOVERYOPTIONS": Spec(("choice_recovery",)),
    "GROUPTRANSOPS": Spec(("int",)),
    "MAXTRANSOPS": Spec(("int",)),
    "PORT": Spec(("int",)),
    "PURGEOLDEXTRACTS": Spec(
        ("path",),
        {
            "USECHECKPOINTS": "flag",
            "NOUSECHECKPOINTS": "flag",
            "MINKEEPHOURS": "int",
            "MINKEEPDAYS": "int",
            "MINKEEPFILES": "int",
            "FREQUENCYMINUTES": "int",
            "FREQUENCYHOURS": "int",
        },
    ),
    "AUTORESTART": Spec(
        ("word", "word?"),
        {"RETRIES": "int", "WAITMINUTES": "int", "WAITSECONDS": "int", "RESETMINUTES": "int"},
    ),
    "AUTOSTART": Spec(("word", "word?")),
    "ACCESSRULE": Spec(
        (),
        {
            "PROG": "word",
            "IPADDR": "word",
            "PRI": "int",
            "ALLOW": "flag",
            "DENY": "flag",
            "USER": "word",
            "PASSWORD": "password",
            "ENCRYPTKEY": "word",
        },
    ),
    "BR": Spec(
        (),
        {
            "BRDIR": "path",
            "BRINTERVAL": "interval",
            "BRKEEPSTALEFILES": "flag",
            "BROFF": "flag",
            "BROFFONFAILURE": "flag",
            "BRRESET": "flag",
            "BRFSOPTION": "fsoption",
        },
    ),
    "WARNLONGTRANS": Spec(
        ("duration",),
        {
            "CHECKINTERVAL": "duration",
            "NOUSETHREADS": "flag",
            "USELASTREADTIME": "flag",
            "SKIPEMPTYTRANS": "flag",
        },
    ),
    "FETCHOPTIONS": Spec(
        (),
        {
            **{o: "flag" for o in _FETCH_FLAGS},
            "INCONSISTENTROW": "choice_fetch",
            "MISSINGROW": "choice_fetch",
            "MAXFETCHSTATEMENTS": "int",
        },
    ),
    "MACROCHAR": Spec(("word",)),
    "REPORTROLLOVER": Spec((), {"AT": "time", "ON": "word"}),
}
for _flag in ("GETTRUNCATES", "IGNORETRUNCATES", "LOGALLSUPCOLS", "ASSUMETARGETDEFS",
              "HANDLECOLLISIONS", "NOHANDLECOLLISIONS", "PASSTHRU", "NOPASSTHRU",
              "GETUPDATEBEFORES", "IGNOREUPDATEBEFORES", "NOLIST", "LIST",
              "COMPRESSDELETES", "NOCOMPRESSDELETES"):  # fmt: skip
    SPECS[_flag] = Spec()
for _lag in (
    "LAGREPORTMINUTES",
    "LAGREPORTHOURS",
    "LAGINFOSECONDS",
    "LAGINFOMINUTES",
    "LAGINFOHOURS",
    "LAGCRITICALSECONDS",
    "LAGCRITICALMINUTES",
    "LAGCRITICALHOURS",
    "CHECKMINUTES",
    "STARTUPVALIDATIONDELAY",
    "DOWNREPORTMINUTES",
    "DOWNREPORTHOURS",
):
    SPECS[_lag] = Spec(("int",))
SPECS["DOWNCRITICAL"] = Spec()

#: TRANLOGOPTIONS argument forms (the catalogue's names) to grammar.
_TLO_FORMS: dict[str, pp.ParserElement] = {
    "flag": pp.Empty(),
    "int": INT,
    "word": WORD,
    "path": PATH,
    "parens": PARENS,
    "tag": _named(pp.Regex(r"(?i)NULL\b|\+|[0-9A-Fa-f]+\b").set_parse_action(_tok), "a tag"),
    "login": WORD
    + pp.ZeroOrMore(
        OPT_COMMA
        + (pp.CaselessKeyword("ASMPASSWORD") | pp.CaselessKeyword("MININGPASSWORD")).suppress()
        + _KINDS["password"]
    )
    + pp.Opt(pp.CaselessKeyword("SYSDBA").set_parse_action(_tok)),
    "alias": WORD + pp.Opt(pp.Suppress(pp.CaselessKeyword("DOMAIN")) + WORD),
    "altdest": pp.Opt(pp.CaselessKeyword("PRIMARY").set_parse_action(_tok))
    + pp.Opt(pp.Suppress(pp.CaselessKeyword("INSTANCE")) + WORD)
    + PATH,
    "fmt": WORD
    + pp.Opt(pp.Suppress(pp.CaselessKeyword("INSTANCE")) + WORD)
    + pp.Opt(pp.Suppress(pp.CaselessKeyword("THREADID")) + INT),
    "onoff": pp.Opt(pp.Regex(r"(?i)(ON|OFF)\b").set_parse_action(_tok)),
    "profile": pp.Regex(r"(?i)(HIGH|MEDIUM|LOW_RES)\b").set_parse_action(_tok),
    "retain": pp.Regex(r"(?i)(ENABLED|SR|DISABLED)\b").set_parse_action(_tok),
    "handledl": pp.Opt(pp.Regex(r"(?i)(STANDBY_WARNING|STANDBY_ABEND)\b").set_parse_action(_tok)),
}


# --------------------------------------------------------------------------- builders


def _option(name: str, arg: pp.ParserElement | None) -> pp.ParserElement:
    kw: pp.ParserElement = pp.CaselessKeyword(name)
    expr: pp.ParserElement
    if arg is None:
        expr = kw
    else:
        expr = kw - pp.Group(arg).set_name(f"{arg.name or 'an argument'} after {name}")

    def act(s: str, loc: int, toks: pp.ParseResults) -> Option:
        args: tuple[Any, ...] = ()
        if arg is not None and len(toks) > 1:
            args = tuple(toks[1])
        return Option(name, loc, args)

    return expr.set_parse_action(act).set_name(name) if arg is None else expr.set_parse_action(act)


def _options(
    opts: dict[str, str], forms: dict[str, pp.ParserElement] | None = None
) -> pp.ParserElement:
    # Longest names first so that BROFFONFAILURE is not read as BROFF + garbage.
    elems = []
    for name in sorted(opts, key=len, reverse=True):
        kind = opts[name]
        if forms is not None:
            arg = forms[kind]
            elems.append(_option(name, None if kind == "flag" else arg))
        else:
            elems.append(_option(name, None if kind == "flag" else _kind(kind)))
    return pp.MatchFirst(elems).set_name("an option")


def _keyword(name: str) -> pp.ParserElement:
    return pp.CaselessKeyword(name).set_parse_action(_tok).set_name(name)


def _regular(name: str, spec: Spec) -> pp.ParserElement:
    option_kw = (
        pp.MatchFirst([pp.CaselessKeyword(o) for o in spec.options]) if spec.options else None
    )
    parts: list[pp.ParserElement] = []
    for i, kind in enumerate(spec.positional):
        optional = kind.endswith("?")
        base = _kind(kind.rstrip("?"))
        if option_kw is not None:
            base = ~option_kw + base
        lead = OPT_COMMA if i else pp.Empty()
        parts.append(pp.Opt(lead + base) if optional else lead + base)
    pos = pp.Group(pp.And(parts) if parts else pp.Empty())("positional")
    opts = pp.Group(
        pp.ZeroOrMore(OPT_COMMA + _options(spec.options)) if spec.options else pp.Empty()
    )("options")
    required = [p for p in spec.positional if not p.endswith("?")]
    head = _keyword(name)("keyword")
    body = (head - pos) if required else (head + pos)
    return (body + opts + OPT_COMMA + SEMI + pp.StringEnd()).set_name(name)


def _table(name: str) -> pp.ParserElement:
    table_opts = MAP_OPTIONS if name in ("MAP", "MAPEXCLUDE") else TABLE_OPTIONS
    opts = pp.Group(pp.ZeroOrMore(OPT_COMMA + _options(table_opts)))("options")
    return (
        _keyword(name)("keyword")
        - pp.Group(OBJECT_NAME)("positional")
        + opts
        + OPT_COMMA
        + pp.Opt(pp.Literal(";").set_parse_action(_tok))("semi")
        + pp.StringEnd()
    ).set_name(name)


def _tranlogoptions() -> pp.ParserElement:
    opts = tranlog_options()
    return (
        _keyword("TRANLOGOPTIONS")("keyword")
        + pp.Group(pp.Empty())("positional")
        - pp.Group(pp.OneOrMore(OPT_COMMA + _options(opts, _TLO_FORMS)))("options")
        + OPT_COMMA
        + SEMI
        + pp.StringEnd()
    ).set_name("TRANLOGOPTIONS")


_PORT_ITEM = _named(pp.Regex(r"\d+(?:\s*-\s*\d+)?").set_parse_action(_tok), "a port or range")


def _dynamicportlist() -> pp.ParserElement:
    return (
        _keyword("DYNAMICPORTLIST")("keyword")
        - pp.Group(_PORT_ITEM + pp.ZeroOrMore(OPT_COMMA + _PORT_ITEM))("positional")
        + pp.Group(pp.Empty())("options")
        + SEMI
        + pp.StringEnd()
    )


_COUNT_UNIT = _named(
    pp.Regex(r"(?i)(RECORDS?|SECONDS?|SECS?|MINUTES?|MINS?|HOURS?)\b").set_parse_action(_tok),
    "RECORDS, SECONDS, MINUTES or HOURS",
)


def _reportcount() -> pp.ParserElement:
    return (
        _keyword("REPORTCOUNT")("keyword")
        - pp.Group(pp.Suppress(pp.Opt(pp.CaselessKeyword("EVERY"))) + INT + _COUNT_UNIT)(
            "positional"
        )
        + pp.Group(pp.ZeroOrMore(OPT_COMMA + _options({"RATE": "flag"})))("options")
        + SEMI
        + pp.StringEnd()
    )


def _raw(name: str) -> pp.ParserElement:
    """Keyword then anything: parameters kept as structured text or not used."""
    rest = pp.Regex(r"[\s\S]*").set_parse_action(lambda s, loc, t: Tok(t[0].strip(), loc))
    return (
        _keyword(name)("keyword") + pp.Group(rest)("positional") + pp.Group(pp.Empty())("options")
    )


SPECIAL: dict[str, Any] = {
    "TABLE": lambda: _table("TABLE"),
    "TABLEEXCLUDE": lambda: _table("TABLEEXCLUDE"),
    "MAP": lambda: _table("MAP"),
    "MAPEXCLUDE": lambda: _table("MAPEXCLUDE"),
    "SEQUENCE": lambda: _table("SEQUENCE"),
    "SEQUENCEEXCLUDE": lambda: _table("SEQUENCEEXCLUDE"),
    "TRANLOGOPTIONS": _tranlogoptions,
    "DYNAMICPORTLIST": _dynamicportlist,
    "REPORTCOUNT": _reportcount,
}

#: Parameters whose argument text is kept whole (structured text, parsed by the builder).
RAW = frozenset({"DDL", "REPERROR", "DDLOPTIONS", "DDLERROR", "DDLSUBST"})


@cache
def production(name: str) -> pp.ParserElement:
    """The grammar of parameter ``name`` (upper case); unknown names parse as raw text."""
    if name in SPECIAL:
        expr: pp.ParserElement = SPECIAL[name]()
    elif name in SPECS:
        expr = _regular(name, SPECS[name])
    elif name in data_specs():  # a parameter not used, its form from parameters.txt
        d = data_specs()[name]
        expr = _regular(name, Spec(d.positional, d.options))
    else:
        expr = _raw(name)
    expr.streamline()
    # Offsets must be character offsets into the statement: never expand tabs.
    expr.parse_with_tabs()
    return expr


def option_names(name: str) -> frozenset[str]:
    if name in ("MAP", "MAPEXCLUDE"):
        return frozenset(MAP_OPTIONS)
    if name in ("TABLE", "TABLEEXCLUDE", "SEQUENCE", "SEQUENCEEXCLUDE"):
        return frozenset(TABLE_OPTIONS)
    if name in data_specs():
        return frozenset(data_specs()[name].options)
    if name == "TRANLOGOPTIONS":
        return frozenset(tranlog_options())
    spec = SPECS.get(name)
    return frozenset(spec.options) if spec else frozenset()


def parse_statement(name: str, text: str) -> Parsed:
    """Parse ``text`` (a whole statement starting with keyword ``name``).

    Raises :class:`GrammarError` with the offset of the fault and a readable message.
    """
    expr = production(name)
    try:
        res = expr.parse_string(text, parse_all=True)
    except pp.ParseBaseException as exc:
        raise GrammarError(_explain(name, text, exc), exc.loc) from exc
    keyword = res["keyword"]
    positional = tuple(res["positional"]) if "positional" in res else ()
    options = tuple(o for o in res["options"] if isinstance(o, Option)) if "options" in res else ()
    return Parsed(keyword, positional, options)


def _found(text: str, loc: int) -> str:
    rest = text[loc:].strip()
    if not rest:
        return ""
    word = pp.Regex(r"[^\s,;()]+|.").search_string(rest, max_matches=1)
    return str(word[0][0]) if word else rest[:1]


def _explain(name: str, text: str, exc: pp.ParseBaseException) -> str:
    found = _found(text, exc.loc)
    tail = f", found {found!r}" if found else " at end of statement"
    opts = option_names(name)
    msg = str(exc.msg)
    generic = "end of text" in msg or msg.endswith("an option")
    internal = "{" in msg or "unwanted token" in msg or "Suppress" in msg or "Re:" in msg
    if isinstance(exc, pp.ParseSyntaxException) and not generic and not internal:
        return f"{name}: {msg[:1].lower()}{msg[1:]}{tail}"
    if internal and found and found.upper() in option_names(name):
        return f"{name}: unexpected {found} here (is an argument missing before it?)"
    if internal:
        return f"{name}: unexpected {found!r}" if found else f"{name}: incomplete statement"
    if found and opts and found[0] not in "(,;":
        return f"unknown {name} option {found!r}{did_you_mean(found, opts)}"
    if found:
        return f"unexpected {found!r} in {name}"
    return f"{name}: incomplete statement"


# --------------------------------------------------------------------------- macros


@dataclass(frozen=True)
class MacroDef:
    name: str  # upper case, with the macro character
    params: tuple[str, ...]  # upper case, with the macro character
    body: str
    body_loc: int


@cache
def macro_production(char: str = "#") -> pp.ParserElement:
    """``MACRO #name [PARAMS (#p, ...)] BEGIN body END;``"""
    c = "\\" + char
    name = _named(pp.Regex(c + r"[A-Za-z_][A-Za-z0-9_]*"), "a macro name like #name")
    params = pp.Suppress("(") + pp.Opt(pp.DelimitedList(name)) + pp.Suppress(")")
    end = pp.CaselessKeyword("END") + pp.Literal(";") + pp.StringEnd()
    body = pp.Located(pp.SkipTo(end))
    return (  # offsets are character offsets, tabs included
        pp.CaselessKeyword("MACRO").suppress()
        - name("name")
        + pp.Opt(pp.CaselessKeyword("PARAMS").suppress() - pp.Group(params)("params"))
        - pp.CaselessKeyword("BEGIN").set_name("BEGIN").suppress()
        + body("body")
        + pp.Suppress(end)
    ).parse_with_tabs()


def parse_macro(text: str, char: str = "#") -> MacroDef:
    try:
        res = macro_production(char).parse_string(text, parse_all=True)
    except pp.ParseBaseException as exc:
        msg = str(exc.msg)
        raise GrammarError(f"MACRO: {msg[:1].lower()}{msg[1:]}", exc.loc) from exc
    body = res["body"]
    params = tuple(str(p).upper() for p in res["params"]) if "params" in res else ()
    return MacroDef(str(res["name"]).upper(), params, str(body[1][0]), int(body[0]))
