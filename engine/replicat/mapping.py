"""MAP source, TARGET target [, option ...]: from a trail table to a target table, from
trail columns to target columns, and which records are applied and how.

* Source names match with ``*``/``?`` wildcards (MAPEXCLUDE first); a target part that is
  ``*`` takes the source's part (``MAP hr.*, TARGET hr2.*``). Every MAP that matches a
  source table applies, in file order (``MAP hr.emp, TARGET hr.emp;`` and ``MAP hr.emp,
  TARGET hr.emp_hist, INSERTALLRECORDS, ...;`` keep a table and its history).
* COLMAP (:mod:`params.expr`): ``USEDEFAULTS`` maps columns by name (case-insensitive),
  as does a MAP without COLMAP; ``target = source_column``, ``target = 'literal'`` /
  number / NULL, and ``target = expression`` (``@functions``, arithmetic, ``GGS_*`` header
  elements, evaluated by :mod:`engine.expr` in a :class:`~engine.replicat.recordenv.RecordEnv`).
  An expression that needs a column the record does not carry (a compressed update) leaves
  its target column out of that statement.
* WHERE (a condition on the record) and FILTER (``ON``/``IGNORE`` operations,
  ``RAISEERROR n``) choose the records applied; IGNOREINSERTS / IGNOREUPDATES /
  IGNOREDELETES skip operations; INSERTALLRECORDS makes every operation an insert.
* The key is KEYCOLS, else the target's primary key, else every target column.
* HANDLECOLLISIONS and the REPERROR rules are those in force for the MAP (see
  :mod:`params.handlers_map`).
* Trail column names come from the trail's TDRs (index -> name); a trail without them
  (FORMAT RELEASE 12.1 or earlier, NO_OBJECTDEFS) needs ASSUMETARGETDEFS (by position).

:data:`MAP_OPTION_READERS` is the registry of the MAP options the Replicat acts on: each
reads its option (and the toggles resolved for the MAP) into the MAP's :class:`MapRules`.
``params.catalog.MAP_ACTS`` must name the same options (tests/params/test_acts_or_warns.py):
the checker warns "not used" for every other MAP option.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engine.expr.compiled import Binding, compile_bound
from engine.expr.evaluate import Compiled
from engine.expr.rowrule import _GETENV, OP_TYPES, Facts, Process, RowEnv, RowRule, _known, _stamp
from engine.expr.values import Value
from engine.replicat import MappingError
from engine.targets.base import ColumnInfo, TableInfo, Target
from engine.trail.layout import event_io_type
from engine.trail.model import Columns, TableDef, TrailPosition, TrailRecord
from params.expr import Col, Expr, ExprIssue, Filter, Lit, columns_of, parse_assignments
from params.models import ParamFile, RepError, TableSpec


@dataclass(frozen=True, slots=True)
class ColMap:
    """Parsed COLMAP: target <- source column, target <- constant text (None: NULL), and
    target <- expression."""

    use_defaults: bool
    columns: tuple[tuple[str, str], ...] = ()
    literals: tuple[tuple[str, str | None], ...] = ()
    computed: tuple[tuple[str, Expr], ...] = ()

    @property
    def targets(self) -> frozenset[str]:
        named = [t for t, _ in self.columns] + [t for t, _ in self.literals]
        return frozenset(t.upper() for t in named + [t for t, _ in self.computed])


def _issue(option: str, text: str, issue: ExprIssue) -> MappingError:
    return MappingError(
        "OGG-00919", f"Error in {option} clause at offset {issue.pos}: {issue.message} ({text})."
    )


def parse_colmap(text: str | None) -> ColMap:
    if text is None:
        return ColMap(True)
    items = parse_assignments(text)
    if isinstance(items, ExprIssue):
        raise _issue("COLMAP", text, items)
    defaults = False
    cols: list[tuple[str, str]] = []
    lits: list[tuple[str, str | None]] = []
    computed: list[tuple[str, Expr]] = []
    for a in items:
        if a.expr is None:
            if a.name != "USEDEFAULTS":
                raise MappingError(
                    "OGG-00919", f"Error in COLMAP clause: {a.name} needs '= value'."
                )
            defaults = True
        elif isinstance(a.expr, Col) and not a.expr.image:
            cols.append((a.name, a.expr.name))
        elif isinstance(a.expr, Lit):
            v = a.expr.value
            lits.append((a.name, None if v is None else str(v)))
        else:
            computed.append((a.name, a.expr))
    return ColMap(defaults, tuple(cols), tuple(lits), tuple(computed))


@dataclass
class MapRules:
    """One MAP statement's options as the Replicat uses them (source-independent)."""

    spec: TableSpec
    target_owner: str | None = None
    target_name: str | None = None
    colmap: ColMap = field(default_factory=lambda: ColMap(True))
    keycols: tuple[str, ...] | None = None
    where: Expr | None = None
    filters: tuple[Filter, ...] = ()
    insert_all: bool = False
    handle_collisions: bool = False
    reperrors: tuple[RepError, ...] = ()
    ignore_ops: frozenset[str] = frozenset()
    get_befores: bool = False  # GETUPDATEBEFORES before the MAP: before images are processed


