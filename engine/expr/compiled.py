"""An expression compiled once into nested Python closures (``env -> value``): what
:func:`engine.expr.evaluate.evaluate` runs per row instead of walking the tree.

Each closure does what :func:`engine.expr.evaluate.evaluate_tree` does for its node, with
the node's type, operator, names and literal arguments decided here once: the same values
in every case (tests/params/test_expr.py holds the two to each other). A function with no
compiled form here runs its tree implementation (:data:`FUNCTIONS`) unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.expr.evaluate import COMPILER, FUNCTIONS, Compiled, Env, _presence, evaluate_tree
from engine.expr.functions import STRING_FUNCTIONS, _getenv_words
from engine.expr.values import Status, Value, arith, compare, text, truth
from params.expr import HEADER_ELEMENTS, Binary, Call, Col, Expr, Header, Lit, Unary, Word

_TESTS = {"PRESENT", "ABSENT", "NULL"}


def compile_expr(e: Expr) -> Compiled:
    """The closure computing ``e``'s value in an Env. A node the tree walk would fail on
    (a malformed call the parser does not make) keeps the tree walk, failing as it does."""
    try:
        return _compile(e)
    except (IndexError, KeyError, AttributeError):
        return lambda env: evaluate_tree(e, env)


def _compile(e: Expr) -> Compiled:
    t = type(e)
    if t is Col:
        return _column(e)  # type: ignore[arg-type]
    if t is Lit or t is Word:
        value: Value = e.value if t is Lit else e.name  # type: ignore[union-attr]
        return lambda env: value
    if t is Binary:
        return _binary(e)  # type: ignore[arg-type]
    if t is Call:
        return _call(e)  # type: ignore[arg-type]
    if t is Unary:
        return _unary(e)  # type: ignore[arg-type]
    if t is Header:
        info, key = HEADER_ELEMENTS[e.name]  # type: ignore[union-attr]
        return lambda env: env.getenv(info, key, None)
    return lambda env: Status.INVALID


def _column(e: Col) -> Compiled:
    name, image = e.name, e.image
    return lambda env: env.column(name, image)


def _binary(e: Binary) -> Compiled:
    op = e.op
    if op in ("AND", "OR"):
        return _logic(op == "AND", compile_expr(e.left), compile_expr(e.right))
    if op in ("=", "<>"):
        for side, other in ((e.right, e.left), (e.left, e.right)):
            if isinstance(side, Call) and side.name in _TESTS:
                return _test(side.name, op == "=", compile_expr(other))
    left, right = compile_expr(e.left), compile_expr(e.right)
    if op in ("+", "-", "*", "/"):
        return lambda env: arith(op, left(env), right(env))
    return lambda env: compare(op, left(env), right(env))


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


def _unary(e: Unary) -> Compiled:
    operand = compile_expr(e.operand)
    if e.op == "NOT":

        def run(env: Env) -> Value:
            t = truth(operand(env))
            return None if t is None else not t

        return run
    return lambda env: arith("-", 0, operand(env))


def _strings(fn: Callable[..., Value], args: tuple[Compiled, ...]) -> Compiled:
    def run(env: Env) -> Value:
        values = [a(env) for a in args]
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

    return run


def _if(args: tuple[Compiled, ...]) -> Compiled:
    cond, yes, no = args[0], args[1], args[2]
    return lambda env: yes(env) if truth(cond(env)) else no(env)


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


def _call(e: Call) -> Compiled:
    name = e.name
    fn = STRING_FUNCTIONS.get(name)
    if fn is not None:
        return _strings(fn, tuple(compile_expr(a) for a in e.args))
    make = _CALLS.get(name)
    if make is not None and (name != "IF" or len(e.args) >= 3):
        return make(tuple(compile_expr(a) for a in e.args))
    if name == "GETENV":
        info, key, table = _getenv_words(e)
        return lambda env: env.getenv(info, key, table)
    tree = FUNCTIONS[name]
    return lambda env: tree(e, env)


COMPILER.append(compile_expr)
