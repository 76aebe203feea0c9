"""The Extract's Spark configuration without a cluster: the parameters and their checks,
where the master comes from, the settings a cluster session gets, the shipped archive, and
the kernel loader's loud failure (docs/cluster.md)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from engine import _native
from engine.cluster.ship import UNPACKED, build_archive
from engine.cluster.spark import (
    CLUSTER_DEFAULTS,
    DEFAULT_MASTER,
    JVM_FLAGS,
    SparkConfigError,
    SparkSettings,
    batch_splits,
    joined,
    jvm_env,
    read_properties,
    resolve_master,
    session_conf,
    task_failure,
    task_slots,
    unprotected,
    user_conf,
)
from params.check import check_text
from params.models import SparkParams

G = "<globals>"


def spark_of(text: str) -> SparkParams:
    r = check_text(text)
    assert r.ok, [d.message for d in r.errors]
    return r.model.spark


def errors(text: str) -> list[str]:
    return [d.message for d in check_text(text).errors]


# -- the parameters ------------------------------------------------------------------------
def test_spark_parameters_in_a_file() -> None:
    sp = spark_of(
        "SPARKMASTER spark://node1:7077,node2:7077\n"
        "SPARKCONF spark.cores.max=4\n"
        "SPARKCONF spark.executor.extraJavaOptions = -Xss32m -Dx=1\n"
        "SPARKPROPERTIES ./dirprm/spark.properties\n"
    )
    assert sp.master == "spark://node1:7077,node2:7077"
    assert sp.conf == (
        ("spark.cores.max", "4"),
        ("spark.executor.extraJavaOptions", "-Xss32m -Dx=1"),
    )
    assert sp.properties == "./dirprm/spark.properties"
    for url in ("local", "local[*]", "local[3]", "local[2,4]", "yarn", "k8s://https://h:6443"):
        assert spark_of(f"SPARKMASTER {url}\n").master == url


def test_spark_parameter_mistakes_are_one_positioned_line() -> None:
    assert errors("SPARKMASTER spark//h:7077\n") == [
        "SPARKMASTER: 'spark//h:7077' is not a Spark master URL (local[*], local[N], "
        "spark://host:port, yarn, k8s://https://host:port)"
    ]
    assert errors("SPARKMASTER\n") == ["SPARKMASTER: master URL expected"]
    assert errors("SPARKMASTER local\nSPARKMASTER yarn\n") == [
        "SPARKMASTER may appear only once (first at line 1)"
    ]
    assert errors("SPARKCONF spark.cores.max 4\n") == [
        "SPARKCONF: expected spark.key=value (one setting a line)"
    ]
    assert errors("SPARKCONF cores.max=4\n") == [
        "SPARKCONF: 'cores.max' is not a Spark setting (a name under spark., as spark.cores.max)"
    ]
    assert errors("SPARKCONF spark.master=yarn\n") == [
        "SPARKCONF: spark.master is set by SPARKMASTER"
    ]
    assert errors("SPARKCONF spark.cores.max=\n") == ["SPARKCONF: spark.cores.max has no value"]
    r = check_text("SPARKCONF spark.cores.max=2\nSPARKCONF spark.cores.max=3\n")
    assert r.ok and r.model.spark.conf == (("spark.cores.max", "3"),)
    assert [d.message for d in r.diagnostics] == [
        "SPARKCONF spark.cores.max is set again: the last value (3) is used"
    ]
    d = check_text("EXTRACT e1\nSPARKMASTER nowhere\n").errors[0]
    assert (d.origin.line, d.origin.col) == (2, 13)


# -- where the master comes from -----------------------------------------------------------
def test_master_precedence() -> None:
    ext, glob = SparkParams(master="spark://ext:7077"), SparkParams(master="spark://glob:7077")
    env = {"GGSCI_SPARK_MASTER": "spark://env:7077"}
    submit = {**env, "PYSPARK_GATEWAY_PORT": "41000"}
    assert resolve_master(None, [], {}) == DEFAULT_MASTER
    assert resolve_master(None, [SparkParams(), glob], {}) == "spark://glob:7077"
    assert resolve_master(None, [ext, glob], {}) == "spark://ext:7077"
    assert resolve_master(None, [ext, glob], env) == "spark://env:7077"
    assert resolve_master("local[2]", [ext, glob], env) == "local[2]"
    assert resolve_master(None, [ext, glob], submit) is None  # spark-submit's own
    with pytest.raises(SparkConfigError, match="give the master once"):
        resolve_master("local[2]", [], submit)


def test_properties_file_and_conf_lines(tmp_path: Path) -> None:
    props = tmp_path / "spark.properties"
    props.write_text(
        "# comment\n! also\nspark.cores.max 6\nspark.executor.memory=2g\n"
        "spark.executor.cores: 2\nspark.eventLog.dir   hdfs:///logs x\n"
    )
    assert read_properties(props) == {
        "spark.cores.max": "6",
        "spark.executor.memory": "2g",
        "spark.executor.cores": "2",
        "spark.eventLog.dir": "hdfs:///logs x",
    }
    glob = SparkParams(conf=(("spark.cores.max", "4"),), properties="spark.properties")
    ext = SparkParams(conf=(("spark.executor.memory", "3g"),))
    # properties files first, then SPARKCONF lines; the Extract's over GLOBALS'
    assert user_conf([ext, glob], tmp_path) == {
        "spark.cores.max": "4",
        "spark.executor.memory": "3g",
        "spark.executor.cores": "2",
        "spark.eventLog.dir": "hdfs:///logs x",
    }
    props.write_text("spark.cores.max\n")
    with pytest.raises(SparkConfigError, match=r"spark.properties:1: expected 'key value'"):
        read_properties(props)
    props.write_text("spark.master yarn\n")
    with pytest.raises(SparkConfigError, match="use SPARKMASTER"):
        user_conf([glob], tmp_path)
    with pytest.raises(SparkConfigError, match="cannot be read"):
        read_properties(tmp_path / "missing.properties")


# -- the session's settings ----------------------------------------------------------------
def test_local_session_settings() -> None:
    conf = session_conf(
        SparkSettings(master="local[2]", extra={"spark.ui.enabled": "true"}), "local[2]"
    )
    assert conf["spark.ui.enabled"] == "true"  # the user's setting wins
    assert "spark.archives" not in conf and "spark.dynamicAllocation.enabled" not in conf
    assert jvm_env("local[*]") == {"SPARK_LOCAL_IP": "127.0.0.1"}
    # a cluster's executors must reach the driver: it is not bound to the loopback
    assert jvm_env("spark://node1:7077") == {} and jvm_env("yarn") == {}


def test_cluster_session_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GGSCI_NATIVE", raising=False)
    s = SparkSettings(
        master="spark://node1:7077",
        log_file=tmp_path / "spark.log",
        ship_dir=tmp_path / "ship",
        extra={
            "spark.dynamicAllocation.executorIdleTimeout": "15s",
            "spark.archives": "hdfs:///envs/py311.tgz#env",
            "spark.executorEnv.PYTHONPATH": "env/lib",
        },
    )
    conf = session_conf(s, "spark://node1:7077")
    archive = next((tmp_path / "ship").glob("ggsci-code-*.zip"))
    assert conf["spark.archives"] == f"{archive}#{UNPACKED},hdfs:///envs/py311.tgz#env"
    assert conf["spark.executorEnv.PYTHONPATH"] == f"{UNPACKED}:env/lib"
    assert conf["spark.executorEnv.GGSCI_NATIVE"] == "require"
    assert conf["spark.dynamicAllocation.executorIdleTimeout"] == "15s"
    for k in set(CLUSTER_DEFAULTS) - {"spark.dynamicAllocation.executorIdleTimeout"}:
        assert conf[k] == CLUSTER_DEFAULTS[k]
    # a bounded share by default (docs/cluster.md), released when idle
    assert conf["spark.cores.max"] == conf["spark.dynamicAllocation.maxExecutors"] == "8"
    assert conf["spark.dynamicAllocation.enabled"] == "true"
    assert conf["spark.dynamicAllocation.minExecutors"] == "0"
    theirs = replace(s, extra={"spark.cores.max": "32"})
    assert session_conf(theirs, "spark://node1:7077")["spark.cores.max"] == "32"
    assert conf["spark.executor.extraJavaOptions"] == JVM_FLAGS  # not the driver's log path
    # under spark-submit, its settings stand; its list settings keep ggsci's entries first
    launched = {"spark.archives": "env.tgz#env", "spark.cores.max": "3"}
    assert joined(conf, launched)["spark.archives"] == f"{conf['spark.archives']},env.tgz#env"
    assert joined(conf, launched)["spark.cores.max"] == "3"
    monkeypatch.setenv("GGSCI_NATIVE", "0")  # the Python paths, here and in the tasks
    assert session_conf(s, "yarn")["spark.executorEnv.GGSCI_NATIVE"] == "0"


def test_a_master_on_the_network_without_authentication_or_encryption_is_warned_of() -> None:
    cluster = {"spark.master": "spark://h:7077"}
    assert unprotected({"spark.master": "local[*]"}) is None
    assert unprotected({"spark.master": "local-cluster[2,1,1024]"}) is None
    both = unprotected(cluster)
    assert both is not None and both.startswith("The Spark master spark://h:7077 is on the ")
    assert "spark.authenticate and spark.network.crypto.enabled are not true" in both
    auth = {"spark.authenticate": "true"}
    assert "spark.network.crypto.enabled is not true" in str(unprotected(cluster | auth))
    crypto = {"spark.network.crypto.enabled": "TRUE "}
    assert "spark.authenticate is not true" in str(unprotected(cluster | crypto))
    assert unprotected(cluster | auth | crypto) is None
    assert unprotected(cluster | auth | {"spark.ssl.rpc.enabled": "true"}) is None  # TLS
    assert unprotected({"spark.master": "yarn"} | auth) is not None


def test_task_slots_follow_the_share(spark: object) -> None:
    assert task_slots(spark) == 2  # type: ignore[arg-type]  # local[2]
    assert batch_splits(spark) == 16  # type: ignore[arg-type]  # the least a batch mines


# -- the shipped code ----------------------------------------------------------------------
def test_archive_holds_the_packages_and_kernels(tmp_path: Path) -> None:
    first = build_archive(tmp_path)
    assert build_archive(tmp_path) == first  # same content, same archive (not rebuilt)
    names = zipfile.ZipFile(first).namelist()
    assert {"engine/cluster/spark.py", "params/data/parameters.txt", "ggsci/cli.py"} <= set(names)
    assert "engine/cluster/spark_log4j2.properties" in names
    for k in _native.KERNELS:
        assert any(n.startswith(f"engine/_native/{k}.cpython-") for n in names), k
    assert not any("__pycache__" in n or n.endswith(".c") for n in names)
    # unpacked alone, it is the code a bare interpreter runs: kernels and all
    out = tmp_path / "x" / UNPACKED
    zipfile.ZipFile(first).extractall(out)
    probe = (
        "import engine, engine._native as n, sys; "
        "assert all(n.load(k) for k in n.KERNELS); print(engine.__file__)"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, '{out}'); {probe}"],
        capture_output=True,
        text=True,
        env={"GGSCI_NATIVE": "require"},
        check=True,
    )
    assert done.stdout.strip() == str(out / "engine" / "__init__.py")


# -- a task that cannot load a kernel ------------------------------------------------------
def test_missing_kernel_fails_loudly_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GGSCI_NATIVE", "require")
    with pytest.raises(_native.KernelMissing) as caught:
        _native.load("nosuchkernel")
    text = str(caught.value)
    assert text.startswith(_native.MISSING) and "set GGSCI_NATIVE=0" in text
    assert _native.load("redomine") is not None
    # the driver finds the line in a failed job's text (a Java trace around a Python one)
    job = f"Py4JJavaError: ...\n  at org.apache...\nengine._native.KernelMissing: {text}\n  at x"
    assert task_failure(RuntimeError(job)) == text[len(_native.MISSING) + 2 :]
    assert task_failure(RuntimeError("another failure")) is None
    monkeypatch.setenv("GGSCI_NATIVE", "0")
    assert _native.load("redomine") is None and not _native.available()
    monkeypatch.setenv("GGSCI_NATIVE", "1")
    assert _native.load("nosuchkernel") is None  # optional: the Python path


# -- a bad setting stops the Extract before Spark starts, in one line ----------------------
def test_bad_globals_or_properties_stop_ggsci_extract_in_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from engine.home.layout import Home
    from ggsci.cli import build_app

    home = Home(tmp_path / "home")
    home.create_subdirs()
    (home.dirprm / "e1.prm").write_text(
        "EXTRACT e1\nEXTTRAIL ./dirdat/e1\nSPARKPROPERTIES dirprm/spark.properties\nTABLE A.*;\n"
    )
    home.globals_file.write_text("SPARKMASTER spark:/node1\n")
    argv = ["extract", "paramfile", str(home.dirprm / "e1.prm"), "--home", str(home.root)]
    out = CliRunner().invoke(build_app(), argv)
    assert out.exit_code == 1
    errors = [ln for ln in out.output.splitlines() if "ERROR" in ln]
    assert len(errors) == 1 and "OGG-10144" in errors[0], out.output
    assert "GLOBALS has 1 error(s), the first: " in errors[0] and "spark:/node1" in errors[0]
    home.globals_file.write_text("SPARKMASTER local[1]\n")
    (home.dirprm / "spark.properties").write_text("spark.cores.max 2\nspark.master yarn\n")
    # another group: the first run's process lock lasts as long as this (test) process
    e2 = (home.dirprm / "e1.prm").read_text().replace("e1", "e2")
    (home.dirprm / "e2.prm").write_text(e2)
    argv[2] = str(home.dirprm / "e2.prm")
    out = CliRunner().invoke(build_app(), argv)
    assert out.exit_code == 1 and "use SPARKMASTER" in out.output, out.output
    assert "Traceback" not in out.output