def _option(spec: TableSpec, name: str) -> str | None:
    opt = spec.option(name)
    return opt.value if opt else None


def _read_target(spec: TableSpec, r: MapRules) -> None:
    if spec.target is not None:
        r.target_owner, r.target_name = spec.target.owner, spec.target.name


def _read_colmap(spec: TableSpec, r: MapRules) -> None:
    r.colmap = parse_colmap(_option(spec, "COLMAP"))


def _read_keycols(spec: TableSpec, r: MapRules) -> None:
    r.keycols = spec.keycols


def _read_where(spec: TableSpec, r: MapRules) -> None:
    r.where = spec.where  # parsed by params.handlers_table.row_options


def _read_filter(spec: TableSpec, r: MapRules) -> None:
    r.filters = spec.filters


def _read_insert_all(spec: TableSpec, r: MapRules) -> None:
    r.insert_all = spec.insert_all_records


def _read_collisions(spec: TableSpec, r: MapRules) -> None:
    r.handle_collisions = spec.handle_collisions


def _read_reperror(spec: TableSpec, r: MapRules) -> None:
    r.reperrors = spec.reperrors


#: The MAP options the Replicat acts on, and what reads each (see the module's doc).
MAP_OPTION_READERS: dict[str, Callable[[TableSpec, MapRules], None]] = {
    "TARGET": _read_target,
    "COLMAP": _read_colmap,
    "KEYCOLS": _read_keycols,
    "WHERE": _read_where,
    "FILTER": _read_filter,
    "INSERTALLRECORDS": _read_insert_all,
    "HANDLECOLLISIONS": _read_collisions,
    "NOHANDLECOLLISIONS": _read_collisions,
    "REPERROR": _read_reperror,
}


def map_rules(spec: TableSpec) -> MapRules:
    r = MapRules(spec, ignore_ops=frozenset(spec.ignore_ops), get_befores=spec.get_update_befores)
    for reader in dict.fromkeys(MAP_OPTION_READERS.values()):
        reader(spec, r)
    return r


@dataclass(frozen=True, slots=True)
class TableMap:
    """How one trail table is applied to one target table.

    ``by_index`` maps a trail column index to the target column it feeds; ``literals`` and
    ``computed`` are target columns set from constants and expressions; ``key`` names the
    target key columns; ``names`` are the trail table's column names (for expressions).

    The plan apply runs, made once here rather than per record: ``targets`` (trail column
    index -> target column name), ``infos`` (target column name -> its column, for
    binding), ``key_names``, and ``compiled``: ``computed`` compiled for the source
    table's rows, read from a :class:`RecordEnv` (:data:`RECORD_GETENV`).
    """

    source: str
    target: TableInfo
    by_index: dict[int, ColumnInfo]
    literals: tuple[tuple[ColumnInfo, str | None], ...]
    key: tuple[ColumnInfo, ...]
    computed: tuple[tuple[ColumnInfo, Expr], ...] = ()
    rule: RowRule | None = None  # the source row's names for expressions, WHERE, FILTER
    insert_all: bool = False
    handle_collisions: bool = False
    reperrors: tuple[RepError, ...] = ()
    ignore_ops: frozenset[str] = frozenset()
    compiled: tuple[tuple[str, Compiled], ...] = ()  # target column name, its closure
    get_befores: bool = False
    targets: dict[int, str] = field(default_factory=dict)
    infos: dict[str, ColumnInfo] = field(default_factory=dict)
    key_names: tuple[str, ...] = ()
    selects: bool = False  # a WHERE or FILTER (rule.selects)

    def row(self, columns: Columns) -> dict[str, str | None]:
        """Target column name -> trail text (None: NULL) for the columns a record carries."""
        targets = self.targets
        out: dict[str, str | None] = {}
        for index, value in columns:
            name = targets.get(index)
            if name is not None:
                out[name] = value
        return out


def _optype(e: RecordEnv) -> Value:
    r = e._record
    return OP_TYPES.get(event_io_type(r.io_type, r.before_after))


def _record_time(e: RecordEnv) -> Value:
    return _stamp(e._record.io_time_us)


def _csn(e: RecordEnv) -> Value:
    return e._txn.logcsn or ""


