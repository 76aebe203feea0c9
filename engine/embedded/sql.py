"""SQL for the embedded database: sqlglot (Oracle dialect) to session operations.

:func:`execute` runs one statement text in a session and returns a :class:`Result` (the
SQL*Plus-style feedback line and, for queries, rows). Statement kinds dispatch through
:data:`_HANDLERS` by sqlglot expression type; a few statements sqlglot does not model
(``SAVEPOINT``, ``SET TRANSACTION NAME``, ``ALTER TABLE ... ENABLE|DISABLE CONSTRAINT``) are
recognised first by :data:`_SPECIAL`. Expressions (WHERE, SET, VALUES, SELECT) are
evaluated by SQLite after the tree is rewritten: identifiers upper-cased and quoted, tables
mapped to their SQLite names, Oracle date functions and ``SYSDATE`` folded to literals,
``ROWNUM < n`` turned into ``LIMIT``.

Supported: CREATE TABLE (columns, inline/out-of-line PK, UK, FK recorded not enforced,
NOT NULL), CREATE TABLE ... AS SELECT, ALTER TABLE ADD CONSTRAINT, DROP TABLE,
INSERT VALUES, INSERT ... SELECT (array insert), INSERT /*+ APPEND */ ... SELECT (direct
path), UPDATE, DELETE, SELECT, COMMIT, ROLLBACK [TO [SAVEPOINT] s], SAVEPOINT.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from engine.embedded import dml, users
from engine.embedded.database import Database
from engine.embedded.dictionary import ColumnDef, TableDef
from engine.embedded.errors import SqlError, UnknownObjectError
from engine.embedded.rows import Row
from engine.embedded.scheduler import JOBS_VIEW, JOBS_VIEW_COLUMNS
from engine.embedded.session import Session
from engine.embedded.values import format_datetime, to_python

logging.getLogger("sqlglot").setLevel(logging.ERROR)


@dataclass(frozen=True)
class Result:
    feedback: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = field(default=())
    count: int = 0


def split_statements(text: str) -> Iterator[str]:
    """Split a script on ``;`` (and SQL*Plus ``/`` lines) outside quotes and comments."""
    buf: list[str] = []
    i, n = 0, len(text)
    quote = False
    while i < n:
        ch = text[i]
        if quote:
            buf.append(ch)
            if ch == "'":
                quote = False
        elif ch == "'":
            quote = True
            buf.append(ch)
        elif text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif text.startswith("/*", i) and not text.startswith("/*+", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        elif ch == ";" or (
            ch == "/" and (i == 0 or text[i - 1] == "\n") and text[i + 1 : i + 2] in ("\n", "")
        ):
            stmt = "".join(buf).strip()
            if stmt:
                yield stmt
            buf = []
        else:
            buf.append(ch)
        i += 1
    stmt = "".join(buf).strip()
    if stmt:
        yield stmt


_TYPE_RE: Final = re.compile(
    r"^(NUMBER|INTEGER|INT|FLOAT|DECIMAL|VARCHAR2|VARCHAR|NVARCHAR2|CHAR|NCHAR|DATE|TIMESTAMP)"
    r"(?:\s*\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?(?:BYTE|CHAR)?\s*\))?",
    re.IGNORECASE,
)
_TYPE_ALIAS: Final = {"INT": "NUMBER", "INTEGER": "NUMBER", "DECIMAL": "NUMBER", "FLOAT": "NUMBER"}


def _column_type(kind: exp.Expression) -> tuple[str, int, int | None, int | None]:
    text = kind.sql("oracle").upper()
    m = _TYPE_RE.match(text)
    if not m:
        raise SqlError(f"unsupported data type {text}", "ORA-00902")
    name = _TYPE_ALIAS.get(m.group(1), m.group(1))
    size = int(m.group(2)) if m.group(2) else None
    scale = int(m.group(3)) if m.group(3) else None
    if name in ("VARCHAR2", "VARCHAR", "NVARCHAR2"):
        if size is None:
            raise SqlError("missing left parenthesis: VARCHAR2 needs a length", "ORA-00906")
        return "VARCHAR2", size, None, None
    if name in ("CHAR", "NCHAR"):
        return "CHAR", size or 1, None, None
    if name == "NUMBER":
        return "NUMBER", 0, size, scale
    return name, 0, None, None


def _ident(node: exp.Expression | str | None) -> str:
    if node is None:
        return ""
    if isinstance(node, str):
        return node.upper()
    if isinstance(node, exp.Identifier):
        text = str(node.this)
        return text if node.quoted else text.upper()
    if isinstance(node, exp.Column):
        return _ident(node.this)
    return str(node.name).upper()


def _table_of(db: Database, session: Session, node: exp.Expression) -> TableDef:
    if isinstance(node, exp.Schema):
        node = node.this
    if not isinstance(node, exp.Table):
        raise SqlError("expected a table name", "ORA-00903")
    owner = _ident(node.args.get("db")) or session.username
    return db.table(owner, _ident(node.this))


_FORMATS: Final = ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d")


def _fold_time(node: exp.Expression, db: Database) -> exp.Expression:
    if isinstance(node, exp.CurrentTimestamp | exp.Systimestamp | exp.CurrentDate):
        now = db.now()
        if not isinstance(node, exp.Systimestamp):
            now = now.replace(microsecond=0)
        return exp.Literal.string(format_datetime(now))
    if isinstance(node, exp.StrToDate | exp.StrToTime | exp.DateStrToDate):
        value = node.this
        if not isinstance(value, exp.Literal):
            raise SqlError("date conversion needs a literal argument here", "ORA-01858")
        fmt_node = node.args.get("format")
        formats = [str(fmt_node.this).replace(".FF", ".%f")] if fmt_node is not None else []
        for fmt in [*formats, *_FORMATS]:
            try:
                return exp.Literal.string(format_datetime(datetime.strptime(value.this, fmt)))
            except ValueError:
                continue
        raise SqlError(f"date {value.this!r} does not match its format", "ORA-01861")
    return node


def _is_dual(n: exp.Expression) -> bool:
    return (
        isinstance(n, exp.Table)
        and not n.args.get("db")
        and isinstance(n.this, exp.Identifier)
        and str(n.this.this).upper() == "DUAL"
    )


def _is_jobs_view(n: exp.Expression) -> bool:
    """DBA_SCHEDULER_JOBS (or SYS.DBA_SCHEDULER_JOBS): the scheduler's jobs, not a table."""
    return (
        isinstance(n, exp.Table)
        and str(n.args.get("db") or "SYS").upper() == "SYS"
        and isinstance(n.this, exp.Identifier)
        and str(n.this.this).upper() == JOBS_VIEW
    )


