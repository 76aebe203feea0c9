"""The target side of a soak: an apply audit by trigger, and the tables row for row.

:func:`install_audit` puts row triggers on every target table of a pipeline (SQLite, or
PostgreSQL) that write each inserted, updated or deleted row (the whole row: NEW, or OLD
for a delete) as JSON into an audit table, in the same transaction as the change. A
change the Replicat applied and committed is in the audit once per time it was applied;
one it rolled back (a crash before its commit) is not. So the audit shows what the final
state cannot: an update applied twice with the same values leaves the same row behind but
two audit rows.

:func:`check_audit` holds the audit to the source's committed changes in commit order
(:mod:`tests.harness.soak.expected`): ``lost`` changes with no audit row, ``dup`` audit rows
beyond the changes (a change applied again, or one the source never made), and
``out_of_order`` rows applied after a change that committed later.
:func:`row_mismatches` compares the final state, every column, key by key.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from engine.home.layout import Home
from tests.harness import pipeline_home as ph
from tests.harness.soak.expected import Image, Source, image

AUDIT = "gg_soak_audit"

Entry = tuple[str, str, Image]
"""Table (``OWNER.NAME``), operation (INSERT, UPDATE, DELETE) and the row image."""


def audit_table(spec: ph.PipelineSpec) -> str:
    """The audit table's name: in the first table's schema on PostgreSQL (which
    :func:`tests.harness.pipeline_home.create_target` drops and makes again)."""
    return f"{spec.schemas[0]}.{AUDIT}" if spec.dialect == "postgresql" else AUDIT


def _sqlite_ddl(spec: ph.PipelineSpec) -> list[str]:
    out = [
        f"CREATE TABLE {AUDIT} (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
        "tbl TEXT NOT NULL, op TEXT NOT NULL, image TEXT NOT NULL)"
    ]
    for t in spec.tables:
        source = f"{t.schema}.{t.name}".upper()
        for op, when, image_of in (
            ("INSERT", "INSERT", "NEW"),
            ("UPDATE", "UPDATE", "NEW"),
            ("DELETE", "DELETE", "OLD"),
        ):
            pairs = ", ".join(f"'{c.upper()}', {image_of}.\"{c}\"" for c, _ in t.columns)
            out.append(
                f'CREATE TRIGGER "{AUDIT}_{t.name}_{op[0]}" AFTER {when} ON {t.target("sqlite")} '
                f"BEGIN INSERT INTO {AUDIT} (tbl, op, image) "
                f"VALUES ('{source}', '{op}', json_object({pairs})); END"
            )
    return out


def _postgres_ddl(spec: ph.PipelineSpec) -> list[str]:
    table = audit_table(spec)
    function = f"{spec.schemas[0]}.{AUDIT}_row"
    out = [
        f"CREATE TABLE {table} (seq BIGSERIAL PRIMARY KEY, tbl TEXT NOT NULL, "
        "op TEXT NOT NULL, image TEXT NOT NULL)",
        f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"IF TG_OP = 'DELETE' THEN INSERT INTO {table} (tbl, op, image) "
        "VALUES (TG_ARGV[0], TG_OP, row_to_json(OLD)::text); "
        f"ELSE INSERT INTO {table} (tbl, op, image) "
        "VALUES (TG_ARGV[0], TG_OP, row_to_json(NEW)::text); END IF; RETURN NULL; END $$",
    ]
    for t in spec.tables:
        source = f"{t.schema}.{t.name}".upper()
        out.append(
            f"CREATE TRIGGER {AUDIT} AFTER INSERT OR UPDATE OR DELETE ON "
            f"{t.target('postgresql')} FOR EACH ROW EXECUTE FUNCTION {function}('{source}')"
        )
    return out


def install_audit(home: Home, spec: ph.PipelineSpec) -> None:
    """The audit table and the triggers of every table of ``spec`` (made empty, before the
    Replicat applies anything)."""
    ddl = _postgres_ddl(spec) if spec.dialect == "postgresql" else _sqlite_ddl(spec)
    with ph.target_connection(home, spec) as conn:
        for statement in ddl:
            conn.execute(statement)


def audit_count(home: Home, spec: ph.PipelineSpec) -> int:
    """Rows in the audit: changes applied and committed on the target so far."""
    with ph.target_connection(home, spec) as conn:
        (n,) = conn.execute(f"SELECT count(*) FROM {audit_table(spec)}").fetchone()
    return int(n)


def read_audit(home: Home, spec: ph.PipelineSpec, source: Source) -> list[Entry]:
    """The audit in the order it was written, each row canonical (the source's types)."""
    with ph.target_connection(home, spec) as conn:
        rows = conn.execute(f"SELECT tbl, op, image FROM {audit_table(spec)} ORDER BY seq")
        raw = [(str(t), str(o), str(i)) for t, o, i in rows.fetchall()]
    out = []
    for tbl, op, text in raw:
        values = json.loads(text, parse_float=Decimal)
        table = source.tables.get(tbl)
        row = image(table, values) if table is not None else tuple(sorted(values.items()))
        out.append((tbl, op, row))
    return out


@dataclass(frozen=True)
class AuditVerdict:
    applied: int = 0  # audit rows
    lost: int = 0
    dup: int = 0
    out_of_order: int = 0

    @property
    def mismatches(self) -> int:
        return self.lost + self.dup + self.out_of_order

    def lines(self, prefix: str) -> list[str]:
        return [f"{prefix}_{k}={v}" for k, v in self.__dict__.items()]


def expected_entries(source: Source) -> list[Entry]:
    """Every committed change as the audit must show it, in commit order."""
    return [(c.table, c.op, c.row) for t in source.txns for c in t.changes]


def compare_audit(audit: Iterable[Entry], expected: Sequence[Entry]) -> AuditVerdict:
    """Each audit row is matched to the next unmatched source change equal to it."""
    waiting: dict[Entry, deque[int]] = {}
    for i, entry in enumerate(expected):
        waiting.setdefault(entry, deque()).append(i)
    applied = dup = out_of_order = 0
    latest = -1
    for entry in audit:
        applied += 1
        queue = waiting.get(entry)
        if not queue:
            dup += 1
            continue
        i = queue.popleft()
        out_of_order += i < latest
        latest = max(latest, i)
    lost = sum(len(q) for q in waiting.values())
    return AuditVerdict(applied, lost, dup, out_of_order)


def check_audit(home: Home, spec: ph.PipelineSpec, source: Source) -> AuditVerdict:
    return compare_audit(read_audit(home, spec, source), expected_entries(source))


def row_mismatches(source: Sequence[ph.Row], target: Sequence[ph.Row]) -> int:
    """Keys (first column) whose rows differ in any column or exist on one side only, plus
    rows that repeat a key."""
    a = {r[0]: r for r in source}
    b = {r[0]: r for r in target}
    repeated = len(source) - len(a) + len(target) - len(b)
    return repeated + sum(a.get(k) != b.get(k) for k in a.keys() | b.keys())


def table_mismatches(home: Home, spec: ph.PipelineSpec) -> int:
    """:func:`row_mismatches` over every table of the pipeline."""
    return sum(
        row_mismatches(ph.source_rows(home, spec, t), ph.target_rows(home, spec, t))
        for t in spec.tables
    )
