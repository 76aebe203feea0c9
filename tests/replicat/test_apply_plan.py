"""The Replicat's apply path (engine/replicat/apply.Applier with the per-MAP plan of
engine/replicat/mapping.TableMap: target names by trail index, column infos, key names,
COLMAP closures compiled for a RecordEnv) against a reference written here from the MAP's
own fields: columns mapped by ``by_index``, then ``literals``, then ``computed`` by the tree
walk (engine.expr.evaluate_tree) on a RowEnv made at once with its Facts, every value bound
by the target. The same statements with the same parameters, the same counts and
collisions, the same errors, for any record, MAP and row counts the database answers."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.expr.evaluate import evaluate_tree
from engine.expr.rowrule import Facts, Process, RowEnv
from engine.expr.values import Status, to_text
from engine.replicat import ApplyError
from engine.replicat.apply import Applier
from engine.replicat.mapping import Mapper, RecordEnv, TableMap
from engine.targets import NO_DATA_FOUND, UNIQUE_CONSTRAINT
from engine.targets.base import ColumnInfo
from engine.targets.sqlite import SqliteTarget
from engine.trail.layout import IOType, TransInd, event_io_type
from engine.trail.model import TableDef, TrailPosition, TrailRecord
from params.check import check_text

_SOURCE = TableDef("HR.EMP", ("ID", "NAME", "SAL"))
_MAPS = [
    "COLMAP (USEDEFAULTS, c1 = @STRUP (name), c2 = @STRCAT (name, '-', id), "
    "c3 = @IF (sal > 50, 'high', 'low'), c4 = @STRLEN (name), "
    "c5 = @GETENV ('GGHEADERINFO', 'OPTYPE'))",
    "COLMAP (USEDEFAULTS, c1 = 'lit', c2 = NULL, c4 = sal * 2, c3 = @STRSUB (name, 'a', 'b'), "
    "c5 = sal > 5, ts = '2024-01-02:03:04:05.123400')",
    "COLMAP (id = id, name = @STRCAT (name, name), c4 = 10 / sal, "
    "c5 = @GETENV ('RECORD', 'FILERBA'), ts = @GETENV ('GGHEADERINFO', 'COMMITTIMESTAMP'))",
    "KEYCOLS (name), COLMAP (USEDEFAULTS, c1 = @GETENV ('TRANSACTION', 'CSN'), "
    "c2 = @GETENV ('GGHEADERINFO', 'TABLENAME'), c3 = @STRCAT (name, '-', sal, '-', id), "
    "c4 = @GETENV ('GGHEADERINFO', 'LOGPOSITION'), c5 = @IF (sal = @ABSENT, 'none', sal))",
    "INSERTALLRECORDS, COLMAP (USEDEFAULTS, c5 = @GETENV ('GGHEADERINFO', 'OPTYPE'), "
    "c4 = @GETENV ('GGHEADERINFO', 'LOGRBA'), c1 = @STRCAT (name, sal))",
    "",
]
_IO_TYPES = [IOType.INSERT, IOType.UPDATE, IOType.FIELDCOMP, IOType.KEYFIELDCOMP,
             IOType.UNIFIED_UPDATE, IOType.UNIFIED_PK_UPDATE, IOType.DELETE,
             IOType.PURGEDATA]  # fmt: skip
_VALUES = st.sampled_from(["1", "12", "0", "ann", "", None, "2.5", "x y", "-3"])
_COLUMNS = st.lists(st.tuples(st.integers(0, 2), _VALUES), max_size=4).map(
    lambda cols: tuple(dict(cols).items())
)
_WHEN = datetime(2026, 11, 25, 0, 10)


class _Recorder(SqliteTarget):
    """The SQLite target's tables and binding; statements recorded, answered with the
    row counts given (1 once they are spent)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.calls: list[tuple[str, list[Any]]] = []
        self.counts: Iterator[int] = iter(())

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        self.calls.append((sql, list(params)))
        return next(self.counts, 1)


