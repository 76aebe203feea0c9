"""The expression language: parse (params.expr) and evaluate (engine.expr)."""

from __future__ import annotations

import pickle
from datetime import datetime
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.expr import SimpleEnv, Status, evaluate, holds, to_text
from engine.expr.evaluate import evaluate_tree
from engine.expr.rowrule import Facts, Process, RowEnv, RowRule
from engine.expr.vector import compile_vector
from params.expr import (
    Binary,
    Call,
    Col,
    ExprIssue,
    Header,
    Lit,
    Unary,
    Word,
    columns_of,
    parse_assignments,
    parse_expression,
    parse_filter,
    parse_where,
    unknown_column,
)

ENV = SimpleEnv(
    after={"A": "10", "B": "x y", "N": None, "D": "2024-01-02 03:04:05", "S": "  pad  "},
    before={"A": "7"},
    info={
        ("GGHEADERINFO", "OPTYPE"): "INSERT",
        ("GGHEADERINFO", "COMMITTIMESTAMP"): "2024-01-02 03:04:05.000000",
        ("TRANSACTION", "CSN"): "12345",
        ("GGENVIRONMENT", "HOSTNAME"): "syshq",
    },
    tokens={"TKN-HOST": "syshq"},
    key=("A",),
    stats={("", "INSERT"): 3, ("HR.T", "DELETE"): 2},
    clock=datetime(2026, 11, 24, 17, 30, 0),
)


def ev(text: str) -> object:
    e = parse_expression(text)
    assert not isinstance(e, ExprIssue), e
    return evaluate(e, ENV)


# ------------------------------------------------------------------------------- parse


def test_parse_builds_a_positioned_model() -> None:
    e = parse_expression("v > 5 AND @STRUP (name) = 'X'", base=100)
    assert e == Binary(
        "AND",
        Binary(">", Col("V", "", 100), Lit(5, 104), 100),
        Binary("=", Call("STRUP", (Col("NAME", "", 118),), 110), Lit("X", 126), 110),
        100,
    )


def test_parse_names_images_headers_and_quoted_columns() -> None:
    assert parse_expression("BEFORE.x") == Col("X", "BEFORE", 0)
    assert parse_expression('"MixedCase"') == Col("MixedCase", "", 0)
    assert parse_expression("GGS_COMMIT_SCN") == Header("GGS_COMMIT_SCN", 0)
    assert parse_expression("NULL") == Lit(None, 0)
    assert parse_expression("'it''s'") == Lit("it's", 0)
    assert parse_expression("@COLTEST (c, NULL, MISSING)") == Call(
        "COLTEST", (Col("C", "", 10), Word("NULL", 13), Word("MISSING", 19)), 0
    )


@pytest.mark.parametrize(
    ("text", "message", "pos"),
    [
        ("@STRUPP (a)", "unknown function @STRUPP; did you mean STRUP?", 0),
        ("a = @STRUP (a, b)", "@STRUP takes 1 argument(s), not 2", 4),
        ("@IF (a, b)", "@IF takes 3 argument(s), not 2", 0),
        ("@COLTEST (a, EMPTY)", "@COLTEST expects one of INVALID, MISSING, NULL, PRESENT here", 13),
        ("GGS_OPTYPE", "unknown header element GGS_OPTYPE; did you mean GGS_OP_TYPE?", 0),
        ("@GETENV ('GGHEADERINF', 'OPTYPE')", "unknown @GETENV information type", 9),
        ("@GETENV ('GGHEADERINFO', 'OPTYP')", "unknown @GETENV ('GGHEADERINFO') key 'OPTYP'", 25),
        ("@GETENV (x, 'OPTYPE')", "@GETENV takes quoted strings", 0),
        ("a >", "expression ends early", 3),
        ("a > > 5", "unexpected '>", 4),
        ("", "empty expression", 0),
    ],
)
def test_parse_errors_are_data_with_positions(text: str, message: str, pos: int) -> None:
    issue = parse_expression(text, base=7)
    assert isinstance(issue, ExprIssue)
    assert issue.message.startswith(message), issue
    assert issue.pos == 7 + pos


