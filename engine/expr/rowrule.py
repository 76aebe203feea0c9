"""A TABLE statement's row options applied to one row: COLS / COLSEXCEPT, WHERE, FILTER
and TOKENS (Extract and pump; docs/params.md, "TABLE options").

:func:`rule_for` resolves a statement against the table's columns once (an unknown column
is an :class:`UnknownColumn`, reported as OGG-00366 at start); :meth:`RowRule.select`
says whether a row passes WHERE and FILTER and :meth:`RowRule.project` drops the columns
COLS/COLSEXCEPT leave out (the key always stays, as GoldenGate keeps it);
:meth:`RowRule.tokens` evaluates TOKENS into user token entries for the record's token
area (:func:`engine.trail.codec.user_token`). Pure and picklable.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property, lru_cache
from typing import Final, NamedTuple

from engine.expr.compiled import Binding, compile_bound, evaluate
from engine.expr.evaluate import Compiled
from engine.expr.functions import format_date
from engine.expr.values import Status, Value, to_text, truth
from engine.trail.codec import pack_tokens, user_token
from engine.trail.layout import BEFORE_IMAGE, IOType, TransInd, wire_io_type
from engine.trail.model import Columns, micros_to_datetime
from params.expr import (
    GGFILEHEADER_KEYS,
    HEADER_ELEMENTS,
    Assignment,
    Binary,
    Call,
    Col,
    Expr,
    Filter,
    Header,
    Lit,
    Unary,
    columns_of,
)
from params.models import TableSpec

#: @GETENV ('GGHEADERINFO', 'OPTYPE') of each record type, as GoldenGate names them.
OP_TYPES: dict[int, str] = {
    IOType.INSERT: "INSERT", IOType.DELETE: "DELETE", IOType.UPDATE: "UPDATE",
    IOType.FIELDCOMP: "SQL COMPUPDATE", IOType.KEYFIELDCOMP: "PK UPDATE",
    IOType.PURGEDATA: "TRUNCATE", IOType.UNIFIED_UPDATE: "SQL COMPUPDATE",
    IOType.FIELDCOMP | BEFORE_IMAGE: "SQL COMPUPDATE", IOType.UPDATE | BEFORE_IMAGE: "UPDATE",
    IOType.KEYFIELDCOMP | BEFORE_IMAGE: "PK UPDATE", IOType.UNIFIED_PK_UPDATE: "PK UPDATE",
}  # fmt: skip
#: The operation FILTER ON/IGNORE names (a before image: its update's).
LOGICAL_OPS: dict[int, str] = {
    IOType.INSERT: "INSERT", IOType.DELETE: "DELETE", IOType.UPDATE: "UPDATE",
    IOType.FIELDCOMP: "UPDATE", IOType.KEYFIELDCOMP: "UPDATE", IOType.UNIFIED_UPDATE: "UPDATE",
    IOType.FIELDCOMP | BEFORE_IMAGE: "UPDATE", IOType.UPDATE | BEFORE_IMAGE: "UPDATE",
    IOType.KEYFIELDCOMP | BEFORE_IMAGE: "UPDATE", IOType.UNIFIED_PK_UPDATE: "UPDATE",
}  # fmt: skip
_TRANS_IND = {TransInd.BEGIN: "BEGIN", TransInd.MIDDLE: "MIDDLE", TransInd.END: "END",
              TransInd.WHOLE: "WHOLE"}  # fmt: skip


@dataclass(frozen=True)
class UnknownColumn:
    """A column a TABLE option names that the table does not have (OGG-00366)."""

    table: str
    option: str
    column: str

    @property
    def text(self) -> str:
        return f"Invalid column specified in {self.option} of TABLE {self.table}: {self.column}."


class Facts(NamedTuple):
    """What a row's header and transaction say, for @GETENV and GGS_* elements (a named
    tuple: one is made per row, and a tuple is quicker to make than a frozen dataclass)."""

    table: str = ""
    io_type: int = 0
    commit_time_us: int = 0
    csn: str = ""
    xid: str = ""
    rowid: str | None = None
    log_seqno: int = 0
    log_rba: int = 0
    trans_ind: int = TransInd.WHOLE
    file_seqno: int | None = None  # where the record is in the trail it is read from
    file_rba: int | None = None
    header: Mapping[str, str | int] | None = None  # that trail file's header tokens


@dataclass(frozen=True)
class Process:
    """@GETENV ('GGENVIRONMENT', ...) of the running process."""

    group: str = ""
    kind: str = "EXTRACT"
    host: str = field(default_factory=socket.gethostname)
    user: str = field(default_factory=lambda: os.environ.get("USER", ""))
    pid: int = field(default_factory=os.getpid)
    home: str = ""


@dataclass(frozen=True)
class RowRule:
    """One table's row options, resolved against its columns."""

    table: str
    names: tuple[str, ...]
    key: tuple[int, ...]
    keep: frozenset[int] | None = None  # None: every column
    where: Expr | None = None
    filters: tuple[Filter, ...] = ()  # every FILTER clause, in order: each must pass
    tokens: tuple[Assignment, ...] = ()
    index: Mapping[str, int] = field(default_factory=dict)

    @property
    def selects(self) -> bool:
        return self.where is not None or bool(self.filters)

    @cached_property
    def exprs(self) -> tuple[Expr, ...]:
        """WHERE, FILTER's condition and the TOKENS expressions there are."""
        exprs = [self.where, *(f.condition for f in self.filters)]
        exprs += [a.expr for a in self.tokens]
        return tuple(e for e in exprs if e is not None)

    @cached_property
    def counts(self) -> bool:
        """Whether an expression reads @GETENV ('STATS', ...) (rows must be counted)."""
        return any(_reads_stats(e) for e in self.exprs)

    @cached_property
    def reads(self) -> frozenset[int] | None:
        """The indices of the columns the expressions read (None: the whole record, for
        @RANGE's key or the record length): a row need not decode the others."""
        if any(_reads_whole(e) for e in self.exprs):
            return None
        found = (self.index.get(c.name) for e in self.exprs for c in columns_of(e))
        return frozenset(i for i in found if i is not None)

    @cached_property
    def facts_shared(self) -> bool:
        """Whether no expression reads a fact of the row itself (ROWID, its position, its
        place in the transaction, the record's length, STATS counts): rows of one table and
        operation in one transaction may then share one :class:`Facts`."""
        return not any(_some(e, _row_fact) for e in self.exprs)

    @cached_property
    def op_tokens(self) -> bool:
        """Whether the TOKENS values are the same for every row of one table and
        operation in one transaction (they read no column and no fact of the row)."""
        return not any(
            _some(a.expr, lambda n: _row_fact(n) or _row_value(n))
            for a in self.tokens
            if a.expr is not None
        )

    @cached_property
    def masks(self) -> tuple[bytes, bytes | None]:
        """``reads`` and ``keep`` as flag bytes by column index (for the C scan)."""
        return _mask(self.reads or ()), None if self.keep is None else _mask(self.keep)

    def __getstate__(self) -> dict[str, object]:
        """Pickled (to the miner's tasks) without its closures: they are made again there."""
        state = dict(self.__dict__)
        for name in _CLOSURES:
            state.pop(name, None)
        return state

    @cached_property
    def _fns(self) -> dict[int, tuple[Expr, Compiled]]:
        return {}

    def fn(self, e: Expr) -> Compiled:
        """``e`` compiled for this table's rows (:func:`compile_bound`), once."""
        found = self._fns.get(id(e))
        if found is None or found[0] is not e:
            found = self._fns[id(e)] = (e, compile_bound(e, Binding(self.index, _GETENV)))
        return found[1]

    @cached_property
    def _token_fns(self) -> tuple[Compiled, ...]:
        none: Compiled = lambda env: None  # noqa: E731  (TOKENS (name) with no value)
        return tuple(none if a.expr is None else self.fn(a.expr) for a in self.tokens)

    @cached_property
    def _where_fn(self) -> Compiled | None:
        return None if self.where is None else self.fn(self.where)

    @cached_property
    def _filter_fns(self) -> tuple[tuple[Filter, Compiled], ...]:
        return tuple((f, self.fn(f.condition)) for f in self.filters)

    def token_bytes(self, env: RowEnv, packed: dict[tuple[object, ...], bytes]) -> bytes:
        """The token area bytes of :meth:`user_tokens`, through ``packed`` (the values seen
        -> their bytes: a host name, an operation type, a commit time repeat)."""
        values = tuple([fn(env) for fn in self._token_fns])
        key = tuple((type(v), v) for v in values)
        found = packed.get(key)
        if found is None:
            found = packed[key] = pack_tokens(self._entries(values))
        return found

    def token_entries(
        self, env: RowEnv, made: dict[tuple[object, ...], tuple[tuple[bytes, int, bytes], ...]]
    ) -> tuple[tuple[bytes, int, bytes], ...]:
        """:meth:`user_tokens` through ``made`` (the values seen -> their entries; kept
        to a bound by the caller's lifetime: a TableRules per Extract run)."""
        values = tuple([fn(env) for fn in self._token_fns])
        key = (id(self), *((type(v), v) for v in values))
        found = made.get(key)
        if found is None:
            if len(made) > 4096:
                made.clear()
            found = made[key] = self._entries(values)
        return found

    def env(
        self,
        columns: Columns,
        before: Columns,
        facts: Facts,
        process: Process,
        stats: Mapping[tuple[str, str], int],
        now: datetime,
        tokens: Mapping[str, Value] | None = None,
    ) -> RowEnv:
        return RowEnv(self, dict(columns), dict(before), facts, process, stats, now, tokens)

    def select(self, env: RowEnv) -> bool:
        """Whether the row passes WHERE and FILTER."""
        return self.where_holds(env) and self.failed_filter(env, None) is None

    def where_holds(self, env: RowEnv) -> bool:
        where = self._where_fn
        return where is None or truth(where(env)) is True

    def failed_filter(self, env: RowEnv, op: str | None) -> Filter | None:
        """The first FILTER clause the row fails, in order (None: it passes each); ``op``
        is its operation as FILTER ON/IGNORE name it (None: from its io type)."""
        if not self.filters:
            return None
        if op is None:
            op = LOGICAL_OPS.get(env.facts.io_type, "")
        for f, fn in self._filter_fns:
            if f.applies_to(op) and truth(fn(env)) is not True:
                return f
        return None

    def project(self, columns: Columns) -> Columns:
        keep = self.keep
        if keep is None:
            return columns
        return tuple(c for c in columns if c[0] in keep)

    def user_tokens(self, env: RowEnv) -> tuple[tuple[bytes, int, bytes], ...]:
        values = (evaluate(a.expr, env) if a.expr is not None else None for a in self.tokens)
        return self._entries(values)

    def _entries(self, values: Iterable[Value]) -> tuple[tuple[bytes, int, bytes], ...]:
        out = []
        for a, v in zip(self.tokens, values, strict=False):
            value = to_text(v)
            out.append(user_token(a.name, None if isinstance(value, Status) else value))
        return tuple(out)


