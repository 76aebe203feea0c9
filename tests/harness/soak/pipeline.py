"""The end-to-end soak: workload -> Extract -> pump -> Replicat under a Manager, with SIGKILLs.

One home (:mod:`tests.harness.pipeline_home`) with AUTORESTART of every group and the apply audit
on the target (:mod:`tests.harness.soak.audit`). The workload runs in a thread at ``tps``
transactions a second (inserts, updates, deletes, rollbacks, several sessions) while the
soak kills the Extract, the pump, the Replicat or the Manager with SIGKILL, one at a time:
it waits until the chosen process is running, has produced something since its previous
kill and has work left (:mod:`tests.harness.soak.kills`), then kills it at once and tells whether
the kill was effective (when the process does not get there within ``arm_seconds``, no
signal is sent and another is drawn: ``kills_skipped``). A killed group is restarted by the
Manager's AUTORESTART (or by START when that did not happen within seconds); a killed
Manager is started again and the groups it started must still be running
(``manager_group_losses`` counts those that are not).

Kills stop at ``effective_kills`` effective ones, ``max_kills`` requested ones or after
``kill_seconds``; then the workload stops, the pipeline drains and is stopped, and every
check runs: both trails against the source's committed transactions, the apply audit,
and the tables row for row.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine.embedded.database import Database, check_name
from engine.embedded.workload import WorkloadSpec, parse_mix, run_workload
from engine.home.layout import Home
from engine.home.status import MANAGER, State, effective_state, pid_alive, read_process_file
from tests.harness import pipeline_home as ph
from tests.harness.soak.audit import AuditVerdict, audit_count, check_audit, install_audit
from tests.harness.soak.audit import table_mismatches as count_table_mismatches
from tests.harness.soak.expected import Source, read_source
from tests.harness.soak.kills import Kill, KillLog
from tests.harness.soak.sufficiency import Sufficiency
from tests.harness.soak.sufficiency import verdict as outcome
from tests.harness.soak.trailcheck import TrailTally, TrailVerdict, check_trail

EXTRACT, PUMP, REPLICAT = "EXT1", "PMP1", "REP1"
KINDS = {EXTRACT: "EXTRACT", PUMP: "EXTRACT", REPLICAT: "REPLICAT", MANAGER: MANAGER}
LIVE = (State.STARTING, State.RUNNING)
_EVENT = re.compile(
    r"(?P<severity>[A-Z]+)\s+(?P<code>OGG-\d+)\s+.*?, (?P<group>\w+)\.prm:\s+(?P<text>.*)$"
)


@dataclass(frozen=True)
class SoakSpec:
    """``schedule``: the processes to kill in turn (repeated); empty: drawn by ``weights``."""

    target: str = "tgt.db"
    tables: int = 3
    effective_kills: int = 100
    max_kills: int = 400
    kill_seconds: float = 1800.0
    schedule: tuple[str, ...] = ()
    weights: tuple[tuple[str, float], ...] = (
        (EXTRACT, 0.5),  # a JVM start each: the rarest
        (PUMP, 2.0),
        (REPLICAT, 3.0),
        (MANAGER, 1.0),
    )
    seed: int = 1
    tps: float = 30.0
    rows_per_txn: int = 6
    initial_rows: int = 100
    arm_seconds: float = 10.0
    drain_seconds: float = 300.0

    def pipeline(self) -> ph.PipelineSpec:
        tables = ph.workload_tables(self.tables)
        return ph.PipelineSpec(self.target, tables, autorestart=True)


class Workload(threading.Thread):
    """Batches of the workload until :meth:`finish`; ``committed`` counts the transactions
    committed and flushed to redo so far (updated after each batch: a lower bound)."""

    def __init__(self, root: Path, spec: SoakSpec) -> None:
        super().__init__(name="soak-workload", daemon=True)
        self.root, self.spec = root, spec
        self.committed = 0
        self.error: BaseException | None = None
        self._halt = threading.Event()

    def batch(self, number: int, transactions: int) -> WorkloadSpec:
        s = self.spec
        return WorkloadSpec(
            tables=s.tables, transactions=transactions, rows_per_txn=s.rows_per_txn,
            sessions=4, seed=s.seed * 100_000 + number, initial_rows=s.initial_rows,
            mix=parse_mix("insert=40,update=40,delete=20"), rollback_ratio=0.1, tps=s.tps,
        )  # fmt: skip

    def run(self) -> None:
        try:
            with Database(self.root) as db:
                number = 1
                while not self._halt.is_set():
                    per_batch = max(1, int(self.spec.tps))
                    self.committed += run_workload(db, self.batch(number, per_batch)).commits
                    number += 1
        except BaseException as exc:  # reported by finish()
            self.error = exc

    def finish(self) -> None:
        self._halt.set()
        self.join()
        if self.error is not None:
            raise self.error


@dataclass
class Probes:
    """Input and output of each process (:mod:`tests.harness.soak.kills`), read on demand."""

    home: Home
    pipe: ph.PipelineSpec
    setup_txns: int
    workload: Workload
    lt: TrailTally = field(init=False)
    rt: TrailTally = field(init=False)

    def __post_init__(self) -> None:
        self.lt = TrailTally(self.home.root / ph.LOCAL_TRAIL)
        self.rt = TrailTally(self.home.root / ph.REMOTE_TRAIL)

    def input(self, process: str) -> int:
        source = self.setup_txns + self.workload.committed
        if process == EXTRACT:
            return source
        if process == PUMP:
            return self.lt.poll().txns
        if process == REPLICAT:
            return self.rt.poll().changes
        return source + self.lt.poll().txns + self.rt.poll().changes

    def output(self, process: str) -> int:
        if process == EXTRACT:
            return self.lt.poll().txns
        if process == PUMP:
            return self.rt.poll().txns
        applied = audit_count(self.home, self.pipe)
        if process == REPLICAT:
            return applied
        return self.lt.poll().txns + self.rt.poll().txns + applied


def live_pid(home: Home, process: str) -> int | None:
    pf = read_process_file(home, KINDS[process], process)
    return pf.pid if pf is not None and effective_state(pf) in LIVE else None


def running(home: Home, process: str) -> bool:
    pf = read_process_file(home, KINDS[process], process)
    return pf is not None and effective_state(pf) == State.RUNNING


def died_unsaid(home: Home, process: str, pid: int) -> bool:
    """Whether the process ``pid`` is gone without having said so in its process file (it
    was killed); one that abended on its own has written ABENDED there."""
    pf = read_process_file(home, KINDS[process], process)
    said = pf is not None and pf.pid == pid and pf.state == State.ABENDED
    return not pid_alive(pid) and not said


def abends(home: Home) -> dict[str, list[str]]:
    """The groups' abends in ggserr.log (OGG-01668), each with the error logged before it."""
    out: dict[str, list[str]] = {}
    last: dict[str, str] = {}
    path = home.ggserr_log
    for line in path.read_text(errors="replace").splitlines() if path.exists() else ():
        match = _EVENT.search(line)
        if match is None or match["severity"] != "ERROR":
            continue
        group = match["group"].upper()
        if match["code"] == "OGG-01668":  # its own text, unless it is the usual words
            text = match["text"].strip()
            said = last.pop(group, "?") if text == "PROCESS ABENDING." else text
            out.setdefault(group, []).append(said)
        else:
            last[group] = f"{match['code']} {match['text'].strip()}"
    return out


