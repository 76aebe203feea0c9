"""REPORT AT hh:mi | ON day | AT hh:mi ON day: when a group writes its Run Time Statistics.

Each entry of the parameter file (``params.models.ParamFile.report_schedule``: ``"AT 02:00"``,
``"ON SUNDAY"``, ``"AT 02:00 ON SUNDAY"``) names moments: every day at hh:mi, every given day
at midnight, or that day at hh:mi. :meth:`ReportSchedule.due` says whether such a moment came
since it was last asked (a moment passed while the process was busy is not lost; one passed
while it was stopped is not made up).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, time, timedelta

DAYS = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")


def _entry(text: str) -> tuple[time | None, int | None]:
    words = text.split()
    at = on = None
    for key, value in zip(words[::2], words[1::2], strict=False):
        if key == "AT":
            hh, mi = (int(x) for x in value.split(":"))
            at = time(hh, mi)
        elif key == "ON" and value in DAYS:
            on = DAYS.index(value)
    return at, on


class ReportSchedule:
    def __init__(self, entries: tuple[str, ...], clock: Callable[[], datetime]) -> None:
        self.entries = [_entry(e) for e in entries]
        self.clock = clock
        self.last = clock()

    def due(self) -> bool:
        """Whether a scheduled moment lies in (the last call, now]."""
        if not self.entries:
            return False
        now = self.clock()
        last, self.last = self.last, now
        day = last.date()
        while day <= now.date():
            for at, on in self.entries:
                moment = datetime.combine(day, at or time(0, 0))
                if (on is None or moment.weekday() == on) and last < moment <= now:
                    return True
            day += timedelta(days=1)
        return False
