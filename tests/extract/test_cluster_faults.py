"""The Extract on a standalone cluster never hangs (issue 28): each fault becomes one OGG
message within a bounded time, the Extract abends (the Manager's AUTORESTART acts on an
ABENDED group) and meanwhile STATUS says what it waits for.

One one-core worker (tests/extract/standalone.py) for the module; the faults:

- the cluster held by another application (0 cores free): the group, started by the
  Manager, says in STATUS that no executor was granted and abends at its executors' bound
  (``spark.ggsci.executorTimeout``, set apart from the session's own start-up bound);
  the Manager's AUTORESTART starts it again (and it abends again: the cluster is still
  held);
- a wrong ``spark.driver.host`` (executors cannot call back): one line at once;
- the master killed and restarted under a live Extract (no recovery: the new master does
  not know the application): one line at the master bound.

Each test prints the time from the fault to the message (issue 28's figures).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.home.layout import Home
from engine.home.status import State, read_process_file
from tests.extract import standalone
from tests.extract.test_cluster import _app

pytestmark = [pytest.mark.spark, pytest.mark.e2e]


@pytest.fixture(scope="module")
def cluster() -> Iterator[standalone.Cluster]:
    c = standalone.start_or_fail(1)
    yield c
    c.stop()


def source(tmp_path: Path, rows: int = 20) -> Home:
    """A home with a source database ``src`` of ``rows`` committed inserts into HR.EMP."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root = create_database(home.dirdb, "src")
    with Database(root) as db:
        s = db.session("ddl")
        execute(db, s, "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20))")
        for i in range(rows):
            execute(db, s, f"INSERT INTO hr.emp VALUES ({i}, 'n{i}')")
            execute(db, s, "COMMIT")
    return home


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("GGSCI_", "PYSPARK_"))}
    return out | {"PYSPARK_PYTHON": sys.executable}


def ggsci(home: Home, *commands: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ggsci", "run", *commands],
        env=env() | {"GGHOME": str(home.root)}, cwd=home.root, capture_output=True, text=True,
        timeout=90, check=False,
    )  # fmt: skip
    return done.stdout + done.stderr


