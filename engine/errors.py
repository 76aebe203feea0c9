"""The one root of the engine's reportable errors.

Every error a group process abends with, or a command reports to the user, carries a stable
OGG-style message code and one line of text: :class:`GGError`. The process-level errors of each
concern derive from it (with the builtin they stand for, where one fits):

- :class:`engine.runtime.process.ProcessAbend`: a runner abends with a message;
- :class:`engine.extract.start.ExtractError`, :class:`engine.pump.PumpError`,
  :class:`engine.replicat.ReplicatError`: the group cannot start or go on;
- :class:`engine.heartbeat.HeartbeatError` (also a ``RuntimeError``): a heartbeat command fails;
- :class:`engine.cluster.spark.SparkConfigError`: a Spark setting cannot be used.

A runner maps any :class:`GGError` to an abend with its code and text; nothing else needs to
know which concern raised it.
"""

from __future__ import annotations

import re

CODE = re.compile(r"OGG-\d{5}")
"""The form of a message code: ``OGG-`` and five digits."""


class GGError(Exception):
    """An error with an OGG message ``code`` and the one line ``text`` a user sees."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(f"{code} {text}")
        self.code = code
        self.text = text
