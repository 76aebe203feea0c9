"""The Extract's TABLE row options (docs/params.md, "TABLE options"): rows failing WHERE /
FILTER are dropped, COLS / COLSEXCEPT columns removed, and TOKENS evaluated into user
tokens, once the commit is known.

Where: a transaction the miner sees whole in its Spark task is finished there
(:func:`rows_in_task`, called by ``miner._closed``: the record parts the C walk made are
read back to columns, the rules applied, the records built again with their tokens). The
rows of the other transactions reach the driver with their columns (:func:`with_columns`)
and :class:`TableRules` applies the same rules at commit. The rules are resolved once
against the dictionary: an unknown column stops the start with OGG-00366. The scans and
the one-call selection are :mod:`engine.extract.tasks.rowselect`'s (C, and their twins).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from engine.changes import Lcr
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
from engine.expr.values import Status, Value, truth
from engine.expr.vector import Vector, compile_vector
from engine.extract.tasks.rowselect import (
    MAX_SLOTS,
    Cond,
    columns_of,
    conds_of,
    entries_of,
    scan_entries,
)
from engine.extract.tasks.rowselect import NATIVE_SCAN as _NATIVE_SCAN
from engine.extract.tasks.rowselect import SCAN_ROWS as _SCAN_ROWS
from engine.extract.tasks.rowselect import SELECT as _SELECT
from engine.extract.tasks.rowselect import holds as _holds
from engine.trail.codec import decode_column_entries, encode_columns, pack_tokens, row_record
from engine.trail.errors import RecordLimitError
from engine.trail.layout import MAX_TOKEN_LENGTH, TransInd
from engine.trail.model import Columns
from params.expr import Filter
from params.models import ParamFile

Clock = Callable[[], datetime]
Tokens = tuple[tuple[bytes, int, bytes], ...]


def resolve(
    model: ParamFile,
    tables: Iterable[tuple[str, str, str, tuple[str, ...], tuple[str, ...]]],
    catalogs: Mapping[str, str] | None = None,
) -> tuple[dict[str, RowRule], dict[str, tuple[int, ...]]] | UnknownColumn:
    """The row rule of each captured table that has row options, and the KEYCOLS key of
    each table that gives one (column indices), by qualified name. ``tables`` gives
    (owner, name, qualified name, column names, key column names); ``catalogs`` the
    container of an attached container database's tables, by qualified name."""
    out: dict[str, RowRule] = {}
    keys: dict[str, tuple[int, ...]] = {}
    for owner, name, qualified, columns, key in tables:
        spec = model.captured(owner, name, (catalogs or {}).get(qualified))
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
        self._entries: dict[tuple[object, ...], tuple[tuple[bytes, int, bytes], ...]] = {}
        # tables whose rows may come in fragments, selected in their task already
        self.in_fragments = fragment_tables(rules)

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
            if prev[3] is None:
                yield self._tokens(prev[:3], TransInd.BEGIN if i == 0 else TransInd.MIDDLE)
            else:
                yield _quick(prev[0], prev[3], i > 0)
            prev = cur
            i += 1
        if prev[3] is None:
            yield self._tokens(prev[:3], TransInd.WHOLE if i == 0 else TransInd.END)
        else:
            yield _quick(prev[0], prev[3], i > 0)

    def _selected(
        self, rows: Iterable[Lcr], xid: str, csn: str, time_us: int
    ) -> Iterator[tuple[Lcr, Columns | None, RowEnv | None, Quick | None]]:
        """(row, its projected columns or None when unchanged, its env when it has
        tokens, and from the quick path (WHERE of select's conditions, the operation's
        tokens) what :func:`_quick` makes of it) of each row that passes."""
        rules = self.rules
        now = self.clock()
        stats = self.stats
        counted = any(r.counts for r in rules.values())  # else nothing reads the counts
        # (table, io) -> the user tokens of its rows and their bytes
        op_tokens: dict[tuple[str, int], tuple[Tokens, bytes | None]] = {}
        for lcr in rows:
            rule = rules.get(lcr.table)
            if rule is None or lcr.record:
                # a template of a rule's table is a fragment's row, selected in its task
                # (fragment_tables): it only gets its operation's tokens
                if rule is not None and rule.tokens and lcr.table in self.in_fragments:
                    found = op_tokens.get((lcr.table, lcr.io_type))
                    if found is None:
                        facts = Facts(lcr.table, lcr.io_type, time_us, csn, xid, lcr.rowid,
                                      lcr.pos.sequence, lcr.pos.offset)  # fmt: skip
                        tokens = self._op_entries(rule, facts, now)
                        found = op_tokens[(lcr.table, lcr.io_type)] = (tokens, _packed(tokens))
                    if found[1] is None:
                        raise RecordLimitError(_past_limit(lcr.table, found[0]))
                    lcr = _changed(lcr, lcr.columns, lcr.before_columns, found[0])
                yield lcr, None, None, None
                continue
            plan = _plan(rule)
            if plan.conds is not None and not counted:
                # usual: WHERE compares columns with integers, the tokens are the table's
                # and operation's (as select_rows, on the row's columns)
                passes = _holds(plan.conds, lcr.columns)
                if passes is None:  # a value that is no plain number: compare() decides
                    facts = Facts(lcr.table, lcr.io_type, time_us, csn, xid, lcr.rowid,
                                  lcr.pos.sequence, lcr.pos.offset)  # fmt: skip
                    env = rule.env(lcr.columns, lcr.before_columns, facts, self.process,
                                   stats, now)  # fmt: skip
                    passes = rule.select(env)
                if not passes:
                    self.filtered += 1
                    continue
                found = op_tokens.get((lcr.table, lcr.io_type)) if plan.tokens else None
                if found is None:
                    tokens = lcr.tokens  # (none before the rules: no TOKENS, no bytes)
                    if plan.tokens:
                        facts = Facts(lcr.table, lcr.io_type, time_us, csn, xid, lcr.rowid,
                                      lcr.pos.sequence, lcr.pos.offset)  # fmt: skip
                        tokens = self._op_entries(rule, facts, now)
                    found = (tokens, _packed(tokens))
                    if plan.tokens:
                        op_tokens[(lcr.table, lcr.io_type)] = found
                columns, before = lcr.columns, lcr.before_columns
                keep = rule.keep
                if keep is not None:
                    columns = tuple([c for c in columns if c[0] in keep])
                    if before:
                        before = tuple([c for c in before if c[0] in keep])
                yield lcr, None, None, (columns, before, *found)
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
            yield lcr, cols, (env if rule.tokens else None), None

    def _op_entries(self, rule: RowRule, facts: Facts, now: datetime) -> Tokens:
        """The user token entries of the rows of ``facts``' table and operation (the rule's
        TOKENS read nothing of the row: :attr:`RowRule.op_tokens`)."""
        env = RowEnv(rule, {}, {}, facts, self.process, self.stats, now)
        return rule.token_entries(env, self._entries)

    def op_token_bytes(self, table: str, io_type: int, xid: str, scn: int, time_us: int) -> bytes:
        """The user token bytes of a fragment's rows of ``table`` and operation ``io_type``
        in the transaction ``xid`` committed at ``scn`` (``Fragment.marks``); b"" when the
        table has no TOKENS. :class:`RecordLimitError` when a token is past its limit."""
        rule = self.rules.get(table)
        if rule is None or not rule.tokens:
            return b""
        facts = Facts(table, io_type, time_us, str(scn), xid, None, 0, 0)
        tokens = self._op_entries(rule, facts, self.clock())
        packed = _packed(tokens)
        if packed is None:
            raise RecordLimitError(_past_limit(table, tokens))
        return packed

    def _tokens(self, item: tuple[Lcr, Columns | None, RowEnv | None], ind: int) -> Lcr:
        lcr, cols, env = item
        if env is None:
            return lcr if cols is None else dataclasses.replace(lcr, columns=cols)
        env.ind = ind
        return dataclasses.replace(
            lcr,
            columns=lcr.columns if cols is None else cols,
            tokens=env.rule.token_entries(env, self._entries),
        )


