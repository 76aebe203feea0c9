"""The C grouping of a range's events into closed transactions and fragments
(engine/_native/txngroup.c) against its Python twin ``txngroup.group_py``, on random event
sequences: every kind, interleaved transactions, changes before a begin or after an end,
rollbacks to savepoint, hooked rows, rule tables, Bounded Recovery's transactions and a
thread-merge horizon."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.changes import Kind
from engine.extract.tasks import txngroup
from tests.harness import kernels

#: The kernel itself, whatever GGSCI_NATIVE says (a kernel that was not built fails here).
_KERNEL = kernels.kernel("txngroup")

_XIDS = ("0001.001.00000001", "0001.002.00000002", "0002.001.00000003", "0003.004.00000004")
_TABLES = ("US03.STUDENT", "US03.COURSE", "HR.T")
_REFS = ("", "0x01.0001.01", "0x01.0001.02", "0x01.0001.03")


_CHANGES = (Kind.ROW,) * 6 + (Kind.SESSION, Kind.UNDO, Kind.DDL)


@st.composite
def _events(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    """Transactions as the redo holds them (mostly a 5.2, changes, a 5.4; sometimes no
    begin, no end, or a change after the end), interleaved; SCNs rise with the position."""
    per_xid: list[list[tuple[Any, ...]]] = []
    for xid in draw(st.lists(st.sampled_from(_XIDS), unique=True, max_size=4)):
        refs: list[str] = []
        mine: list[tuple[Any, ...]] = []
        if draw(st.integers(0, 9)) > 0:
            mine.append(_change(draw, Kind.BEGIN, xid, ""))
        for _ in range(draw(st.integers(0, 8))):
            kind = draw(st.sampled_from(_CHANGES))
            if kind == Kind.ROW:
                refs.append(f"r{len(refs)}")
                mine.append(_change(draw, kind, xid, refs[-1]))
            elif kind == Kind.UNDO:  # a rollback to savepoint undoes one of its rows, or none
                mine.append(_change(draw, kind, xid, draw(st.sampled_from(["", *refs]))))
            else:
                mine.append(_change(draw, kind, xid, ""))
        if draw(st.integers(0, 9)) > 2:
            mine.append(_change(draw, draw(st.sampled_from((Kind.COMMIT, Kind.ROLLBACK))), xid, ""))
            if draw(st.integers(0, 9)) == 0:
                mine.append(_change(draw, Kind.ROW, xid, "late"))
        per_xid.append(mine)
    out: list[tuple[Any, ...]] = []
    while any(per_xid):
        pick = draw(st.sampled_from([m for m in per_xid if m]))
        e = pick.pop(0)
        n = len(out)
        out.append((*e[:5], n * 10 + draw(st.integers(0, 9)), 0, 1000 + n, *e[8:]))
    return out


def _change(draw: st.DrawFn, kind: Kind, xid: str, ref: str) -> tuple[Any, ...]:
    row = kind == Kind.ROW
    return (
        int(kind), xid, 1, draw(st.integers(0, 10_000)), draw(st.integers(0, 10_000)),
        0, 0, 0,  # scn and time: set where the change lands
        draw(st.sampled_from((5, 15, 3, 134))),  # io type
        draw(st.sampled_from(_TABLES)) if row else "", "AAAA", None, None, ref,
        draw(st.sampled_from(("SCOTT", "HR"))), draw(st.sampled_from(("", "batch"))), "",
        # a row with no record parts is one the driver must see (a hooked table)
        draw(st.sampled_from((None,) + ((b"T", b"d", b"", None),) * 5)) if row else None,
    )  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(
    events=_events(),
    compact=st.booleans(),
    fine=st.frozensets(st.sampled_from(_XIDS), max_size=2),
    rules=st.frozensets(st.sampled_from(_TABLES), max_size=2),
    horizon=st.one_of(st.none(), st.integers(0, 400)),
)
def test_the_c_grouping_is_the_python_grouping(
    events: list[tuple[Any, ...]],
    compact: bool,
    fine: frozenset[str],
    rules: frozenset[str],
    horizon: int | None,
) -> None:
    rule_map = {t: object() for t in rules}  # the plan's rules are a dict by table
    want = txngroup.group_py(events, compact, fine, rule_map, horizon)
    got = _KERNEL.group(events, compact, fine, rule_map, horizon, txngroup.KINDS)
    assert got == want


def _begun(xid: str, n: int, *, scn: int = 10) -> list[tuple[Any, ...]]:
    """A transaction's 5.2, ``n`` rows and its commit, one SCN apart."""

    def ev(kind: Kind, i: int, ref: str = "", record: Any = None) -> tuple[Any, ...]:
        return (int(kind), xid, 1, i, i + 1, scn + i, 0, 1000 + i, 5, "HR.T", "AAAA", None,
                None, ref, "HR", "", "", record)  # fmt: skip

    rows = [ev(Kind.ROW, i + 1, f"r{i}", (b"T", b"d", b"", None)) for i in range(n)]
    return [ev(Kind.BEGIN, 0), *rows, ev(Kind.COMMIT, n + 1)]


def test_a_whole_transaction_closes_and_an_open_one_is_a_fragment() -> None:
    closed = _begun("0001.001.00000001", 3)
    open_ = _begun("0001.002.00000002", 2, scn=100)[:-1]  # no commit in the range
    for group in (txngroup.group_py, txngroup.group):
        steps = group([*closed, *open_], True, frozenset(), {}, None)
        assert [s[0] for s in steps] == [txngroup.CLOSED, txngroup.FRAGMENT]
        _, changes, end, rows, sessions, max_time, max_scn, ops = steps[0]
        assert (len(changes), len(rows), end is closed[-1], ops) == (4, 3, True, (("HR.T", 5, 3),))
        assert (max_time, max_scn, sessions) == (1004, 14, ())
        assert steps[1][4] == ("r0", "r1")  # the fragment's row references
        # a horizon below the commit keeps the transaction open: its changes come one by one
        held = group(closed, True, frozenset(), {}, 12)
        assert txngroup.CLOSED not in [s[0] for s in held]