def extract(
    home: Home, extra: str, *, stop_at_eof: bool = False, out: Path | None = None
) -> subprocess.Popen[str]:
    """``ggsci extract`` in the foreground (live, or to the end of the redo), its output
    piped (or written to ``out``: the Spark driver JVM it starts, which may outlive it,
    then holds no pipe to wait for)."""
    (home.dirprm / "e1.prm").write_text(
        f"EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/ea\n{extra}TABLE HR.*;\n"
    )
    with contextlib.ExitStack() as files:
        sink = files.enter_context(out.open("w")) if out is not None else subprocess.PIPE
        return subprocess.Popen(
            [sys.executable, "-m", "ggsci", "extract", "paramfile", "dirprm/e1.prm",
             "--home", str(home.root), *(["--stop-at-eof"] if stop_at_eof else [])],
            cwd=home.root, env=env(), stdout=sink, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip


def finish(proc: subprocess.Popen[str], timeout: float) -> str:
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise AssertionError(f"the Extract still runs after {timeout} s:\n{out}") from None
    return out


def one_error(out: str, *needles: str) -> str:
    assert "Traceback" not in out, out
    errors = [ln for ln in out.splitlines() if " ERROR " in ln]
    assert len(errors) == 1 and all(n in errors[0] for n in needles), out
    return errors[0]


def test_a_cluster_held_by_another_application(cluster: standalone.Cluster, tmp_path: Path) -> None:
    hog_py = tmp_path / "hog.py"
    hog_py.write_text(
        "import time\nfrom pyspark import SparkContext\n"
        "sc = SparkContext(appName='hog')\nsc.parallelize([1], 1).count()\n"
        "print('holding', flush=True)\ntime.sleep(600)\n"
    )
    hog = subprocess.Popen(
        [str(standalone.SPARK_SUBMIT), "--master", cluster.url, "--conf", "spark.cores.max=1",
         str(hog_py)],
        env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    home = source(tmp_path)
    try:
        deadline = time.monotonic() + 120
        while (app := _app(cluster, "hog")) is None or int(str(app["cores"])) < 1:
            assert time.monotonic() < deadline and hog.poll() is None, "the hog never ran"
            time.sleep(0.5)
        (home.dirprm / "mgr.prm").write_text("PORT 0\n")
        home.globals_file.write_text(
            f"SPARKMASTER {cluster.url}\nSPARKCONF spark.ggsci.startupTimeout=60s\n"
            "SPARKCONF spark.ggsci.executorTimeout=8s\n"
        )
        (home.dirprm / "e1.prm").write_text(
            "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/ea\nTABLE HR.*;\n"
        )
        out = ggsci(
            home, "START MANAGER", "ADD EXTRACT e1, TRANLOG, EXTSEQNO 1, EXTRBA 0",
            "ADD EXTTRAIL ./dirdat/ea, EXTRACT e1", "START EXTRACT e1",
        )  # fmt: skip
        assert "EXTRACT E1 starting" in out, out
        t0 = time.monotonic()
        said = ""
        while time.monotonic() - t0 < 90 and "none granted" not in said:
            said = ggsci(home, "SEND EXTRACT e1, STATUS")
            time.sleep(0.5)
        assert "  Spark: no executor registered from" in said, said  # (capturing meanwhile)
        assert "none granted" in said and " of 8 s)" in said, said

        def abends() -> list[str]:
            return [
                ln for ln in home.ggserr_log.read_text().splitlines()
                if "OGG-01668" in ln and "did not start within 8 s" in ln
            ]  # fmt: skip

        while time.monotonic() - t0 < 180 and not abends():
            time.sleep(0.5)
        took = time.monotonic() - t0
        one_error(
            "\n".join(abends()), "did not start within 8 s", "none granted",
            "(bound: spark.ggsci.executorTimeout)",
        )  # fmt: skip
        # an abend, as the Manager's AUTORESTART sees one (tests/shell/test_processes.py
        # has AUTORESTART acting on an abended Extract until its retries are exhausted)
        pf = read_process_file(home, "EXTRACT", "E1")
        deadline = time.monotonic() + 30
        while (pf is None or pf.state != State.ABENDED) and time.monotonic() < deadline:
            time.sleep(0.5)
            pf = read_process_file(home, "EXTRACT", "E1")
        assert pf is not None and pf.state == State.ABENDED, pf
        assert "Traceback" not in (home.dirrpt / "E1.rpt").read_text()
        print(f"0 cores: {took:.1f} s from START to the abend (bound 8 s after the session is up)")
    finally:
        ggsci(home, "STOP MANAGER !")
        os.killpg(hog.pid, signal.SIGTERM)
        hog.wait(30)


def test_a_wrong_driver_host(cluster: standalone.Cluster, tmp_path: Path) -> None:
    home = source(tmp_path)
    t0 = time.monotonic()
    proc = extract(
        home,
        f"SPARKMASTER {cluster.url}\nSPARKCONF spark.driver.bindAddress=127.0.0.1\n"
        "SPARKCONF spark.driver.host=127.0.0.2\n",
    )
    out = finish(proc, 120)
    took = time.monotonic() - t0
    assert proc.returncode == 1, out
    one_error(out, "cannot call the driver back at 127.0.0.2:", "spark.driver.host")
    print(f"wrong spark.driver.host: {took:.1f} s from the start to the message")


def descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (from /proc), deepest last."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def executor_pids(cluster: standalone.Cluster, worker: int | None = 0) -> list[int]:
    """The executor processes of worker ``worker`` (None: of every worker)."""
    out = []
    workers = cluster.worker_pids() if worker is None else [cluster.worker_pids()[worker]]
    for pid in (p for w in workers for p in descendants(w)):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"CoarseGrainedExecutorBackend" in cmdline:
            out.append(pid)
    return out


def group(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (a zombie counts as gone)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def active_apps(cluster: standalone.Cluster) -> list[object]:
    with urllib.request.urlopen(f"{cluster.ui}/json/", timeout=5) as r:
        return list(json.load(r).get("activeapps", []))


def idle(cluster: standalone.Cluster, within: float = 60) -> None:
    """Wait until the cluster runs no application and no executor (an earlier test's are
    gone: the executor this test freezes is its own Extract's)."""
    deadline = time.monotonic() + within
    while executor_pids(cluster, None) or _app(cluster, "hog") is not None:
        assert time.monotonic() < deadline, "the cluster is still busy with an earlier test"
        time.sleep(0.5)


def test_tasks_that_never_finish(cluster: standalone.Cluster, tmp_path: Path) -> None:
    """An executor frozen (SIGSTOP) while the Extract has work for it: no task finishes,
    and the Extract abends at its progress bound instead of waiting for ever."""
    idle(cluster)
    home = source(tmp_path)
    output = tmp_path / "extract.out"
    proc = extract(
        home,
        f"SPARKMASTER {cluster.url}\nSPARKCONF spark.ggsci.progressTimeout=10s\n"
        "SPARKCONF spark.dynamicAllocation.minExecutors=1\n",
        out=output,
    )
    frozen: list[int] = []
    try:
        deadline = time.monotonic() + 180
        while not any(p.stat().st_size > 2000 for p in home.dirdat.glob("ea*")):
            assert proc.poll() is None, output.read_text()
            assert time.monotonic() < deadline, "the Extract wrote nothing"
            time.sleep(0.5)
        frozen = executor_pids(cluster)
        assert frozen, "no executor process found"
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
        root = next(p for p in home.dirdb.iterdir() if (p / "data.sqlite").exists())
        with Database(root) as db:  # work for the frozen executor
            s = db.session("more")
            for i in range(1000, 1020):
                execute(db, s, f"INSERT INTO hr.emp VALUES ({i}, 'n{i}')")
                execute(db, s, "COMMIT")
        t0, wall0 = time.monotonic(), datetime.now()
        try:
            proc.wait(240)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the Extract still runs:\n{output.read_text()}") from None
        took = time.monotonic() - t0
        # the driver JVM it launched is ended with it (left alone, its shutdown hook waits
        # about 100 s on the frozen executor), and the master frees the application's cores
        deadline = time.monotonic() + 15
        while group(proc.pid) or active_apps(cluster):
            assert time.monotonic() < deadline, (group(proc.pid), active_apps(cluster))
            time.sleep(0.5)
        gone = time.monotonic() - t0
    finally:
        for pid in frozen:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)
        with contextlib.suppress(OSError):  # anything left of the Extract's process group
            os.killpg(proc.pid, signal.SIGKILL)
    out = output.read_text()
    assert proc.returncode == 1, out
    line = one_error(out, "No Spark task finished for 10 s", "spark.ggsci.progressTimeout")
    (warned,) = [ln for ln in out.splitlines() if "OGG-25370" in ln]  # (an open cluster)
    assert " WARNING " in warned and f"master {cluster.url} is on the network" in warned, out
    said = (datetime.strptime(line[:19], "%Y-%m-%d %H:%M:%S") - wall0).total_seconds()
    print(
        f"frozen executor: {said:.0f} s from the work to the message (bound 10 s), "
        f"{took:.1f} s to the process's end, {gone:.1f} s to its driver JVM's and the "
        "application's"
    )


def test_the_master_restarted_under_a_live_extract(
    cluster: standalone.Cluster, tmp_path: Path
) -> None:
    """Runs last in this module: its master is a new one afterwards."""
    home = source(tmp_path)
    proc = extract(
        home,
        f"SPARKMASTER {cluster.url}\nSPARKCONF spark.ggsci.masterTimeout=8s\n",
    )
    try:
        deadline = time.monotonic() + 180
        while not any(p.stat().st_size > 2000 for p in home.dirdat.glob("ea*")):
            assert proc.poll() is None, finish(proc, 5)
            assert time.monotonic() < deadline, "the Extract wrote nothing"
            time.sleep(0.5)
        t0 = time.monotonic()
        cluster.restart_master()
        out = finish(proc, 120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    took = time.monotonic() - t0
    assert proc.returncode == 1, out
    one_error(out, f"The connection to the Spark master {cluster.url} was lost")
    assert "spark.ggsci.masterTimeout" in out
    print(f"master restarted: {took:.1f} s from the kill to the message (bound 8 s)")
