"""An expression compiled to run column-wise: over the values of many rows at once
(``columns[i]`` the list of column ``i``'s values, row after row) giving the list of
their values. The Extract's TABLE WHERE / FILTER in the miner's task runs this way on a
transaction's rows (:func:`engine.extract.tasks.tablerules.rows_in_task`): a few list
comprehensions instead of a closure call per node and row.

Only what needs nothing of a row but its (after image) column values has a column-wise
form: columns, literals, arithmetic, comparisons, AND / OR / NOT and the @PRESENT /
@ABSENT / @NULL tests; :func:`compile_vector` gives None for anything else (the caller
evaluates row by row). The values are those :func:`engine.expr.evaluate.evaluate_tree`
gives each row (tests/params/test_expr.py holds the two to each other): evaluation is
pure, so evaluating both sides of AND / OR gives what the short cut gives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from engine.expr.compiled import _MIRROR, _ORDER, _number_literal
from engine.expr.evaluate import _TESTS, _presence
from engine.expr.values import Status, Value, arith, compare, truth
from params.expr import Binary, Call, Col, Expr, Lit, Unary, Word

#: columns (index -> the values, row after row), number of rows -> the values
Vector = Callable[[Mapping[int, list[Value]], int], list[Value]]


class _Unsupported(Exception):
    pass


def compile_vector(e: Expr, index: Mapping[str, int]) -> Vector | None:
    """``e`` column-wise, columns named through ``index``; None when a node has no
    column-wise form."""
    try:
        return _vector(e, index)
    except _Unsupported:
        return None


def _vector(e: Expr, index: Mapping[str, int]) -> Vector:
    t = type(e)
    if t is Col:
        if e.image == "BEFORE":  # type: ignore[union-attr]
            raise _Unsupported
        i = index.get(e.name)  # type: ignore[union-attr]
        if i is None:
            return lambda cols, n: [Status.MISSING] * n
        return lambda cols, n: cols[i]
    if t is Lit or t is Word:
        value: Value = e.value if t is Lit else e.name  # type: ignore[union-attr]
        return lambda cols, n: [value] * n
    if t is Binary:
        return _binary(e, index)  # type: ignore[arg-type]
    if t is Unary:
        operand = _vector(e.operand, index)  # type: ignore[union-attr]
        if e.op == "NOT":  # type: ignore[union-attr]
            return lambda cols, n: [_not(v) for v in operand(cols, n)]
        return lambda cols, n: [arith("-", 0, v) for v in operand(cols, n)]
    raise _Unsupported


def _not(v: Value) -> Value:
    t = truth(v)
    return None if t is None else not t


def _binary(e: Binary, index: Mapping[str, int]) -> Vector:
    op = e.op
    if op in ("AND", "OR"):
        left, right = _vector(e.left, index), _vector(e.right, index)
        stop = op == "OR"  # AND stops at a false side, OR at a true one

        def logic(cols: Mapping[int, list[Value]], n: int) -> list[Value]:
            out: list[Value] = []
            for a, b in zip(left(cols, n), right(cols, n), strict=True):
                x = truth(a)
                if x is stop:
                    out.append(stop)
                    continue
                y = truth(b)
                out.append(stop if y is stop else None if x is None or y is None else not stop)
            return out

        return logic
    if op in ("=", "<>"):
        for side, other in ((e.right, e.left), (e.left, e.right)):
            if isinstance(side, Call) and side.name in _TESTS:
                test, values = side.name, _vector(other, index)
                if op == "=":
                    return lambda cols, n: [_presence(test, v) for v in values(cols, n)]
                return lambda cols, n: [not _presence(test, v) for v in values(cols, n)]
    if op in _ORDER:
        for lit_side, other, oper in ((e.right, e.left, op), (e.left, e.right, _MIRROR[op])):
            lit = _number_literal(lit_side)
            if lit is not None:
                return _against(oper, _vector(other, index), lit)
    left, right = _vector(e.left, index), _vector(e.right, index)
    if op in ("+", "-", "*", "/"):
        return lambda cols, n: [
            arith(op, a, b) for a, b in zip(left(cols, n), right(cols, n), strict=True)
        ]
    return lambda cols, n: [
        compare(op, a, b) for a, b in zip(left(cols, n), right(cols, n), strict=True)
    ]


def _against(op: str, side: Vector, lit: object) -> Vector:
    order = _ORDER[op]
    return lambda cols, n: [
        order(int(v), lit) if v.__class__ is str and v.isdecimal() else compare(op, v, lit)  # type: ignore[arg-type]
        for v in side(cols, n)
    ]
