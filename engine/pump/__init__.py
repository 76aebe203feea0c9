"""The data pump: an Extract group added with ``EXTTRAILSOURCE`` that copies whole
transactions from a local trail to a remote trail, which a Collector on the target host writes
(RMTHOST), with checkpoints published only after the copied bytes are durable there.

Modules: :mod:`engine.trail.txreader` (whole transactions from a trail that is still being
written; also used by Replicat), :mod:`engine.pump.pump` (the copy loop, restart without
duplicates), :mod:`engine.pump.sink` (where the output trail is written: this host or a
Collector), :mod:`engine.pump.remote` (the link to the Collector), :mod:`engine.pump.tcperrs`
(what a failed link gets: retry or abend), :mod:`engine.pump.runner` (the group process's
runner, which retries).

Errors: :class:`PumpError` (``code`` and ``text`` of the OGG message to abend with) is the root
of this package's exceptions.
"""

from __future__ import annotations

from engine.errors import GGError


class PumpError(GGError):
    """The pump cannot start or go on; ``code`` is the OGG message to abend with."""