def test_where_filter_and_assignments() -> None:
    assert parse_where("(v > 5)", base=10) == Binary(">", Col("V", "", 11), Lit(5, 15), 11)
    f = parse_filter("(ON UPDATE, ON DELETE, IGNORE INSERT, RAISEERROR 9999, v > 5)")
    assert not isinstance(f, ExprIssue)
    assert f.on == ("DELETE", "UPDATE") and f.ignore == ("INSERT",) and f.raise_error == 9999
    assert f.applies_to("UPDATE") and not f.applies_to("INSERT")
    bad = parse_filter("(ON MERGE, v > 5)", base=3)
    assert isinstance(bad, ExprIssue) and bad.pos == 4 and "not 'MERGE'" in bad.message
    toks = parse_assignments(
        "(TKN-HOST = @GETENV ('GGENVIRONMENT', 'HOSTNAME'), tkn_op = GGS_OP_TYPE)", upper=False
    )
    assert not isinstance(toks, ExprIssue)
    assert [(t.name, t.pos) for t in toks] == [("TKN-HOST", 1), ("tkn_op", 51)]
    cm = parse_assignments("(USEDEFAULTS, full = @STRCAT (first, ' ', last))")
    assert not isinstance(cm, ExprIssue)
    assert cm[0].name == "USEDEFAULTS" and cm[0].expr is None and cm[1].name == "FULL"


def test_columns_of_lists_every_column_and_finds_unknown_ones() -> None:
    e = parse_expression("@IF (a > 1, @STRCAT (b, c), d)")
    assert not isinstance(e, ExprIssue)
    assert [c.name for c in columns_of(e)] == ["A", "B", "C", "D"]
    bad = unknown_column(e, frozenset({"A", "B", "D"}))
    assert bad == Col("C", "", 24)


def test_model_pickles() -> None:
    e = parse_expression("@CASE (a, 1, 'one', 'other') = 'one' AND GGS_OP_TYPE = 'INSERT'")
    assert pickle.loads(pickle.dumps(e)) == e


# ---------------------------------------------------------------------------- evaluate


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("A + 5", 15),
        ("A / 4", Decimal("2.5")),
        ("-A * 2", -20),
        ("BEFORE.A < A", True),
        ("A > 5 AND B = 'x y'", True),
        ("A > 50 OR B <> 'x y'", False),
        ("NOT A > 50", True),
        ("N = @NULL", True),
        ("N = @PRESENT", False),
        ("ZZ = @ABSENT", True),
        ("A <> @ABSENT", True),
        ("N = 5", None),
        ("N + 1", None),
        ("B + 1", Status.INVALID),
        ("ZZ", Status.MISSING),
        ("A / 0", Status.INVALID),
        ("@STRCAT (B, '-', A)", "x y-10"),
        ("@STREXT (B, 1, 1)", "x"),
        ("@STRSUB (B, ' ', '_', 'x', 'X')", "X_y"),
        ("@STRUP (B)", "X Y"),
        ("@STRTRIM (S)", "pad"),
        ("@STRLEN (B)", 3),
        ("@STRFIND (B, 'y')", 3),
        ("@STRFIND (B, 'q')", 0),
        ("@STRNUM (A, RIGHTZERO, 5)", "00010"),
        ("@STRNUM (A, RIGHT, 4)", "  10"),
        ("@NUMSTR ('12.50') + 1", Decimal("13.50")),
        ("@COMPUTE (A * 3)", 30),
        ("@IF (A > 5, 'big', 'small')", "big"),
        ("@CASE (A, 1, 'one', 10, 'ten', 'other')", "ten"),
        ("@CASE (A, 1, 'one')", Status.MISSING),
        ("@EVAL (A < 5, 'lt', A > 5, 'gt')", "gt"),
        ("@VALONEOF (B, 'a', 'x y')", True),
        ("@COLTEST (N, NULL, MISSING)", True),
        ("@COLTEST (A, NULL, MISSING)", False),
        ("@COLTEST (@NUMSTR (B), INVALID)", True),
        ("@COLSTAT (NULL)", None),
        ("@COLSTAT (MISSING)", Status.MISSING),
        ("@TOKEN ('TKN-HOST')", "syshq"),
        ("@GETENV ('GGENVIRONMENT', 'HOSTNAME')", "syshq"),
        ("@GETENV ('STATS', 'INSERT')", 3),
        ("@GETENV ('STATS', 'TABLE', 'hr.t', 'DELETE')", 2),
        ("GGS_OP_TYPE", "INSERT"),
        ("GGS_COMMIT_SCN", "12345"),
        ("@DATE ('YYYY/MM/DD', 'YYYY-MM-DD HH:MI:SS', D)", "2024/01/02"),
        ("@DATE ('JTS', 'YYYY-MM-DD HH:MI:SS', '1970-01-01 00:00:00')", 210866803200000000),
        ("@DATE ('YYYY-MM-DD', 'JTS', 210866803200000000)", "1970-01-01"),
        ("@DATEDIFF ('DD', '2024-01-01', D)", 1),
        ("@DATEDIFF ('SS', '2024-01-02 03:04:00', D)", 5),
        ("@DATENOW ()", "2026-11-24 17:30:00"),
        ("@BINARY (B)", "x y"),
        ("@STREQ (B, 'x y')", True),
        ("@STRCMP ('a', 'b')", -1),
    ],
)
def test_evaluate(text: str, want: object) -> None:
    got = ev(text)
    assert got == want and type(got) is type(want), (text, got)
    tree = evaluate_tree(parse_expression(text), ENV)  # type: ignore[arg-type]
    assert tree == want and type(tree) is type(want), (text, tree)


