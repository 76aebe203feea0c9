"""An expression compiled once into nested Python closures (``env -> value``): what
:func:`engine.expr.evaluate.evaluate` runs per row instead of walking the tree.

Each closure does what :func:`engine.expr.evaluate.evaluate_tree` does for its node, with
the node's type, operator, names and literal arguments decided here once: the same values
in every case (tests/params/test_expr.py holds the two to each other). A function with no
compiled form here runs its tree implementation (:data:`FUNCTIONS`) unchanged.

:func:`compile_bound` compiles for one table's rows (:class:`Binding`): a column is read
by its index from the env's ``after`` / ``before`` mappings (as
:meth:`engine.expr.rowrule.RowEnv.column` reads it) and a @GETENV key by its getter,
both resolved here once instead of per row.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from engine.expr.evaluate import FUNCTIONS, Compiled, Env, _presence, evaluate_tree
from engine.expr.functions import STRING_FUNCTIONS, _getenv_words
from engine.expr.values import Status, Value, arith, compare, text, truth
from params.expr import HEADER_ELEMENTS, Binary, Call, Col, Expr, Header, Lit, Unary, Word

_TESTS = {"PRESENT", "ABSENT", "NULL"}
_MISSING = Status.MISSING
_INVALID = Status.INVALID
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq, "<>": operator.ne, "<": operator.lt, ">": operator.gt,
    "<=": operator.le, ">=": operator.ge,
}  # fmt: skip
_MIRROR = {"=": "=", "<>": "<>", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


@dataclass(frozen=True)
class Binding:
    """One table's rows: column name -> index in the env's ``after``/``before`` mappings,
    and (information type, key) -> the getter of a @GETENV value (a key not there is
    MISSING; STATS goes to ``env.getenv``)."""

    index: Mapping[str, int]
    getenv: Mapping[tuple[str, str], Callable[[Any], Value]]


def compile_expr(e: Expr) -> Compiled:
    """The closure computing ``e``'s value in an Env. A node the tree walk would fail on
    (a malformed call the parser does not make) keeps the tree walk, failing as it does."""
    return _guarded(e, None)


def compile_bound(e: Expr, binding: Binding) -> Compiled:
    """``e`` compiled for the rows of one table, in an env with ``after``/``before``
    mappings of column index -> value (:class:`engine.expr.rowrule.RowEnv`)."""
    return _guarded(e, binding)


def _guarded(e: Expr, b: Binding | None) -> Compiled:
    try:
        return _compile(e, b)
    except (IndexError, KeyError, AttributeError):
        return lambda env: evaluate_tree(e, env)


def _compile(e: Expr, b: Binding | None) -> Compiled:
    t = type(e)
    if t is Col:
        return _column(e, b)  # type: ignore[arg-type]
    if t is Lit or t is Word:
        value: Value = e.value if t is Lit else e.name  # type: ignore[union-attr]
        return lambda env: value
    if t is Binary:
        return _binary(e, b)  # type: ignore[arg-type]
    if t is Call:
        return _call(e, b)  # type: ignore[arg-type]
    if t is Unary:
        return _unary(e, b)  # type: ignore[arg-type]
    if t is Header:
        info, key = HEADER_ELEMENTS[e.name]  # type: ignore[union-attr]
        return _getenv(info, key, None, b)
    return lambda env: Status.INVALID


def _column(e: Col, b: Binding | None) -> Compiled:
    name, image = e.name, e.image
    if b is None:
        return lambda env: env.column(name, image)
    i = b.index.get(name)
    if i is None:
        return lambda env: _MISSING
    if image == "BEFORE":
        return lambda env: (env.before or env.after).get(i, _MISSING)  # type: ignore[attr-defined]
    return lambda env: env.after.get(i, _MISSING)  # type: ignore[attr-defined]


def _getenv(info: str, key: str, table: str | None, b: Binding | None) -> Compiled:
    if b is None or info == "STATS":
        return lambda env: env.getenv(info, key, table)
    get = b.getenv.get((info, key))
    if get is None:
        return lambda env: _MISSING
    return get


def _number_literal(e: Expr) -> int | Decimal | None:
    if isinstance(e, Lit) and type(e.value) in (int, Decimal):
        return e.value  # type: ignore[return-value]
    return None


def _binary(e: Binary, b: Binding | None) -> Compiled:
    op = e.op
    if op in ("AND", "OR"):
        return _logic(op == "AND", _guarded(e.left, b), _guarded(e.right, b))
    if op in ("=", "<>"):
        for side, other in ((e.right, e.left), (e.left, e.right)):
            if isinstance(side, Call) and side.name in _TESTS:
                return _test(side.name, op == "=", _guarded(other, b))
    if op in _ORDER:
        lit = _number_literal(e.right)
        if lit is not None:
            return _against(op, _guarded(e.left, b), lit)
        lit = _number_literal(e.left)
        if lit is not None:
            return _against(_MIRROR[op], _guarded(e.right, b), lit)
    left, right = _guarded(e.left, b), _guarded(e.right, b)
    if op in ("+", "-", "*", "/"):
        return lambda env: arith(op, left(env), right(env))
    return lambda env: compare(op, left(env), right(env))


def _against(op: str, side: Compiled, lit: int | Decimal) -> Compiled:
    """``side op lit`` with a number literal: text of decimal digits (what a NUMBER column
    usually holds; ``isdecimal`` is the ``\\d`` of :func:`as_number`'s pattern, and what
    ``int`` reads) compares as its int at once, as :func:`compare` would; the rest goes
    through :func:`compare`."""
    order = _ORDER[op]

    def run(env: Env) -> Value:
        v = side(env)
        if v.__class__ is str and v.isdecimal():
            return order(int(v), lit)
        return compare(op, v, lit)

    return run


def _logic(is_and: bool, left: Compiled, right: Compiled) -> Compiled:
    stop = not is_and  # AND stops at a false side, OR at a true one

    def run(env: Env) -> Value:
        a = truth(left(env))
        if a is stop:
            return stop
        b = truth(right(env))
        if b is stop:
            return stop
        return None if a is None or b is None else not stop

    return run


def _test(name: str, equal: bool, other: Compiled) -> Compiled:
    if equal:
        return lambda env: _presence(name, other(env))
    return lambda env: not _presence(name, other(env))


def _unary(e: Unary, b: Binding | None) -> Compiled:
    operand = _guarded(e.operand, b)
    if e.op == "NOT":

        def run(env: Env) -> Value:
            t = truth(operand(env))
            return None if t is None else not t

        return run
    return lambda env: arith("-", 0, operand(env))


def _strings(fn: Callable[..., Value], args: tuple[Compiled, ...]) -> Compiled:
    if len(args) == 1:
        return _string1(fn, args[0])
    if fn is STRING_FUNCTIONS["STRCAT"]:
        return _strcat(args)

    def run(env: Env) -> Value:
        return _apply_text(fn, [a(env) for a in args])

    return run


def _apply_text(fn: Callable[..., Value], values: list[Value]) -> Value:
    null = False
    for v in values:  # functions._blocked inline: the first Status, else NULL
        if v is None:
            null = True
        elif v.__class__ is Status:
            return v
    if null:
        return None
    try:
        return fn(*[v if v.__class__ is str else text(v) for v in values])
    except (ValueError, ArithmeticError, IndexError):
        return Status.INVALID


def _strcat(args: tuple[Compiled, ...]) -> Compiled:
    """@STRCAT: text arguments joined at once; the others as any text function. Two and
    three arguments (the usual forms) are called one by one, without a list."""
    join = STRING_FUNCTIONS["STRCAT"]
    if len(args) == 2:
        a0, a1 = args

        def run2(env: Env) -> Value:
            x, y = a0(env), a1(env)
            if x.__class__ is str and y.__class__ is str:
                return x + y
            return _apply_text(join, [x, y])

        return run2
    if len(args) == 3:
        b0, b1, b2 = args

        def run3(env: Env) -> Value:
            x, y, z = b0(env), b1(env), b2(env)
            if x.__class__ is str and y.__class__ is str and z.__class__ is str:
                return x + y + z
            return _apply_text(join, [x, y, z])

        return run3

    def run(env: Env) -> Value:
        values = [a(env) for a in args]
        for v in values:
            if v.__class__ is not str:
                return _apply_text(join, values)
        return "".join(values)  # type: ignore[arg-type]

    return run


def _string1(fn: Callable[..., Value], arg: Compiled) -> Compiled:
    def run(env: Env) -> Value:
        v = arg(env)
        if v.__class__ is not str:
            if v is None or v.__class__ is Status:
                return v
            v = text(v)
        try:
            return fn(v)
        except (ValueError, ArithmeticError, IndexError):
            return Status.INVALID

    return run


def _if(args: tuple[Compiled, ...]) -> Compiled:
    cond, yes, no = args[0], args[1], args[2]

    def run(env: Env) -> Value:
        c = cond(env)
        if c is True:  # (a comparison: truth's answer without the call)
            return yes(env)
        if c is False or c is None:
            return no(env)
        return yes(env) if truth(c) else no(env)

    return run


def _case(args: tuple[Compiled, ...]) -> Compiled:
    value, rest = args[0], args[1:]
    pairs = [(rest[i], rest[i + 1]) for i in range(0, len(rest) - 1, 2)]
    default = rest[-1] if len(rest) % 2 else None

    def run(env: Env) -> Value:
        v = value(env)
        for when, then in pairs:
            if compare("=", v, when(env)):
                return then(env)
        return default(env) if default is not None else Status.MISSING

    return run


def _eval(args: tuple[Compiled, ...]) -> Compiled:
    pairs = [(args[i], args[i + 1]) for i in range(0, len(args) - 1, 2)]
    default = args[-1] if len(args) % 2 else None

    def run(env: Env) -> Value:
        for when, then in pairs:
            if truth(when(env)):
                return then(env)
        return default(env) if default is not None else Status.MISSING

    return run


def _token(args: tuple[Compiled, ...]) -> Compiled:
    name = args[0]

    def run(env: Env) -> Value:
        n = name(env)
        return env.token(n) if isinstance(n, str) else Status.INVALID

    return run


#: Functions whose arguments are compiled too (the rest run their tree implementation).
_CALLS: dict[str, Callable[[tuple[Compiled, ...]], Compiled]] = {
    "IF": _if, "CASE": _case, "EVAL": _eval, "TOKEN": _token,
}  # fmt: skip


def _call(e: Call, b: Binding | None) -> Compiled:
    name = e.name
    fn = STRING_FUNCTIONS.get(name)
    if fn is not None:
        return _strings(fn, tuple(_guarded(a, b) for a in e.args))
    make = _CALLS.get(name)
    if make is not None and (name != "IF" or len(e.args) >= 3):
        return make(tuple(_guarded(a, b) for a in e.args))
    if name == "GETENV":
        return _getenv(*_getenv_words(e), b)
    tree = FUNCTIONS[name]
    return lambda env: tree(e, env)


#: id of an expression -> (the expression, kept alive so that its id stays its own; closure)
_COMPILED: dict[int, tuple[Expr, Compiled]] = {}


def compiled(e: Expr) -> Compiled:
    """``e`` compiled (once per expression object)."""
    found = _COMPILED.get(id(e))
    if found is not None and found[0] is e:
        return found[1]
    fn = compile_expr(e)
    if len(_COMPILED) > 4096:  # expressions come from parameter files: a bound, not a cache
        _COMPILED.clear()
    _COMPILED[id(e)] = (e, fn)
    return fn


def evaluate(e: Expr, env: Env) -> Value:
    """The value of ``e`` for the record ``env`` describes (compiled). Never raises."""
    return compiled(e)(env)


def holds(e: Expr, env: Env) -> bool:
    """A condition is met only when it is true: unknown (NULL, missing) is not."""
    return truth(compiled(e)(env)) is True
