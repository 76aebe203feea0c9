"""``make demo``: what ggsci does today, run the way a user runs it.

1. Checks the example parameter files (``ggsci params check``) and shows one rendered.
2. Checks a broken file and shows the positioned errors GoldenGate users get.
3. Creates an embedded source database in a fresh home (``demo-home/``), runs a workload,
   adds the Extract group, captures the redo on Spark into a trail, and shows INFO ALL,
   INFO EXTRACT and a Logdump excerpt.
4. On a second source database, runs an Extract under the Manager, leaves a transaction
   open while hours of redo time pass, and shows the OGG-01027 warning, SHOWTRANS, STOP
   refused, and SKIPTRANS.
5. Adds a data pump and a Replicat into an SQLite target with a checkpoint table, and
   heartbeat tables in the source (updated every second) and the target; runs more workload,
   waits until every target table equals its source table, and shows INFO ALL, the
   Replicat's status and lag, its row in the checkpoint table, and the end-to-end lag the
   heartbeats measure (INFO HEARTBEATTABLE, LAG ... GLOBAL with its history, and where the
   time went per process).
Each later part of the product extends this script with what it adds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.harness.pipeline_home import PipelineSpec

HERE = Path(__file__).resolve().parent
# The demo sets its home up with the test harness's pipeline home (tests/harness).
sys.path.insert(0, str(HERE.parent))
DEMO_HOME = HERE.parent / "demo-home"


def ggsci(*args: str, cwd: Path = HERE, head: int | None = None) -> int:
    cmd = [sys.executable, "-m", "ggsci", *args]
    shown = " ".join(f'"{a}"' if " " in a else a for a in args)
    print(f"\n$ ggsci {shown}", flush=True)
    env = {**os.environ, "GGHOME": str(cwd)} if cwd == DEMO_HOME else None
    if head is None:
        return subprocess.run(cmd, cwd=cwd, env=env, check=False).returncode
    out = subprocess.run(cmd, cwd=cwd, env=env, check=False, capture_output=True, text=True)
    lines = out.stdout.splitlines()
    print("\n".join(lines[:head]))
    if len(lines) > head:
        print(f"... ({len(lines) - head} more lines)")
    return out.returncode


def banner(text: str) -> None:
    print(f"\n{'=' * 78}\n{text}\n{'=' * 78}", flush=True)


def main() -> int:
    banner("1. The example parameter files are valid")
    files = sorted(str(p.relative_to(HERE)) for p in (HERE / "dirprm").glob("*.prm"))
    if ggsci("params", "check", "--quiet", *files) != 0:
        print("demo: the example files should be valid", file=sys.stderr)
        return 1
    ggsci("params", "show", "dirprm/pump1.prm")

    banner("2. A file with mistakes: every problem, with its position")
    if ggsci("params", "check", "broken/ext2.prm") != 1:
        print("demo: the broken file should fail the check", file=sys.stderr)
        return 1
    print("\n(exit status 1: the file has errors)")

    banner("3. Capture: source database, workload, Extract on Spark, trail, Logdump")
    stop_leftovers()
    shutil.rmtree(DEMO_HOME, ignore_errors=True)
    DEMO_HOME.mkdir()
    steps: list[tuple[tuple[str, ...], int | None]] = [
        (("run", "CREATE SUBDIRS"), None),
        (("db", "create", "demo"), None),
        (("db", "sql", "demo", "CREATE TABLE hr.employees (employee_id NUMBER PRIMARY KEY, "
          "name VARCHAR2(40), salary NUMBER, hired DATE)"), None),
        (("db", "sql", "demo", "INSERT INTO hr.employees VALUES (1, 'Ada', 5000, SYSDATE); "
          "INSERT INTO hr.employees VALUES (2, 'Grace', 6000, SYSDATE); COMMIT; "
          "UPDATE hr.employees SET salary = 6500 WHERE employee_id = 2; COMMIT; "
          "DELETE FROM hr.employees WHERE employee_id = 1; ROLLBACK"), None),
        (("db", "workload", "demo", "--tables", "2", "--transactions", "300",
          "--rows-per-txn", "5"), None),
    ]  # fmt: skip
    for args, head in steps:
        if ggsci(*args, cwd=DEMO_HOME, head=head) != 0:
            print(f"demo: ggsci {' '.join(args)} failed", file=sys.stderr)
            return 1
    for f in ("ext1.prm", "common.mac"):
        shutil.copy(HERE / "dirprm" / f, DEMO_HOME / "dirprm" / f)
    if ggsci("run", "ADD EXTRACT ext1, TRANLOG, EXTSEQNO 1, EXTRBA 0",
             "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1", cwd=DEMO_HOME) != 0:  # fmt: skip
        return 1
    if ggsci("extract", "paramfile", "dirprm/ext1.prm", "--stop-at-eof", cwd=DEMO_HOME) != 0:
        print("demo: the Extract failed; see demo-home/dirrpt/EXT1.rpt", file=sys.stderr)
        return 1
    ggsci("run", "INFO ALL", "INFO EXTRACT ext1", cwd=DEMO_HOME)
    ggsci("logdump", "dirdat/lt000000000", cwd=DEMO_HOME, head=45)
    if long_running_transactions() != 0:
        return 1
    if pipeline() != 0:
        return 1
    return 0


def stop_leftovers() -> None:
    """Processes of an earlier, interrupted demo still running in demo-home are killed, so
    that they cannot write into the new one."""
    dirpcs = DEMO_HOME / "dirpcs"
    if not dirpcs.is_dir():
        return
    from engine.home.layout import Home
    from engine.home.status import State, effective_state, read_process_file

    home = Home(DEMO_HOME)
    for f in dirpcs.glob("*.p*"):
        kind = {".pce": "EXTRACT", ".pcr": "REPLICAT", ".pcm": "MANAGER"}.get(f.suffix)
        if kind is None:
            continue
        pf = read_process_file(home, kind, f.stem)
        if pf is not None and effective_state(pf) in (State.RUNNING, State.STARTING):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pf.pid, signal.SIGKILL)


def captured(*args: str) -> str:
    env = {**os.environ, "GGHOME": str(DEMO_HOME)}
    cmd = [sys.executable, "-m", "ggsci", *args]
    out = subprocess.run(cmd, cwd=DEMO_HOME, env=env, check=False, capture_output=True, text=True)
    return out.stdout + out.stderr


LONGTX_PRM = """\
-- Extract for the long-running-transaction part of the demo (source database "longtx").
EXTRACT extlt
SOURCEDB longtx
EXTTRAIL ./dirdat/lx
WARNLONGTRANS 2H, CHECKINTERVAL 10M
TABLE hr.*;
TABLE wl.*;
"""


def long_running_transactions() -> int:
    """An Extract as a process under the Manager; a transaction left open while hours of
    redo time pass (the source's simulated clock); the warning, SHOWTRANS, SKIPTRANS.

    It runs on a source database of its own ("longtx"): its simulated clock ends up hours
    ahead of this machine's, and the pipeline of section 5, whose heartbeats are stamped with
    the source's time, should measure real latencies rather than that lead."""
    banner("4. Long-running transactions: WARNLONGTRANS, SHOWTRANS, SKIPTRANS")
    (DEMO_HOME / "dirprm" / "mgr.prm").write_text("PORT 0\n")
    (DEMO_HOME / "dirprm" / "extlt.prm").write_text(LONGTX_PRM)
    steps = [
        ("db", "create", "longtx"),
        ("db", "sql", "longtx", "CREATE TABLE hr.employees (employee_id NUMBER PRIMARY KEY, "
         "name VARCHAR2(40), salary NUMBER, hired DATE)"),
        ("run", "ADD EXTRACT extlt, TRANLOG, EXTSEQNO 1, EXTRBA 0",
         "ADD EXTTRAIL ./dirdat/lx, EXTRACT extlt", "START MANAGER", "START EXTRACT extlt"),
        ("db", "sql", "longtx", "--session", "longone",
         "INSERT INTO hr.employees VALUES (3, 'Linus', 4000, SYSDATE)"),
    ]  # fmt: skip
    for args in steps:
        if ggsci(*args, cwd=DEMO_HOME) != 0:
            print(f"demo: ggsci {' '.join(args)} failed", file=sys.stderr)
            return 1
    print("\n(the session 'longone' does not commit; three hours of redo time now pass)")
    ggsci("db", "workload", "longtx", "--tables", "2", "--transactions", "300", "--tps", "100",
          "--clock-rate", "3600", "--rows-per-txn", "2", cwd=DEMO_HOME)  # fmt: skip
    deadline = time.monotonic() + 90
    shown = ""
    while time.monotonic() < deadline:
        shown = captured("run", "SEND EXTRACT extlt, SHOWTRANS")
        log = (DEMO_HOME / "ggserr.log").read_text()
        if "XID:" in shown and "OGG-01027" in log:
            break
        time.sleep(1)
    print("\n$ grep OGG-01027 ggserr.log")
    print("\n".join(ln for ln in log.splitlines() if "OGG-01027" in ln))
    print('\n$ ggsci run "SEND EXTRACT extlt, SHOWTRANS"')
    print(shown)
    xid = next((ln.split()[1] for ln in shown.splitlines() if ln.startswith("XID:")), None)
    if xid is None:
        print("demo: the open transaction did not show up", file=sys.stderr)
        ggsci("run", "SEND EXTRACT extlt, FORCESTOP", "STOP MANAGER !", cwd=DEMO_HOME)
        return 1
    ggsci("run", "STOP EXTRACT extlt", cwd=DEMO_HOME)
    ggsci("run", f"SEND EXTRACT extlt, SKIPTRANS {xid} FORCE", "SEND EXTRACT extlt, SHOWTRANS",
          "STOP EXTRACT extlt", "STOP MANAGER !", "INFO ALL", cwd=DEMO_HOME)  # fmt: skip
    return 0


def _pipeline_spec() -> PipelineSpec:
    """EXT1 (section 3's, examples/dirprm/ext1.prm) ==> PMP1 ==> REP1 into target.db, with
    the HR table and the workload's; heartbeats every second."""
    from tests.harness import pipeline_home as ph

    columns = (("EMPLOYEE_ID", "NUMERIC PRIMARY KEY"), ("NAME", "VARCHAR(40)"),
               ("SALARY", "NUMERIC"), ("HIRED", "DATE"))  # fmt: skip
    employees = ph.TargetTable("HR", "EMPLOYEES", columns)
    return ph.PipelineSpec(
        "./target.db",
        (employees, *ph.workload_tables(2)),
        source="demo",
        pump=ph.Group("pmp1", checkpoint_secs=None),
        discard_file="./dirrpt/rep1.dsc",
        heartbeat_frequency=1,
    )


def _compare(spec: PipelineSpec) -> list[tuple[str, int, int, bool]]:
    from engine.home.layout import Home
    from tests.harness import pipeline_home as ph

    home, out = Home(DEMO_HOME), []
    for table in spec.tables:
        a, b = ph.source_rows(home, spec, table), ph.target_rows(home, spec, table)
        out.append((table.source.replace("$", "."), len(a), len(b), a == b))
    return out


def pipeline() -> int:
    """Extract ==> pump ==> Replicat on embedded defaults: the pump copies ./dirdat/lt to the
    "remote" trail ./dirrmt/rt, Replicat applies it to the SQLite file target.db and records
    its progress in the checkpoint table in the same transactions."""
    import sqlite3

    from engine.home.layout import Home
    from tests.harness import pipeline_home as ph

    banner("5. Extract ==> pump ==> Replicat into an SQLite target")
    spec, home = _pipeline_spec(), Home(DEMO_HOME)
    files = ph.prm_files(spec)
    del files[f"{spec.extract.name}.prm"]  # section 3 copied the example's
    ph.write_prm_files(home, files)
    ph.create_target(home, spec)
    ggsci("run", *ph.target_commands(spec), *ph.delivery_commands(spec), "START MANAGER",
          *ph.start_commands(spec), cwd=DEMO_HOME)  # fmt: skip
    ggsci("db", "workload", "demo", "--tables", "2", "--transactions", "300",
          "--rows-per-txn", "5", "--seed", "7", cwd=DEMO_HOME)  # fmt: skip
    deadline = time.monotonic() + 90
    result = _compare(spec)
    while time.monotonic() < deadline and not all(same for *_, same in result):
        time.sleep(1)
        result = _compare(spec)
    print(f"\n{'table':<16}{'source rows':>12}{'target rows':>12}  equal")
    for name, a, b, same in result:
        print(f"{name:<16}{a:>12}{b:>12}  {'yes' if same else 'NO'}")
    ggsci("run", "INFO ALL", "SEND REPLICAT rep1, STATUS", "LAG REPLICAT rep1", "LAG EXTRACT pmp1",
          cwd=DEMO_HOME)  # fmt: skip
    conn = sqlite3.connect(DEMO_HOME / "target.db")
    row = conn.execute(
        "SELECT group_name, seqno, rba, log_csn, log_cmplt_csn, log_cmplt_xids FROM chkpt"
    ).fetchone()
    conn.close()
    print("\n$ sqlite3 target.db 'SELECT group_name, seqno, rba, log_csn, log_cmplt_csn, "
          "log_cmplt_xids FROM chkpt'")  # fmt: skip
    print(row)
    heartbeat_lag()
    ggsci("run", "STOP REPLICAT rep1", "STOP EXTRACT pmp1", "SEND EXTRACT ext1, FORCESTOP",
          cwd=DEMO_HOME)  # fmt: skip
    time.sleep(1)
    ggsci("run", "STOP MANAGER !", cwd=DEMO_HOME)
    if not all(same for *_, same in result):
        print("demo: the target did not catch up with the source", file=sys.stderr)
        return 1
    return 0


def _history(columns: str) -> list[tuple[object, ...]]:
    import sqlite3

    conn = sqlite3.connect(f"file:{DEMO_HOME / 'target.db'}?mode=ro", uri=True)
    try:
        return conn.execute(
            f"SELECT {columns} FROM gg_lag_history ORDER BY HEARTBEAT_RECEIVED_TS"
        ).fetchall()
    finally:
        conn.close()


def heartbeat_lag() -> None:
    """The heartbeats the source's update job wrote every second, as they reached the target:
    GGSCI's LAG ... GLOBAL and the per-process split of the latest one (GG_LAG_HISTORY)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(_history("1")) < 3:
        time.sleep(1)
    ggsci("run", "DBLOGIN SOURCEDB ./target.db", "INFO HEARTBEATTABLE",
          "LAG REPLICAT rep1, GLOBAL", "LAG EXTRACT ext1, GLOBAL, HISTORY",
          cwd=DEMO_HOME)  # fmt: skip
    rows = _history(
        "INCOMING_PATH, INCOMING_LAG, INCOMING_EXTRACT_LAG, INCOMING_ROUTING_LAG, "
        "INCOMING_REPLICAT_READ_LAG, INCOMING_REPLICAT_LAG"
    )
    if rows:
        path, total, *parts = rows[-1]
        print(f"\nThe latest heartbeat ({len(rows)} received), {path}, second by second:")
        for name, value in zip(("extract", "pump", "replicat read", "replicat apply"), parts,
                               strict=True):  # fmt: skip
            print(f"  {name:<15}{float(value or 0):>12.3f} s")
        print(f"  {'total':<15}{float(total or 0):>12.3f} s")


if __name__ == "__main__":
    sys.exit(main())
