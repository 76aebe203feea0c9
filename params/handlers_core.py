"""Handlers of the parameters shared by Extract and Replicat: the group, logins, trails
and files, tables and maps, and the reporting and error options. One function per
parameter name; :mod:`params.build` holds the table that maps names to them."""

from __future__ import annotations

import re
from dataclasses import replace

from params import models as m
from params.builder import (
    DISCARD_MAXBYTES,
    DISCARD_MEGABYTES,
    GROUP_NAME,
    PORT_RANGE,
    TRAIL_MEGABYTES,
    Builder,
    Handler,
    arg_of,
    as_int,
    as_object_name,
    as_size,
    opt_named,
    unquote,
)
from params.catalog import FORMAT_RELEASES, did_you_mean, format_release_name
from params.grammar import Option, Parsed, Tok
from params.handlers_map import map_behaviour
from params.handlers_table import table_behaviour

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
    name = unquote(tok.text)
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
    want = b.expected
    if want is not None and (kw != want.kind or (want.name or name.upper()) != name.upper()):
        b.error("wrong-group", f"{kw} {name}: {want.mismatch(f'{kw} {name}')}", tok.loc)
        b.fields["kind"] = want.file_kind  # the rest is judged as the file of the group it is


def _login_from(b: Builder, p: Parsed, base: m.Login) -> m.Login:
    login = base
    if (o := opt_named(p, "USERIDALIAS")) is not None and (t := arg_of(o)):
        login = replace(login, alias=unquote(t.text), userid=None)
    if (o := opt_named(p, "USERID")) is not None and (t := arg_of(o)):
        login = replace(login, userid=unquote(t.text), alias=None)
    if opt_named(p, "PASSWORD") is not None:
        login = replace(login, password_given=True)
    if (o := opt_named(p, "DOMAIN")) is not None and (t := arg_of(o)):
        login = replace(login, domain=unquote(t.text))
    if opt_named(p, "SYSDBA") is not None:
        login = replace(login, sysdba=True)
    return login


def h_sourcedb(b: Builder, p: Parsed) -> None:
    login: m.Login = b.fields.get("login", m.Login())
    login = replace(login, sourcedb=unquote(p.positional[0].text))
    b.fields["login"] = _login_from(b, p, login)


def h_targetdb(b: Builder, p: Parsed) -> None:
    if (lib := opt_named(p, "LIBFILE")) is not None:
        _targetdb_libfile(b, p, lib)
        return
    if not p.positional:
        b.error("syntax", "TARGETDB needs a database name or URL", len(p.keyword.text))
        return
    if (o := opt_named(p, "SET")) is not None:
        b.warn("not-used", "TARGETDB SET is used with LIBFILE only (a Big Data handler's "
               "properties file)", o.loc)  # fmt: skip
    b.fields["target_db"] = unquote(p.positional[0].text)
    b.fields["login"] = _login_from(b, p, b.fields.get("login", m.Login()))


def _targetdb_libfile(b: Builder, p: Parsed, lib: Option) -> None:
    """TARGETDB LIBFILE libggjava.so SET property=dirprm/NAME.props (GoldenGate for Big
    Data): the handler's properties file, read and checked by params.check."""
    lib_tok = arg_of(lib)
    if lib_tok is not None and unquote(lib_tok.text).rsplit("/", 1)[-1] != "libggjava.so":
        b.error("value", "TARGETDB LIBFILE must be libggjava.so (the Big Data adapter)",
                lib_tok.loc)  # fmt: skip
    tok = arg_of(opt_named(p, "SET"))
    text = unquote(tok.text) if tok is not None else ""
    key, eq, path = text.partition("=")
    if tok is None or not eq or key.strip().lower() != "property" or not path.strip():
        b.error("syntax", "TARGETDB LIBFILE needs SET property=dirprm/NAME.props",
                tok.loc if tok is not None else len(p.keyword.text))  # fmt: skip
        return
    assert tok is not None and b.statement is not None
    skip = len(key) + 1 + (len(tok.text) - len(text)) // 2
    o = b.statement.locate(tok.loc + skip)
    b.fields["handler_props"] = m.HandlerPropsFile(path.strip(), o.line, o.col, o.source)
    for other in ("USERID", "USERIDALIAS", "DOMAIN"):
        if (opt := opt_named(p, other)) is not None:
            b.warn("not-used", f"TARGETDB {other} is not used with LIBFILE (a Big Data "
                   "handler reads its properties file)", opt.loc)  # fmt: skip