def _jobs_view(db: Database) -> exp.Expression:
    def lit(v: str | None) -> str:
        return "NULL" if v is None else "'" + v.replace("'", "''") + "'"

    found = db.scheduler.view_rows(db)
    rows = found or [tuple(None for _ in JOBS_VIEW_COLUMNS)]
    selects = [
        "SELECT " + ", ".join(f"{lit(v)} AS {c}" for v, c in zip(r, JOBS_VIEW_COLUMNS, strict=True))
        for r in rows
    ]
    where = "" if found else " WHERE 0"
    return exp.Subquery(
        this=sqlglot.parse_one(" UNION ALL ".join(selects) + where, read="sqlite"),
        alias=exp.TableAlias(this=exp.Identifier(this=JOBS_VIEW, quoted=True)),
    )


def to_sqlite(node: exp.Expression, db: Database, session: Session) -> exp.Expression:
    """Rewrite an Oracle expression tree for SQLite (see module docstring)."""

    def rewrite(n: exp.Expression) -> exp.Expression:
        if _is_jobs_view(n):
            return _jobs_view(db)
        if _is_dual(n):
            return exp.Subquery(
                this=exp.select(exp.alias_(exp.Literal.string("X"), "DUMMY")),
                alias=exp.TableAlias(this=exp.Identifier(this="DUAL", quoted=True)),
            )
        if isinstance(n, exp.Table) and isinstance(n.this, exp.Identifier):
            table = _table_of(db, session, n)
            alias = n.args.get("alias")
            new = exp.Table(this=exp.Identifier(this=table.sqlite_name, quoted=True))
            new.set(
                "alias", alias or exp.TableAlias(this=exp.Identifier(this=table.name, quoted=True))
            )
            return new
        if isinstance(n, exp.Identifier) and not n.quoted:
            return exp.Identifier(this=n.this.upper(), quoted=True)
        return _fold_time(n, db)

    out = node.copy().transform(rewrite)
    return out


def _limit_rownum(select: exp.Select) -> exp.Select:
    where = select.args.get("where")
    if where is None:
        return select
    for cmp in list(where.find_all(exp.LT, exp.LTE)):
        left = cmp.this
        if isinstance(left, exp.Column) and left.name.upper() == "ROWNUM":
            right = cmp.expression
            if not isinstance(right, exp.Literal):
                raise SqlError("ROWNUM is supported only as ROWNUM < literal")
            n = int(right.this) - (1 if isinstance(cmp, exp.LT) else 0)
            cmp.replace(exp.true())
            select = select.limit(max(n, 0))
    return select