def wait_for(predicate: Callable[[], object], seconds: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)


@dataclass
class SoakResult:
    kills: KillLog
    restarts: Counter[str]
    manager_group_losses: int
    abends: dict[str, list[str]]
    source: Source
    trails: dict[str, TrailVerdict]
    audit: AuditVerdict
    mismatched_rows: int
    drained: bool
    seconds: float

    @property
    def lost(self) -> int:
        return sum(v.lost for v in self.trails.values()) + self.audit.lost

    @property
    def dup(self) -> int:
        return sum(v.dup for v in self.trails.values()) + self.audit.dup

    @property
    def enough(self) -> Sufficiency:
        """What the soak did against the minimums that make a 1% loss visible."""
        exposed = sum(k.backlog for k in self.kills.kills if k.effective)
        return Sufficiency(len(self.source.txns), self.kills.effective, exposed)

    @property
    def passed(self) -> bool:
        """The checks passed, on enough to mean it (:mod:`tests.harness.soak.sufficiency`)."""
        return self.ok and self.enough.ok

    @property
    def ok(self) -> bool:
        """Every check passed (whether the soak did enough is :attr:`enough`)."""
        return (
            all(v.ok for v in self.trails.values())
            and not self.audit.mismatches
            and not self.mismatched_rows
            and not self.manager_group_losses
            and not self.abends
            and self.drained
        )

    def lines(self) -> list[str]:
        out = [
            f"committed_transactions={len(self.source.txns)}",
            f"committed_changes={self.source.changes}",
            *self.kills.lines(),
            "restarts=" + ",".join(f"{k}:{v}" for k, v in sorted(self.restarts.items())),
            f"manager_group_losses={self.manager_group_losses}",
            f"abends={sum(len(v) for v in self.abends.values())}",
            *(
                f"abend_{g.lower()}=" + "; ".join(f"{n} x {why}" for why, n in Counter(v).items())
                for g, v in sorted(self.abends.items())
            ),
            f"drained={self.drained}",
        ]
        for name, verdict in self.trails.items():
            out += verdict.lines(name)
        out += self.audit.lines("audit")
        out += [f"mismatched_rows={self.mismatched_rows}", f"seconds={self.seconds:.1f}"]
        out += self.enough.lines()
        out.append(
            f"kills_effective={self.kills.effective} lost={self.lost} dup={self.dup} "
            f"audit_mismatches={self.audit.mismatches} mismatched_rows={self.mismatched_rows} "
            f"verdict={outcome(self.ok, self.enough)}"
        )
        return out