def test_range_splits_rows_between_ranges_by_key() -> None:
    ranges = parse_expression("@RANGE (1, 3)"), parse_expression("@RANGE (2, 3)")
    ranges += (parse_expression("@RANGE (3, 3)"),)
    for k in range(50):
        env = SimpleEnv(after={"ID": str(k)}, key=("ID",))
        hits = [holds(r, env) for r in ranges]  # type: ignore[arg-type]
        assert hits.count(True) == 1
    spread = {
        [holds(r, SimpleEnv(after={"ID": str(k)}, key=("ID",))) for r in ranges].index(True)  # type: ignore[arg-type]
        for k in range(50)
    }
    assert spread == {0, 1, 2}


def test_holds_is_false_when_unknown() -> None:
    e = parse_expression("N > 1")
    assert not isinstance(e, ExprIssue)
    assert not holds(e, ENV)
    assert to_text(True) == "1" and to_text(Decimal("2.50")) == "2.5" and to_text(None) is None


# ---------------------------------------------------------------- property: Python's own

_ints = st.integers(min_value=-(10**12), max_value=10**12)


@settings(max_examples=200, deadline=None)
@given(_ints, _ints, _ints, st.sampled_from(["+", "-", "*"]), st.sampled_from(["+", "-", "*"]))
def test_arithmetic_agrees_with_python(a: int, b: int, c: int, op1: str, op2: str) -> None:
    text = f"{a} {op1} B {op2} C"
    env = SimpleEnv(after={"B": str(b), "C": str(c)})
    e = parse_expression(text)
    assert not isinstance(e, ExprIssue)
    assert evaluate(e, env) == eval(f"{a} {op1} ({b}) {op2} ({c})")


@settings(max_examples=200, deadline=None)
@given(_ints, _ints.filter(lambda x: x != 0))
def test_division_agrees_with_python(a: int, b: int) -> None:
    got = evaluate(parse_expression("A / B"), SimpleEnv(after={"A": str(a), "B": str(b)}))  # type: ignore[arg-type]
    assert isinstance(got, int | Decimal)
    assert abs(Fraction(got) - Fraction(a, b)) <= Fraction(abs(a), abs(b)) / 10**30 + Fraction(
        1, 10**30
    )


@settings(max_examples=200, deadline=None)
@given(_ints, _ints, st.sampled_from(["=", "<>", "<", ">", "<=", ">="]))
def test_comparison_agrees_with_python(a: int, b: int, op: str) -> None:
    env = SimpleEnv(after={"A": str(a), "B": str(b)})
    got = evaluate(parse_expression(f"A {op} B"), env)  # type: ignore[arg-type]
    assert got == eval(f"{a} {'!=' if op == '<>' else '==' if op == '=' else op} {b}")


_text = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FF, exclude_characters="'"),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(_text, _text, st.integers(min_value=1, max_value=15), st.integers(min_value=0, max_value=15))
def test_string_functions_agree_with_python(s: str, t: str, i: int, j: int) -> None:
    env = SimpleEnv(after={"S": s, "T": t})

    def run(text: str) -> object:
        e = parse_expression(text)
        assert not isinstance(e, ExprIssue), (text, e)
        return evaluate(e, env)

    assert run("@STRCAT (S, T, S)") == s + t + s
    assert run("@STRUP (S)") == s.upper()
    assert run("@STRLEN (T)") == len(t)
    assert run("@STRTRIM (S)") == s.strip(" ")
    assert run(f"@STREXT (S, {i}, {j})") == s[i - 1 : j]
    assert run("@STRFIND (S, T)") == s.find(t) + 1
    assert run("@STREQ (S, T)") == (s == t)
    if t:
        assert run("@STRSUB (S, T, 'z')") == s.replace(t, "z")


# ------------------------------------------------- property: compiled = the tree walk

