"""Evaluation of a :data:`params.expr.Expr` in an :class:`Env`.

:func:`evaluate_tree` is the tree walk, the reference; :func:`evaluate` runs the same
expression compiled once into Python closures (:mod:`engine.expr.compiled`, cached per
expression object), which must give exactly the same values (tests/params/test_expr.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from engine.expr.values import Status, Value, arith, compare, to_text, truth
from params.expr import HEADER_ELEMENTS, Binary, Call, Col, Expr, Header, Lit, Unary, Word

__all__ = ["Env", "SimpleEnv", "Status", "Value", "evaluate_tree", "to_text"]


class Env(Protocol):
    """What an expression may ask about the record it runs on."""

    def column(self, name: str, image: str) -> Value:
        """The column's value (``None`` for NULL), or Status.MISSING when the record
        does not hold it. ``image`` is ``""``, ``BEFORE`` or ``AFTER``."""
        ...

    def getenv(self, info: str, key: str, table: str | None) -> Value:
        """@GETENV (info, key); ``table`` for @GETENV ('STATS', 'TABLE', t, op)."""
        ...

    def token(self, name: str) -> Value: ...

    def key_values(self) -> tuple[Value, ...]: ...

    def now(self) -> datetime: ...


@dataclass(frozen=True)
class SimpleEnv:
    """An Env from plain mappings (tests, and any side that has its record as dicts).

    ``after``/``before`` map column names to values; a name not there is MISSING.
    ``info`` maps ``(information type, key)`` to values, ``stats`` ``(table or "", op)``
    to counts."""

    after: Mapping[str, Value] = field(default_factory=dict)
    before: Mapping[str, Value] = field(default_factory=dict)
    info: Mapping[tuple[str, str], Value] = field(default_factory=dict)
    tokens: Mapping[str, Value] = field(default_factory=dict)
    key: tuple[str, ...] = ()
    stats: Mapping[tuple[str, str], int] = field(default_factory=dict)
    clock: datetime = datetime(2000, 1, 1)

    def column(self, name: str, image: str) -> Value:
        source = self.before if image == "BEFORE" else self.after
        return source.get(name, Status.MISSING)

    def getenv(self, info: str, key: str, table: str | None) -> Value:
        if info == "STATS":
            return self.stats.get((table or "", key), 0)
        return self.info.get((info, key), Status.MISSING)

    def token(self, name: str) -> Value:
        return self.tokens.get(name, Status.MISSING)

    def key_values(self) -> tuple[Value, ...]:
        return tuple(self.column(k, "") for k in self.key)

    def now(self) -> datetime:
        return self.clock


_TESTS = {"PRESENT", "ABSENT", "NULL"}
#: Function name -> implementation; filled by :mod:`engine.expr.functions`.
FUNCTIONS: dict[str, Callable[[Call, Env], Value]] = {}
Compiled = Callable[[Env], Value]


def _presence(test: str, v: Value) -> bool:
    if test == "NULL":
        return v is None
    if test == "ABSENT":
        return v is Status.MISSING
    return v is not Status.MISSING and v is not None  # PRESENT: there and not NULL


def _binary(e: Binary, env: Env) -> Value:
    op = e.op
    if op == "AND":
        left = truth(evaluate_tree(e.left, env))
        if left is False:
            return False
        right = truth(evaluate_tree(e.right, env))
        if right is False:
            return False
        return None if left is None or right is None else True
    if op == "OR":
        left = truth(evaluate_tree(e.left, env))
        if left is True:
            return True
        right = truth(evaluate_tree(e.right, env))
        if right is True:
            return True
        return None if left is None or right is None else False
    if op in ("=", "<>"):
        for side, other in ((e.right, e.left), (e.left, e.right)):
            if isinstance(side, Call) and side.name in _TESTS:
                found = _presence(side.name, evaluate_tree(other, env))
                return found if op == "=" else not found
    a, b = evaluate_tree(e.left, env), evaluate_tree(e.right, env)
    if op in ("+", "-", "*", "/"):
        return arith(op, a, b)
    return compare(op, a, b)


def _unary(e: Unary, env: Env) -> Value:
    v = evaluate_tree(e.operand, env)
    if e.op == "NOT":
        t = truth(v)
        return None if t is None else not t
    return arith("-", 0, v)


def _header(e: Header, env: Env) -> Value:
    info, key = HEADER_ELEMENTS[e.name]
    return env.getenv(info, key, None)


def evaluate_tree(e: Expr, env: Env) -> Value:
    """The value of ``e`` for the record ``env`` describes, by a walk of the tree (the
    reference :func:`evaluate`'s compiled form is held to). Never raises."""
    t = type(e)
    if t is Col:
        return env.column(e.name, e.image)  # type: ignore[union-attr]
    if t is Lit:
        return e.value  # type: ignore[union-attr]
    if t is Binary:
        return _binary(e, env)  # type: ignore[arg-type]
    if t is Call:
        return FUNCTIONS[e.name](e, env)  # type: ignore[union-attr, arg-type]
    if t is Unary:
        return _unary(e, env)  # type: ignore[arg-type]
    if t is Header:
        return _header(e, env)  # type: ignore[arg-type]
    if t is Word:
        return e.name  # type: ignore[union-attr]
    return Status.INVALID