def h_userid(b: Builder, p: Parsed) -> None:
    login: m.Login = b.fields.get("login", m.Login())
    b.fields["login"] = replace(
        login,
        userid=unquote(p.positional[0].text),
        alias=None,
        password_given=opt_named(p, "PASSWORD") is not None,
        sysdba=opt_named(p, "SYSDBA") is not None,
    )


def h_useridalias(b: Builder, p: Parsed) -> None:
    login: m.Login = b.fields.get("login", m.Login())
    dom = arg_of(opt_named(p, "DOMAIN"))
    b.fields["login"] = replace(
        login,
        alias=unquote(p.positional[0].text),
        userid=None,
        domain=unquote(dom.text) if dom else "OracleGoldenGate",
        sysdba=opt_named(p, "SYSDBA") is not None,
    )


def _format_release(b: Builder, p: Parsed) -> str | None:
    """FORMAT RELEASE m.n (m.n.x.y counts as m.n), one of the releases ggsci writes."""
    t = arg_of(opt_named(p, "FORMAT"))
    if t is None:
        return None
    release = format_release_name(t.text)
    if release is None:
        b.error(
            "value",
            f"FORMAT RELEASE {t.text} is not a trail format release ggsci writes "
            f"(known: {', '.join(FORMAT_RELEASES)})",
            t.loc,
        )
        return None
    return release


def h_trail(b: Builder, p: Parsed) -> None:
    tok = p.positional[0]
    path = unquote(tok.text)
    prefix = re.split(r"[\\/]", path)[-1]
    if not re.fullmatch(r"[A-Za-z0-9_]{1,2}", prefix):
        b.error(
            "value",
            "a trail is named by a directory and a prefix of one or two characters, "
            f"like ./dirdat/aa (got {prefix!r})",
            tok.loc + len(tok.text) - len(prefix),
        )
    mb = as_int(b, arg_of(opt_named(p, "MEGABYTES")), "MEGABYTES", *TRAIL_MEGABYTES)
    checksum = opt_named(p, "NOCHECKSUM") is None
    if not checksum and opt_named(p, "CHECKSUM") is not None:
        b.error("value", "CHECKSUM and NOCHECKSUM together: choose one", tok.loc)
    objectdefs = opt_named(p, "NO_OBJECTDEFS") is None
    if not objectdefs and opt_named(p, "OBJECTDEFS") is not None:
        b.error("value", "OBJECTDEFS and NO_OBJECTDEFS together: choose one", tok.loc)
    trail = m.Trail(
        path,
        p.keyword.upper == "RMTTRAIL",
        _format_release(b, p),
        mb,
        b.line,
        checksum,
        objectdefs,
    )
    if p.keyword.upper == "RMTTRAIL" and "rmthost" not in b.fields and "RMTHOST" not in b.tainted:
        b.error("misplaced", "RMTTRAIL needs an RMTHOST parameter before it")
    b.trails.append(trail)
    b.current_trail = path


def h_extfile(b: Builder, p: Parsed) -> None:
    path = unquote(p.positional[0].text)
    remote = p.keyword.upper == "RMTFILE"
    b.ext_files.append(
        m.ExtFile(
            path,
            remote,
            as_int(b, arg_of(opt_named(p, "MEGABYTES")), "MEGABYTES", *TRAIL_MEGABYTES),
            as_int(b, arg_of(opt_named(p, "MAXFILES")), "MAXFILES", 1),
            opt_named(p, "PURGE") is not None,
            opt_named(p, "APPEND") is not None,
        )
    )
    b.current_trail = path


#: The key ENCRYPT uses without KEYNAME: GoldenGate's wallet master key, which this engine
#: takes from the ENCKEYS file under this name.
MASTER_KEY_NAME = "OGG_DEFAULT_MASTERKEY"


