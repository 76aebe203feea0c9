"""MAP source, TARGET target [, KEYCOLS (...)] [, COLMAP (...)]: from a trail table to a
target table and from trail columns to target columns.

* Source names match with ``*``/``?`` wildcards (MAPEXCLUDE first); a target part that is
  ``*`` takes the source's part (``MAP hr.*, TARGET hr2.*``).
* Columns map by name (case-insensitive): ASSUMETARGETDEFS says the target has the source's
  structure; without COLMAP the same holds (USEDEFAULTS). COLMAP items are ``USEDEFAULTS``,
  ``target = source_column``, ``target = 'literal'`` and ``target = number``; column
  functions (``@...``) are refused with OGG-00919 (not implemented).
* The key is KEYCOLS, else the target's primary key, else every target column.
* Trail column names come from the trail's Metadata records (index -> name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.replicat import MappingError
from engine.targets.base import ColumnInfo, TableInfo, Target
from engine.trail.model import Columns, TableDef
from params.models import ParamFile, TableSpec

_ITEM = re.compile(r"^\s*([A-Za-z_$#][\w$#]*|\"[^\"]+\")\s*=\s*(.+?)\s*$", re.DOTALL)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_IDENT = re.compile(r"^[A-Za-z_$#][\w$#]*$|^\"[^\"]+\"$")


@dataclass(frozen=True, slots=True)
class ColMap:
    """Parsed COLMAP: explicit ``target -> source column`` and ``target -> literal``."""

    use_defaults: bool
    columns: tuple[tuple[str, str], ...] = ()
    literals: tuple[tuple[str, str], ...] = ()


def split_items(text: str) -> list[str]:
    """Split ``(a, b = 'x, y', c)`` at top-level commas (quotes and parentheses kept)."""
    inner = text.strip()
    if inner.startswith("(") and inner.endswith(")"):
        inner = inner[1:-1]
    items, depth, quote, cur = [], 0, "", ""
    for ch in inner:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        items.append(cur.strip())
    return items


def parse_colmap(text: str | None) -> ColMap:
    if text is None:
        return ColMap(True)
    defaults = False
    cols: list[tuple[str, str]] = []
    lits: list[tuple[str, str]] = []
    for item in split_items(text):
        if item.upper() == "USEDEFAULTS":
            defaults = True
            continue
        m = _ITEM.match(item)
        if m is None:
            raise MappingError("OGG-00919", f"Error in COLMAP clause: cannot read {item!r}.")
        target, expr = m.group(1).strip('"'), m.group(2)
        if expr.startswith("'") and expr.endswith("'") and len(expr) >= 2:
            lits.append((target, expr[1:-1].replace("''", "'")))
        elif _NUMBER.match(expr):
            lits.append((target, expr))
        elif _IDENT.match(expr):
            cols.append((target, expr.strip('"')))
        else:
            raise MappingError(
                "OGG-00919",
                f"Error in COLMAP clause: {target} = {expr}: only column names, quoted "
                "literals and numbers are supported (column functions are not).",
            )
    return ColMap(defaults, tuple(cols), tuple(lits))


@dataclass(frozen=True, slots=True)
class TableMap:
    """How one trail table is applied to one target table.

    ``by_index`` maps a trail column index to the target column it feeds; ``literals`` are
    constant target values (applied on inserts); ``key`` names the target key columns.
    """

    source: str
    target: TableInfo
    by_index: dict[int, ColumnInfo]
    literals: tuple[tuple[ColumnInfo, str], ...]
    key: tuple[ColumnInfo, ...]

    def row(self, columns: Columns) -> dict[str, tuple[ColumnInfo, str | None]]:
        """Target column name -> (column, trail text) for the columns a record carries."""
        out: dict[str, tuple[ColumnInfo, str | None]] = {}
        for index, value in columns:
            col = self.by_index.get(index)
            if col is not None:
                out[col.name] = (col, value)
        return out


def _target_part(pattern: str, source: str) -> str:
    return source if pattern == "*" else pattern.strip('"')


class Mapper:
    """Resolves and caches the :class:`TableMap` of each trail table (None = not mapped)."""

    def __init__(self, model: ParamFile, target: Target) -> None:
        self.model = model
        self.target = target
        self._maps: dict[str, TableMap | None] = {}
        self.specs = tuple(t for t in model.tables if t.statement in ("MAP", "MAPEXCLUDE"))
        for spec in self.specs:  # COLMAP syntax errors are found before anything is applied
            parse_colmap(_option(spec, "COLMAP"))

    def spec_for(self, table: str) -> TableSpec | None:
        owner, _, name = table.rpartition(".")
        for spec in self.specs:
            if spec.exclude and spec.source.matches(owner, name):
                return None
        return next(
            (s for s in self.specs if not s.exclude and s.source.matches(owner, name)), None
        )

    def map_for(self, table: str, definition: TableDef | None) -> TableMap | None:
        if table not in self._maps:
            self._maps[table] = self._resolve(table, definition)
        return self._maps[table]

    def forget(self, table: str) -> None:
        """A new Metadata record for ``table`` (its columns changed): map it again."""
        self._maps.pop(table, None)

    def _resolve(self, table: str, definition: TableDef | None) -> TableMap | None:
        spec = self.spec_for(table)
        if spec is None:
            return None
        owner, _, name = table.rpartition(".")
        tgt = spec.target
        t_owner = _target_part(tgt.owner, owner) if tgt else owner
        t_name = _target_part(tgt.name, name) if tgt else name
        info = self.target.table(t_owner or None, t_name)
        if info is None:
            raise MappingError(
                "OGG-00199",
                f"Table {t_owner}.{t_name} does not exist in target database {self.target.name}.",
            )
        if definition is None:
            raise MappingError(
                "OGG-01296",
                f"Error mapping from {table} to {info.name}: the trail has no column "
                "definition (Metadata record) for the source table.",
            )
        colmap = parse_colmap(_option(spec, "COLMAP"))
        explicit = {t.lower(): s.lower() for t, s in colmap.columns}
        by_source: dict[str, ColumnInfo] = {}
        if colmap.use_defaults:
            for index_name in definition.column_names:
                col = info.column(index_name)
                if col is not None and col.name.lower() not in explicit:
                    by_source[index_name.lower()] = col
        for t, s in colmap.columns:
            col = info.column(t)
            if col is None:
                raise MappingError(
                    "OGG-00919", f"Error in COLMAP clause: {info.name} has no column {t}."
                )
            if s.lower() not in {n.lower() for n in definition.column_names}:
                raise MappingError(
                    "OGG-00919", f"Error in COLMAP clause: {table} has no column {s}."
                )
            by_source[s.lower()] = col
        by_index = {
            i: by_source[n.lower()]
            for i, n in enumerate(definition.column_names)
            if n.lower() in by_source
        }
        literals = []
        for t, value in colmap.literals:
            col = info.column(t)
            if col is None:
                raise MappingError(
                    "OGG-00919", f"Error in COLMAP clause: {info.name} has no column {t}."
                )
            literals.append((col, value))
        key_names = spec.keycols or info.key or tuple(c.name for c in info.columns)
        key = []
        for k in key_names:
            col = info.column(k)
            if col is None:
                raise MappingError(
                    "OGG-01296",
                    f"Error mapping from {table}: KEYCOLS column {k} not in {info.name}.",
                )
            key.append(col)
        return TableMap(table, info, by_index, tuple(literals), tuple(key))


def _option(spec: TableSpec, name: str) -> str | None:
    opt = spec.option(name)
    return opt.value if opt else None
