"""The pump's own TABLE row options (COLS / COLSEXCEPT, WHERE, FILTER, TOKENS), applied
to each copied transaction, PASSTHRU or not (docs/params.md, "TABLE options").

A rule is resolved the first time a table is seen, from the column names of the trail's
table definition. The trail does not say which columns are the key: in a pump, COLS keeps
the KEYCOLS columns and the ones it lists (list the key, or give KEYCOLS). An unknown
column abends with OGG-00366. Incoming user tokens are kept; ``@TOKEN`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from engine.expr.rowrule import (
    LOGICAL_OPS,
    Facts,
    Process,
    RowEnv,
    RowRule,
    UnknownColumn,
    rule_for,
)
from engine.trail.codec import user_tokens
from engine.trail.layout import TOKEN_USER, TransInd, event_io_type
from engine.trail.model import TableDef, TrailRecord
from engine.trail.txreader import Transaction
from params.models import ParamFile


class RowOptionError(Exception):
    def __init__(self, unknown: UnknownColumn) -> None:
        super().__init__(unknown.text)
        self.text = unknown.text


class PumpRowOptions:
    def __init__(self, model: ParamFile, group: str, clock: Callable[[], datetime]) -> None:
        self.model = model
        self.process = Process(group)
        self.clock = clock
        self.rules: dict[str, RowRule | None] = {}
        self.stats: dict[tuple[str, str], int] = {}
        self.active = any(
            t.where or t.filter or t.tokens or t.cols or t.cols_except for t in model.tables
        )

    def _rule(self, table: str, definition: TableDef | None) -> RowRule | None:
        if table in self.rules:
            return self.rules[table]
        owner, _, name = table.rpartition(".")
        spec = self.model.captured(owner, name)
        rule = None
        if spec is not None:
            names = definition.column_names if definition is not None else ()
            found = rule_for(spec, table, names, ())
            if isinstance(found, UnknownColumn):
                raise RowOptionError(found)
            rule = found
        self.rules[table] = rule
        return rule

    def apply(
        self,
        txn: Transaction,
        records: list[TrailRecord],
        tables: dict[str, TableDef],
    ) -> list[TrailRecord]:
        if not self.active:
            return records
        now = self.clock()
        kept: list[tuple[TrailRecord, RowRule | None, RowEnv | None]] = []
        where = {id(r): p for r, p in zip(txn.records, txn.positions, strict=False)}
        for r in records:
            rule = self._rule(r.table, tables.get(r.table))
            if rule is None:
                kept.append((r, None, None))
                continue
            at = where.get(id(r))  # (None: a record the hook made)
            io_type = event_io_type(r.io_type, r.before_after)
            facts = Facts(r.table, io_type, r.io_time_us, txn.logcsn or "", txn.tranid or "",
                          r.rowid, r.audit_rba, r.audit_pos, r.trans_ind,
                          at.seqno if at else None, at.rba if at else None,
                          txn.header.tokens if txn.header else None)  # fmt: skip
            incoming = dict(user_tokens(r))
            env = rule.env(r.columns, r.before_columns, facts, self.process, self.stats, now,
                           incoming)  # fmt: skip
            if not rule.select(env):
                continue
            op = LOGICAL_OPS.get(r.io_type, "")
            for key in ((r.table.upper(), op), ("", op), (r.table.upper(), "DML"), ("", "DML")):
                self.stats[key] = self.stats.get(key, 0) + 1
            if rule.keep is not None:  # from the before image too
                r = replace(r, columns=rule.project(r.columns),
                            before_columns=rule.project(r.before_columns))  # fmt: skip
            kept.append((r, rule, env))
        out = []
        n = len(kept)
        for i, (rec, rl, ev) in enumerate(kept):
            if rl is not None and ev is not None and rl.tokens:
                ev.ind = int(TransInd.of(i, n))
                names = {a.name.encode("utf-8") for a in rl.tokens}
                old = tuple(
                    t for t in rec.extra_tokens
                    if t[0] != TOKEN_USER or t[2].partition(b"\x00")[0] not in names
                )  # fmt: skip
                rec = replace(rec, extra_tokens=old + rl.user_tokens(ev))
            out.append(rec)
        return out