def h_rmthost(b: Builder, p: Parsed) -> None:
    """RMTHOST host [, MGRPORT n | , PORT n] [, options]: each option acts
    (engine/pump/remote.py) or is refused here; PARAMS is the one not used. Without MGRPORT
    and PORT the Manager is asked at GoldenGate's default port, 7809."""
    mgrport, port = opt_named(p, "MGRPORT"), opt_named(p, "PORT")
    if mgrport is not None and port is not None:
        b.error(
            "conflict",
            "RMTHOST takes MGRPORT (a Manager) or PORT (a static Collector), not both",
            port.loc,
        )
    elif mgrport is None and port is None:
        b.error(
            "syntax", "RMTHOST needs MGRPORT (the target's Manager) or PORT (a static Collector)"
        )
    cipher = arg_of(opt_named(p, "ENCRYPT"))
    encrypt = cipher.upper if cipher is not None else None
    keyname = arg_of(opt_named(p, "KEYNAME"))
    if encrypt == "BLOWFISH":
        b.error(
            "value",
            "RMTHOST ENCRYPT BLOWFISH is not supported: use AES128, AES192 or AES256",
            cipher.loc if cipher else None,
        )
    if encrypt == "NONE":
        encrypt = None
    default_key = None
    if encrypt not in (None, "BLOWFISH") and keyname is None:
        # GoldenGate then encrypts with the wallet's master key; this engine has no wallet,
        # so the key of that name in the ENCKEYS file stands for it (docs/remote.md).
        default_key = MASTER_KEY_NAME
        b.warn(
            "default",
            f"RMTHOST ENCRYPT {encrypt} without KEYNAME uses the key {MASTER_KEY_NAME} of the "
            "ENCKEYS file (this engine has no wallet)",
            cipher.loc if cipher else None,
        )
    if keyname is not None and encrypt is None:
        b.error("syntax", "RMTHOST KEYNAME needs ENCRYPT AES128, AES192 or AES256", keyname.loc)
    ipv4, ipv6 = opt_named(p, "IPV4"), opt_named(p, "IPV6")
    if ipv4 is not None and ipv6 is not None:
        b.error("conflict", "RMTHOST takes IPV4 or IPV6, not both", ipv6.loc)
    stream = [o.name for o in p.options if o.name in ("STREAMING", "NOSTREAMING")]
    b.fields["rmthost"] = m.RmtHost(
        unquote(p.positional[0].text),
        as_int(b, arg_of(mgrport), "MGRPORT", *PORT_RANGE),
        as_int(b, arg_of(port), "PORT", *PORT_RANGE),
        as_int(b, arg_of(opt_named(p, "TIMEOUT")), "TIMEOUT", 1, 1800),
        encrypt,
        opt_named(p, "COMPRESS") is not None,
        unquote(keyname.text) if keyname is not None else default_key,
        as_int(b, arg_of(opt_named(p, "COMPRESSTHRESHOLD")), "COMPRESSTHRESHOLD", 0, 28_000),
        as_int(b, arg_of(opt_named(p, "TCPBUFSIZE")), "TCPBUFSIZE", 1000, 100_000_000),
        as_int(b, arg_of(opt_named(p, "TCPFLUSHBYTES")), "TCPFLUSHBYTES", 1000, 100_000_000),
        not stream or stream[-1] == "STREAMING",
        4 if ipv4 is not None else 6 if ipv6 is not None else None,
    )


def h_sourcecatalog(b: Builder, p: Parsed) -> None:
    b.fields["source_catalog"] = unquote(p.positional[0].text)


def h_checkpointsecs(b: Builder, p: Parsed) -> None:
    v = as_int(b, p.positional[0], "CHECKPOINTSECS", 1, 3600)
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
    if (t := arg_of(opt_named(p, "CACHESIZE"))) is not None:
        size = as_size(b, t, "CACHESIZE")
    dirs = tuple(
        unquote(o.args[0].text) for o in p.options if o.name == "CACHEDIRECTORY" and o.args
    )
    for d in dirs:
        if re.search("te?mp", d, re.IGNORECASE):
            pass  # GoldenGate's own default is ./dirtmp: temporary names are fine here
    b.fields["cachemgr"] = m.CacheMgr(size, dirs)


def h_reportcount(b: Builder, p: Parsed) -> None:
    n = as_int(b, p.positional[0], "REPORTCOUNT", 1)
    unit = p.positional[1].upper.rstrip("S")
    unit = {"SEC": "SECOND", "MIN": "MINUTE"}.get(unit, unit) + "S"
    if n is not None:
        b.fields["report_count"] = m.ReportCount(n, unit, opt_named(p, "RATE") is not None)


def h_report(b: Builder, p: Parsed) -> None:
    """REPORT or REPORTROLLOVER: AT hh:mi and/or ON day, each statement one more moment."""
    kw = p.keyword.upper
    field = "report_schedule" if kw == "REPORT" else "report_rollover"
    if not p.options:
        b.error("syntax", f"{kw} needs AT hh:mi and/or ON day", len(p.keyword.text))
        return
    parts = []
    if (t := arg_of(opt_named(p, "AT"))) is not None:
        hh, mi = (int(x) for x in t.text.split(":"))
        if hh > 23 or mi > 59:
            b.error("value-range", f"{kw} AT {t.text} is not a time of day", t.loc)
        parts.append(f"AT {t.text}")
    if (t := arg_of(opt_named(p, "ON"))) is not None:
        days = {"SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"}
        if t.upper not in days:
            b.error(
                "value",
                f"{kw} ON needs a day of the week, not {t.text!r}{did_you_mean(t.text, days)}",
                t.loc,
            )
        parts.append(f"ON {t.upper}")
    b.fields[field] = (*b.fields.get(field, ()), " ".join(parts))


