"""Handlers of the Manager's parameters (PORT, DYNAMICPORTLIST, AUTOSTART, AUTORESTART,
PURGEOLDEXTRACTS, LAG...)."""

from __future__ import annotations

from dataclasses import replace

from params import models as m
from params.access import RuleOption, build_access_rule
from params.builder import (
    PORT_RANGE,
    Builder,
    Handler,
    arg_of,
    as_int,
    opt_named,
    unquote,
)
from params.grammar import Parsed

#: The Manager's PORT: 0 asks the system for a free port (this engine's meaning; GGSCI's
#: INFO MANAGER and the process file show the port it got).
MANAGER_PORT_RANGE = (0, PORT_RANGE[1])


def h_port(b: Builder, p: Parsed) -> None:
    v = as_int(b, p.positional[0], "PORT", *MANAGER_PORT_RANGE)
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
    if (v := as_int(b, arg_of(opt_named(p, "RETRIES")), "RETRIES", 0)) is not None:
        ar = replace(ar, retries=v)
    if (v := as_int(b, arg_of(opt_named(p, "WAITMINUTES")), "WAITMINUTES", 0)) is not None:
        ar = replace(ar, wait_minutes=v)
    if (v := as_int(b, arg_of(opt_named(p, "RESETMINUTES")), "RESETMINUTES", 0)) is not None:
        ar = replace(ar, reset_minutes=v)
    b.manager["autorestart"] = (*b.manager.get("autorestart", ()), ar)


def h_purgeoldextracts(b: Builder, p: Parsed) -> None:
    if opt_named(p, "USECHECKPOINTS") and opt_named(p, "NOUSECHECKPOINTS"):
        b.error("conflict", "PURGEOLDEXTRACTS takes USECHECKPOINTS or NOUSECHECKPOINTS, not both")
    keeps = [o.name for o in p.options if o.name.startswith("MINKEEP")]
    if len(keeps) > 1:
        b.error("conflict", f"PURGEOLDEXTRACTS takes one MINKEEP option, got {', '.join(keeps)}")
    freq = as_int(b, arg_of(opt_named(p, "FREQUENCYMINUTES")), "FREQUENCYMINUTES", 1)
    fh = as_int(b, arg_of(opt_named(p, "FREQUENCYHOURS")), "FREQUENCYHOURS", 1)
    po = m.PurgeOldExtracts(
        unquote(p.positional[0].text),
        opt_named(p, "NOUSECHECKPOINTS") is None,
        as_int(b, arg_of(opt_named(p, "MINKEEPHOURS")), "MINKEEPHOURS", 0),
        as_int(b, arg_of(opt_named(p, "MINKEEPDAYS")), "MINKEEPDAYS", 0),
        as_int(b, arg_of(opt_named(p, "MINKEEPFILES")), "MINKEEPFILES", 1, 100),
        freq if freq is not None else (fh * 60 if fh is not None else 60),
    )
    b.manager["purge_old_extracts"] = (*b.manager.get("purge_old_extracts", ()), po)


def h_lag(field_name: str, factor: int, lo: int = 1) -> Handler:
    """A Manager parameter of one whole number (a time in its unit, kept as ``factor`` times
    it): LAG*, CHECKMINUTES, STARTUPVALIDATIONDELAY, DOWNREPORT*."""

    def h(b: Builder, p: Parsed) -> None:
        v = as_int(b, p.positional[0], p.keyword.upper, lo)
        if v is not None:
            b.manager[field_name] = v * factor

    return h


def h_accessrule(b: Builder, p: Parsed) -> None:
    """ACCESSRULE: checked by :func:`params.access.build_access_rule` (the Manager's check)."""
    options = []
    for o in p.options:
        arg = arg_of(o)
        options.append(
            RuleOption(o.name, arg.text if arg else None, arg.loc if arg else o.loc, o.loc)
        )
    rules = b.manager.get("access_rules", ())
    end = len(b.statement.text) if b.statement else 0
    rule, errors = build_access_rule(options, len(rules), end)
    for message, loc in errors:
        b.error("value", message, loc)
    if rule is not None:
        b.manager["access_rules"] = (*rules, rule)


def h_downcritical(b: Builder, p: Parsed) -> None:
    b.manager["down_critical"] = True