@dataclass(frozen=True)
class _Txn:
    logcsn: str | None
    tranid: str | None


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[_Recorder, TableMap]]:
    path = tmp_path_factory.mktemp("plan") / "tgt.db"
    target = _Recorder(path)
    target.conn.execute(
        "CREATE TABLE emp (id NUMERIC PRIMARY KEY, name TEXT, sal NUMERIC, c1 TEXT, c2 TEXT, "
        "c3 TEXT, c4 NUMERIC, c5 TEXT, ts TIMESTAMP)"
    )
    out = []
    for text in _MAPS:
        for collisions in ("", "HANDLECOLLISIONS\n"):
            sep = ", " if text else ""
            prm = f"REPLICAT rep\nTARGETDB ./tgt.db\n{collisions}MAP hr.emp, TARGET hr.emp{sep}{text};\n"
            (m,) = Mapper(check_text(prm).require(), target).maps_for("HR.EMP", _SOURCE)
            out.append((target, m))
    return out


class _Reference:
    """One record applied as the MAP's fields say, statement by statement."""

    def __init__(self, target: _Recorder, m: TableMap, env: RowEnv | None) -> None:
        self.target, self.m, self.env = target, m, env
        self.sql = Applier(target)  # (only its SQL text)
        self.calls: list[tuple[str, list[Any]]] = []
        self.counts = {"inserts": 0, "updates": 0, "deletes": 0, "truncates": 0}
        self.collisions = 0
        self.answers: Iterator[int] = iter(())

    def row(self, columns: Any, values: bool) -> dict[str, tuple[ColumnInfo, str | None]]:
        m, row = self.m, {}
        for i, v in columns:
            if i in m.by_index:
                row[m.by_index[i].name] = (m.by_index[i], v)
        if values:
            for col, lit in m.literals:
                row[col.name] = (col, lit)
            for col, e in m.computed:
                assert self.env is not None
                v = to_text(evaluate_tree(e, self.env))
                if v is Status.MISSING:
                    continue
                if isinstance(v, Status):
                    raise ApplyError(
                        0, f"COLMAP: the value of {m.target.name}.{col.name} is not valid."
                    )
                row[col.name] = (col, v)
        return row

    def run(self, kind: str, row: Any, cols: tuple[str, ...], keys: tuple[str, ...]) -> int:
        sql = self.sql._statement(kind, self.m, cols, keys)
        params = [self.target.bind(*row[c]) for c in cols]
        self.calls.append((sql, params + [self.target.bind(*row[k]) for k in keys]))
        return next(self.answers, 1)

    def key(self, row: dict[str, Any], record: TrailRecord) -> tuple[str, ...]:
        missing = [k.name for k in self.m.key if k.name not in row]
        if missing:
            raise ApplyError(0, f"Key column(s) {', '.join(missing)} of {self.m.target.name} "
                             f"missing from the {record.op_name} record of {record.table}.")  # fmt: skip
        return tuple(k.name for k in self.m.key)

    def insert(self, record: TrailRecord, row: dict[str, Any]) -> None:
        if not self.run("insert", row, tuple(row), ()):
            if not self.m.handle_collisions:
                raise ApplyError(UNIQUE_CONSTRAINT, f"Duplicate key inserting into {self.m.target.name}.")  # fmt: skip
            self.collisions += 1
            keys = self.key(row, record)
            self.run("update", row, tuple(c for c in row if c not in keys) or keys, keys)
        self.counts["inserts"] += 1

    def update(self, record: TrailRecord, row: dict[str, Any], where: dict[str, Any]) -> None:
        keys = self.key(where, record)
        sql = self.sql._statement("update", self.m, tuple(row), keys)
        params = [self.target.bind(*row[c]) for c in row]
        self.calls.append((sql, params + [self.target.bind(*where[k]) for k in keys]))
        if not next(self.answers, 1):
            if not self.m.handle_collisions:
                raise ApplyError(NO_DATA_FOUND, f"No data found updating {self.m.target.name} ({record.op_name}).")  # fmt: skip
            self.collisions += 1
            self.run("insert", row, tuple(row), ())
        self.counts["updates"] += 1

    def apply(self, record: TrailRecord) -> None:
        io = record.io_type
        if self.m.insert_all:
            if io != IOType.PURGEDATA:
                self.insert(record, self.row(record.columns, True))
            return
        if io == IOType.INSERT:
            self.insert(record, self.row(record.columns, True))
        elif io in (IOType.UPDATE, IOType.FIELDCOMP):
            row = self.row(record.columns, True)
            self.update(record, row, row)
        elif io in (IOType.KEYFIELDCOMP, IOType.UNIFIED_UPDATE, IOType.UNIFIED_PK_UPDATE):
            row = self.row(record.columns, True)
            self.update(record, row, self.row(record.before_columns, False))
        elif io == IOType.DELETE:
            row = self.row(record.columns, False)
            keys = self.key(row, record)
            if self.run("delete", row, (), keys):
                self.counts["deletes"] += 1
            elif not self.m.handle_collisions:
                raise ApplyError(NO_DATA_FOUND, f"No data found deleting from {self.m.target.name}.")  # fmt: skip
            else:
                self.collisions += 1
        else:
            self.run("truncate", {}, (), ())
            self.counts["truncates"] += 1


