"""Handlers of the Replicat's MAP behaviour: REPERROR (global and in a MAP), the toggles
that apply to the MAP statements after them (IGNOREINSERTS / GETINSERTS, IGNOREUPDATES /
GETUPDATES, IGNOREDELETES / GETDELETES, INSERTALLRECORDS, HANDLECOLLISIONS /
NOHANDLECOLLISIONS), and :func:`map_behaviour`, which resolves them for one MAP and warns
about the MAP options the Replicat does not act on.

The toggles live in ``Builder.fields`` under ``"map_state"`` while the file is read; a MAP
gets a copy of them as it stands, overridden by its own options (as GoldenGate reads them:
a MAP's option wins over the toggle before it).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from params import models as m
from params.builder import Builder, Handler, arg_of
from params.catalog import (
    MAP_ACTS,
    REPERROR_ACTS,
    REPERROR_RESPONSES,
    did_you_mean,
)
from params.expr import ExprIssue, parse_assignments
from params.grammar import Parsed, Tok
from params.handlers_table import row_options

_OPS = {"INSERTS": "INSERT", "UPDATES": "UPDATE", "DELETES": "DELETE"}
_RETRY_OPTIONS = ("MAXRETRIES", "DELAYSECS", "DELAYCSECS")


def _state(b: Builder) -> dict[str, Any]:
    st: dict[str, Any] = b.fields.setdefault(
        "map_state", {"ignore": (), "insert_all": False, "collisions": False}
    )
    return st


def op_toggle(op: str, ignore: bool) -> Handler:
    """IGNOREINSERTS / GETINSERTS (and UPDATES, DELETES) for the MAPs that follow."""

    def h(b: Builder, p: Parsed) -> None:
        if _in_extract(b, p):
            return
        st = _state(b)
        ops = set(st["ignore"])
        (ops.add if ignore else ops.discard)(_OPS[op])
        st["ignore"] = tuple(sorted(ops))

    return h


def _in_extract(b: Builder, p: Parsed) -> bool:
    """A Replicat parameter in an Extract: a warning that it is not used there."""
    if b.fields.get("kind") != m.FileKind.EXTRACT:
        return False
    b.warn("not-used", f"{p.keyword.upper} is a Replicat parameter: not used in an Extract")
    return True


def h_insertallrecords(b: Builder, p: Parsed) -> None:
    if not _in_extract(b, p):
        _state(b)["insert_all"] = True


def collisions_toggle(value: bool) -> Handler:
    def h(b: Builder, p: Parsed) -> None:
        if _in_extract(b, p):
            return
        _state(b)["collisions"] = value
        b.fields["handle_collisions"] = value

    return h


# ------------------------------------------------------------------------ REPERROR


def parse_reperror(b: Builder, raw: Tok, where: str) -> m.RepError | None:
    """``(error, response [, option value]...)`` or the same without parentheses (the 11.2
    files' ``REPERROR DEFAULT, DISCARD``); commas between words are optional."""
    text = raw.text.rstrip().rstrip(";").rstrip()
    base = raw.loc
    inner, off = text, 0
    if text.startswith("("):
        if not text.endswith(")"):
            b.error("syntax", f"{where}: unclosed '('", base)
            return None
        inner, off = text[1:-1], 1
    if (bad := re.search(r"[()]", inner)) is not None:
        b.error("syntax", f"{where} takes one (error, response) rule", base + off + bad.start())
        return None
    words = [(mt.group(0), base + off + mt.start()) for mt in re.finditer(r"[^\s,]+", inner)]
    if not words:
        b.error("syntax", f"{where} takes (error, response), e.g. (DEFAULT, ABEND)", base)
        return None
    err, at = words[0]
    if not re.fullmatch(r"[+-]?\d+|(?i:DEFAULT2?)", err):
        b.error("syntax", f"{where} error must be a number, DEFAULT or DEFAULT2, not {err!r}", at)
        return None
    if len(words) < 2:
        b.error("syntax", f"{where} ({err}, ...) needs a response", base + len(text))
        return None
    resp, at = words[1]
    if resp.upper() not in REPERROR_RESPONSES:
        b.error(
            "syntax",
            f"unknown {where} response {resp!r}{did_you_mean(resp, REPERROR_RESPONSES)}",
            at,
        )
        return None
    resp = resp.upper()
    values: dict[str, int] = {}
    i = 2
    while i < len(words):
        name, at = words[i]
        up = name.upper()
        if up not in _RETRY_OPTIONS or resp not in ("RETRYOP", "TRANSABORT"):
            allowed = ", ".join(_RETRY_OPTIONS) if resp in ("RETRYOP", "TRANSABORT") else ""
            hint = f" ({resp} takes {allowed})" if allowed else f" ({resp} takes no options)"
            b.error(
                "syntax",
                f"unknown {where} option {name!r}{did_you_mean(name, list(_RETRY_OPTIONS))}{hint}",
                at,
            )
            return None
        if i + 1 >= len(words) or not words[i + 1][0].isdigit():
            b.error("syntax", f"{where} {up} needs a whole number", at + len(name))
            return None
        values[up] = int(words[i + 1][0])
        i += 2
    if resp not in REPERROR_ACTS:
        b.warn(
            "not-used",
            f"{where} response {resp} is not used by this engine: ABEND is used for "
            f"error {err.upper()}",
            words[1][1],
        )
    delay = values.get("DELAYSECS", 0) + values.get("DELAYCSECS", 0) / 100
    rest = " ".join(w for w, _ in words[2:])
    return m.RepError(err.upper(), resp, rest, values.get("MAXRETRIES"), delay)


def h_reperror(b: Builder, p: Parsed) -> None:
    if _in_extract(b, p):
        return
    raw = p.positional[0] if p.positional else Tok("", len(p.keyword.text))
    if raw.text.rstrip(";").strip().upper() == "RESET":
        b.reperrors.clear()  # the rules above RESET no longer apply to the MAPs below it
        return
    rule = parse_reperror(b, raw, "REPERROR")
    if rule is not None:
        b.reperrors.append(rule)
        assert b.statement is not None
        b.fields.setdefault("reperror_at", []).append((b.statement, len(b.tables)))


def warn_reperror_after_maps(b: Builder) -> None:
    """A REPERROR at the root applies to the MAP statements after it: one after the last
    MAP acts on nothing, which gets a warning that says so."""
    if b.fields.get("kind") != m.FileKind.REPLICAT:
        return
    for statement, tables in b.fields.get("reperror_at", []):
        if not any(t.statement == "MAP" for t in b.tables[tables:]):
            b.statement = statement
            b.warn(
                "not-used",
                "this REPERROR comes after every MAP statement: it applies to the MAP "
                "statements after it, so it is not used (move it above the MAPs)",
            )


# ------------------------------------------------------------------------ one MAP


def _check_colmap(b: Builder, a: Tok) -> None:
    items = parse_assignments(a.text, a.loc)
    if isinstance(items, ExprIssue):
        b.error("syntax", f"COLMAP: {items.message}", items.pos)
        return
    for item in items:
        if item.expr is None and item.name != "USEDEFAULTS":
            b.error("syntax", f"COLMAP: {item.name} needs = and a value", item.pos)


def map_behaviour(b: Builder, p: Parsed, spec: m.TableSpec) -> m.TableSpec:
    """The MAP's toggles and REPERROR rules as they stand, its own options applied; a
    "not used" warning at each MAP option the Replicat does not act on."""
    if spec.exclude:
        for o in p.options:
            b.warn("not-used", f"MAPEXCLUDE takes no options: {o.name} is not used", o.loc)
        return spec
    spec = row_options(b, p, spec)  # WHERE and FILTER, parsed with their positions
    st = _state(b)
    collisions: bool = st["collisions"]
    insert_all: bool = st["insert_all"]
    own: list[m.RepError] = []
    for o in p.options:
        if o.name not in MAP_ACTS:
            b.warn("not-used", f"MAP option {o.name} is not used by this engine", o.loc)
        elif o.name == "HANDLECOLLISIONS":
            collisions = True
        elif o.name == "NOHANDLECOLLISIONS":
            collisions = False
        elif o.name == "INSERTALLRECORDS":
            insert_all = True
        elif o.name == "COLMAP" and (a := arg_of(o)) is not None:
            _check_colmap(b, a)
        elif o.name == "REPERROR" and o.args and isinstance(o.args[0], Tok):
            rule = parse_reperror(b, o.args[0], "MAP REPERROR")
            if rule is not None:
                own.append(rule)
    return replace(
        spec,
        ignore_ops=st["ignore"],
        insert_all_records=insert_all,
        handle_collisions=collisions,
        reperrors=(*reversed(own), *reversed(b.reperrors)),
    )
