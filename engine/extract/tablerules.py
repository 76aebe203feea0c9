"""The Extract's TABLE row options (docs/params.md, "TABLE options"): rows failing WHERE /
FILTER are dropped, COLS / COLSEXCEPT columns removed, and TOKENS evaluated into user
tokens, once the commit is known.

Where: a transaction the miner sees whole in its Spark task is finished there
(:func:`rows_in_task`, called by ``miner._closed``: the record parts the C walk made are
read back to columns, the rules applied, the records built again with their tokens). The
rows of the other transactions reach the driver with their columns (:func:`with_columns`)
and :class:`TableRules` applies the same rules at commit. The rules are resolved once
against the dictionary: an unknown column stops the start with OGG-00366.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

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
from engine.trail.codec import decode_column_entries, encode_columns
from engine.trail.layout import COLUMN, COLUMN_SIZE, NULL_ABSENT, NULL_PRESENT, TransInd
from engine.trail.model import Columns
from params.models import ParamFile

Clock = Callable[[], datetime]
_unpack_column = COLUMN.unpack_from


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
            if cols is not None and lcr.before_columns:  # a before image loses them too
                lcr = dataclasses.replace(lcr, before_columns=rule.project(lcr.before_columns))
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


def rows_in_task(
    rows: list[tuple[Any, ...]],
    rules: Mapping[str, RowRule],
    process: Process,
    xid: str,
    scn: int,
    time_us: int,
    sequence: int,
) -> list[tuple[tuple[Any, ...], bytes]]:
    """The row events of a transaction the miner closes in its task, with the rules of
    their tables applied there (the commit is known: the same result as :class:`TableRules`
    on the driver): each kept row with its record parts (``EVENT_FIELDS``' ``record``)
    and its user token bytes. @GETENV ('STATS', ...) counts this transaction only here."""
    csn = str(scn)
    now = datetime.now()
    stats: Counter[tuple[str, str]] = Counter()
    packed: dict[tuple[object, ...], bytes] = {}
    kept: list[tuple[tuple[Any, ...], RowEnv | None]] = []
    for e in rows:
        rule = rules.get(e[9])
        if rule is None:
            kept.append((e, None))
            continue
        facts = Facts(e[9], e[8], time_us, csn, xid, e[10], sequence, e[3])
        parts = e[17]
        reads = rule.reads
        if parts and reads is not None:  # the usual case: only what the rule reads decoded
            after, projected = scan_entries(parts[1], reads, rule.keep)
            before = scan_entries(parts[2], reads, None)[0] if parts[2] else {}
            env = RowEnv(rule, after, before, facts, process, stats, now)
        else:
            columns, before_cols = e[11], e[12]
            if parts:
                columns = decode_column_entries(parts[1])
                before_cols = decode_column_entries(parts[2])
            env = rule.env(columns, before_cols, facts, process, stats, now)
            projected = None
            if rule.keep is not None or not parts:
                cols = rule.project(columns) if rule.keep is not None else columns
                rowid = e[10].encode("ascii") if e[10] else None
                bcols = rule.project(before_cols) if rule.keep is not None else before_cols
                parts = (e[9].encode("utf-8"), encode_columns(cols),
                         encode_columns(bcols), rowid)  # fmt: skip
        if rule.selects and not rule.select(env):
            continue
        if rule.counts:  # @GETENV ('STATS', ...) is used
            op = LOGICAL_OPS.get(e[8], "")
            for key in ((e[9].upper(), op), ("", op), ("", "DML"), ("", "TOTAL")):
                stats[key] += 1
        if projected is not None:  # the kept column entries, as they were encoded
            kept_before = scan_entries(parts[2], frozenset(), rule.keep)[1] if parts[2] else b""
            parts = (parts[0], projected, kept_before or b"", parts[3])
        kept.append(((*e[:11], (), (), *e[13:17], parts), env if rule.tokens else None))
    out = []
    n = len(kept)
    for i, (row, row_env) in enumerate(kept):
        tokens = b""
        if row_env is not None:
            row_env.ind = int(TransInd.of(i, n))
            tokens = row_env.rule.token_bytes(row_env, packed)
        out.append((row, tokens))
    return out


def scan_entries(
    data: bytes, reads: frozenset[int], keep: frozenset[int] | None
) -> tuple[dict[int, str | None], bytes | None]:
    """The values of the ``reads`` columns of a data area's entries, and (``keep`` given)
    the entries of the ``keep`` columns as they are: what :func:`decode_column_entries`
    and :func:`encode_columns` would give, without decoding or encoding the rest. A
    malformed area raises as :func:`decode_column_entries` does."""
    values: dict[int, str | None] = {}
    kept: list[bytes] = []  # runs of kept entries
    pos, end, last = 0, len(data), -1
    run = 0  # where the current run of kept entries begins
    try:
        while pos < end:
            if pos + COLUMN_SIZE > end:
                break
            index, length, null, vlen = _unpack_column(data, pos)
            stop = pos + COLUMN_SIZE + vlen
            if length != 4 + vlen or index <= last or stop > end:
                break
            if index in reads:
                if null == NULL_ABSENT:
                    values[index] = str(data[pos + COLUMN_SIZE : stop], "utf-8")
                elif null == NULL_PRESENT and vlen == 0:
                    values[index] = None
                else:
                    break
            if keep is not None and index not in keep:
                if run < pos:
                    kept.append(data[run:pos])
                run = stop
            last, pos = index, stop
    except UnicodeDecodeError:
        pos = -1
    if pos != end:
        decode_column_entries(data)  # raises CorruptRecordError, with the offset
        raise AssertionError("a malformed column area decoded")  # (not reached)
    if keep is None:
        return values, None
    if run < end:
        kept.append(data[run:end])
    return values, b"".join(kept)


def with_columns(e: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row event with record parts made into one with columns (the driver's rules need
    them): for a transaction of a table with row options that is not closed in a task."""
    parts = e[17]
    return (*e[:11], decode_column_entries(parts[1]), decode_column_entries(parts[2]),
            *e[13:17], b"")  # fmt: skip
