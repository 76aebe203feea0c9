"""A Spark session that cannot start is one line with its cause, in the Extract's output,
its report and ggserr.log, never Spark's 56–114-line traceback (issue 28): a bad setting
(``spark.cores.max=abc``), ``yarn`` without ``HADOOP_CONF_DIR``, an unreachable
``k8s://`` API server. Each runs ``ggsci extract`` in a process of its own (one JVM each:
a session cannot be built twice in one process)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.cluster.watch import Limits, LogSigns, SparkFault, seconds
from engine.embedded.database import create_database
from engine.home.layout import Home
from params.check import check_text
from tests.extract import standalone

pytestmark = [pytest.mark.spark, pytest.mark.e2e]


def run_extract(
    home: Home, prm: str, *, master: str, timeout: float = 240
) -> tuple[int, str, float]:
    (home.dirprm / "e1.prm").write_text(prm)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GGSCI_SPARK", "PYSPARK_"))}
    for k in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "KUBECONFIG"):
        env.pop(k, None)
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ggsci", "extract", "paramfile", "dirprm/e1.prm", "--home",
         str(home.root), "--master", master, "--stop-at-eof"],
        cwd=home.root, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr, time.monotonic() - t0


PRM = "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/ea\n{extra}TABLE US03.*;\n"


@pytest.mark.parametrize(
    ("master", "extra", "cause"),
    [
        ("spark://127.0.0.1:{port}", "spark.cores.max abc\n", "spark.cores.max=abc"),
        ("yarn", "", "HADOOP_CONF_DIR or YARN_CONF_DIR must be set"),
        ("k8s://https://127.0.0.1:{port}", "", "Connection refused"),
    ],
    ids=["cores-max-abc", "yarn-without-hadoop-conf", "k8s-unreachable"],
)
def test_a_session_that_cannot_start_is_one_line(
    tmp_path: Path, master: str, extra: str, cause: str
) -> None:
    home = Home(tmp_path / "home")
    home.create_subdirs()
    create_database(home.dirdb, "src")  # (the run opens while its session starts)
    master = master.format(port=standalone.free_port())
    (home.dirprm / "spark.properties").write_text(extra)
    prm = PRM.format(extra="SPARKPROPERTIES dirprm/spark.properties\n")
    rc, out, took = run_extract(home, prm, master=master)
    assert rc == 1, out
    assert "Traceback" not in out and "at org.apache" not in out, out
    errors = [ln for ln in out.splitlines() if "ERROR" in ln]
    assert len(errors) == 1 and cause in errors[0], out
    assert "The Spark session cannot start" in errors[0] or "spark.cores.max" in errors[0]
    for where in (home.dirrpt / "E1.rpt", home.ggserr_log):
        text = where.read_text()
        assert cause in text and "Traceback" not in text, where
    print(f"{master}: {took:.1f} s to the message")  # (issue 28's figures)


def test_a_bad_number_or_time_is_a_positioned_line() -> None:
    def errors(text: str) -> list[str]:
        return [e.message for e in check_text(text).errors]

    assert errors("SPARKCONF spark.cores.max=abc\n") == [
        "SPARKCONF spark.cores.max=abc: expected a whole number above 0"
    ]
    assert errors("SPARKCONF spark.dynamicAllocation.maxExecutors=0\n") == [
        "SPARKCONF spark.dynamicAllocation.maxExecutors=0: expected a whole number above 0"
    ]
    assert errors("SPARKCONF spark.ggsci.startupTimeout=soon\n") == [
        "SPARKCONF spark.ggsci.startupTimeout=soon: expected a time such as 120s, 5min or 1h"
    ]
    assert check_text("SPARKCONF spark.ggsci.progressTimeout=10min\n").ok
    assert errors("SPARKCONF spark.ggsci.executorTimeout=later\n") == [
        "SPARKCONF spark.ggsci.executorTimeout=later: expected a time such as 120s, 5min or 1h"
    ]


def test_the_executors_bound_is_the_startup_bound_unless_set() -> None:
    assert Limits.of({}).executor_s == 120
    assert Limits.of({"spark.ggsci.startupTimeout": "40s"}).executor_s == 40
    both = {"spark.ggsci.startupTimeout": "40s", "spark.ggsci.executorTimeout": "15s"}
    assert (Limits.of(both).startup_s, Limits.of(both).executor_s) == (40, 15)


def test_the_bounds_are_spark_times() -> None:
    assert seconds("k", "90") == 90 and seconds("k", "90s") == 90
    assert seconds("k", "2min") == 120 and seconds("k", "1h") == 3600
    assert seconds("k", "500ms") == 0.5
    for bad in ("abc", "0", "-5s", "5 parsecs", ""):
        with pytest.raises(SparkFault, match="expected a time"):
            seconds("spark.ggsci.startupTimeout", bad)


def test_the_driver_log_signs() -> None:
    """The lines of Spark 4's standalone scheduler and application client the watchdog
    reads (as engine/cluster/spark_log4j2.properties writes them)."""
    signs = LogSigns()
    for line in (
        "2026-11-28 11:00:00.000 INFO StandaloneSchedulerBackend: Granted executor ID "
        "app-1/0 on hostPort 127.0.0.1:4000 with 1 core(s), 1024.0 MiB RAM",
        "2026-11-28 11:00:01.000 INFO StandaloneSchedulerBackend: Executor app-1/0 removed: "
        "Command exited with code 1",
    ):
        signs.read(line, 1.0)
    assert (signs.granted, signs.removed) == (1, 1)
    assert signs.last_removal == "Command exited with code 1"
    signs.read(
        "WARN StandaloneSchedulerBackend: Disconnected from Spark cluster! Waiting for "
        "reconnection...",
        5.0,
    )
    assert signs.disconnected_at == 5.0
    signs.read("INFO StandaloneAppClient$ClientEndpoint: Master has changed, new master is at "
               "spark://127.0.0.1:7078", 6.0)  # fmt: skip
    assert signs.disconnected_at is None
    signs.read("ERROR StandaloneSchedulerBackend: Application has been killed. Reason: All "
               "masters are unresponsive! Giving up.", 7.0)  # fmt: skip
    assert "All masters are unresponsive" in signs.dead
    for line in (
        "2026-11-28 11:55:54.427 WARN StandaloneAppClient$ClientEndpoint: Failed to connect to "
        "master 127.0.0.1:45537",
        "org.apache.spark.SparkException: Exception thrown in awaitResult: ",
        "\tat org.apache.spark.util.SparkThreadUtils$.awaitResult(SparkThreadUtils.scala:53)",
        "Caused by: java.lang.RuntimeException: java.lang.IllegalStateException: Expected "
        "SaslMessage, received something else (maybe your client does not have SASL enabled?)",
        "2026-11-28 11:56:00.000 INFO StandaloneAppClient$ClientEndpoint: Connecting to master",
        "Caused by: java.io.IOException: not after a refusal",
    ):
        signs.read(line, 8.0)
    assert signs.refused.startswith("RuntimeException: java.lang.IllegalStateException: Expected")


def test_ui_and_event_log_by_parameter(tmp_path: Path) -> None:
    """SPARKCONF turns the UI on (its address in the report) and writes an event log for
    the History Server, named after the group (docs/cluster.md)."""
    from engine.embedded.database import Database
    from engine.embedded.sql import execute

    home = Home(tmp_path / "home")
    home.create_subdirs()
    with Database(create_database(home.dirdb, "src")) as db:
        s = db.session("ddl")
        execute(db, s, "CREATE TABLE us03.t (k NUMBER PRIMARY KEY)")
        execute(db, s, "INSERT INTO us03.t VALUES (1)")
        execute(db, s, "COMMIT")
    events = tmp_path / "spark-events"
    events.mkdir()
    extra = (
        "SPARKCONF spark.ui.enabled=true\n"
        f"SPARKCONF spark.ui.port={standalone.free_port()}\n"
        "SPARKCONF spark.eventLog.enabled=true\n"
        f"SPARKCONF spark.eventLog.dir=file://{events}\n"
        "SPARKCONF spark.eventLog.compress=false\n"  # (to read it here)
    )
    rc, out, _ = run_extract(home, PRM.format(extra=extra), master="local[1]")
    assert rc == 0, out
    report = (home.dirrpt / "E1.rpt").read_text()
    assert "; Spark UI http://" in report, report
    logs = [p for p in events.rglob("*") if p.is_file()]
    assert logs, list(events.rglob("*"))
    text = "".join(p.read_text(errors="replace") for p in logs)
    assert '"Event":"SparkListenerApplicationStart"' in text
    assert '"App Name":"ggsci-extract-E1"' in text


ABANDON = """
import sys, time
from pathlib import Path
from engine.cluster.spark import SparkSettings, abandon_session, get_session
s = get_session(SparkSettings(master="local[1]", log_file=Path(sys.argv[1])))
acc = s.sparkContext.accumulator(0)
s.sparkContext.parallelize(range(10), 2).foreach(lambda x: acc.add(x))
print("sum", acc.value, flush=True)
jvm = s.sparkContext._gateway.proc.pid
print("ended", abandon_session(), flush=True)
print("jvm gone", not Path(f"/proc/{jvm}").exists(), flush=True)
time.sleep(1.5)  # (the accumulator server's thread meets the closed connection meanwhile)
"""


def test_the_driver_jvm_abandoned_after_a_fault_ends_quietly(tmp_path: Path) -> None:
    """abandon_session (a cluster fault's abend, docs/cluster.md) kills the driver JVM the
    process launched, at once; the accumulator server the JVM was connected to prints no
    traceback (it did: EOFError, on the Extract's screen, under its one error line)."""
    done = subprocess.run(
        [sys.executable, "-c", ABANDON, str(tmp_path / "spark.log")],
        capture_output=True, text=True, timeout=120, check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")},
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "sum 45\nended True\njvm gone True\n" in done.stdout, out
    assert "Traceback" not in out and "EOFError" not in out, out