#: @GETENV (information type, key) -> its value in a :class:`RecordEnv`: the RowEnv's
#: getters (:data:`engine.expr.rowrule._GETENV`), with those of the record's header and
#: transaction read from them at once rather than from the :class:`Facts` (which a record
#: then never needs to make). tests/replicat/test_record_env.py holds the two equal.
RECORD_GETENV: dict[tuple[str, str], Callable[[Any], Value]] = {
    **_GETENV,
    ("GGHEADERINFO", "COMMITTIMESTAMP"): _record_time,
    ("GGHEADERINFO", "IOTIME"): _record_time,
    ("GGHEADERINFO", "OPTYPE"): _optype,
    ("GGHEADERINFO", "TABLENAME"): lambda e: e._record.table,
    ("GGHEADERINFO", "OBJECTNAME"): lambda e: e._record.table,
    ("GGHEADERINFO", "SCHEMANAME"): lambda e: e._record.table.partition(".")[0],
    ("GGHEADERINFO", "LOGRBA"): lambda e: e._record.audit_rba,
    ("GGHEADERINFO", "LOGPOSITION"): lambda e: e._record.audit_pos,
    ("GGHEADERINFO", "LOGCSN"): _csn,
    ("TRANSACTION", "XID"): lambda e: e._txn.tranid or "",
    ("TRANSACTION", "CSN"): _csn,
    ("TRANSACTION", "RSN"): _csn,
    ("TRANSACTION", "TIMESTAMP"): _record_time,
    ("RECORD", "ROWID"): lambda e: e._record.rowid,
    ("RECORD", "TIMESTAMP"): _record_time,
    ("RECORD", "RSN"): _csn,
    ("RECORD", "FILESEQNO"): lambda e: _known(e._at.seqno),
    ("RECORD", "FILERBA"): lambda e: _known(e._at.rba),
}  # fmt: skip


def record_fn(rule: RowRule, e: Expr) -> Compiled:
    """``e`` compiled for ``rule``'s rows as a :class:`RecordEnv` answers them."""
    return compile_bound(e, Binding(rule.index, RECORD_GETENV))


#: Facts made from all its fields at once (the named tuple's own __new__ takes keywords too)
_new_tuple = tuple.__new__


class RecordEnv(RowEnv):
    """The :class:`RowEnv` of one trail record in the Replicat, made lazily: its after
    image at once (expressions read columns), its facts, before image, clock time and
    transaction indicator only when an expression asks for them."""

    __slots__ = ("_at", "_clock", "_record", "_txn")

    def __init__(
        self,
        rule: RowRule,
        record: TrailRecord,
        txn: Any,  # engine.trail.txreader.Transaction (logcsn, tranid)
        at: TrailPosition,
        process: Process,
        stats: Mapping[tuple[str, str], int],
        clock: Callable[[], datetime],
    ) -> None:
        self.rule, self.process, self.stats, self.tokens = rule, process, stats, None
        self.after = dict(record.columns)
        self._record, self._txn, self._at, self._clock = record, txn, at, clock

    def __getattr__(self, name: str) -> Any:  # (called for a slot not set yet)
        r = self._record
        value: Any
        if name == "facts":
            txn, at = self._txn, self._at
            csn, xid = txn.logcsn or "", txn.tranid or ""
            io_type = event_io_type(r.io_type, r.before_after)  # a before image: BEFORE
            header = getattr(txn, "header", None)
            fields = (r.table, io_type, r.io_time_us, csn, xid, r.rowid, r.audit_rba,
                      r.audit_pos, r.trans_ind, at.seqno, at.rba,
                      header.tokens if header is not None else None)  # fmt: skip
            value = _new_tuple(Facts, fields)
        elif name == "before":
            value = dict(r.before_columns) if r.before_columns else {}
        elif name == "when":
            value = self._clock()
        elif name == "ind":
            value = int(r.trans_ind)
        else:
            raise AttributeError(name)
        setattr(self, name, value)
        return value


def _target_part(pattern: str, source: str) -> str:
    return source if pattern == "*" else pattern.strip('"')


