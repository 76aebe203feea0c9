"""What the Manager watches on a schedule and reports to ggserr.log (mgr.prm's LAG*, DOWN*,
STARTUPVALIDATIONDELAY).

- **Lag** (LAGREPORTMINUTES/HOURS, LAGINFO..., LAGCRITICAL...): every LAGREPORT interval, for
  each running group with a checkpoint, the lag at its last checkpoint (checkpoint time minus
  the source time of the last record it processed, as ``INFO`` shows it). Lag at or over
  LAGCRITICAL: OGG-00947, a warning; else at or over LAGINFO (0: always): OGG-00946, an
  informational message; below both: nothing. Text as GoldenGate's: ``Lag for EXTRACT EXT1 is
  00:00:05 (checkpoint updated 00:00:02 ago).``
- **Down** (DOWNREPORTMINUTES/HOURS, DOWNCRITICAL): every interval, each ABENDED group is
  reported (OGG-01148, a warning); with DOWNCRITICAL, STOPPED groups are reported too.
- **Start-up validation** (STARTUPVALIDATIONDELAY seconds): that long after the Manager
  started a group, a group that is no longer running is reported (OGG-01153, an error).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from engine.home.checkpoints import load_checkpoints
from engine.home.groups import GroupStore
from engine.home.layout import Home
from engine.home.status import State, process_state
from engine.manager.params import ManagerParams
from engine.runtime.events import Clock, Severity

Emit = Callable[[str, Severity, str], None]


def hms(seconds: float) -> str:
    s = max(0, round(seconds))
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


class ManagerWatch:
    """Called by the Manager's loop with a monotonic ``now``; writes through ``emit``."""

    def __init__(self, home: Home, params: ManagerParams, emit: Emit, clock: Clock) -> None:
        self.home = home
        self.params = params
        self.emit = emit
        self.clock = clock
        self.next_lag: float | None = None
        self.next_down: float | None = None
        self.validations: dict[tuple[str, str], float] = {}

    def started(self, kind: str, name: str, now: float) -> None:
        if self.params.startup_validation_seconds is not None:
            self.validations[(kind, name)] = now + self.params.startup_validation_seconds

    def tick(self, now: float) -> None:
        lag = self.params.lag
        if lag is not None:
            if self.next_lag is None:
                self.next_lag = now + lag.every_seconds
            elif now >= self.next_lag:
                self.next_lag = now + lag.every_seconds
                self.check_lag()
        down = self.params.down_report_seconds
        if down is not None:
            if self.next_down is None:
                self.next_down = now + down
            elif now >= self.next_down:
                self.next_down = now + down
                self.report_down()
        for key, due in list(self.validations.items()):
            if now >= due:
                del self.validations[key]
                self.validate(*key)

    def check_lag(self) -> None:
        lag = self.params.lag
        if lag is None:
            return
        for group in GroupStore(self.home).all():
            _, state = process_state(self.home, group.kind, group.name)
            if state != State.RUNNING:
                continue
            cps = load_checkpoints(self.home, group.kind, group.name)
            if cps is None or cps.lag_seconds is None:
                continue
            seconds = cps.lag_seconds
            age = ""
            if cps.updated:
                try:
                    ago = (self.clock() - datetime.fromisoformat(cps.updated)).total_seconds()
                    age = f" (checkpoint updated {hms(ago)} ago)"
                except ValueError:
                    age = ""
            text = f"Lag for {group.kind} {group.name} is {hms(seconds)}{age}."
            if lag.critical_seconds is not None and seconds >= lag.critical_seconds:
                self.emit("OGG-00947", Severity.WARNING, text)
            elif lag.info_seconds is not None and seconds >= lag.info_seconds:
                self.emit("OGG-00946", Severity.INFO, text)

    def report_down(self) -> None:
        wanted = {State.ABENDED, State.STOPPED} if self.params.down_critical else {State.ABENDED}
        for group in GroupStore(self.home).all():
            pf, state = process_state(self.home, group.kind, group.name)
            if pf is None or state not in wanted:
                continue
            since = f" since {pf.stopped}" if pf.stopped else ""
            self.emit(
                "OGG-01148",
                Severity.WARNING,
                f"{group.kind} {group.name} is down ({state.value}{since}).",
            )

    def validate(self, kind: str, name: str) -> None:
        _, state = process_state(self.home, kind, name)
        if state not in (State.STARTING, State.RUNNING):
            self.emit(
                "OGG-01153",
                Severity.ERROR,
                f"{kind} {name} did not stay up: {state.value} "
                f"{self.params.startup_validation_seconds:g} seconds after it was started.",
            )
