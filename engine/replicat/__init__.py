"""Replicat: applies whole trail transactions to a target database (engine.targets).

Modules: :mod:`~engine.replicat.mapping` (MAP ... TARGET, wildcards, KEYCOLS, COLMAP),
:mod:`~engine.replicat.apply` (one trail record as SQL, HANDLECOLLISIONS),
:mod:`~engine.replicat.progress` (the checkpoint table and ``_lox``: seed 004 watermarks),
:mod:`~engine.replicat.discard` (DISCARDFILE), :mod:`~engine.replicat.engine` (the apply
loop: GROUPTRANSOPS, REPERROR, file checkpoints), :mod:`~engine.replicat.runner` (the group
process's runner).

Errors: :class:`ReplicatError` (``code``/``text`` of the OGG message to abend with) is the
root; :class:`MappingError` (a MAP/COLMAP that cannot be resolved) and :class:`ApplyError`
(a record the target refused, with its Oracle-style error ``number``) derive from it.
"""

from __future__ import annotations

from engine.errors import GGError


class ReplicatError(GGError):
    """Replicat cannot start or go on; ``code`` is the OGG message to abend with."""


class MappingError(ReplicatError, ValueError):
    pass


class ApplyError(ReplicatError):
    """A record could not be applied; ``number`` selects the REPERROR rule."""

    def __init__(self, number: int, text: str, sql: str = "") -> None:
        super().__init__("OGG-01004", text)
        self.number = number
        self.sql = sql