def h_discardfile(b: Builder, p: Parsed) -> None:
    if opt_named(p, "APPEND") and opt_named(p, "PURGE"):
        b.error("conflict", "DISCARDFILE takes APPEND or PURGE, not both")
    if opt_named(p, "MAXBYTES") and opt_named(p, "MEGABYTES"):
        b.error("conflict", "DISCARDFILE takes MAXBYTES or MEGABYTES, not both")
    b.fields["discard"] = m.Discard(
        unquote(p.positional[0].text),
        opt_named(p, "APPEND") is not None,
        opt_named(p, "PURGE") is not None,
        as_int(b, arg_of(opt_named(p, "MEGABYTES")), "MEGABYTES", *DISCARD_MEGABYTES),
        as_int(b, arg_of(opt_named(p, "MAXBYTES")), "MAXBYTES", *DISCARD_MAXBYTES),
    )


def toggle_handler(attr: str, value: bool) -> Handler:
    def h(b: Builder, p: Parsed) -> None:
        setattr(b, attr, value)

    return h


def flag_handler(field_name: str, value: bool = True) -> Handler:
    def h(b: Builder, p: Parsed) -> None:
        b.fields[field_name] = value

    return h


def h_updaterecordformat(b: Builder, p: Parsed) -> None:
    """Without its option: COMPACT, the default of the 19c+ reference (12.1.2 said FULL)."""
    b.fields["update_record_format"] = p.positional[0].upper if p.positional else "COMPACT"
    b.fields["update_record_format_at"] = b.statement


def warn_updaterecordformat_alone(b: Builder) -> None:
    """UPDATERECORDFORMAT puts the before image of an update in its record: in an Extract
    with no TABLE under GETUPDATEBEFORES there is none, which gets a warning."""
    statement = b.fields.get("update_record_format_at")
    if statement is None or b.fields.get("kind") != m.FileKind.EXTRACT:
        return
    if any(t.get_update_befores for t in b.tables if t.statement == "TABLE"):
        return
    b.statement = statement
    b.warn(
        "not-used",
        "UPDATERECORDFORMAT writes the before image of an update in its record, and no "
        "TABLE is under GETUPDATEBEFORES: it changes nothing",
    )


def h_recoveryoptions(b: Builder, p: Parsed) -> None:
    b.fields["recovery_options"] = p.positional[0].upper


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


def h_int_field(field_name: str, what: str, lo: int, hi: int | None = None) -> Handler:
    def h(b: Builder, p: Parsed) -> None:
        v = as_int(b, p.positional[0], what, lo, hi)
        if v is not None:
            b.fields[field_name] = v

    return h


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
    src = as_object_name(b, p.positional[0], f"{kw} name", catalog)
    if src is None:
        return
    target = None
    target_given = False
    opts: list[m.TableOption] = []
    for o in p.options:
        a = arg_of(o)
        if o.name == "TARGET":
            target_given = True
            if a is not None:
                target = as_object_name(b, a, "TARGET name", None, target=True)
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
    spec = m.TableSpec(
        kw,
        src,
        target,
        tuple(opts),
        b.get_truncates,
        b.get_update_befores,
        b.current_trail,
        b.line,
        b.full_deletes,
    )
    if kw in ("MAP", "MAPEXCLUDE"):
        spec = map_behaviour(b, p, spec)
    elif kw == "TABLE":
        spec = table_behaviour(b, p, spec)
    else:  # SEQUENCE, SEQUENCEEXCLUDE, TABLEEXCLUDE: their options are not acted on
        for o in p.options:
            b.warn("not-used", f"{kw} option {o.name} is not used by this engine", o.loc)
    b.tables.append(spec)


def h_noop(b: Builder, p: Parsed) -> None:
    """Parameters consumed by the preprocessor or purely listing controls."""


def h_rmttask(b: Builder, p: Parsed) -> None:
    b.fields["rmttask"] = True
    b.warn("not-used", "RMTTASK (initial-load task) is not used by this engine")
    _record_unused(b, p)


def _record_unused(b: Builder, p: Parsed) -> None:
    assert b.statement is not None
    b.unused.append(m.Unused(p.keyword.upper, b.statement.text, b.line))