def _outcome(run: Callable[[], None]) -> tuple[str, object]:
    try:
        run()
    except ApplyError as exc:
        return "error", (exc.number, exc.text)
    return "ok", None


_FULL = ((0, "7"), (1, "ann"), (2, "60"))


@settings(max_examples=300, deadline=None)
@example(0, TrailRecord(IOType.UPDATE, "HR.EMP", _FULL), _Txn("1", "x"), [])  # the benchmark's
@example(2, TrailRecord(IOType.INSERT, "HR.EMP", _FULL), _Txn("1", "x"), [0])  # a truth value
@example(4, TrailRecord(IOType.UPDATE, "HR.EMP", ((0, "1"), (2, "0"))), _Txn("1", "x"), [])
@given(
    st.integers(0, 2 * len(_MAPS) - 1),
    st.builds(
        TrailRecord,
        io_type=st.sampled_from(_IO_TYPES),
        table=st.just("HR.EMP"),
        columns=_COLUMNS,
        trans_ind=st.sampled_from(list(TransInd)),
        before_after=st.sampled_from(["A", "B"]),
        io_time_us=st.sampled_from([0, 1_700_000_000_123_456]),
        audit_rba=st.integers(0, 99),
        audit_pos=st.integers(0, 2**33),
        before_columns=_COLUMNS,
    ),
    st.builds(_Txn, st.one_of(st.none(), st.just("77")), st.just("1.2.3")),
    st.lists(st.sampled_from([0, 1]), max_size=3),
)
def test_apply_plan_is_the_reference(
    plans: list[tuple[_Recorder, TableMap]],
    which: int,
    record: TrailRecord,
    txn: _Txn,
    answers: list[int],
) -> None:
    target, m = plans[which]
    at, process, stats = TrailPosition(3, 4567), Process("REP", "REPLICAT"), {("", "DML"): 1}
    lazy = eager = None
    if m.rule is not None:
        lazy = RecordEnv(m.rule, record, txn, at, process, stats, lambda: _WHEN)
        facts = Facts(record.table, event_io_type(record.io_type, record.before_after),
                      record.io_time_us, txn.logcsn or "", txn.tranid or "", record.rowid,
                      record.audit_rba, record.audit_pos, record.trans_ind, at.seqno, at.rba)  # fmt: skip
        eager = RowEnv(m.rule, dict(record.columns), dict(record.before_columns), facts,
                       process, stats, _WHEN)  # fmt: skip
    applier = Applier(target)
    target.calls, target.counts = [], iter(answers)
    got = _outcome(lambda: applier.apply(m, record, lazy))
    ref = _Reference(target, m, eager)
    ref.answers = iter(answers)
    assert got == _outcome(lambda: ref.apply(record))
    assert target.calls == ref.calls
    assert (applier.counts, applier.collisions) == (ref.counts, ref.collisions)
