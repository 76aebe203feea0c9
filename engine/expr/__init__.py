"""Evaluation of the expression model of :mod:`params.expr` over one record.

Pure and picklable: the model is frozen dataclasses, an :class:`Env` answers column,
header, token and environment questions for the record at hand, and evaluation never
raises (a value that cannot be computed is :data:`Status.INVALID`, a column that is not
in the record :data:`Status.MISSING`). Either side that maps rows (Extract TABLE,
pump, Replicat MAP) builds an Env and calls :func:`evaluate` or :func:`holds`.
"""

from engine.expr import functions as _functions  # noqa: F401  (fills FUNCTIONS)
from engine.expr.compiled import evaluate, holds
from engine.expr.evaluate import Env, SimpleEnv, Status, Value, to_text

__all__ = ["Env", "SimpleEnv", "Status", "Value", "evaluate", "holds", "to_text"]