#: (the row's columns, its before image, its user tokens, their bytes or None when one is
#: past its limit) of a row on TableRules' quick path
Quick = tuple[Columns, Columns, Tokens, bytes | None]


def _quick(lcr: Lcr, quick: Quick, later: bool) -> Lcr:
    """The row of the quick path with its columns and tokens; its record template made
    here when it is not its transaction's first (``later``: the driver only finishes it
    with ``finalize``, which adds no LOGCSN / TRANID token to it: the bytes encode_record
    gives). Made as a row to encode when its record would pass a limit (encode_record then
    says which) or its ROWID is not ASCII."""
    columns, before, tokens, packed = quick
    rowid = lcr.rowid
    if later and packed is not None and (rowid is None or rowid.isascii()):
        try:
            record = row_record(lcr.io_type, lcr.table.encode("utf-8"), entries_of(columns),
                                entries_of(before),
                                None if rowid is None else rowid.encode("ascii"),
                                lcr.pos.sequence, lcr.pos.offset, tokens=packed)  # fmt: skip
        except RecordLimitError:
            pass
        else:
            return _template(lcr, record)
    if columns is lcr.columns and before is lcr.before_columns and tokens is lcr.tokens:
        return lcr
    return _changed(lcr, columns, before, tokens)


def _template(lcr: Lcr, record: bytes) -> Lcr:
    """``lcr`` as a row with its record template (no columns, no tokens)."""
    return Lcr(lcr.kind, lcr.xid, lcr.pos, lcr.end, lcr.scn, lcr.subscn, lcr.time_us,
               lcr.io_type, lcr.table, lcr.rowid, ref=lcr.ref, user=lcr.user,
               txn_name=lcr.txn_name, text=lcr.text, record=record)  # fmt: skip


