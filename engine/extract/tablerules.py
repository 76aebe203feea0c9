"""The Extract's TABLE row options at commit, on the driver (docs/params.md, "TABLE
options"): rows failing WHERE / FILTER are dropped, COLS / COLSEXCEPT columns removed,
and TOKENS evaluated into user tokens, before the transaction is encoded.

Tables with row options are *hooked* in the miner (their rows reach the driver with their
columns, like the heartbeat tables); other tables keep the fast path. The rules are
resolved once against the dictionary: an unknown column stops the start with OGG-00366.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from engine.expr.rowrule import (
    LOGICAL_OPS,
    Facts,
    Process,
    RowEnv,
    RowRule,
    UnknownColumn,
    key_columns,
)
from engine.expr.rowrule import rule_for as _rule_for
from engine.extract.lcr import Lcr
from engine.trail.layout import TransInd
from engine.trail.model import Columns
from params.models import ParamFile

Clock = Callable[[], datetime]


def resolve(
    model: ParamFile, tables: Iterable[tuple[str, str, str, tuple[str, ...], tuple[str, ...]]]
) -> tuple[dict[str, RowRule], dict[str, tuple[int, ...]]] | UnknownColumn:
    """The row rule of each captured table that has row options, and the KEYCOLS key of
    each table that gives one (column indices), by qualified name. ``tables`` gives
    (owner, name, qualified name, column names, key column names)."""
    out: dict[str, RowRule] = {}
    keys: dict[str, tuple[int, ...]] = {}
    for owner, name, qualified, columns, key in tables:
        spec = model.captured(owner, name)
        if spec is None:
            continue
        keycols = key_columns(spec, qualified, columns)
        if isinstance(keycols, UnknownColumn):
            return keycols
        if keycols:
            keys[qualified] = keycols
        rule = _rule_for(spec, qualified, columns, key)
        if isinstance(rule, UnknownColumn):
            return rule
        if rule is not None:
            out[qualified] = rule
    return out, keys


class TableRules:
    """Applies the rules to each committed transaction's rows (a generator chain: a
    transaction read back from disk is not held in memory)."""

    def __init__(self, rules: dict[str, RowRule], process: Process, clock: Clock) -> None:
        self.rules = rules
        self.process = process
        self.clock = clock
        self.stats: Counter[tuple[str, str]] = Counter()
        self.filtered = 0

    @property
    def tables(self) -> frozenset[str]:
        return frozenset(self.rules)

    def rows(self, rows: Iterable[Lcr], xid: str, scn: int, time_us: int) -> Iterator[Lcr]:
        if not self.rules:
            yield from rows
            return
        csn = str(scn)
        it = self._selected(rows, xid, csn, time_us)
        prev = next(it, None)
        if prev is None:
            return
        i = 0
        for cur in it:
            yield self._tokens(prev, TransInd.BEGIN if i == 0 else TransInd.MIDDLE)
            prev = cur
            i += 1
        yield self._tokens(prev, TransInd.WHOLE if i == 0 else TransInd.END)

    def _selected(
        self, rows: Iterable[Lcr], xid: str, csn: str, time_us: int
    ) -> Iterator[tuple[Lcr, Columns | None, RowEnv | None]]:
        """(row, its projected columns or None when unchanged, its env when it has
        tokens) of each row that passes."""
        rules = self.rules
        now = self.clock()
        stats = self.stats
        for lcr in rows:
            rule = rules.get(lcr.table)
            if rule is None or lcr.record:  # (a template should not come: hooked)
                yield lcr, None, None
                continue
            facts = Facts(lcr.table, lcr.io_type, time_us, csn, xid, lcr.rowid,
                          lcr.pos.sequence, lcr.pos.offset)  # fmt: skip
            env = rule.env(lcr.columns, lcr.before_columns, facts, self.process, stats, now)
            if rule.selects and not rule.select(env):
                self.filtered += 1
                continue
            op = LOGICAL_OPS.get(lcr.io_type, "")
            table = lcr.table.upper()
            for key in ((table, op), ("", op), (table, "DML"), ("", "DML"), ("", "TOTAL")):
                stats[key] += 1
            cols = rule.project(lcr.columns) if rule.keep is not None else None
            yield lcr, cols, (env if rule.tokens else None)

    def _tokens(self, item: tuple[Lcr, Columns | None, RowEnv | None], ind: int) -> Lcr:
        lcr, cols, env = item
        if env is None:
            return lcr if cols is None else dataclasses.replace(lcr, columns=cols)
        env.ind = ind
        return dataclasses.replace(
            lcr,
            columns=lcr.columns if cols is None else cols,
            tokens=env.rule.user_tokens(env),
        )
