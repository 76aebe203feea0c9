"""``make demo``: what ggsci does today, run the way a user runs it.

1. Checks the example parameter files (``ggsci params check``) and shows one rendered.
2. Checks a broken file and shows the positioned errors GoldenGate users get.
3. Creates an embedded source database in a fresh home (``demo-home/``), runs a workload,
   adds the Extract group, captures the redo on Spark into a trail, and shows INFO ALL,
   INFO EXTRACT and a Logdump excerpt.
4. Runs the Extract under the Manager, leaves a transaction open while hours of redo time
   pass, and shows the OGG-01027 warning, SHOWTRANS, STOP refused, and SKIPTRANS.
Each later part of the product extends this script with what it adds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
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
    return 0


def captured(*args: str) -> str:
    env = {**os.environ, "GGHOME": str(DEMO_HOME)}
    cmd = [sys.executable, "-m", "ggsci", *args]
    out = subprocess.run(cmd, cwd=DEMO_HOME, env=env, check=False, capture_output=True, text=True)
    return out.stdout + out.stderr


def long_running_transactions() -> int:
    """The Extract as a process under the Manager; a transaction left open while hours of
    redo time pass (the source's simulated clock); the warning, SHOWTRANS, SKIPTRANS."""
    banner("4. Long-running transactions: WARNLONGTRANS, SHOWTRANS, SKIPTRANS")
    (DEMO_HOME / "dirprm" / "mgr.prm").write_text("PORT 0\n")
    ggsci("run", "START MANAGER", "START EXTRACT ext1", cwd=DEMO_HOME)
    ggsci("db", "sql", "demo", "--session", "longone",
          "INSERT INTO hr.employees VALUES (3, 'Linus', 4000, SYSDATE)", cwd=DEMO_HOME)  # fmt: skip
    print("\n(the session 'longone' does not commit; three hours of redo time now pass)")
    ggsci("db", "workload", "demo", "--tables", "2", "--transactions", "300", "--tps", "100",
          "--clock-rate", "3600", "--rows-per-txn", "2", cwd=DEMO_HOME)  # fmt: skip
    deadline = time.monotonic() + 90
    shown = ""
    while time.monotonic() < deadline:
        shown = captured("run", "SEND EXTRACT ext1, SHOWTRANS")
        log = (DEMO_HOME / "ggserr.log").read_text()
        if "XID:" in shown and "OGG-01027" in log:
            break
        time.sleep(1)
    print("\n$ grep OGG-01027 ggserr.log")
    print("\n".join(ln for ln in log.splitlines() if "OGG-01027" in ln))
    print('\n$ ggsci run "SEND EXTRACT ext1, SHOWTRANS"')
    print(shown)
    xid = next((ln.split()[1] for ln in shown.splitlines() if ln.startswith("XID:")), None)
    if xid is None:
        print("demo: the open transaction did not show up", file=sys.stderr)
        ggsci("run", "STOP EXTRACT ext1", "STOP MANAGER !", cwd=DEMO_HOME)
        return 1
    ggsci("run", "STOP EXTRACT ext1", cwd=DEMO_HOME)
    ggsci("run", f"SEND EXTRACT ext1, SKIPTRANS {xid} FORCE", "SEND EXTRACT ext1, SHOWTRANS",
          "STOP EXTRACT ext1", "STOP MANAGER !", "INFO ALL", cwd=DEMO_HOME)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