#: The per-process closures a RowRule caches (not pickled: made again where it is used).
_CLOSURES = ("_fns", "_token_fns", "_where_fn", "_filter_fns")


class RowEnv:
    """The :class:`engine.expr.Env` of one row under a :class:`RowRule`."""

    __slots__ = ("after", "before", "facts", "ind", "process", "rule", "stats", "tokens", "when")

    def __init__(
        self,
        rule: RowRule,
        after: dict[int, str | None],
        before: dict[int, str | None],
        facts: Facts,
        process: Process,
        stats: Mapping[tuple[str, str], int],
        when: datetime,
        tokens: Mapping[str, Value] | None = None,
    ) -> None:
        self.rule, self.after, self.before, self.facts = rule, after, before, facts
        self.process, self.stats, self.when, self.tokens = process, stats, when, tokens
        self.ind = int(facts.trans_ind)  # set again once the record's place is known

    def column(self, name: str, image: str) -> Value:
        i = self.rule.index.get(name)
        if i is None:
            return Status.MISSING
        source = self.before if image == "BEFORE" and self.before else self.after
        return source.get(i, Status.MISSING)

    def getenv(self, info: str, key: str, table: str | None) -> Value:
        if info == "STATS":
            return self.stats.get((table or "", key), 0)
        get = _GETENV.get((info, key))
        return Status.MISSING if get is None else get(self)

    def token(self, name: str) -> Value:
        if self.tokens is None:
            return Status.MISSING
        return self.tokens.get(name, Status.MISSING)

    def key_values(self) -> tuple[Value, ...]:
        return tuple(self.after.get(i, self.before.get(i, Status.MISSING)) for i in self.rule.key)

    def now(self) -> datetime:
        return self.when


