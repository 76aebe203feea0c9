"""The data pump: an Extract group added with ``EXTTRAILSOURCE`` that copies whole
transactions from a local trail to a remote trail (another directory standing in for another
host), with checkpoints published only after the copied bytes are durable.

Modules: :mod:`engine.trail.txreader` (whole transactions from a trail that is still being
written; also used by Replicat), :mod:`engine.pump.pump` (the copy loop, restart without
duplicates), :mod:`engine.pump.runner` (the group process's runner).

Errors: :class:`PumpError` (``code`` and ``text`` of the OGG message to abend with) is the root
of this package's exceptions.
"""

from __future__ import annotations

from engine.errors import GGError


class PumpError(GGError):
    """The pump cannot start or go on; ``code`` is the OGG message to abend with."""
