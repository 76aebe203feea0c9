"""The Extract on a real Spark cluster, on one machine: a standalone master and two one-core
workers, each worker in its own mount namespace where the driver's home, this test session's
temporary directory and ggsci's source directories are hidden (tmpfs over each). The
executors reach the redo only through the shared store (the database's archive destination)
and ggsci only through the archive the application ships. The source has two redo threads
(a RAC database, both threads busy): the Extract merges them on the cluster. It is launched
by ``spark-submit --master``; its trail must hold the same transactions as a ``local`` run's,
in the same order, and equal it byte for byte after the file header. docs/cluster.md.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from engine.cluster.ship import PACKAGES, UNPACKED, package_dir
from engine.embedded.archiver import set_archive_dest
from engine.embedded.bulk import BulkSession
from engine.embedded.database import Database, create_database
from engine.embedded.dictionary import ColumnDef
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from engine.redo.attached import attach
from engine.trail.layout import SECTION
from params.check import check_text
from tests.extract import standalone
from tests.harness.attached import oracle_dictionary
from tests.harness.livecheck import side_commits, trail_content
from tests.shell.conftest import Shell

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.e2e]

COLUMNS = [
    ColumnDef("K", "NUMBER", nullable=False),
    ColumnDef("NAME", "VARCHAR2", 30),
    ColumnDef("FEE", "NUMBER"),
]
DDL = "CREATE TABLE us03.t (k NUMBER PRIMARY KEY, name VARCHAR2(30), fee NUMBER)"
TXNS, ROWS, SESSIONS = 120, 100, 4


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[standalone.Cluster]:
    """Master and two one-core workers that see neither the test's files nor ggsci's code."""
    hidden = [tmp_path_factory.getbasetemp(), *(package_dir(p) for p in PACKAGES)]
    c = standalone.start_or_fail(2, hide=hidden)
    yield c
    c.stop()


def submit_script() -> str:
    """The script spark-submit runs, by the command docs/cluster.md gives for it."""
    doc = (Path(__file__).parents[2] / "docs" / "cluster.md").read_text()
    code = re.search(r"python -c '(import ggsci[^']*)'", doc)
    assert code, "docs/cluster.md gives no command for the spark-submit script"
    out = subprocess.run(
        [sys.executable, "-c", code.group(1)], capture_output=True, text=True, timeout=60,
        check=True,
    )  # fmt: skip
    script = out.stdout.strip()
    assert script.endswith("__main__.py") and Path(script).is_file(), out
    return script


@pytest.fixture
def store() -> Iterator[Path]:
    """The shared store: a directory every worker sees (outside the hidden ones)."""
    path = Path(tempfile.mkdtemp(prefix="ggsci-store-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def backlog(home: Home, store: Path) -> Path:
    """TXNS transactions of ROWS row changes, SESSIONS open at once (their changes
    interleave), on two redo threads (sessions alternate between them), in 1 MB logs
    archived to ``store``; the last logs switched out too."""
    root = create_database(home.dirdb, "src", threads=2, log_bytes=1 << 20)
    set_archive_dest(root, str(store))
    with Database(root) as db:
        setup = db.session("SETUP", username="US03")
        table = db.create_table(setup, "US03", "T", COLUMNS, DDL, key=("K",))
        setup.commit(db)
        sessions = [
            BulkSession(db, db.session(f"S{i}", username="US03", thread=i % 2 + 1))
            for i in range(SESSIONS)
        ]
        for first in range(0, TXNS, SESSIONS):
            for r in range(ROWS):
                for g, s in enumerate(sessions):
                    k = (first + g) * ROWS + r
                    if first < TXNS // 2:
                        s.insert(table, (k, f"name {k}", k % 97))
                    else:  # update the rows of the first half
                        s.update(table, k - TXNS // 2 * ROWS, (2,), (k,))
            for s in sessions:
                s.commit()
        db.checkpoint()
        db.switch_log()
    return root


def trail_body(home: Home, prefix: str) -> bytes:
    """A trail's records after each file's header record."""
    out = b""
    for path in sorted(home.dirdat.glob(f"{prefix}[0-9]*")):
        data = path.read_bytes()
        out += data[SECTION.unpack_from(data)[2] :]
    return out


def test_extract_on_a_two_worker_cluster_equals_local_and_idles_free(
    cluster: standalone.Cluster, spark: SparkSession, store: Path, tmp_path: Path
) -> None:
    """Launched by spark-submit with its --master, live (one driver start for the whole
    test, to keep it short): the trail equals the local one once caught up, and once idle
    the Extract holds no executor (dynamic allocation: another application can have the
    cores)."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    backlog(home, store)
    archived = sorted(p.name for p in store.glob("*.dbf"))  # %t_%s_%r.dbf
    # several logs of each thread, so several tasks on both workers
    assert all(sum(a.startswith(f"{t}_") for a in archived) >= 3 for t in (1, 2)), archived

    # the reference: local[2] in this process, the same split size
    ref = check_text("EXTRACT ref\nSOURCEDB src\nEXTTRAIL ./dirdat/ra\nTABLE US03.*;\n").model
    run = ExtractRun(home, ref, None, lambda *_: None, spark=spark, durable=True)
    run.capture.split_bytes = 1 << 20
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    assert run.capture.stats.trail_records == TXNS * ROWS
    expected = trail_body(home, "ra")
    transactions = trail_content(home, "ra")[0]
    assert len(transactions) == len(set(transactions)) == TXNS

    (home.dirprm / "clu.prm").write_text(
        "EXTRACT clu\nSOURCEDB src\nEXTTRAIL ./dirdat/ca\nTABLE US03.*;\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GGSCI_", "PYSPARK_"))}
    env |= {"GGSCI_EXTRACT_SPLIT_MB": "1"}
    # the executors' Python has pyspark and pyarrow only (docs/cluster.md); no --name:
    # the application is named after the group
    bare = standalone.bare_python(cluster.root / "bare-python")
    log = tmp_path / "spark-submit.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(standalone.SPARK_SUBMIT), "--master", cluster.url,
             "--conf", f"spark.pyspark.python={bare}",
             "--conf", f"spark.pyspark.driver.python={sys.executable}",
             "--conf", "spark.cores.max=2",
             "--conf", "spark.dynamicAllocation.executorIdleTimeout=2s",
             submit_script(),
             "extract", "paramfile", "dirprm/clu.prm", "--home", str(home.root)],
            cwd=home.root, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    try:
        granted: list[int] = []
        caught_up = False
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            app = _app(cluster, "ggsci-extract-CLU")
            if app is not None:
                granted.append(int(str(app["cores"])))
            caught_up = caught_up or trail_body(home, "ca") == expected
            if caught_up and granted and max(granted) > 0 and granted[-1] == 0:
                break
            time.sleep(0.5)
        report = home.dirrpt / "CLU.rpt"
        why = f"{log.read_text(errors='replace')[-4000:]}\n{cluster.logs()}"
        assert proc.poll() is None, f"the Extract stopped\n{why}"
        assert caught_up, f"the cluster's trail differs from the local one\n{why}"
        assert granted and max(granted) > 0, f"never had an executor: {granted}\n{why}"
        assert granted[-1] == 0, f"still holds {granted[-1]} core(s) while idle"
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    # the executors ran the shipped code, on both workers
    line = next(ln for ln in report.read_text().splitlines() if ln.startswith("Spark master"))
    assert line.startswith(f"Spark master {cluster.url} (application ggsci-extract-CLU, app-")
    assert ", 2 task slot(s), 16 split(s) a batch;" in line
    origins = line.split("the tasks run ggsci from ", 1)[1].split("; ")
    assert origins and all(re.search(f"/{UNPACKED}/engine on ", o) for o in origins), origins
    for w in ("worker0", "worker1"):
        assert list((cluster.root / w).glob("app-*/*/stderr")), f"{w} ran no executor"
    assert trail_content(home, "ca")[0] == transactions  # transaction for transaction
    assert trail_body(home, "ca") == expected != b""