class Mapper:
    """Resolves and caches the :class:`TableMap` s of each trail table (none: not mapped)."""

    def __init__(self, model: ParamFile, target: Target) -> None:
        self.model = model
        self.target = target
        self._maps: dict[str, tuple[TableMap, ...]] = {}
        self.specs = tuple(t for t in model.tables if t.statement in ("MAP", "MAPEXCLUDE"))
        # COLMAP / WHERE / FILTER are read before anything is applied
        self.rules = {id(s): map_rules(s) for s in self.specs if not s.exclude}

    def specs_for(self, table: str) -> tuple[TableSpec, ...]:
        """The MAP statements that apply to ``table``, in file order (MAPEXCLUDE first)."""
        owner, _, name = table.rpartition(".")
        for spec in self.specs:
            if spec.exclude and spec.source.matches(owner, name):
                return ()
        return tuple(s for s in self.specs if not s.exclude and s.source.matches(owner, name))

    def maps_for(self, table: str, definition: TableDef | None) -> tuple[TableMap, ...]:
        if table not in self._maps:
            self._maps[table] = tuple(
                self._resolve(table, spec, definition) for spec in self.specs_for(table)
            )
        return self._maps[table]

    def forget(self, table: str) -> None:
        """A new TDR for ``table`` (its columns changed): map it again."""
        self._maps.pop(table, None)

    def _column(self, info: TableInfo, name: str) -> ColumnInfo:
        col = info.column(name)
        if col is None:
            raise MappingError(
                "OGG-00919", f"Error in COLMAP clause: {info.name} has no column {name}."
            )
        return col

    def _resolve(self, table: str, spec: TableSpec, definition: TableDef | None) -> TableMap:
        rules = self.rules[id(spec)]
        owner, _, name = table.rpartition(".")
        t_owner = _target_part(rules.target_owner, owner) if rules.target_owner else owner
        t_name = _target_part(rules.target_name, name) if rules.target_name else name
        info = self.target.table(t_owner or None, t_name)
        if info is None:
            raise MappingError(
                "OGG-00199",
                f"Table {t_owner}.{t_name} does not exist in target database {self.target.name}.",
            )
        if definition is None:
            # No TDR: a trail of FORMAT RELEASE 12.1 or earlier, or NO_OBJECTDEFS.
            # ASSUMETARGETDEFS: the source columns are the target's, by position.
            if not self.model.assume_target_defs:
                raise MappingError(
                    "OGG-01296",
                    f"Error mapping from {table} to {info.name}: the trail has no table "
                    "definition (TDR) for the source table (a trail of FORMAT RELEASE 12.1 "
                    "or earlier, or written with NO_OBJECTDEFS, has none); ASSUMETARGETDEFS "
                    "maps its columns by position to the target's.",
                )
            definition = TableDef(table, tuple(c.name for c in info.columns))
        colmap = rules.colmap
        explicit = colmap.targets
        source_names = {n.upper() for n in definition.column_names}
        by_source: dict[str, ColumnInfo] = {}
        if colmap.use_defaults:
            for index_name in definition.column_names:
                col = info.column(index_name)
                if col is not None and col.name.upper() not in explicit:
                    by_source[index_name.upper()] = col
        for t, s in colmap.columns:
            col = self._column(info, t)
            if s.upper() not in source_names:
                raise MappingError(
                    "OGG-00919", f"Error in COLMAP clause: {table} has no column {s}."
                )
            by_source[s.upper()] = col
        by_index = {
            i: by_source[n.upper()]
            for i, n in enumerate(definition.column_names)
            if n.upper() in by_source
        }
        literals = tuple((self._column(info, t), v) for t, v in colmap.literals)
        computed = tuple((self._column(info, t), e) for t, e in colmap.computed)
        exprs = [("WHERE", rules.where), *(("FILTER", f.condition) for f in rules.filters)]
        exprs += [("COLMAP", e) for _, e in colmap.computed]
        for option, e in exprs:
            for c in columns_of(e):
                if c.name not in source_names and c.name not in definition.column_names:
                    raise MappingError(
                        "OGG-00919", f"Error in {option} clause: {table} has no column {c.name}."
                    )
        rule = None
        if colmap.computed or rules.where is not None or rules.filters:
            index: dict[str, int] = {}
            for i, n in enumerate(definition.column_names):
                index.setdefault(n, i)
                index.setdefault(n.upper(), i)
            rule = RowRule(table, tuple(definition.column_names), (), None, rules.where,
                           rules.filters, (), index)  # fmt: skip
        key_names = rules.keycols or info.key or tuple(c.name for c in info.columns)
        key = []
        for k in key_names:
            col = info.column(k)
            if col is None:
                raise MappingError(
                    "OGG-01296",
                    f"Error mapping from {table}: KEYCOLS column {k} not in {info.name}.",
                )
            key.append(col)
        infos = {c.name: c for c in by_index.values()}
        infos.update((c.name, c) for c, _ in literals)
        infos.update((c.name, c) for c, _ in computed)
        return TableMap(
            table,
            info,
            by_index,
            literals,
            tuple(key),
            computed,
            rule,
            rules.insert_all,
            rules.handle_collisions,
            rules.reperrors,
            rules.ignore_ops,
            tuple((c.name, record_fn(rule, e)) for c, e in computed) if rule is not None else (),
            rules.get_befores,
            {i: c.name for i, c in by_index.items()},
            infos,
            tuple(c.name for c in key),
            rule is not None and rule.selects,
        )