def _some(e: Expr, found: Callable[[Expr], bool]) -> bool:
    """Whether ``found`` holds for ``e`` or a node under it."""
    if found(e):
        return True
    if isinstance(e, Call):
        return any(_some(a, found) for a in e.args)
    if isinstance(e, Unary):
        return _some(e.operand, found)
    if isinstance(e, Binary):
        return _some(e.left, found) or _some(e.right, found)
    return False


def _getenv_of(e: Expr, word: str, first: bool) -> bool:
    """A @GETENV call with the literal ``word`` (as its first argument, if ``first``)."""
    if not isinstance(e, Call) or e.name != "GETENV":
        return False
    args = e.args[:1] if first else e.args
    return any(isinstance(a, Lit) and str(a.value).upper() == word for a in args)


def _reads_stats(e: Expr) -> bool:
    return _some(e, lambda n: _getenv_of(n, "STATS", True))


def _whole(n: Expr) -> bool:
    """@RANGE (of the key), @GETENV ('GGHEADERINFO', 'RECORDLENGTH') or GGS_RECORD_LENGTH."""
    if isinstance(n, Header):
        return HEADER_ELEMENTS[n.name][1] == "RECORDLENGTH"
    return (isinstance(n, Call) and n.name == "RANGE") or _getenv_of(n, "RECORDLENGTH", False)


