"""The row options of TABLE (Extract, pump) and of MAP: WHERE, FILTER and TOKENS parsed
into the expression model (:mod:`params.expr`) with positioned errors, and a "not used"
warning at each TABLE option the Extract does not act on (:data:`TABLE_ACTS`).

Columns can be checked only against the table (there is no dictionary here): the
Extract does it at start (:func:`engine.expr.rowrule.rule_for`, OGG-00366).
"""

from __future__ import annotations

from dataclasses import replace

from params import models as m
from params.builder import Builder, arg_of
from params.expr import ExprIssue, parse_assignments, parse_filter, parse_where
from params.grammar import Parsed

#: The TABLE options the Extract and the pump act on (the other TABLE_OPTIONS warn).
TABLE_ACTS = frozenset({"COLS", "COLSEXCEPT", "KEYCOLS", "WHERE", "FILTER", "TOKENS"})


def row_options(b: Builder, p: Parsed, spec: m.TableSpec) -> m.TableSpec:
    """WHERE, FILTER and TOKENS of a TABLE or MAP statement, parsed; a mistake is an
    error at its position in the statement."""
    where, filters, tokens = spec.where, spec.filters, spec.tokens
    for o in p.options:
        a = arg_of(o)
        if a is None or o.name not in ("WHERE", "FILTER", "TOKENS"):
            continue
        if o.name == "WHERE":
            w = parse_where(a.text, a.loc)
            if isinstance(w, ExprIssue):
                b.error("syntax", f"WHERE: {w.message}", w.pos)
            else:
                where = w
        elif o.name == "FILTER":
            f = parse_filter(a.text, a.loc)
            if isinstance(f, ExprIssue):
                b.error("syntax", f"FILTER: {f.message}", f.pos)
            else:  # several FILTER clauses: each must pass, in order (GoldenGate ANDs them)
                filters = (*filters, f)
        else:
            t = parse_assignments(a.text, a.loc, upper=False)
            if isinstance(t, ExprIssue):
                b.error("syntax", f"TOKENS: {t.message}", t.pos)
                continue
            for item in t:
                if item.expr is None:
                    b.error("syntax", f"TOKENS: {item.name} needs = and a value", item.pos)
            tokens = tokens + tuple(x for x in t if x.expr is not None)
    return replace(spec, where=where, filters=filters, tokens=tokens)


def table_behaviour(b: Builder, p: Parsed, spec: m.TableSpec) -> m.TableSpec:
    """A TABLE statement's row options, and "not used" at the options not acted on."""
    spec = row_options(b, p, spec)
    for o in p.options:
        if o.name not in TABLE_ACTS:
            b.warn("not-used", f"TABLE option {o.name} is not used by this engine", o.loc)
        elif o.name == "FILTER" and any(f.raise_error for f in spec.filters):
            b.error("value", "FILTER RAISEERROR applies to a Replicat MAP, not to TABLE", o.loc)
    return spec