def _app(cluster: standalone.Cluster, name: str) -> dict[str, object] | None:
    with urllib.request.urlopen(f"{cluster.ui}/json/", timeout=5) as r:
        state = json.load(r)
    apps = [a for a in state.get("activeapps", []) if a.get("name") == name]
    return apps[0] if apps else None


def test_an_attached_databases_extract_on_the_cluster_equals_the_embedded_one(
    cluster: standalone.Cluster, store: Path, tmp_path: Path
) -> None:
    """The same backlog's archived logs attached as a real database's (``db attach``: the
    store, LOG_ARCHIVE_FORMAT names, a dictionary the driver alone reads), captured by
    spark-submit to the end of the archives (``--stop-at-eof``) on the cluster: the
    executors read the archives from the store and mine them with the dictionary the plan's
    broadcast brings; the trail is the embedded Extract's (docs/extract.md, "Mined in Spark
    tasks")."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    root = backlog(home, store)
    with Database(root) as db:  # later redo on each thread: its last commits are complete
        side_commits(db, "ops.z")
        db.switch_log()
        scn = db.state.scn
    (home.dirprm / "emb.prm").write_text(
        "EXTRACT emb\nSOURCEDB src\nEXTTRAIL ./dirdat/ea\nTABLE US03.*;\n"
    )
    ref = check_text((home.dirprm / "emb.prm").read_text()).model
    run = ExtractRun(home, ref, None, lambda *_: None, spark=None, durable=True)
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    assert run.capture.stats.trail_records == TXNS * ROWS
    dic = oracle_dictionary(root, tmp_path / "dictionary.json", scn)  # (no DDL after it)
    attach(home.dirdb, "ORA", str(store), dic, "%t_%s_%r.dbf")
    shell = Shell(home)
    shell.run("ADD EXTRACT alo, TRANLOG, SCN 1, THREADS 2")
    shell.run("ADD EXTTRAIL ./dirdat/aa, EXTRACT alo")
    assert shell.ok
    (home.dirprm / "alo.prm").write_text(
        "EXTRACT alo\nSOURCEDB ORA\nTRANLOGOPTIONS ARCHIVEDLOGONLY\nEXTTRAIL ./dirdat/aa\n"
        "TABLE US03.*;\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GGSCI_", "PYSPARK_"))}
    env |= {"GGSCI_EXTRACT_SPLIT_MB": "1"}
    bare = standalone.bare_python(cluster.root / "bare-python-alo")  # (one per test)
    out = subprocess.run(
        [str(standalone.SPARK_SUBMIT), "--master", cluster.url,
         "--conf", f"spark.pyspark.python={bare}",
         "--conf", f"spark.pyspark.driver.python={sys.executable}",
         "--conf", "spark.cores.max=2",
         submit_script(),
         "extract", "paramfile", "dirprm/alo.prm", "--home", str(home.root), "--stop-at-eof"],
        cwd=home.root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    why = f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}\n{cluster.logs()}"
    assert out.returncode == 0, why
    report = (home.dirrpt / "ALO.rpt").read_text()
    line = next(ln for ln in report.splitlines() if ln.startswith("Spark master"))
    assert line.startswith(f"Spark master {cluster.url} (application ggsci-extract-ALO, app-")
    app = line.split("(application ggsci-extract-ALO, ", 1)[1].split(")")[0]
    ran = [w for w in ("worker0", "worker1") if list((cluster.root / w).glob(f"{app}/*/stderr"))]
    assert ran, f"no executor of {app} ran\n{why}"
    assert trail_content(home, "aa") == trail_content(home, "ea")
    assert len(trail_content(home, "aa")[0]) == TXNS
