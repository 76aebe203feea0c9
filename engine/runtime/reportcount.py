"""REPORTCOUNT: ``N records processed as of <time> (rate r,delta d)`` lines in the report.

One counter for every engine that accepts the parameter (Extract, pump, Replicat): each calls
:meth:`ReportCounter.tick` with its running count after every batch; the counter writes a line
when a multiple of ``EVERY n RECORDS`` is passed, or ``n SECONDS|MINUTES|HOURS`` have gone by
since the last line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from params.models import ReportCount

_UNIT_SECONDS = {"SECONDS": 1, "MINUTES": 60, "HOURS": 3600}


class ReportCounter:
    def __init__(
        self,
        rule: ReportCount | None,
        line: Callable[[str], None],
        clock: Callable[[], datetime] = datetime.now,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rule, self.line, self.clock, self.monotonic = rule, line, clock, monotonic
        now = monotonic()
        self.started = now
        self._last = (0, now)  # records and when at the last line

    def tick(self, records: int) -> None:
        rule = self.rule
        if rule is None:
            return
        last_records, last_when = self._last
        now = self.monotonic()
        if rule.unit == "RECORDS":
            due = records // rule.every > last_records // rule.every
        else:
            due = now - last_when >= rule.every * _UNIT_SECONDS[rule.unit]
        if not due:
            return
        text = f"{records} records processed as of {self.clock():%Y-%m-%d %H:%M:%S}"
        if rule.rate:
            elapsed = max(now - self.started, 1e-9)
            delta = (records - last_records) / max(now - last_when, 1e-9)
            text += f" (rate {records / elapsed:.0f},delta {delta:.0f})"
        self.line(text)
        self._last = (records, now)