def _query(db: Database, session: Session, select: exp.Expression) -> tuple[list[str], list[Row]]:
    if isinstance(select, exp.Select):
        select = _limit_rownum(select)
    sql = to_sqlite(select, db, session).sql("sqlite")
    try:
        cur = db.conn.execute(sql)
    except Exception as exc:  # sqlite3.Error and friends
        raise SqlError(f"cannot evaluate query: {exc}") from exc
    names = [d[0] for d in cur.description or ()]
    rows = [tuple(r) for r in cur.fetchall()]
    if "_rid" in names:  # our row address column: never part of a query's result
        i = names.index("_rid")
        names.pop(i)
        rows = [r[:i] + r[i + 1 :] for r in rows]
    return names, rows


def _where(db: Database, session: Session, node: exp.Expression) -> str:
    where = node.args.get("where")
    if where is None:
        return ""
    return " WHERE " + to_sqlite(where.this, db, session).sql("sqlite")


def _create(db: Database, session: Session, node: exp.Expression, text: str) -> Result:
    if node.args.get("kind", "").upper() != "TABLE":
        raise SqlError(f"unsupported CREATE {node.args.get('kind')}", "ORA-00901")
    target = node.this
    if node.args.get("expression") is not None:
        return _ctas(db, session, node, text)
    tbl = target.this
    owner = _ident(tbl.args.get("db")) or session.username
    name = _ident(tbl.this)
    cols: list[ColumnDef] = []
    key: tuple[str, ...] = ()
    uniques: list[tuple[str, tuple[str, ...]]] = []
    foreign: list[tuple[str, tuple[str, ...]]] = []
    for item in target.expressions:
        if isinstance(item, exp.ColumnDef):
            t, length, prec, scale = _column_type(item.args["kind"])
            cname = _ident(item.this)
            nullable = True
            for c in item.args.get("constraints") or []:
                kind = c.args.get("kind")
                if isinstance(kind, exp.NotNullColumnConstraint):
                    nullable = False
                elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
                    key = (cname,)
                    nullable = False
                elif isinstance(kind, exp.UniqueColumnConstraint):
                    uniques.append(("", (cname,)))
            cols.append(ColumnDef(cname, t, length, nullable, prec, scale))
        elif isinstance(item, exp.PrimaryKey):
            key = tuple(_ident(e) for e in item.expressions)
        elif isinstance(item, exp.Constraint):
            kind_, columns = _constraint(item)
            if kind_ == "P":
                key = columns
            elif kind_ == "U":
                uniques.append((_ident(item.this), columns))
            else:
                foreign.append((_ident(item.this), columns))
    table = db.create_table(session, owner, name, cols, text, key)
    for i, (uname, columns) in enumerate(uniques):
        table = db.add_constraint(
            session, table, uname or f"SYS_C{table.obj}_{i}", "U", columns, text, ddl=False
        )
    db.dirty_dictionary = True
    db.checkpoint()
    return Result("Table created.")


def _constraint(item: exp.Constraint) -> tuple[str, tuple[str, ...]]:
    for c in item.expressions:
        if isinstance(c, exp.PrimaryKey):
            return "P", tuple(_ident(e) for e in c.expressions)
        if isinstance(c, exp.UniqueColumnConstraint):
            schema = c.this
            return "U", tuple(_ident(e) for e in schema.expressions)
        if isinstance(c, exp.ForeignKey):
            return "F", tuple(_ident(e) for e in c.expressions)
    raise SqlError(f"unsupported constraint {item.sql('oracle')}", "ORA-00902")


def _ctas(db: Database, session: Session, node: exp.Expression, text: str) -> Result:
    select = node.args["expression"]
    tbl = node.this
    owner = _ident(tbl.args.get("db")) or session.username
    name = _ident(tbl.this)
    source_tables = [_table_of(db, session, t) for t in select.find_all(exp.Table)]
    names, rows = _query(db, session, select)
    if len(source_tables) != 1:
        raise SqlError("CREATE TABLE AS SELECT supports one source table")
    src = source_tables[0]
    by_name = {c.name: c for c in src.columns}
    cols = []
    for n in names:
        c = by_name.get(n.upper())
        if c is None:
            raise SqlError(f"CREATE TABLE AS SELECT: {n} is not a column of {src.qualified}")
        cols.append(ColumnDef(c.name, c.type, c.length, True, c.precision, c.scale))
    table = db.create_table(session, owner, name, cols, text)
    if rows:
        py = [tuple(to_python(c, v) for c, v in zip(cols, r, strict=True)) for r in rows]
        dml.direct_insert(session, db, table, py)
        session.commit(db)
    return Result("Table created.", count=len(rows))