_leaf = st.one_of(
    st.sampled_from(["A", "B", "N", "ZZ", "D", "S"]).map(Col),
    st.sampled_from(["A"]).map(lambda n: Col(n, "BEFORE")),
    st.one_of(
        st.none(), st.integers(-20, 20), st.sampled_from(["", "x y", "10", "2.5", " 7 "]),
        st.decimals(-100, 100, places=2).map(float),
    ).map(lambda v: Lit(v)),
    st.sampled_from(["NULL", "MISSING", "INVALID", "LEFT", "RIGHTZERO"]).map(Word),
    st.sampled_from(["GGS_OP_TYPE", "GGS_COMMIT_SCN"]).map(Header),
)  # fmt: skip
_FUNCS = ["STRCAT", "STRUP", "STRLEN", "STRSUB", "STREXT", "STRFIND", "STREQ", "STRCMP",
          "NUMSTR", "COMPUTE", "STRNUM", "IF", "CASE", "EVAL", "VALONEOF", "COLTEST",
          "TOKEN", "PRESENT", "NULL", "ABSENT", "DATEDIFF", "DATE"]  # fmt: skip
_OPS = ["+", "-", "*", "/", "=", "<>", "<", ">", "<=", ">=", "AND", "OR"]


def _node(children: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.one_of(
        st.builds(Binary, st.sampled_from(_OPS), children, children),
        st.builds(Unary, st.sampled_from(["-", "NOT"]), children),
        st.builds(Call, st.sampled_from(_FUNCS), st.lists(children, max_size=5).map(tuple)),
        st.builds(
            Binary, st.sampled_from(["=", "<>"]), children,
            st.sampled_from(["PRESENT", "ABSENT", "NULL"]).map(Call),
        ),
        st.builds(
            Call, st.just("GETENV"),
            st.sampled_from([("GGENVIRONMENT", "HOSTNAME"), ("STATS", "INSERT"),
                             ("STATS", "TABLE", "hr.t", "DELETE"), ("GGHEADERINFO", "OPTYPE")])
            .map(lambda words: tuple(Lit(w) for w in words)),
        ),
    )  # fmt: skip


_exprs = st.recursive(_leaf, _node, max_leaves=12)


def _outcome(run: object) -> tuple[str, object]:
    try:
        v = run()  # type: ignore[operator]
    except Exception as exc:  # the two must fail alike on a malformed call
        return "raises", type(exc)
    return type(v).__name__, v


@settings(max_examples=400, deadline=None)
@given(_exprs)
def test_compiled_evaluation_is_the_tree_walk(e: object) -> None:
    """Every expression, compiled, gives the value (and type) the tree walk gives."""
    want = _outcome(lambda: evaluate_tree(e, ENV))  # type: ignore[arg-type]
    assert _outcome(lambda: evaluate(e, ENV)) == want, e  # type: ignore[arg-type]
    # again: the second time runs the cached closure
    assert _outcome(lambda: evaluate(e, ENV)) == want, e  # type: ignore[arg-type]


# ---------------------- property: compiled for one table's rows (RowEnv) = the tree walk

_ROW_NAMES = ("A", "B", "N", "D", "S", "K")
_ROW_RULE = RowRule("HR.T", _ROW_NAMES, (5,), index={n: i for i, n in enumerate(_ROW_NAMES)})
_bound_leaf = st.one_of(
    _leaf,
    st.sampled_from(["K", "A"]).map(Col),
    st.sampled_from([0, 7, 12, -3, Decimal("2.5"), Decimal("12")]).map(lambda v: Lit(v)),
)
_bound_exprs = st.recursive(_bound_leaf, _node, max_leaves=10)
_row_values = st.sampled_from(["10", "0012", "12", "\u00b23", "\u0663", "-4", "", " 7", "x", None])


def _row_env(k: str | None, a: str | None, io_type: int) -> RowEnv:
    after = {0: a, 1: "x y", 2: None, 3: "2024-01-02 03:04:05", 4: "  pad  ", 5: k}
    facts = Facts("HR.T", io_type, 1_700_000_000_000_000, "12345", "1.2.3", "AAAA", 3, 77)
    return _ROW_RULE.env(
        tuple(after.items()), ((0, "7"),), facts, Process("EXT1"), {("", "INSERT"): 3},
        datetime(2026, 11, 24, 17, 30, 0), {"TKN-HOST": "syshq"},
    )  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(_bound_exprs, _row_values, _row_values, st.sampled_from([5, 15, 3]))
def test_bound_compiled_evaluation_is_the_tree_walk(
    e: object, k: str | None, a: str | None, io_type: int
) -> None:
    """Compiled for a table's rows (columns by index, @GETENV by its getter, numbers
    compared at once): the value (and type) the tree walk gives through RowEnv.column and
    RowEnv.getenv."""
    env = _row_env(k, a, io_type)
    want = _outcome(lambda: evaluate_tree(e, env))  # type: ignore[arg-type]
    fn = _ROW_RULE.fn(e)  # type: ignore[arg-type]
    assert _outcome(lambda: fn(env)) == want, e


def test_bound_compare_with_a_number_literal_can_fail() -> None:
    """The digit fast path is used and gives the numeric comparison ('0012' > 7 as 12 > 7,
    not as text), and text that is not digits still compares through compare()."""
    gt = Binary(">", Col("K"), Lit(7))
    assert _ROW_RULE.fn(gt)(_row_env("0012", "1", 5)) is True
    assert _ROW_RULE.fn(Binary("<", Lit(7), Col("K")))(_row_env("0012", "1", 5)) is True
    assert _ROW_RULE.fn(gt)(_row_env("x", "1", 5)) is True  # text: 'x' > '7'
    assert _ROW_RULE.fn(gt)(_row_env(None, "1", 5)) is None


_flat_args = st.lists(_bound_leaf, min_size=1, max_size=5).map(tuple)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.builds(Call, st.just("STRCAT"), _flat_args),
        st.builds(
            Call, st.just("IF"),
            st.tuples(st.one_of(_bound_leaf, st.builds(Binary, st.sampled_from(_OPS),
                                                       _bound_leaf, _bound_leaf)),
                      _bound_leaf, _bound_leaf),
        ),
    ),
    _row_values,
    _row_values,
)  # fmt: skip
def test_strcat_and_if_forms_are_the_tree_walk(e: Call, k: str | None, a: str | None) -> None:
    """@STRCAT of 2 and 3 arguments and @IF of a truth value have forms of their own in
    engine.expr.compiled: with text, numbers, NULL, MISSING and INVALID arguments they give
    what the tree walk gives, unbound and bound."""
    env = _row_env(k, a, 5)
    assert _outcome(lambda: _ROW_RULE.fn(e)(env)) == _outcome(lambda: evaluate_tree(e, env)), e
    want = _outcome(lambda: evaluate_tree(e, ENV))
    assert _outcome(lambda: evaluate(e, ENV)) == want, e


