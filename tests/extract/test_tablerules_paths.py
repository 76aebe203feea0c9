"""The Extract's TABLE row options give the same trail bytes whichever path a transaction
takes: closed in the miner's task (tablerules.rows_in_task, then the task's record
assembly) or sent row by row to the driver (tablerules.with_columns, then TableRules at
commit and the driver's encoding), for WHERE (comparisons with integers or anything
else), COLSEXCEPT with before images, and TOKENS of the operation or of the row."""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any
from unittest.mock import patch

from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.changes import Kind, Lcr, Position
from engine.expr.rowrule import Process, RowRule
from engine.extract.tasks import closing, tablerules
from engine.extract.tasks.assemble import stream_encoded
from engine.extract.tasks.tablerules import TableRules, rows_in_task, with_columns
from engine.trail.codec import encode_columns
from params.expr import Assignment, Binary, Call, Col, Header, Lit

_NAMES = ("ID", "NAME", "CITY", "SAL")
_INDEX = {n: i for i, n in enumerate(_NAMES)}
_WHERES = [
    None,
    Binary(">", Col("ID"), Lit(5)),  # select's conditions
    Binary("AND", Binary("<=", Lit(3), Col("SAL")), Binary("<>", Col("ID"), Lit(7))),
    Binary("OR", Binary("=", Col("NAME"), Lit("x")), Binary(">", Col("SAL"), Lit(2))),
]
_TOKENS = [
    (),
    (Assignment("OP", Header("GGS_OP_TYPE")), Assignment("C", Lit("k"))),  # the operation's
    (Assignment("N", Col("NAME")),),  # the row's
    (Assignment("I", Call("GETENV", (Lit("GGHEADERINFO"), Lit("TRANSACTIONINDICATOR")))),),
]
_values = st.one_of(
    st.none(), st.sampled_from(["0", "3", "5", "6", "7", "12", "0012", "x", "", "-2", "2.5"])
)
_cols = st.dictionaries(st.integers(0, 3), _values).map(lambda d: tuple(sorted(d.items())))
_row = st.tuples(
    st.sampled_from(["HR.A", "HR.A", "HR.B"]),
    st.sampled_from([5, 15, 3]),
    _cols,
    st.one_of(st.just(()), _cols),
)


def _event(i: int, table: str, io: int, after: Any, before: Any) -> tuple[Any, ...]:
    rowid = b"AAAAAAAAAAAAAAAAA%d" % (i % 10)
    parts = (table.encode(), encode_columns(after), encode_columns(before), rowid)
    return (2, "1.2.3", 1, 100 + i, 0, 7, 0, 5, io, table, rowid.decode(), (), (), f"r{i}",
            "", "", "", parts)  # fmt: skip


@settings(max_examples=250, deadline=None)
@example([("HR.A", 5, ((0, "5"),), ()), ("HR.A", 5, ((0, "6"), (1, "n")), ())], 1, 1, False)
@example([("HR.A", 15, ((0, "7"), (3, "3")), ((0, "7"), (1, "n"))),
          ("HR.A", 3, ((0, "6"), (3, "2")), ()), ("HR.A", 15, ((0, "6"), (1, "m"), (3, "3")),
          ((0, "6"), (3, "1")))], 2, 1, True)  # fmt: skip
@given(
    st.lists(_row, min_size=1, max_size=7),
    st.integers(0, len(_WHERES) - 1),
    st.integers(0, len(_TOKENS) - 1),
    st.booleans(),
)
def test_in_the_task_and_on_the_driver_the_trail_is_the_same(
    rows: list[tuple[str, int, Any, Any]], where: int, tokens: int, keep: bool
) -> None:
    rule = RowRule("HR.A", _NAMES, (0,), frozenset({0, 3}) if keep else None,
                   _WHERES[where], (), _TOKENS[tokens], _INDEX)  # fmt: skip
    rules = {"HR.A": rule}
    process = Process("EXT", host="h", user="u", pid=1)
    events = [_event(i, *r) for i, r in enumerate(rows)]
    xid, scn, time_us, sequence = "1.2.3", 99, 1_700_000_000_000_000, 4

    kept = rows_in_task(events, rules, process, xid, scn, time_us, sequence)
    task = closing._records([e for e, _ in kept], scn, xid, sequence, time_us,
                                 [t for _, t in kept])  # fmt: skip

    def driver() -> bytes:
        lcrs = [Lcr(Kind(e[0]), e[1], Position(e[2], sequence, e[3]), *e[4:])
                for e in map(with_columns, events)]  # fmt: skip
        table_rules = TableRules(rules, process, lambda: datetime(2026, 1, 1))
        selected = table_rules.rows(lcrs, xid, scn, time_us)
        return b"".join(data for data, _ in stream_encoded(xid, scn, time_us, selected))

    assert driver() == task
    with patch.object(tablerules, "_holds", lambda *a: None):  # WHERE through its closure
        assert driver() == task
    plan = tablerules._plan

    def without_conds(rule: RowRule) -> Any:
        found = copy.copy(plan(rule))
        found.conds = None
        return found

    with patch.object(tablerules, "_plan", without_conds):  # the row-by-row path
        assert driver() == task