def _changed(
    lcr: Lcr, columns: Columns, before: Columns, tokens: tuple[tuple[bytes, int, bytes], ...]
) -> Lcr:
    """``lcr`` with these columns, before image and user tokens (dataclasses.replace
    without its checks: a row at a time on the driver)."""
    return Lcr(lcr.kind, lcr.xid, lcr.pos, lcr.end, lcr.scn, lcr.subscn, lcr.time_us,
               lcr.io_type, lcr.table, lcr.rowid, columns, before, lcr.ref, lcr.user,
               lcr.txn_name, lcr.text, lcr.record, tokens)  # fmt: skip


def _packed(tokens: Tokens) -> bytes | None:
    """The bytes of user token entries; None when one is past its limit."""
    if all(len(v) <= MAX_TOKEN_LENGTH for _, _, v in tokens):
        return pack_tokens(tokens) if tokens else b""
    return None


def _past_limit(table: str, tokens: Tokens) -> str:
    longest = max(tokens, key=lambda t: len(t[2]))
    return (
        f"{table}: token {longest[0].decode('utf-8', 'replace')} of {len(longest[2])} bytes "
        f"exceeds {MAX_TOKEN_LENGTH}"
    )


def fragment_tables(rules: Mapping[str, RowRule]) -> frozenset[str]:
    """The tables whose rows may travel in a :class:`~engine.changes.Fragment` (a
    transaction open across a task's range): their rule is applied in the task, once, and
    needs nothing of the commit but its tokens, which the driver adds at commit
    (``Fragment.marks``): WHERE none or comparisons of columns with integers, no FILTER,
    TOKENS of the table and operation only (what ``rowscan.select`` does). None when a rule
    reads @GETENV ('STATS', ...): the driver counts the rows of every table then."""
    if any(r.counts for r in rules.values()):
        return frozenset()
    return frozenset(t for t, r in rules.items() if _plan(r).conds is not None)


def select_fragment(
    rows: list[tuple[Any, ...]], rules: Mapping[str, RowRule], ops: Callable[[list[Any]], Any]
) -> tuple[list[tuple[Any, ...]], Any, bytes] | None:
    """A fragment's row events (every one with record parts, its table's rule one of
    :func:`fragment_tables`' or none) with the rules applied in the task: (the rows WHERE
    keeps, their data areas and before images cut to COLS / COLSEXCEPT; ``ops`` of them
    (``txngroup.table_ops``); their ``Fragment.marks``). None when the selection cannot
    say (a compared value that is no plain number) or a fragment has more than 254 table
    and operation pairs with tokens: its changes then go to the driver one by one."""
    table0 = rows[0][9] if rows else ""
    if all(e[9] == table0 for e in rows):  # usual: one table, one call
        kept = _select_table(rows, table0, rules.get(table0))
    else:
        kept = []
        for e in rows:
            got = _select_table([e], e[9], rules.get(e[9]))
            if got is None:
                return None
            kept.extend(got)
    if kept is None:
        return None
    counted = ops(kept)
    index = {(t, k): i for i, (t, k, _) in enumerate(counted)}
    tokened = {t for t, _, _ in counted if t in rules and rules[t].tokens}
    if not tokened:
        return kept, counted, b""
    if len(counted) > 254:
        return None
    marks = bytes([1 + index[(e[9], e[8])] if e[9] in tokened else 0 for e in kept])
    return kept, counted, marks