def _reads_whole(e: Expr) -> bool:
    return _some(e, _whole)


#: The @GETENV keys whose value is the same for every row of one table and operation in
#: one transaction (a key not named here is taken to vary by row).
_PER_OPERATION: frozenset[tuple[str, str]] = frozenset(
    [("GGENVIRONMENT", k) for k in ("GROUPNAME", "GROUPTYPE", "HOSTNAME", "OSUSERNAME",
                                    "PROCESSID", "GGHOME", "DOMAINNAME", "GROUPDESCRIPTION")]
    + [("GGHEADERINFO", k) for k in ("COMMITTIMESTAMP", "IOTIME", "OPTYPE", "TABLENAME",
                                     "OBJECTNAME", "SCHEMANAME", "LOGRBA", "LOGCSN",
                                     "BEFOREAFTERINDICATOR")]
    + [("TRANSACTION", k) for k in ("XID", "CSN", "RSN", "TIMESTAMP")]
    + [("RECORD", "TIMESTAMP"), ("RECORD", "RSN")]
)  # fmt: skip


def _row_fact(n: Expr) -> bool:
    """A @GETENV key or header element that may differ between rows of one table and
    operation in one transaction."""
    if isinstance(n, Header):
        return HEADER_ELEMENTS[n.name] not in _PER_OPERATION
    if isinstance(n, Call) and n.name == "GETENV":
        words = [str(a.value).upper() for a in n.args if isinstance(a, Lit)]
        return len(words) < 2 or (words[0], words[-1]) not in _PER_OPERATION
    return False