def _alter(db: Database, session: Session, node: exp.Expression, text: str) -> Result:
    table = _table_of(db, session, node.this)
    for action in node.args.get("actions") or []:
        if not isinstance(action, exp.AddConstraint):
            raise SqlError(f"unsupported ALTER TABLE action {action.sql('oracle')}", "ORA-01735")
        for cons in action.expressions:
            if isinstance(cons, exp.Constraint):
                kind, cols = _constraint(cons)
                cname = _ident(cons.this)
            elif isinstance(cons, exp.PrimaryKey):
                kind, cols, cname = "P", tuple(_ident(e) for e in cons.expressions), ""
            else:
                raise SqlError(f"unsupported constraint {cons.sql('oracle')}", "ORA-00902")
            table = db.add_constraint(
                session,
                table,
                cname or f"SYS_C{table.obj}",
                kind,
                cols,
                text,
                foreign={"name": cname, "columns": list(cols)} if kind == "F" else None,
            )
    return Result("Table altered.")


def _drop(db: Database, session: Session, node: exp.Expression, text: str) -> Result:
    if str(node.args.get("kind", "")).upper() != "TABLE":
        raise SqlError("only DROP TABLE is supported", "ORA-00950")
    for t in node.args.get("tables") or [node.this]:
        db.drop_table(session, _table_of(db, session, t), text)
    return Result("Table dropped.")


def _insert(db: Database, session: Session, node: exp.Expression, text: str) -> Result:
    target = node.this
    table = _table_of(db, session, target)
    if isinstance(target, exp.Schema) and target.expressions:
        positions = [table.column_index(_ident(e)) for e in target.expressions]
    else:
        positions = list(range(len(table.columns)))
    source = node.args.get("expression")
    hint = node.args.get("hint")
    direct = hint is not None and "APPEND" in hint.sql().upper()
    if isinstance(source, exp.Values):
        rows = []
        for tup in source.expressions:
            values = tup.expressions if isinstance(tup, exp.Tuple) else [tup]
            if len(values) != len(positions):
                raise SqlError(
                    "not enough values" if len(values) < len(positions) else "too many values",
                    "ORA-00947" if len(values) < len(positions) else "ORA-00913",
                )
            sel = exp.select(*[to_sqlite(v, db, session) for v in values])
            try:
                rows.append(tuple(db.conn.execute(sel.sql("sqlite")).fetchone()))
            except Exception as exc:
                raise SqlError(f"cannot evaluate VALUES: {exc}") from exc
        array = False
    elif source is not None:
        _, rows = _query(db, session, source)
        if rows and len(rows[0]) != len(positions):
            raise SqlError(
                "not enough values" if len(rows[0]) < len(positions) else "too many values",
                "ORA-00947",
            )
        array = True
    else:
        raise SqlError("missing VALUES keyword", "ORA-00926")
    full: list[Row] = []
    for r in rows:
        row_values: list[Any] = [None] * len(table.columns)
        for pos, v in zip(positions, r, strict=True):
            row_values[pos] = to_python(table.columns[pos], v)
        for c, v in zip(table.columns, row_values, strict=True):
            if v is None and not c.nullable:
                raise SqlError(
                    f'cannot insert NULL into ("{table.owner}"."{table.name}"."{c.name}")',
                    "ORA-01400",
                )
        full.append(tuple(row_values))
    if direct and array:
        n = dml.direct_insert(session, db, table, full)
    else:
        n = dml.insert(session, db, table, full, array=array)
    return Result(f"{n} row{'s' if n != 1 else ''} created.", count=n)


def _update(db: Database, session: Session, node: exp.Expression, text: str) -> Result:
    table = _table_of(db, session, node.this)
    set_cols, set_sql = [], []
    for eq in node.expressions:
        set_cols.append(table.column_index(_ident(eq.this)))
        set_sql.append(to_sqlite(eq.expression, db, session).sql("sqlite"))
    n = dml.update(session, db, table, set_cols, set_sql, _where(db, session, node))
    return Result(f"{n} row{'s' if n != 1 else ''} updated.", count=n)


def _delete(db: Database, session: Session, node: exp.Expression, text: str) -> Result:
    table = _table_of(db, session, node.this)
    n = dml.delete(session, db, table, _where(db, session, node))
    return Result(f"{n} row{'s' if n != 1 else ''} deleted.", count=n)