def _select_table(
    rows: list[tuple[Any, ...]], table: str, rule: RowRule | None
) -> list[tuple[Any, ...]] | None:
    """``rows`` (all of ``table``) that its rule keeps, cut (select, without tokens)."""
    if rule is None:
        return rows
    plan = _plan(rule)
    assert plan.conds is not None
    got = _SELECT(rows, table, plan.keep_mask, plan.conds, None)
    return None if got is None else [e for e, _ in got]


#: rowscan.select's arguments after the rows: (table, keep mask, conditions, make)
OneCall = tuple[str, bytes | None, tuple[Cond, ...], Callable[[int], bytes] | None]


def one_call(
    rows: list[tuple[Any, ...]],
    rules: Mapping[str, RowRule],
    process: Process,
    xid: str,
    scn: int,
    time_us: int,
    sequence: int,
) -> OneCall | None:
    """What ``rowscan.select`` (or ``trailkit.select_records``) needs to apply the rule of
    the first row's table to a transaction's rows in one call: its table, keep mask and
    conditions, and ``make(io)``, the token bytes of an operation (None: no TOKENS); None
    when that table's rule is not one select applies (FILTER, another WHERE, STATS, the
    row's facts). The call itself says None for rows of another table."""
    table0 = rows[0][9] if rows else ""
    first = rules.get(table0)
    if first is None:
        return None
    plan = _plan(first)
    if plan.conds is None:
        return None
    if not plan.tokens:
        return table0, plan.keep_mask, plan.conds, None
    csn = str(scn)
    now = datetime.now()
    stats: Counter[tuple[str, str]] = Counter()
    packs: dict[tuple[object, ...], bytes] = {}

    def make(io: int) -> bytes:
        facts = Facts(table0, io, time_us, csn, xid, None, sequence, 0)
        return first.token_bytes(RowEnv(first, {}, {}, facts, process, stats, now), packs)

    return table0, plan.keep_mask, plan.conds, make


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
    and its user token bytes. @GETENV ('STATS', ...) counts this transaction only here.

    Usually the transaction's rows are all of one table whose WHERE compares columns with
    integers (or is absent) and has no FILTER: then one call does it all
    (:func:`~engine.extract.tasks.rowselect.select_rows`, ``rowscan.select`` in C when built).
    Otherwise, per row only what varies is done: the columns the rule reads are scanned
    from the encoded entries (:func:`~engine.extract.tasks.rowselect.scan_entries`, in C when
    built) and the kept entries copied; rows of one table and operation share their
    :class:`Facts` when no expression reads the row's own facts
    (:attr:`RowRule.facts_shared`), and their token bytes when the TOKENS read nothing of
    the row (:attr:`RowRule.op_tokens`)."""
    one = one_call(rows, rules, process, xid, scn, time_us, sequence)
    if one is not None:  # usual: one table, a WHERE of comparisons with numbers at most
        selected = _SELECT(rows, *one)
        if selected is not None:
            return selected
    csn = str(scn)
    now = datetime.now()
    stats: Counter[tuple[str, str]] = Counter()
    # token values -> their bytes, by rule (the names differ from table to table)
    packs: dict[int, dict[tuple[object, ...], bytes]] = {}
    shared: dict[tuple[str, int], tuple[Facts, list[bytes]]] = {}  # facts, op tokens
    plans: dict[str, _Plan | None] = {}
    kept: list[tuple[tuple[Any, ...], RowEnv | list[bytes] | None]] = []
    scan = _NATIVE_SCAN
    envs: dict[str, RowEnv] = {}  # (shared facts) one env per table, set again per row
    for table in dict.fromkeys(e[9] for e in rows):
        rule_ = rules.get(table)
        plans[table] = None if rule_ is None else _plan(rule_)
    # column-wise first: position -> the row's event, or None when it fails the rules
    done: dict[int, tuple[Any, ...] | None] = {}
    for table, plan in plans.items():
        if plan is not None and plan.columnar:
            _columnar(rows, table, plan, done)

    def op_tokens(table: str, io: int, rule: RowRule) -> bytes:
        """The token bytes of the rows of ``table`` and operation ``io``."""
        found = shared.get((table, io))
        if found is None:
            facts = Facts(table, io, time_us, csn, xid, None, sequence, 0)
            found = shared[(table, io)] = (facts, [])
        if not found[1]:
            env = RowEnv(rule, {}, {}, found[0], process, stats, now)
            found[1].append(rule.token_bytes(env, packs.setdefault(id(rule), {})))
        return found[1][0]

    if len(done) == len(rows):  # every row column-wise (the usual case): no env at all
        made: dict[tuple[str, int], bytes] = {}
        for table, plan in plans.items():
            assert plan is not None
            for io in {e[8] for e in rows if e[9] == table}:
                made[(table, io)] = op_tokens(table, io, plan.rule) if plan.tokens else b""
        events = done.values() if len(plans) == 1 else (done[p] for p in range(len(rows)))
        return [(ev, made[(ev[9], ev[8])]) for ev in events if ev is not None]
    for pos, e in enumerate(rows):
        table = e[9]
        plan = plans[table]
        if plan is None:
            kept.append((e, None))
            continue
        rule = plan.rule
        parts = e[17]
        tokens: list[bytes] | None = None
        if done and pos in done:
            event = done[pos]
            if event is None:
                continue
            if not plan.tokens:
                kept.append((event, None))
                continue
            kept.append((event, [op_tokens(table, e[8], rule)]))
            continue
        if plan.share:
            found = shared.get((table, e[8]))
            if found is None:
                found = shared[(table, e[8])] = (
                    Facts(table, e[8], time_us, csn, xid, e[10], sequence, e[3]),
                    [],
                )
            facts, tokens = found
        else:
            facts = Facts(table, e[8], time_us, csn, xid, e[10], sequence, e[3])
        if parts and plan.reads is not None:  # usual: only what the rule reads decoded
            got = scan(parts[1], plan.read_mask, plan.keep_mask) if scan else None
            if got is None:  # (no kernel, or a malformed area: the Python scan says where)
                got = scan_entries(parts[1], plan.reads, rule.keep)
            after, projected = got
            before: dict[int, str | None] = {}
            if parts[2]:
                got = scan(parts[2], plan.read_mask, None) if scan else None
                before = (got or scan_entries(parts[2], plan.reads, None))[0]
            env = envs.get(table) if plan.share else None
            if env is None:
                env = RowEnv(rule, after, before, facts, process, stats, now)
                if plan.share:
                    envs[table] = env
            else:
                env.after, env.before, env.facts = after, before, facts
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
        where = plan.where
        if where is not None:
            v = where(env)
            if v is not True and (v is False or truth(v) is not True):
                continue
        if plan.filter and rule.failed_filter(env, None) is not None:
            continue
        if plan.counts:  # @GETENV ('STATS', ...) is used
            op = LOGICAL_OPS.get(e[8], "")
            for key in ((table.upper(), op), ("", op), ("", "DML"), ("", "TOTAL")):
                stats[key] += 1
        if projected is not None:  # the kept column entries, as they were encoded
            kept_before = scan_entries(parts[2], frozenset(), rule.keep)[1] if parts[2] else b""
            parts = (parts[0], projected, kept_before or b"", parts[3])
        row = (*e[:11], (), (), e[13], e[14], e[15], e[16], parts)
        if not plan.tokens:
            kept.append((row, None))
        elif tokens is not None:  # the same bytes for the table and operation
            if not tokens:
                tokens.append(rule.token_bytes(env, packs.setdefault(id(rule), {})))
            kept.append((row, tokens))
        else:
            kept.append((row, env))
    out = []
    n = len(kept)
    for i, (row, given) in enumerate(kept):
        if given is None:
            out.append((row, b""))
        elif isinstance(given, list):
            out.append((row, given[0]))
        else:
            given.ind = int(TransInd.of(i, n))
            out.append((row, given.rule.token_bytes(given, packs.setdefault(id(given.rule), {}))))
    return out


def _columnar(
    rows: list[tuple[Any, ...]], table: str, plan: _Plan, done: dict[int, tuple[Any, ...] | None]
) -> None:
    """``table``'s rows scanned and selected column-wise, into ``done``; nothing when a row
    cannot be (the row-by-row path then deals with them, and says what is wrong). Under
    COLS/COLSEXCEPT a row with a before-image area makes the scan decline (None): its
    before image must lose the excluded columns too, which the row-by-row path does."""
    got = _SCAN_ROWS(rows, table, plan.slots, len(plan.order), plan.keep_mask, Status.MISSING)
    if got is None:
        return
    positions, columns, events = got
    try:
        ok = plan.passes(dict(zip(plan.order, columns, strict=True)), rows, positions)
    except Exception:
        return
    for p, event, good in zip(positions, events, ok, strict=True):
        done[p] = event if good else None


class _Plan:
    """What :func:`rows_in_task` reads of one table's rule, row after row."""

    __slots__ = ("columnar", "conds", "counts", "filter", "keep_mask", "order", "read_mask",
                 "reads", "rule", "share", "slots", "tokens", "vector_filters",
                 "vector_where", "where")  # fmt: skip

    def __init__(self, rule: RowRule) -> None:
        self.rule = rule
        self.reads = rule.reads
        self.read_mask, self.keep_mask = rule.masks
        # rows share their Facts and one env (set again per row) when nothing reads the
        # row's own facts and no token needs the row's env kept for later
        self.share = rule.facts_shared and rule.op_tokens
        self.where = rule.fn(rule.where) if rule.where is not None else None
        self.filter = bool(rule.filters)
        self.counts = rule.counts
        self.tokens = bool(rule.tokens)
        # column-wise: the table's rows of a transaction scanned at once (rowscan.rows)
        # and WHERE / FILTER evaluated over their columns (engine.expr.vector)
        self.vector_where: Vector | None = None
        self.vector_filters: tuple[tuple[Filter, Vector], ...] | None = None
        if rule.where is not None:
            self.vector_where = compile_vector(rule.where, rule.index)
        vectors = [(f, compile_vector(f.condition, rule.index)) for f in rule.filters]
        if all(v is not None for _, v in vectors):
            self.vector_filters = tuple((f, v) for f, v in vectors if v is not None)
        self.order = tuple(sorted(self.reads or ()))
        slots = bytearray(max(self.order) + 1 if self.order else 0)
        for k, i in enumerate(self.order):
            slots[i] = k + 1
        self.slots = bytes(slots)
        self.columnar = (
            self.share
            and self.reads is not None
            and len(self.order) <= MAX_SLOTS
            and not self.counts
            and (rule.where is None or self.vector_where is not None)
            and (not rule.filters or self.vector_filters is not None)
        )
        # select (rowscan.select, or select_rows): column-wise and no FILTER, WHERE none or
        # comparisons of columns with integers joined by AND
        conds = conds_of(rule.where, rule.index) if rule.where is not None else ()
        self.conds = conds if self.columnar and not rule.filters else None

    def passes(
        self, columns: dict[int, list[Value]], rows: list[tuple[Any, ...]], positions: list[int]
    ) -> list[bool]:
        """Whether each of the rows at ``positions`` passes WHERE and FILTER."""
        n = len(positions)
        ok = [True] * n
        if self.vector_where is not None:
            ok = [v is True or (v is not False and truth(v) is True)
                  for v in self.vector_where(columns, n)]  # fmt: skip
        ops = [LOGICAL_OPS.get(rows[p][8], "") for p in positions] if self.vector_filters else []
        for f, vector in self.vector_filters or ():  # each FILTER must pass
            held = vector(columns, n)
            ok = [
                good and (not f.applies_to(op) or truth(v) is True)
                for good, op, v in zip(ok, ops, held, strict=True)
            ]
        return ok


#: id of a rule -> (the rule, kept alive so that its id stays its own; its plan)
_PLANS: dict[int, tuple[RowRule, _Plan]] = {}


def _plan(rule: RowRule) -> _Plan:
    found = _PLANS.get(id(rule))
    if found is None or found[0] is not rule:
        if len(_PLANS) > 1024:  # rules come from parameter files: a bound, not a cache
            _PLANS.clear()
        found = _PLANS[id(rule)] = (rule, _Plan(rule))
    return found[1]


def with_columns(e: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row event with record parts made into one with columns (the driver's rules need
    them): for a transaction of a table with row options that is not closed in a task."""
    parts = e[17]
    return (*e[:11], columns_of(parts[1]), columns_of(parts[2]), *e[13:17], b"")
