"""An end-to-end pipeline in a real home: embedded source + workload, Extract, pump and
Replicat as real group processes under a real Manager, driven through ``ggsci run``."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from engine.embedded.database import Database
from engine.embedded.workload import WorkloadSpec, run_workload
from engine.home.layout import Home
from engine.home.status import State, read_process_file
from tests.harness import pipeline_home as ph
from tests.harness.soak.audit import check_audit, table_mismatches
from tests.harness.soak.expected import read_source
from tests.harness.soak.trailcheck import check_trail

TABLES = ph.workload_tables(2)
TIMEOUT = 120.0


def pipeline(target: str, *, heartbeat: bool = False) -> ph.PipelineSpec:
    """EXT1 ==> PMP1 ==> REP1 into ``target`` (an SQLite file in the home, or a URL)."""
    return ph.PipelineSpec(
        target, TABLES, grouptransops=200, heartbeat_frequency=1 if heartbeat else None
    )


def ggsci(home: Home, *commands: str) -> str:
    return ph.run_ggsci(home, *commands, timeout=90)


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def new_home(tmp_path: Path, spec: ph.PipelineSpec) -> Home:
    home = Home(tmp_path / "home")
    ph.prepare_home(home, spec)
    return home


def in_sync(home: Home, spec: ph.PipelineSpec) -> bool:
    return all(ph.source_rows(home, spec, t) == ph.target_rows(home, spec, t) for t in spec.tables)


def workload(home: Home, seed: int, transactions: int) -> None:
    spec = WorkloadSpec(
        tables=len(TABLES),
        transactions=transactions,
        rows_per_txn=6,
        sessions=4,
        seed=seed,
        initial_rows=60,
        rollback_ratio=0.1,
    )
    with Database(home.dirdb / "SRC") as db:
        run_workload(db, spec)


def add_and_start(home: Home, spec: ph.PipelineSpec) -> str:
    return ggsci(home, *ph.add_and_start_commands(spec))


def kill9(home: Home, kind: str, name: str) -> None:
    pf = read_process_file(home, kind, name)
    assert pf is not None and pf.state == State.RUNNING, (kind, name, pf)
    os.kill(pf.pid, signal.SIGKILL)
    wait_until(lambda: not _alive(pf.pid), f"{name} to die")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child of the Manager is a zombie until reaped.
    with contextlib.suppress(OSError):
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        return state != "Z"
    return False


def running(home: Home, kind: str, name: str) -> bool:
    pf = read_process_file(home, kind, name)
    return pf is not None and pf.state == State.RUNNING


def shutdown(home: Home, spec: ph.PipelineSpec) -> None:
    ggsci(home, *ph.stop_commands(spec))
    with contextlib.suppress(AssertionError):
        wait_until(
            lambda: not any(running(home, k, n) for k, n in spec.groups), "groups to stop", 20
        )
    ggsci(home, "STOP MANAGER !")
    ph.kill_leftovers(home, spec)


def exactly_once(home: Home, spec: ph.PipelineSpec, *, trails: bool = True) -> list[str]:
    """The soak's checks (engine/soak) once the target equals the source: the apply audit
    (installed with :func:`tests.harness.soak.audit.install_audit` before the start) and, unless
    ``trails`` is False (heartbeat records are in the trails too), both trails against the
    source's committed transactions. The ``name=value`` lines of what failed."""
    source = read_source(home.dirdb / "SRC", spec.schemas)
    verdicts = [("audit", check_audit(home, spec, source))]
    bad = [line for n, v in verdicts if v.mismatches for line in v.lines(n)]
    if trails:
        for name, trail in (("local", ph.LOCAL_TRAIL), ("remote", ph.REMOTE_TRAIL)):
            verdict = check_trail(home.root / trail, source)
            bad += [] if verdict.ok else verdict.lines(name)
    rows = table_mismatches(home, spec)
    return bad + ([f"mismatched_rows={rows}"] if rows else [])


def report(home: Home, name: str) -> str:
    path = home.dirrpt / f"{name}.rpt"
    return path.read_text() if path.exists() else "(no report)"