def _row_value(n: Expr) -> bool:
    """A column, the key (@RANGE) or a token of the row."""
    return isinstance(n, Col) or (isinstance(n, Call) and n.name in ("RANGE", "TOKEN"))


def _mask(indices: Iterable[int]) -> bytes:
    found = list(indices)
    out = bytearray(max(found) + 1 if found else 0)
    for i in found:
        out[i] = 1
    return bytes(out)


def _length(columns: dict[int, str | None]) -> int:
    return sum(len(v or "") + 4 for v in columns.values())


def _stamp(micros: int) -> Value:
    """``format_date(micros_to_datetime(micros), STAMP)``: a transaction's commit time is
    formatted for each of its tokens and most commits share their second with others, so
    the date and time are made once a second (a commit's own call cost ~7 µs)."""
    seconds, fraction = divmod(micros, 1_000_000)
    return f"{_second(seconds)}.{fraction:06d}"


#: The format of COMMITTIMESTAMP and IOTIME (GoldenGate's, with microseconds), and the
#: second it begins with.
STAMP: Final = "YYYY-MM-DD HH:MI:SS.FFFFFF"
_SECOND: Final = "YYYY-MM-DD HH:MI:SS"


@lru_cache(maxsize=256)
def _second(seconds: int) -> str:
    return str(format_date(micros_to_datetime(seconds * 1_000_000), _SECOND))


def _known(v: int | None) -> Value:
    """A position there is (None: the record is not read from a trail: MISSING)."""
    return Status.MISSING if v is None else v


def file_header(token: str) -> Callable[[RowEnv], Value]:
    """@GETENV ('GGFILEHEADER', key): the ``token`` of the header of the trail file the row
    is read from (MISSING in an Extract, which reads redo)."""

    def get(e: RowEnv) -> Value:
        header = e.facts.header
        if header is None:
            return Status.MISSING
        value = header.get(token)
        return Status.MISSING if value is None else value

    return get


def _when(e: RowEnv) -> Value:
    return _stamp(e.facts.commit_time_us)


#: @GETENV (information type, key) -> its value for a row (STATS apart).
_GETENV: dict[tuple[str, str], Callable[[RowEnv], Value]] = {
    ("GGENVIRONMENT", "GROUPNAME"): lambda e: e.process.group,
    ("GGENVIRONMENT", "GROUPTYPE"): lambda e: e.process.kind,
    ("GGENVIRONMENT", "HOSTNAME"): lambda e: e.process.host,
    ("GGENVIRONMENT", "OSUSERNAME"): lambda e: e.process.user,
    ("GGENVIRONMENT", "PROCESSID"): lambda e: e.process.pid,
    ("GGENVIRONMENT", "GGHOME"): lambda e: e.process.home,
    ("GGENVIRONMENT", "DOMAINNAME"): lambda e: "",
    ("GGENVIRONMENT", "GROUPDESCRIPTION"): lambda e: "",
    ("GGHEADERINFO", "COMMITTIMESTAMP"): _when,
    ("GGHEADERINFO", "IOTIME"): _when,
    ("GGHEADERINFO", "OPTYPE"): lambda e: OP_TYPES.get(e.facts.io_type),
    ("GGHEADERINFO", "TABLENAME"): lambda e: e.facts.table,
    ("GGHEADERINFO", "OBJECTNAME"): lambda e: e.facts.table,
    ("GGHEADERINFO", "SCHEMANAME"): lambda e: e.facts.table.partition(".")[0],
    ("GGHEADERINFO", "LOGRBA"): lambda e: e.facts.log_seqno,
    ("GGHEADERINFO", "LOGPOSITION"): lambda e: e.facts.log_rba,
    ("GGHEADERINFO", "LOGCSN"): lambda e: e.facts.csn,
    ("GGHEADERINFO", "TRANSACTIONINDICATOR"): lambda e: _TRANS_IND.get(TransInd(e.ind)),
    ("GGHEADERINFO", "BEFOREAFTERINDICATOR"):
        lambda e: "BEFORE" if wire_io_type(e.facts.io_type)[1] == b"B" else "AFTER",
    ("GGHEADERINFO", "RECORDLENGTH"): lambda e: _length(e.after),
    ("TRANSACTION", "XID"): lambda e: e.facts.xid,
    ("TRANSACTION", "CSN"): lambda e: e.facts.csn,
    ("TRANSACTION", "RSN"): lambda e: e.facts.csn,
    ("TRANSACTION", "TIMESTAMP"): _when,
    ("RECORD", "ROWID"): lambda e: e.facts.rowid,
    ("RECORD", "TIMESTAMP"): _when,
    ("RECORD", "RSN"): lambda e: e.facts.csn,
    ("RECORD", "FILESEQNO"): lambda e: _known(e.facts.file_seqno),
    ("RECORD", "FILERBA"): lambda e: _known(e.facts.file_rba),
    **{("GGFILEHEADER", key): file_header(token) for key, token in GGFILEHEADER_KEYS.items()},
}  # fmt: skip