# ------------------- property: column-wise (engine.expr.vector) = the tree walk per row

_vector_leaf = st.one_of(
    st.sampled_from(["K", "A", "B", "N", "ZZ"]).map(Col),
    st.one_of(st.none(), st.sampled_from([0, 7, 12, -3, Decimal("2.5"), "10", "x", "", True])).map(
        lambda v: Lit(v)
    ),
)


def _vector_node(children: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.one_of(
        st.builds(Binary, st.sampled_from(_OPS), children, children),
        st.builds(Unary, st.sampled_from(["-", "NOT"]), children),
        st.builds(
            Binary, st.sampled_from(["=", "<>"]), children,
            st.sampled_from(["PRESENT", "ABSENT", "NULL"]).map(Call),
        ),
    )  # fmt: skip


_vector_exprs = st.recursive(_vector_leaf, _vector_node, max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(_vector_exprs, st.lists(st.tuples(_row_values, _row_values), min_size=1, max_size=5))
def test_column_wise_evaluation_is_the_tree_walk_of_each_row(
    e: object, rows: list[tuple[str | None, str | None]]
) -> None:
    """compile_vector's values are the tree walk's for each row (value and type)."""
    fn = compile_vector(e, _ROW_RULE.index)  # type: ignore[arg-type]
    assert fn is not None, e
    envs = [_row_env(k, a, 5) for k, a in rows]
    cols = {i: [env.after.get(i, Status.MISSING) for env in envs] for i in range(6)}
    got = [(type(v).__name__, v) for v in fn(cols, len(envs))]
    assert got == [_outcome(lambda env=env: evaluate_tree(e, env)) for env in envs], e  # type: ignore[misc, arg-type]


def test_column_wise_has_no_form_for_what_reads_more_than_columns() -> None:
    for e in (Col("A", "BEFORE"), Header("GGS_OP_TYPE"), Call("STRUP", (Col("A"),))):
        assert compile_vector(e, _ROW_RULE.index) is None


@given(st.integers(min_value=-62135596800 * 10**6, max_value=253402300799999999))
def test_commit_stamps_are_format_date(micros: int) -> None:
    """@GETENV ('GGHEADERINFO', 'COMMITTIMESTAMP'), made once a second: the same text as
    formatting the whole moment."""
    from engine.expr.functions import format_date
    from engine.expr.rowrule import STAMP, _stamp
    from engine.trail.model import micros_to_datetime

    assert _stamp(micros) == format_date(micros_to_datetime(micros), STAMP)
