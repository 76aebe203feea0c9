"""From parsed statements to a validated :class:`~params.models.ParamFile`.

One handler per parameter name, in the :data:`HANDLERS` table; a name with a handler is
one the engine acts on. Handlers never raise for a user's mistake: they add positioned
diagnostics and go on, so that a whole file is checked in one pass.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from params import models as m
from params.catalog import did_you_mean, known_parameters
from params.errors import Diagnostic, Severity
from params.grammar import GrammarError, Option, Parsed, Tok, parse_statement
from params.text import Statement

#: GGSCI commands people paste into parameter files by mistake.
GGSCI_COMMANDS = frozenset(
    {"ADD", "ALTER", "DELETE", "INFO", "START", "STOP", "SEND", "DBLOGIN", "EDIT", "VIEW",
     "REGISTER", "UNREGISTER", "KILL", "STATUS", "LAG", "CREATE", "CLEANUP", "STATS", "GGSCI"}
)  # fmt: skip

DURATION_UNITS: dict[str, int] = {
    **dict.fromkeys(("S", "SEC", "SECS", "SECOND", "SECONDS"), 1),
    **dict.fromkeys(("M", "MIN", "MINS", "MINUTE", "MINUTES"), 60),
    **dict.fromkeys(("H", "HOUR", "HOURS"), 3600),
    **dict.fromkeys(("D", "DAY", "DAYS"), 86400),
}
SIZE_UNITS: dict[str, int] = {
    "": 1, "B": 1, "BYTE": 1, "BYTES": 1, "K": 1 << 10, "KB": 1 << 10, "M": 1 << 20,
    "MB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "T": 1 << 40, "TB": 1 << 40,
}  # fmt: skip

BRINTERVAL_MIN = 20 * 60
BRINTERVAL_MAX = 96 * 3600
CHECKINTERVAL_MIN = 300
CHECKINTERVAL_MAX = 20_000_000
TRANSCLEANUP_RANGE = (1, 43_200)
BUFSIZE_RANGE = (8_192, 10_000_000)
PORT_RANGE = (1, 65_535)
GROUP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,7}")
#: Parameters that may precede EXTRACT / REPLICAT.
MAY_PRECEDE_GROUP = frozenset({"CHARSET", "NOLIST", "LIST", "MACROCHAR", "SETENV", "INCLUDE"})


@dataclass
class Builder:
    """Mutable state while a file is read top to bottom; frozen by :meth:`finish`."""

    path: str
    fields: dict[str, Any] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    statement: Statement | None = None
    tables: list[m.TableSpec] = field(default_factory=list)
    trails: list[m.Trail] = field(default_factory=list)
    ext_files: list[m.ExtFile] = field(default_factory=list)
    unused: list[m.Unused] = field(default_factory=list)
    reperrors: list[m.RepError] = field(default_factory=list)
    tranlog: dict[str, Any] = field(default_factory=dict)
    tranlog_other: list[tuple[str, str]] = field(default_factory=list)
    manager: dict[str, Any] = field(default_factory=dict)
    get_truncates: bool = False
    get_update_befores: bool = False
    current_trail: str | None = None
    seen: dict[str, Statement] = field(default_factory=dict)
    count: int = 0
    br_statement: Statement | None = None
    br_interval_loc: int = 0
    tainted: set[str] = field(default_factory=set)

    # -- diagnostics -------------------------------------------------------------
    def add(self, sev: Severity, code: str, message: str, loc: int | None = None) -> None:
        st = self.statement
        assert st is not None
        origin = st.origin if loc is None else st.locate(loc)
        self.diagnostics.append(Diagnostic(sev, code, message, origin))

    def error(self, code: str, message: str, loc: int | None = None) -> None:
        self.add(Severity.ERROR, code, message, loc)

    def warn(self, code: str, message: str, loc: int | None = None) -> None:
        self.add(Severity.WARNING, code, message, loc)

    @property
    def line(self) -> int:
        return self.statement.origin.line if self.statement else 0

    def once(self, name: str) -> bool:
        """False (with an error) when a parameter that may appear once appears again."""
        if name in self.seen:
            first = self.seen[name].origin
            self.error("duplicate", f"{name} may appear only once (first at line {first.line})")
            return False
        assert self.statement is not None
        self.seen[name] = self.statement
        return True


Handler = Callable[[Builder, Parsed], None]


# ------------------------------------------------------------------ small converters


def _opt(p: Parsed, name: str) -> Option | None:
    return next((o for o in reversed(p.options) if o.name == name), None)


def _arg(o: Option | None, i: int = 0) -> Tok | None:
    if o is None or len(o.args) <= i:
        return None
    a = o.args[i]
    return a if isinstance(a, Tok) else None


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _int(
    b: Builder, tok: Tok | None, what: str, lo: int | None = None, hi: int | None = None
) -> int | None:
    if tok is None:
        return None
    try:
        value = int(tok.text)
    except ValueError:
        b.error("syntax", f"{what} must be a whole number, not {tok.text!r}", tok.loc)
        return None
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        rng = f"{lo} to {hi}" if hi is not None else f"at least {lo}"
        b.error("value-range", f"{what} must be {rng} (got {value})", tok.loc)
        return None
    return value


def _duration(b: Builder, tok: Tok, what: str) -> int | None:
    """``<int><unit>`` with no space, units S/M/H/D spelled as GG_REFERENCE §2.3 lists."""
    mt = re.fullmatch(r"(\d+)(\s*)([A-Za-z]*)", tok.text)
    if not mt:
        b.error("syntax", f"{what} must be a number followed by a unit, like 2H", tok.loc)
        return None
    number, space, unit = mt.groups()
    if not unit:
        b.error(
            "syntax",
            f"{what} needs a unit right after the number (S, M, H or D): {number}H?",
            tok.loc + len(number),
        )
        return None
    if space:
        b.error(
            "syntax",
            f"no space is allowed between the number and the unit ({number}{unit})",
            tok.loc + len(number),
        )
        return None
    factor = DURATION_UNITS.get(unit.upper())
    if factor is None:
        b.error(
            "syntax",
            f"unknown unit {unit!r} in {what}; use S, SEC(S), SECOND(S), M, MIN(S), MINUTE(S), "
            "H, HOUR(S), D or DAY(S)",
            tok.loc + len(number),
        )
        return None
    return int(number) * factor


def _size(b: Builder, tok: Tok, what: str) -> int | None:
    mt = re.fullmatch(r"(\d+)\s*([A-Za-z]*)", tok.text)
    unit = mt.group(2).upper() if mt else "?"
    if not mt or unit not in SIZE_UNITS:
        b.error("syntax", f"{what} must be a size like 512MB or 8GB, not {tok.text!r}", tok.loc)
        return None
    return int(mt.group(1)) * SIZE_UNITS[unit]


def _object_name(
    b: Builder, tok: Tok, what: str, catalog: str | None, target: bool = False
) -> m.ObjectName | None:
    parts = _split_name(tok.text)
    if len(parts) < 2 or len(parts) > 3 or any(p == "" for p in parts):
        b.error(
            "syntax",
            f"{what} must be owner.object or catalog.owner.object, not {tok.text!r}",
            tok.loc,
        )
        return None
    if target:
        for p in parts:
            if re.search(r"(?<!\\)\?", p) and not (p.startswith('"')):
                b.error(
                    "syntax",
                    "the ? wildcard is not allowed in a TARGET name",
                    tok.loc + tok.text.index("?"),
                )
                return None
    norm = [p if p.startswith('"') else p.upper() for p in parts]
    if len(norm) == 3:
        return m.ObjectName(norm[1], norm[2], norm[0], tok.text)
    return m.ObjectName(norm[0], norm[1], catalog.upper() if catalog else None, tok.text)


def _split_name(text: str) -> list[str]:
    parts: list[str] = []
    cur = ""
    quote = False
    for ch in text:
        if ch == '"':
            quote = not quote
        if ch == "." and not quote:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    parts.append(cur)
    return parts


# ------------------------------------------------------------------------- handlers


def h_group(b: Builder, p: Parsed) -> None:
    kw = p.keyword.upper
    if "GROUP" in b.seen:
        first = b.seen["GROUP"]
        b.error(
            "duplicate", f"{first.keyword} may appear only once (first at line {first.origin.line})"
        )
        return
    assert b.statement is not None
    b.seen["GROUP"] = b.statement
    tok = p.positional[0]
    name = _unquote(tok.text)
    if not GROUP_NAME.fullmatch(name):
        b.error(
            "value",
            f"group name {name!r} must be 1 to 8 letters, digits or underscores, "
            "starting with a letter",
            tok.loc,
        )
    if b.count > 0:
        b.error("misplaced", f"{kw} must be the first parameter in the file")
    b.fields["kind"] = m.FileKind.EXTRACT if kw == "EXTRACT" else m.FileKind.REPLICAT
    b.fields["group"] = name.upper()


def _login_from(b: Builder, p: Parsed, base: m.Login) -> m.Login:
    login = base
    if (o := _opt(p, "USERIDALIAS")) is not None and (t := _arg(o)):
        login = replace(login, alias=_unquote(t.text), userid=None)
    if (o := _opt(p, "USERID")) is not None and (t := _arg(o)):
        login = replace(login, userid=_unquote(t.text), alias=None)
    if _opt(p, "PASSWORD") is not None:
        login = replace(login, password_given=True)
    if (o := _opt(p, "DOMAIN")) is not None and (t := _arg(o)):
        login = replace(login, domain=_unquote(t.text))
    if _opt(p, "SYSDBA") is not None:
        login = replace(login, sysdba=True)
    return login


def h_sourcedb(b: Builder, p: Parsed) -> None:
    login: m.Login = b.fields.get("login", m.Login())
    login = replace(login, sourcedb=_unquote(p.positional[0].text))
    b.fields["login"] = _login_from(b, p, login)


def h_targetdb(b: Builder, p: Parsed) -> None:
    if _opt(p, "LIBFILE") is not None:
        b.warn("not-used", "TARGETDB LIBFILE (a Java adapter handler) is not used by this engine")
        _record_unused(b, p)
        return
    if not p.positional:
        b.error("syntax", "TARGETDB needs a database name or URL", len(p.keyword.text))
        return
    b.fields["target_db"] = _unquote(p.positional[0].text)
    b.fields["login"] = _login_from(b, p, b.fields.get("login", m.Login()))


def h_userid(b: Builder, p: Parsed) -> None:
    login: m.Login = b.fields.get("login", m.Login())
    b.fields["login"] = replace(
        login,
        userid=_unquote(p.positional[0].text),
        alias=None,
        password_given=_opt(p, "PASSWORD") is not None,
        sysdba=_opt(p, "SYSDBA") is not None,
    )


def h_useridalias(b: Builder, p: Parsed) -> None:
    login: m.Login = b.fields.get("login", m.Login())
    dom = _arg(_opt(p, "DOMAIN"))
    b.fields["login"] = replace(
        login,
        alias=_unquote(p.positional[0].text),
        userid=None,
        domain=_unquote(dom.text) if dom else "OracleGoldenGate",
        sysdba=_opt(p, "SYSDBA") is not None,
    )


def _format_release(b: Builder, p: Parsed) -> str | None:
    t = _arg(_opt(p, "FORMAT"))
    return t.text if t else None


def h_trail(b: Builder, p: Parsed) -> None:
    tok = p.positional[0]
    path = _unquote(tok.text)
    prefix = re.split(r"[\\/]", path)[-1]
    if not re.fullmatch(r"[A-Za-z0-9_]{1,2}", prefix):
        b.error(
            "value",
            "a trail is named by a directory and a prefix of one or two characters, "
            f"like ./dirdat/aa (got {prefix!r})",
            tok.loc + len(tok.text) - len(prefix),
        )
    mb = _int(b, _arg(_opt(p, "MEGABYTES")), "MEGABYTES", 1, 2000)
    trail = m.Trail(path, p.keyword.upper == "RMTTRAIL", _format_release(b, p), mb, b.line)
    if p.keyword.upper == "RMTTRAIL" and "rmthost" not in b.fields and "RMTHOST" not in b.tainted:
        b.error("misplaced", "RMTTRAIL needs an RMTHOST parameter before it")
    b.trails.append(trail)
    b.current_trail = path


def h_extfile(b: Builder, p: Parsed) -> None:
    path = _unquote(p.positional[0].text)
    remote = p.keyword.upper == "RMTFILE"
    b.ext_files.append(
        m.ExtFile(
            path,
            remote,
            _int(b, _arg(_opt(p, "MEGABYTES")), "MEGABYTES", 1, 2000),
            _int(b, _arg(_opt(p, "MAXFILES")), "MAXFILES", 1),
            _opt(p, "PURGE") is not None,
            _opt(p, "APPEND") is not None,
        )
    )
    b.current_trail = path


def h_rmthost(b: Builder, p: Parsed) -> None:
    b.fields["rmthost"] = m.RmtHost(
        _unquote(p.positional[0].text),
        _int(b, _arg(_opt(p, "MGRPORT")), "MGRPORT", *PORT_RANGE),
        _int(b, _arg(_opt(p, "PORT")), "PORT", *PORT_RANGE),
        _int(b, _arg(_opt(p, "TIMEOUT")), "TIMEOUT", 1),
        (t.text.upper() if (t := _arg(_opt(p, "ENCRYPT"))) else None),
        _opt(p, "COMPRESS") is not None,
    )


def h_sourcecatalog(b: Builder, p: Parsed) -> None:
    b.fields["source_catalog"] = _unquote(p.positional[0].text)


def h_checkpointsecs(b: Builder, p: Parsed) -> None:
    v = _int(b, p.positional[0], "CHECKPOINTSECS", 1, 3600)
    if v is not None:
        b.fields["checkpoint_secs"] = v


def h_cachemgr(b: Builder, p: Parsed) -> None:
    if not b.once("CACHEMGR"):
        return
    if not p.options:
        b.error(
            "syntax",
            "CACHEMGR needs at least one option (CACHESIZE, CACHEDIRECTORY)",
            len(p.keyword.text),
        )
        return
    size = None
    if (t := _arg(_opt(p, "CACHESIZE"))) is not None:
        size = _size(b, t, "CACHESIZE")
    dirs = tuple(
        _unquote(o.args[0].text) for o in p.options if o.name == "CACHEDIRECTORY" and o.args
    )
    for d in dirs:
        if re.search("te?mp", d, re.IGNORECASE):
            pass  # GoldenGate's own default is ./dirtmp: temporary names are fine here
    b.fields["cachemgr"] = m.CacheMgr(size, dirs)


def h_reportcount(b: Builder, p: Parsed) -> None:
    n = _int(b, p.positional[0], "REPORTCOUNT", 1)
    unit = p.positional[1].upper.rstrip("S")
    unit = {"SEC": "SECOND", "MIN": "MINUTE"}.get(unit, unit) + "S"
    if n is not None:
        b.fields["report_count"] = m.ReportCount(n, unit, _opt(p, "RATE") is not None)


def h_report(b: Builder, p: Parsed) -> None:
    if not p.options:
        b.error("syntax", "REPORT needs AT hh:mi and/or ON day", len(p.keyword.text))
        return
    parts = []
    if (t := _arg(_opt(p, "AT"))) is not None:
        hh, mi = (int(x) for x in t.text.split(":"))
        if hh > 23 or mi > 59:
            b.error("value-range", f"REPORT AT {t.text} is not a time of day", t.loc)
        parts.append(f"AT {t.text}")
    if (t := _arg(_opt(p, "ON"))) is not None:
        days = {"SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"}
        if t.upper not in days:
            b.error(
                "value",
                f"REPORT ON needs a day of the week, not {t.text!r}{did_you_mean(t.text, days)}",
                t.loc,
            )
        parts.append(f"ON {t.upper}")
    b.fields["report_schedule"] = (*b.fields.get("report_schedule", ()), " ".join(parts))


def h_discardfile(b: Builder, p: Parsed) -> None:
    if _opt(p, "APPEND") and _opt(p, "PURGE"):
        b.error("conflict", "DISCARDFILE takes APPEND or PURGE, not both")
    b.fields["discard"] = m.Discard(
        _unquote(p.positional[0].text),
        _opt(p, "APPEND") is not None,
        _opt(p, "PURGE") is not None,
        _int(b, _arg(_opt(p, "MEGABYTES")), "MEGABYTES", 1, 2000),
    )


def _toggle(attr: str, value: bool) -> Handler:
    def h(b: Builder, p: Parsed) -> None:
        setattr(b, attr, value)

    return h


def _flag(field_name: str, value: bool = True) -> Handler:
    def h(b: Builder, p: Parsed) -> None:
        b.fields[field_name] = value

    return h


def h_updaterecordformat(b: Builder, p: Parsed) -> None:
    b.fields["update_record_format"] = p.positional[0].upper if p.positional else "FULL"


_DDL_ITEMS = frozenset({"MAPPED", "UNMAPPED", "OTHER", "ALL", "OPTYPE", "OBJTYPE", "OBJNAME",
                        "INSTR", "INSTRCOMMENTS", "INSTRWORDS", "STAYMETADATA", "EVENTACTIONS",
                        "SOURCECATALOG", "ALLCATALOG"})  # fmt: skip
_DDL_WITH_VALUE = frozenset({"OPTYPE", "OBJTYPE", "OBJNAME", "INSTR", "INSTRCOMMENTS", "INSTRWORDS",
                             "SOURCECATALOG", "EVENTACTIONS"})  # fmt: skip


def h_ddl(b: Builder, p: Parsed) -> None:
    if not b.once("DDL"):
        return
    raw = p.positional[0] if p.positional else Tok("", len(p.keyword.text))
    text = raw.text.rstrip(";").strip()
    clauses: list[m.DdlClause] = []
    action: str | None = None
    items: list[tuple[str, str]] = []
    words = list(re.finditer(r"'[^']*'|\([^)]*\)|[^\s,]+", text))
    i = 0
    while i < len(words):
        w = words[i].group(0)
        wu = w.upper()
        if wu in ("INCLUDE", "EXCLUDE"):
            if action is not None:
                clauses.append(m.DdlClause(action, tuple(items)))
            action, items = wu, []
        elif action is None:
            b.error(
                "syntax", f"DDL expects INCLUDE or EXCLUDE, found {w!r}", raw.loc + words[i].start()
            )
            return
        elif wu in _DDL_WITH_VALUE:
            if i + 1 >= len(words):
                b.error("syntax", f"DDL {wu} needs a value", raw.loc + len(text))
                return
            items.append((wu, words[i + 1].group(0)))
            i += 1
        elif wu in _DDL_ITEMS:
            items.append((wu, ""))
        else:
            b.error(
                "syntax",
                f"unknown DDL option {w!r}{did_you_mean(w, _DDL_ITEMS | {'INCLUDE', 'EXCLUDE'})}",
                raw.loc + words[i].start(),
            )
            return
        i += 1
    if action is not None:
        clauses.append(m.DdlClause(action, tuple(items)))
    b.fields["ddl"] = m.Ddl(tuple(clauses), text)


_REPERROR_RESPONSES = frozenset({"ABEND", "DISCARD", "EXCEPTION", "IGNORE", "RETRYOP", "TRANSABORT",
                                 "RESET", "TRANSDISCARD", "TRANSEXCEPTION"})  # fmt: skip


def h_reperror(b: Builder, p: Parsed) -> None:
    raw = p.positional[0] if p.positional else Tok("", len(p.keyword.text))
    mt = re.fullmatch(r"\(\s*([^,\s)]+)\s*(?:,\s*([A-Za-z]+)(.*))?\)\s*;?", raw.text, re.DOTALL)
    if not mt:
        if raw.text.upper() in ("RESET",):
            return
        b.error(
            "syntax", "REPERROR takes (error, response), e.g. REPERROR (DEFAULT, ABEND)", raw.loc
        )
        return
    err, resp, rest = mt.group(1), (mt.group(2) or ""), (mt.group(3) or "")
    if not re.fullmatch(r"-?\d+|(?i:DEFAULT2?)", err):
        b.error(
            "syntax",
            f"REPERROR error must be a number, DEFAULT or DEFAULT2, not {err!r}",
            raw.loc + 1,
        )
        return
    if resp and resp.upper() not in _REPERROR_RESPONSES:
        b.error(
            "syntax",
            f"unknown REPERROR response {resp!r}{did_you_mean(resp, _REPERROR_RESPONSES)}",
            raw.loc + mt.start(2),
        )
        return
    b.reperrors.append(m.RepError(err.upper(), resp.upper(), rest.strip(" ,")))


def h_int_field(field_name: str, what: str, lo: int, hi: int | None = None) -> Handler:
    def h(b: Builder, p: Parsed) -> None:
        v = _int(b, p.positional[0], what, lo, hi)
        if v is not None:
            b.fields[field_name] = v

    return h


def h_port(b: Builder, p: Parsed) -> None:
    v = _int(b, p.positional[0], "PORT", *PORT_RANGE)
    if v is not None:
        b.manager["port"] = v


def h_dynamicportlist(b: Builder, p: Parsed) -> None:
    ports: list[int] = list(b.manager.get("dynamic_ports", ()))
    for tok in p.positional:
        lo_s, _, hi_s = tok.text.replace(" ", "").partition("-")
        lo, hi = int(lo_s), int(hi_s or lo_s)
        if not (PORT_RANGE[0] <= lo <= hi <= PORT_RANGE[1]):
            b.error(
                "value-range",
                f"port range {tok.text} must be ascending ports from 1 to 65535",
                tok.loc,
            )
            continue
        if hi - lo > 5000:
            b.error("value-range", f"port range {tok.text} is over 5000 ports", tok.loc)
            continue
        ports.extend(range(lo, hi + 1))
    b.manager["dynamic_ports"] = tuple(ports)


_PROCESS_TYPES = frozenset({"ER", "EXTRACT", "REPLICAT", "EXT", "REP", "JAGENT"})


def _type_and_group(b: Builder, p: Parsed) -> tuple[str, str]:
    first = p.positional[0]
    if len(p.positional) > 1 and p.positional[1] is not None:
        if first.upper not in _PROCESS_TYPES:
            b.error(
                "value", f"{first.text!r} is not a process type (ER, EXTRACT, REPLICAT)", first.loc
            )
        ptype = {"EXT": "EXTRACT", "REP": "REPLICAT"}.get(first.upper, first.upper)
        return ptype, p.positional[1].text
    if first.upper in _PROCESS_TYPES:
        b.error(
            "syntax",
            f"{p.keyword.upper} {first.text} needs a group name or wildcard",
            first.loc + len(first.text),
        )
    return "ER", first.text


def h_autostart(b: Builder, p: Parsed) -> None:
    ptype, group = _type_and_group(b, p)
    b.manager["autostart"] = (*b.manager.get("autostart", ()), m.AutoStart(ptype, group))


def h_autorestart(b: Builder, p: Parsed) -> None:
    ptype, group = _type_and_group(b, p)
    ar = m.AutoRestart(ptype, group)
    if (v := _int(b, _arg(_opt(p, "RETRIES")), "RETRIES", 0)) is not None:
        ar = replace(ar, retries=v)
    if (v := _int(b, _arg(_opt(p, "WAITMINUTES")), "WAITMINUTES", 0)) is not None:
        ar = replace(ar, wait_minutes=v)
    if (v := _int(b, _arg(_opt(p, "RESETMINUTES")), "RESETMINUTES", 0)) is not None:
        ar = replace(ar, reset_minutes=v)
    b.manager["autorestart"] = (*b.manager.get("autorestart", ()), ar)


def h_purgeoldextracts(b: Builder, p: Parsed) -> None:
    if _opt(p, "USECHECKPOINTS") and _opt(p, "NOUSECHECKPOINTS"):
        b.error("conflict", "PURGEOLDEXTRACTS takes USECHECKPOINTS or NOUSECHECKPOINTS, not both")
    keeps = [o.name for o in p.options if o.name.startswith("MINKEEP")]
    if len(keeps) > 1:
        b.error("conflict", f"PURGEOLDEXTRACTS takes one MINKEEP option, got {', '.join(keeps)}")
    freq = _int(b, _arg(_opt(p, "FREQUENCYMINUTES")), "FREQUENCYMINUTES", 1)
    fh = _int(b, _arg(_opt(p, "FREQUENCYHOURS")), "FREQUENCYHOURS", 1)
    po = m.PurgeOldExtracts(
        _unquote(p.positional[0].text),
        _opt(p, "NOUSECHECKPOINTS") is None,
        _int(b, _arg(_opt(p, "MINKEEPHOURS")), "MINKEEPHOURS", 0),
        _int(b, _arg(_opt(p, "MINKEEPDAYS")), "MINKEEPDAYS", 0),
        _int(b, _arg(_opt(p, "MINKEEPFILES")), "MINKEEPFILES", 1, 100),
        freq if freq is not None else (fh * 60 if fh is not None else 60),
    )
    b.manager["purge_old_extracts"] = (*b.manager.get("purge_old_extracts", ()), po)


def h_lag(field_name: str, factor: int) -> Handler:
    def h(b: Builder, p: Parsed) -> None:
        v = _int(b, p.positional[0], p.keyword.upper, 1)
        if v is not None:
            b.manager[field_name] = v * factor

    return h


def h_br(b: Builder, p: Parsed) -> None:
    if not b.once("BR"):
        return
    b.br_statement = b.statement
    br = m.BoundedRecovery(explicit=True)
    for o in p.options:
        if o.name == "BRRESET":
            b.error(
                "startup-option",
                "BRRESET is a start-up option: give it on the command line "
                "(ggsci extract paramfile FILE BRRESET), not in the parameter file",
                o.loc,
            )
    if (t := _arg(_opt(p, "BRDIR"))) is not None:
        d = _unquote(t.text)
        hit = re.search("temp|tmp", d, re.IGNORECASE)
        if hit:
            b.error(
                "value",
                f"BRDIR {d!r} contains {hit.group(0)!r}: temporary directories may be cleaned up, "
                "losing the Bounded Recovery files",
                t.loc + (1 if t.text != d else 0) + hit.start(),
            )
        br = replace(br, brdir=d)
    if (t := _arg(_opt(p, "BRINTERVAL"))) is not None:
        mt = re.fullmatch(r"(\d+)\s*([A-Za-z]*)", t.text)
        unit = mt.group(2).upper() if mt else ""
        if not mt or unit not in ("M", "H"):
            b.error(
                "syntax",
                f"BRINTERVAL is a number and M or H, like 20M or 4H (got {t.text!r})",
                t.loc,
            )
        else:
            secs = int(mt.group(1)) * (60 if unit == "M" else 3600)
            if not BRINTERVAL_MIN <= secs <= BRINTERVAL_MAX:
                b.error("value-range", f"BRINTERVAL must be from 20M to 96H (got {t.text})", t.loc)
            else:
                br = replace(br, interval=secs, effective_interval=secs)
                b.br_interval_loc = t.loc
    if (t := _arg(_opt(p, "BRFSOPTION"))) is not None:
        br = replace(br, fs_option=t.upper)
    br = replace(
        br,
        keep_stale_files=_opt(p, "BRKEEPSTALEFILES") is not None,
        off=_opt(p, "BROFF") is not None,
        off_on_failure=_opt(p, "BROFFONFAILURE") is not None,
    )
    b.fields["br"] = br


def h_brreset(b: Builder, p: Parsed) -> None:
    b.error(
        "startup-option",
        "BRRESET is a start-up option: give it on the command line "
        "(ggsci extract paramfile FILE BRRESET), not in the parameter file",
    )


def h_warnlongtrans(b: Builder, p: Parsed) -> None:
    wl = m.WarnLongTrans(explicit=True)
    thr = _duration(b, p.positional[0], "WARNLONGTRANS")
    if thr is not None:
        if thr <= 0:
            b.error("value-range", "WARNLONGTRANS must be longer than zero", p.positional[0].loc)
        wl = replace(wl, threshold=thr)
    if (t := _arg(_opt(p, "CHECKINTERVAL"))) is not None:
        ci = _duration(b, t, "CHECKINTERVAL")
        if ci is not None:
            if ci < CHECKINTERVAL_MIN:
                b.error(
                    "value-range", f"CHECKINTERVAL must be at least 5 minutes (got {t.text})", t.loc
                )
            elif ci > CHECKINTERVAL_MAX:
                b.error(
                    "value-range",
                    f"CHECKINTERVAL must be at most {CHECKINTERVAL_MAX} seconds",
                    t.loc,
                )
            else:
                wl = replace(wl, check_interval=ci)
    b.fields["warn_long_trans"] = replace(
        wl,
        use_threads=_opt(p, "NOUSETHREADS") is None,
        use_last_read_time=_opt(p, "USELASTREADTIME") is not None,
        skip_empty_trans=_opt(p, "SKIPEMPTYTRANS") is not None,
    )


def h_tranlogoptions(b: Builder, p: Parsed) -> None:
    t = b.tranlog
    for o in p.options:
        a = _arg(o)
        if o.name == "PURGEORPHANEDTRANSACTIONS":
            t["purge_orphaned"] = True
        elif o.name == "NOPURGEORPHANEDTRANSACTIONS":
            t["purge_orphaned"] = False
        elif o.name == "TRANSCLEANUPFREQUENCY":
            v = _int(b, a, "TRANSCLEANUPFREQUENCY (minutes)", *TRANSCLEANUP_RANGE)
            if v is not None:
                t["trans_cleanup_frequency"] = v
        elif o.name == "EXCLUDEUSER" and a is not None:
            t["exclude_users"] = (*t.get("exclude_users", ()), _unquote(a.text))
        elif o.name == "EXCLUDEUSERID":
            v = _int(b, a, "EXCLUDEUSERID", 0)
            if v is not None:
                t["exclude_user_ids"] = (*t.get("exclude_user_ids", ()), v)
        elif o.name == "EXCLUDETRANS" and a is not None:
            t["exclude_trans"] = (*t.get("exclude_trans", ()), _unquote(a.text))
        elif o.name in ("EXCLUDETAG", "INCLUDETAG") and a is not None:
            key = "exclude_tags" if o.name == "EXCLUDETAG" else "include_tags"
            t[key] = (*t.get(key, ()), a.upper)
        elif o.name == "ARCHIVEDLOGONLY":
            t["archived_log_only"] = True
        elif o.name == "NOARCHIVEDLOGONLY":
            t["archived_log_only"] = False
        elif o.name == "ALTARCHIVELOGDEST":
            path = [x for x in o.args if isinstance(x, Tok)][-1]
            t["alt_archive_log_dests"] = (*t.get("alt_archive_log_dests", ()), _unquote(path.text))
        elif o.name == "BUFSIZE":
            v = _int(b, a, "BUFSIZE (bytes)", *BUFSIZE_RANGE)
            if v is not None:
                t["bufsize"] = v
        else:
            args = " ".join(x.text for x in o.args if isinstance(x, Tok))
            b.tranlog_other.append((o.name, args))
            b.warn(
                "not-used",
                f"TRANLOGOPTIONS {o.name} is accepted but not used by this engine",
                o.loc,
            )
    if not p.options:
        b.error("syntax", "TRANLOGOPTIONS needs an option", len(p.keyword.text))


_TABLE_FOR = {"EXTRACT": ("TABLE", "TABLEEXCLUDE", "SEQUENCE", "SEQUENCEEXCLUDE"),
              "REPLICAT": ("MAP", "MAPEXCLUDE")}  # fmt: skip


def h_table(b: Builder, p: Parsed) -> None:
    kw = p.keyword.upper
    kind = b.fields.get("kind")
    if kind == m.FileKind.REPLICAT and kw in _TABLE_FOR["EXTRACT"] and kw != "TABLEEXCLUDE":
        b.error(
            "misplaced",
            f"{kw} is an Extract parameter; a Replicat maps tables with MAP ... TARGET ...;",
        )
        return
    if kind == m.FileKind.EXTRACT and kw in _TABLE_FOR["REPLICAT"]:
        b.error("misplaced", f"{kw} is a Replicat parameter; an Extract selects tables with TABLE")
        return
    if (
        kind == m.FileKind.EXTRACT
        and kw in ("TABLE", "SEQUENCE")
        and b.current_trail is None
        and "rmttask" not in b.fields
    ):
        b.error(
            "misplaced",
            f"{kw} must come after EXTTRAIL, RMTTRAIL, EXTFILE or RMTFILE (which trail gets it?)",
        )
    catalog = b.fields.get("source_catalog")
    src = _object_name(b, p.positional[0], f"{kw} name", catalog)
    if src is None:
        return
    target = None
    target_given = False
    opts: list[m.TableOption] = []
    for o in p.options:
        a = _arg(o)
        if o.name == "TARGET":
            target_given = True
            if a is not None:
                target = _object_name(b, a, "TARGET name", None, target=True)
            continue
        opts.append(m.TableOption(o.name, a.text if a else None))
    if kw == "MAP" and not target_given:
        b.error(
            "syntax",
            "MAP needs a TARGET: MAP owner.table, TARGET owner.table;",
            len(p.keyword.text),
        )
        return
    for name in ("COLS", "COLSEXCEPT"):
        if sum(1 for o in opts if o.name == name) > 1:
            b.error("duplicate", f"{name} given twice in one {kw} statement")
    if any(o.name == "COLS" for o in opts) and any(o.name == "COLSEXCEPT" for o in opts):
        b.error("conflict", f"{kw} takes COLS or COLSEXCEPT, not both")
    b.tables.append(
        m.TableSpec(
            kw,
            src,
            target,
            tuple(opts),
            b.get_truncates,
            b.get_update_befores,
            b.current_trail,
            b.line,
        )
    )


def h_noop(b: Builder, p: Parsed) -> None:
    """Parameters consumed by the preprocessor or purely listing controls."""


def h_rmttask(b: Builder, p: Parsed) -> None:
    b.fields["rmttask"] = True
    b.warn("not-used", "RMTTASK (initial-load task) is not used by this engine")
    _record_unused(b, p)


def _record_unused(b: Builder, p: Parsed) -> None:
    assert b.statement is not None
    b.unused.append(m.Unused(p.keyword.upper, b.statement.text, b.line))


HANDLERS: dict[str, Handler] = {
    "EXTRACT": h_group,
    "REPLICAT": h_group,
    "SOURCEDB": h_sourcedb,
    "TARGETDB": h_targetdb,
    "USERID": h_userid,
    "USERIDALIAS": h_useridalias,
    "EXTTRAIL": h_trail,
    "RMTTRAIL": h_trail,
    "EXTFILE": h_extfile,
    "RMTFILE": h_extfile,
    "RMTHOST": h_rmthost,
    "SOURCECATALOG": h_sourcecatalog,
    "CHECKPOINTSECS": h_checkpointsecs,
    "CACHEMGR": h_cachemgr,
    "REPORTCOUNT": h_reportcount,
    "REPORT": h_report,
    "DISCARDFILE": h_discardfile,
    "GETTRUNCATES": _toggle("get_truncates", True),
    "IGNORETRUNCATES": _toggle("get_truncates", False),
    "GETUPDATEBEFORES": _toggle("get_update_befores", True),
    "IGNOREUPDATEBEFORES": _toggle("get_update_befores", False),
    "LOGALLSUPCOLS": _flag("log_all_sup_cols"),
    "UPDATERECORDFORMAT": h_updaterecordformat,
    "DDL": h_ddl,
    "ASSUMETARGETDEFS": _flag("assume_target_defs"),
    "HANDLECOLLISIONS": _flag("handle_collisions"),
    "NOHANDLECOLLISIONS": _flag("handle_collisions", False),
    "PASSTHRU": _flag("passthru"),
    "NOPASSTHRU": _flag("passthru", False),
    "REPERROR": h_reperror,
    "GROUPTRANSOPS": h_int_field("group_trans_ops", "GROUPTRANSOPS", 1),
    "MAXTRANSOPS": h_int_field("max_trans_ops", "MAXTRANSOPS", 1),
    "PORT": h_port,
    "DYNAMICPORTLIST": h_dynamicportlist,
    "AUTOSTART": h_autostart,
    "AUTORESTART": h_autorestart,
    "PURGEOLDEXTRACTS": h_purgeoldextracts,
    "LAGREPORTMINUTES": h_lag("lag_report_minutes", 1),
    "LAGREPORTHOURS": h_lag("lag_report_minutes", 60),
    "LAGINFOSECONDS": h_lag("lag_info_seconds", 1),
    "LAGINFOMINUTES": h_lag("lag_info_seconds", 60),
    "LAGINFOHOURS": h_lag("lag_info_seconds", 3600),
    "LAGCRITICALSECONDS": h_lag("lag_critical_seconds", 1),
    "LAGCRITICALMINUTES": h_lag("lag_critical_seconds", 60),
    "LAGCRITICALHOURS": h_lag("lag_critical_seconds", 3600),
    "BR": h_br,
    "BRRESET": h_brreset,
    "WARNLONGTRANS": h_warnlongtrans,
    "TRANLOGOPTIONS": h_tranlogoptions,
    "TABLE": h_table,
    "TABLEEXCLUDE": h_table,
    "MAP": h_table,
    "MAPEXCLUDE": h_table,
    "SEQUENCE": h_table,
    "SEQUENCEEXCLUDE": h_table,
    "MACROCHAR": h_noop,
    "NOLIST": h_noop,
    "LIST": h_noop,
    "RMTTASK": h_rmttask,
}

MANAGER_PARAMETERS = frozenset(
    {"PORT", "DYNAMICPORTLIST", "AUTOSTART", "AUTORESTART", "PURGEOLDEXTRACTS", "ACCESSRULE",
     "LAGREPORTMINUTES", "LAGREPORTHOURS", "LAGINFOSECONDS", "LAGINFOMINUTES", "LAGINFOHOURS",
     "LAGCRITICALSECONDS", "LAGCRITICALMINUTES", "LAGCRITICALHOURS", "DOWNREPORTMINUTES",
     "DOWNREPORTHOURS", "DOWNCRITICAL", "UPREPORTMINUTES", "UPREPORTHOURS", "BOOTDELAYMINUTES",
     "CHECKMINUTES", "PURGEOLDTASKS", "STARTUPVALIDATIONDELAY", "DYNAMICPORTREASSIGNDELAY"}
)  # fmt: skip


def engine_parameters() -> frozenset[str]:
    """Names the engine acts on (those with a handler)."""
    return frozenset(HANDLERS)


def all_parameters() -> frozenset[str]:
    return known_parameters() | engine_parameters()


def build(
    path: str, statements: list[Statement], *, is_globals: bool = False
) -> tuple[m.ParamFile, list[Diagnostic]]:
    """Validate ``statements`` (already preprocessed) into a model and its diagnostics."""
    b = Builder(path)
    names = all_parameters()
    for st in statements:
        b.statement = st
        kw = st.keyword
        if not kw:
            b.error("syntax", f"expected a parameter name, found {st.text.strip()[:20]!r}")
            continue
        if kw in GGSCI_COMMANDS:
            b.error(
                "ggsci-command",
                f"{kw} is a GGSCI command, not a parameter: run it in GGSCI (or an OBEY script), "
                "not in a parameter file",
            )
            continue
        handler = HANDLERS.get(kw)
        if handler is None and kw not in names:
            b.error(
                "unknown-parameter",
                f"unknown parameter {_first_word(st)!r}{did_you_mean(kw, names)}",
            )
            continue
        if handler is None:
            b.warn("not-used", f"{kw} is a GoldenGate parameter not used by this engine")
            b.unused.append(m.Unused(kw, st.text, b.line))
            if kw not in MAY_PRECEDE_GROUP:
                b.count += 1
            continue
        try:
            parsed = parse_statement(kw, st.text)
        except GrammarError as exc:
            if st.tainted:
                b.tainted.add(kw)
            else:
                b.error("syntax", exc.message, exc.loc)
            b.count += 1
            continue
        mark = len(b.diagnostics)
        handler(b, parsed)
        if st.tainted:
            del b.diagnostics[mark:]
        if kw not in MAY_PRECEDE_GROUP:
            b.count += 1
    return _finish(b, is_globals), b.diagnostics


def _first_word(st: Statement) -> str:
    w = st.text.split()
    return w[0] if w else ""


def _finish(b: Builder, is_globals: bool) -> m.ParamFile:
    f = b.fields
    kind = f.get("kind")
    if kind is None:
        if is_globals:
            kind = m.FileKind.GLOBALS
        elif b.manager:
            kind = m.FileKind.MANAGER
        else:
            kind = m.FileKind.OTHER
    cps = f.get("checkpoint_secs", 10)
    br: m.BoundedRecovery = f.get("br", m.BoundedRecovery())
    eff = math.ceil(br.interval / cps) * cps
    if eff > BRINTERVAL_MAX:  # rounding up must not leave the allowed range
        eff = (br.interval // cps) * cps
    br = replace(br, effective_interval=eff)
    if br.rounded and b.br_statement is not None:
        b.statement = b.br_statement
        b.add(
            Severity.NOTE,
            "br-rounded",
            f"BRINTERVAL {br.interval}s runs as {eff}s, a whole multiple of CHECKPOINTSECS {cps}",
            b.br_interval_loc,
        )
    tl = b.tranlog
    tranlog = m.TranlogOptions(**tl, other=tuple(b.tranlog_other))
    mgr = m.Manager(**b.manager)
    return m.ParamFile(
        path=b.path,
        kind=kind,
        group=f.get("group"),
        login=f.get("login", m.Login()),
        source_catalog=f.get("source_catalog"),
        trails=tuple(b.trails),
        ext_files=tuple(b.ext_files),
        rmthost=f.get("rmthost"),
        tables=tuple(b.tables),
        checkpoint_secs=cps,
        cachemgr=f.get("cachemgr", m.CacheMgr()),
        br=br,
        warn_long_trans=f.get("warn_long_trans", m.WarnLongTrans()),
        tranlog=tranlog,
        report_count=f.get("report_count"),
        report_schedule=f.get("report_schedule", ()),
        discard=f.get("discard"),
        log_all_sup_cols=f.get("log_all_sup_cols", False),
        update_record_format=f.get("update_record_format"),
        ddl=f.get("ddl"),
        assume_target_defs=f.get("assume_target_defs", False),
        handle_collisions=f.get("handle_collisions", False),
        passthru=f.get("passthru", False),
        reperrors=tuple(b.reperrors),
        group_trans_ops=f.get("group_trans_ops", 1000),
        max_trans_ops=f.get("max_trans_ops"),
        target_db=f.get("target_db"),
        manager=mgr,
        unused=tuple(b.unused),
    )
