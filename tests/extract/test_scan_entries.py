"""The Extract's row-option fast path (engine/extract/tasks/tablerules.py): only the columns a
rule reads are decoded, the kept column entries are copied as encoded, and the token
bytes of repeated values are packed once; each the same as the full decode / encode."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.expr.rowrule import Facts, Process, RowRule
from engine.extract.tasks.tablerules import scan_entries
from engine.trail.codec import decode_column_entries, encode_columns, pack_tokens
from engine.trail.errors import CorruptRecordError
from params.expr import Assignment, Binary, Call, Col, Header, Lit

_columns = st.dictionaries(
    st.integers(0, 40), st.one_of(st.none(), st.text(max_size=8)), max_size=12
).map(lambda d: tuple(sorted(d.items())))
_indices = st.frozensets(st.integers(0, 40), max_size=12)


@settings(max_examples=300, deadline=None)
@given(_columns, _indices, st.one_of(st.none(), _indices))
def test_scan_is_the_full_decode_and_encode(
    columns: tuple[tuple[int, str | None], ...], reads: frozenset[int], keep: frozenset[int] | None
) -> None:
    data = encode_columns(columns)
    values, projected = scan_entries(data, reads, keep)
    decoded = decode_column_entries(data)
    assert values == {i: v for i, v in decoded if i in reads}
    if keep is None:
        assert projected is None
    else:
        assert projected == encode_columns(tuple(c for c in decoded if c[0] in keep))


def test_a_malformed_area_raises_as_the_decode_does() -> None:
    data = encode_columns(((0, "abc"), (3, "d")))
    for bad in (data[:-1], data[:5], data[:4] + b"\xff" + data[5:]):
        with pytest.raises(CorruptRecordError):
            decode_column_entries(bad)
        with pytest.raises(CorruptRecordError):
            scan_entries(bad, frozenset({0, 3}), None)
    bad_utf8 = encode_columns(((0, "ab"),))[:-2] + b"\xff\xfe"
    with pytest.raises(CorruptRecordError):
        scan_entries(bad_utf8, frozenset({0}), None)


def _rule(*tokens: Assignment, where: object = None) -> RowRule:
    names = ("ID", "NAME", "CITY")
    index = {n: i for i, n in enumerate(names)}
    return RowRule("HR.T", names, (0,), None, where, (), tokens, index)  # type: ignore[arg-type]


def test_reads_names_the_columns_expressions_read() -> None:
    rule = _rule(
        Assignment("T", Call("STRUP", (Col("CITY"),))), where=Binary(">", Col("ID"), Lit(0))
    )
    assert rule.reads == frozenset({0, 2})
    assert _rule(Assignment("T", Call("RANGE", (Lit(1), Lit(2))))).reads is None
    assert _rule(Assignment("T", Header("GGS_RECORD_LENGTH"))).reads is None
    assert _rule().reads == frozenset()


def test_token_bytes_are_the_packed_user_tokens() -> None:
    rule = _rule(
        Assignment("OP", Header("GGS_OP_TYPE")),
        Assignment("UP", Call("STRUP", (Col("NAME"),))),
        Assignment("NOTHING", None),
        Assignment("ONE", Binary("=", Col("ID"), Lit(1))),
    )
    packed: dict[tuple[object, ...], bytes] = {}
    for row in ({0: "1", 1: "ann"}, {0: "2", 1: "ann"}, {0: "1", 1: "bob"}, {0: "1", 1: "ann"}):
        env = rule.env(tuple(row.items()), (), Facts("HR.T", 5), Process("E"), {}, None)  # type: ignore[arg-type]
        assert rule.token_bytes(env, packed) == pack_tokens(rule.user_tokens(env))
    assert len(packed) == 3  # the repeated row's bytes were packed once
    again = pickle.loads(pickle.dumps(rule))  # to a task, once its closures are made
    assert again.token_bytes(env, {}) == rule.token_bytes(env, {})