def key_columns(
    spec: TableSpec, table: str, names: tuple[str, ...]
) -> tuple[int, ...] | UnknownColumn:
    """The indices of the KEYCOLS columns (empty: no KEYCOLS)."""
    out = []
    upper = [n.upper() for n in names]
    for c in spec.keycols or ():
        name = c[1:-1] if c.startswith('"') else c.upper()
        if name in names:
            out.append(names.index(name))
        elif not c.startswith('"') and name in upper:
            out.append(upper.index(name))
        else:
            return UnknownColumn(table, "KEYCOLS", c)
    return tuple(out)


def rule_for(
    spec: TableSpec, table: str, names: tuple[str, ...], key: tuple[str, ...]
) -> RowRule | UnknownColumn | None:
    """The row rule of ``spec`` for one table (None when it has no row options)."""
    index: dict[str, int] = {}
    for i, n in enumerate(names):
        index.setdefault(n, i)
        index.setdefault(n.upper(), i)

    def find(option: str, cols: tuple[str, ...]) -> list[int] | UnknownColumn:
        out = []
        for c in cols:
            name = c[1:-1] if c.startswith('"') else c.upper()
            if name not in index:
                return UnknownColumn(table, option, c)
            out.append(index[name])
        return out

    given = key_columns(spec, table, names)
    if isinstance(given, UnknownColumn):
        return given
    key_idx = list(given) or [index[k.upper()] for k in key if k.upper() in index]
    keep: frozenset[int] | None = None
    for option, cols in (("COLS", spec.cols), ("COLSEXCEPT", spec.cols_except)):
        if cols is None:
            continue
        found = find(option, cols)
        if isinstance(found, UnknownColumn):
            return found
        if option == "COLS":
            keep = frozenset(found) | frozenset(key_idx)
        else:
            keep = frozenset(range(len(names))) - (frozenset(found) - frozenset(key_idx))
    where, filters, tokens = spec.where, spec.filters, spec.tokens
    exprs = [("WHERE", where), *(("FILTER", f.condition) for f in filters)]
    exprs += [("TOKENS", a.expr) for a in tokens]
    for option, e in exprs:
        for col in columns_of(e):
            if col.name not in index:
                return UnknownColumn(table, option, col.name)
    if keep is None and where is None and not filters and not tokens:
        return None
    return RowRule(table, names, tuple(key_idx), keep, where, filters, tokens, index)