class Soak:
    def __init__(self, home: Home, spec: SoakSpec, log: Callable[[str], None]) -> None:
        self.home, self.spec, self.log = home, spec, log
        self.pipe = spec.pipeline()
        self.rnd = random.Random(spec.seed)
        self.killlog = KillLog()
        self.restarts: Counter[str] = Counter()
        self.manager_group_losses = 0
        self.started = time.monotonic()

    def setup(self) -> Probes:
        home, pipe = self.home, self.pipe
        ph.prepare_home(home, pipe)
        out = ph.run_ggsci(home, *ph.target_commands(pipe))
        if "checkpoint table" not in out:
            raise RuntimeError(f"target set-up failed: {out}")
        install_audit(home, pipe)
        source_root = home.dirdb / check_name(pipe.source)
        workload = Workload(source_root, self.spec)
        with Database(source_root) as db:  # the tables and their first rows
            run_workload(db, workload.batch(0, 0))
        first = read_source(source_root, pipe.schemas)
        ph.run_ggsci(home, *ph.add_and_start_commands(pipe))
        if not wait_for(lambda: audit_count(home, pipe) >= first.changes, 300, 0.5):
            raise RuntimeError(f"the first rows did not reach the target: see {home.dirrpt}")
        workload.start()
        return Probes(home, pipe, len(first.txns), workload)

    def choose(self, n: int) -> str:
        if self.spec.schedule:
            return self.spec.schedule[n % len(self.spec.schedule)]
        names = [p for p, _ in self.spec.weights]
        return self.rnd.choices(names, [w for _, w in self.spec.weights])[0]

    def kill_one(self, probes: Probes, process: str) -> Kill | None:
        """SIGKILL to ``process`` once it is mid-stream; None (no signal) when it did not get
        there within ``arm_seconds``."""
        home = self.home
        before = self.killlog.last_output(process)

        def armed() -> bool:
            if not running(home, process):
                return False
            output = probes.output(process)
            return output > before and probes.input(process) > output

        if not wait_for(armed, self.spec.arm_seconds, 0.05):  # at once: backlogs are brief
            return None
        groups = {p: live_pid(home, p) for p in (EXTRACT, PUMP, REPLICAT)}
        pid = live_pid(home, process)
        given = probes.input(process)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            wait_for(lambda: not pid_alive(pid), 30, 0.02)
        output = probes.output(process)
        kill = self.killlog.add(
            Kill(process, before, output, given - output, time.monotonic() - self.started)
        )
        self.restart(process, pid, groups)
        return kill

    def restart(self, process: str, pid: int | None, groups: dict[str, int | None]) -> None:
        home = self.home
        if process == MANAGER:
            self.start_manager()
            self.restarts["MANAGER"] += 1
            lost = [p for p, g in groups.items() if g is not None and died_unsaid(home, p, g)]
            self.manager_group_losses += len(lost)
            if lost:
                self.log(f"groups gone with the Manager: {lost}")
        elif wait_for(lambda: live_pid(home, process) not in (None, pid), 10):
            self.restarts["auto"] += 1
        else:
            self.start_group(process)
            self.restarts["start"] += 1
        for group in (EXTRACT, PUMP, REPLICAT):  # abended on its own, and not restarted
            pf = read_process_file(home, KINDS[group], group)
            if pf is not None and pf.state == State.ABENDED and not pf.killed:
                self.log(f"{group} abended: {'; '.join(abends(home).get(group, []))}")
                self.start_group(group)
                self.restarts["after_abend"] += 1

    def start_manager(self) -> None:
        """START MANAGER until it runs (a few tries: each is a GGSCI process)."""
        for _ in range(3):
            out = ph.run_ggsci(self.home, "START MANAGER")
            if wait_for(lambda: running(self.home, MANAGER), 30):
                return
            self.log(f"START MANAGER did not start it: {out.strip()[-300:]}")
        raise RuntimeError(f"the Manager does not start again: see {self.home.ggserr_log}")

    def start_group(self, group: str) -> None:
        if not running(self.home, MANAGER):
            self.start_manager()
        out = ph.run_ggsci(self.home, f"START {KINDS[group]} {group.lower()}")
        if not wait_for(lambda: live_pid(self.home, group) is not None, 30):
            self.log(f"START {group} did not start it: {out.strip()[-300:]}")

    def kills(self, probes: Probes) -> None:
        spec, log = self.spec, self.killlog
        deadline = self.started + spec.kill_seconds
        while (
            log.effective < spec.effective_kills
            and log.requested < spec.max_kills
            and time.monotonic() < deadline
        ):
            if probes.workload.error is not None:
                break
            kill = self.kill_one(probes, self.choose(log.requested))
            if kill is None:
                log.skipped += 1
                continue
            self.log(
                f"kill {log.requested} {kill.process} t={kill.seconds:.0f}s "
                f"output {kill.output_before}->{kill.output} backlog {kill.backlog} "
                f"{'effective' if kill.effective else 'not effective'} "
                f"({log.effective} effective)"
            )

    def drain(self, probes: Probes, source: Source) -> bool:
        home, pipe = self.home, self.pipe

        def done() -> bool:
            return (
                probes.lt.poll().txns >= len(source.txns)
                and probes.rt.poll().txns >= len(source.txns)
                and audit_count(home, pipe) >= source.changes
            )

        drained = wait_for(done, self.spec.drain_seconds, 0.5)
        time.sleep(1.0)  # anything beyond (a duplicate) lands too
        return drained

    def stop(self) -> None:
        home, pipe = self.home, self.pipe
        ph.run_ggsci(home, *ph.stop_commands(pipe))
        wait_for(lambda: not any(live_pid(home, p) for p in (EXTRACT, PUMP, REPLICAT)), 30)
        ph.run_ggsci(home, "STOP MANAGER !")
        ph.kill_leftovers(home, pipe)

    def run(self) -> SoakResult:
        probes = None
        try:
            probes = self.setup()
            self.kills(probes)
            probes.workload.finish()
            source = read_source(self.home.dirdb / check_name(self.pipe.source), self.pipe.schemas)
            drained = self.drain(probes, source)
        finally:
            if probes is not None and probes.workload.is_alive():
                with contextlib.suppress(BaseException):
                    probes.workload.finish()
            self.stop()
        root = self.home.root
        trails = {
            "trail_local": check_trail(root / ph.LOCAL_TRAIL, source),
            "trail_remote": check_trail(root / ph.REMOTE_TRAIL, source),
        }
        return SoakResult(
            self.killlog, self.restarts, self.manager_group_losses, abends(self.home), source,
            trails,
            check_audit(self.home, self.pipe, source), count_table_mismatches(self.home, self.pipe),
            drained, time.monotonic() - self.started,
        )  # fmt: skip


def run_soak(home: Home, spec: SoakSpec, log: Callable[[str], None] = print) -> SoakResult:
    """The whole soak in the new home ``home`` (see the module's docstring)."""
    return Soak(home, spec, log).run()