def _select(db: Database, session: Session, node: exp.Expression, text: str) -> Result:
    names, rows = _query(db, session, node)
    tables = [t for t in node.find_all(exp.Table) if not _is_dual(t) and not _is_jobs_view(t)]
    for t in {_table_of(db, session, t).qualified for t in tables}:
        db.cleanout(session.thread, db.dictionary.tables[t])
    db.checkpoint()
    return Result(
        f"{len(rows)} row{'s' if len(rows) != 1 else ''} selected.",
        tuple(names),
        tuple(rows),
        len(rows),
    )


def _commit(db: Database, session: Session, node: exp.Expression, text: str) -> Result:
    session.commit(db)
    db.checkpoint()
    return Result("Commit complete.")


def _rollback(db: Database, session: Session, node: exp.Expression, text: str) -> Result:
    sp = node.args.get("savepoint")
    if sp is not None:
        session.rollback_to(db, _ident(sp))
    else:
        session.rollback(db)
    db.checkpoint()
    return Result("Rollback complete.")


Handler = Callable[[Database, Session, exp.Expression, str], Result]
_HANDLERS: Final[dict[type, Handler]] = {
    exp.Create: _create,
    exp.Alter: _alter,
    exp.Drop: _drop,
    exp.Insert: _insert,
    exp.Update: _update,
    exp.Delete: _delete,
    exp.Select: _select,
    exp.Union: _select,
    exp.Commit: _commit,
    exp.Rollback: _rollback,
}


def _savepoint(db: Database, session: Session, m: re.Match[str]) -> Result:
    session.savepoint(m.group(1))
    return Result("Savepoint created.")


def _txn_name(db: Database, session: Session, m: re.Match[str]) -> Result:
    session.txn_name = m.group(1)
    return Result("Transaction set.")


def _constraint_state(db: Database, session: Session, m: re.Match[str]) -> Result:
    owner, _, name = m.group(1).upper().rpartition(".")
    db.table(owner or session.username, name)
    return Result("Table altered.")


_SPECIAL: Final[
    list[tuple[re.Pattern[str], Callable[[Database, Session, re.Match[str]], Result]]]
] = [
    (re.compile(r"^SAVEPOINT\s+(\w+)$", re.I), _savepoint),
    (re.compile(r"^SET\s+TRANSACTION\s+NAME\s+'([^']*)'$", re.I), _txn_name),
    (
        re.compile(r"^ALTER\s+TABLE\s+([\w.$#]+)\s+(?:ENABLE|DISABLE)\s+CONSTRAINT\s+\w+$", re.I),
        _constraint_state,
    ),
    # the database's users (engine/embedded/users.py): who may DBLOGIN with USERID
    (
        re.compile(r'^(CREATE|ALTER)\s+USER\s+(\S+)\s+IDENTIFIED\s+BY\s+"?([^"\s]+)"?$', re.I),
        lambda db, s, m: Result(users.change(db.root, m[1].upper(), m[2], m[3])),
    ),
    (
        re.compile(r"^(DROP)\s+USER\s+(\S+)(?:\s+CASCADE)?$", re.I),
        lambda db, s, m: Result(users.change(db.root, "DROP", m[2])),
    ),
]


def execute(db: Database, session: Session, text: str) -> Result:
    """Run one statement (no trailing ``;``) in ``session``."""
    stmt = text.strip().rstrip(";").strip()
    for pattern, special in _SPECIAL:
        if m := pattern.match(stmt):
            return special(db, session, m)
    try:
        node = sqlglot.parse_one(stmt, read="oracle")
    except ParseError as exc:
        err = exc.errors[0] if exc.errors else {}
        where = f" at line {err.get('line')}, column {err.get('col')}" if err else ""
        raise SqlError(
            f"invalid SQL{where}: {err.get('description', str(exc))}", "ORA-00900"
        ) from exc
    except SqlglotError as exc:
        raise SqlError(f"invalid SQL: {exc}", "ORA-00900") from exc
    except RecursionError:
        raise SqlError(TOO_DEEP, "ORA-00900") from None
    handler = _HANDLERS.get(type(node))
    if handler is None:
        raise SqlError(f"unsupported statement: {stmt.split()[0].upper()}", "ORA-00900")
    try:
        return handler(db, session, cast(exp.Expression, node), stmt)
    except UnknownObjectError:
        raise
    except (KeyError, AttributeError, TypeError) as exc:
        raise SqlError(f"unsupported SQL form: {exc}", "ORA-00900") from exc
    except RecursionError:
        raise SqlError(TOO_DEEP, "ORA-00900") from None


TOO_DEEP = "statement nested too deeply (parentheses or subqueries) to be parsed"


def run_script(db: Database, session: Session, text: str) -> Iterator[Result]:
    for stmt in split_statements(text):
        yield execute(db, session, stmt)
