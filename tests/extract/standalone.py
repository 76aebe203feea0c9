"""A Spark standalone cluster on this machine: a master and one-core workers, each worker in
its own mount namespace where the paths given are hidden (a tmpfs over each).

Used by tests/extract/test_cluster.py and benchmarks/extract_scaling.py. Workers run as
root under ``unshare -m`` (CI is root), with a clean environment: nothing of the driver's
``PYTHONPATH``, and (in the test) ggsci's source directories hidden, so that the executors
can only run the code the application ships.

``cpu_quota`` puts each worker (its daemon, executor JVM and Python workers) in a cgroup of
its own with a CFS quota of that many cores: on a machine with as many cores as workers,
half-core workers leave the driver a core of its own (benchmarks/extract_scaling.py
``--worker-quota``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
SPARK_SUBMIT = SPARK_HOME / "bin" / "spark-submit"


class ClusterError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def base_env() -> dict[str, str]:
    """What the master and workers get: a PATH, Java, SPARK_HOME; no PYTHONPATH."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_NO_DAEMONIZE": "1",
        "HOME": "/root",
        "LANG": "C.UTF-8",
    }
    if os.environ.get("JAVA_HOME"):
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    return env


def check_unshare() -> None:
    """Fail with one clear line where workers cannot get their own mount namespace."""
    if os.geteuid() != 0:
        raise ClusterError("the standalone cluster needs root (unshare -m, mount -t tmpfs)")
    if shutil.which("unshare") is None:
        raise ClusterError("unshare (util-linux) is not installed")
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        raise ClusterError(f"unshare -m with a tmpfs mount fails here: {probe.stderr.strip()}")


@dataclass
class Cluster:
    """A running master and its workers (stop with :meth:`stop`)."""

    url: str
    ui: str
    root: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    cgroups: list[Path] = field(default_factory=list)
    master_argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    def restart_master(self, *, down_s: float = 1.0) -> None:
        """Kill the master (SIGKILL) and start a new one on the same port: a standalone
        master without recovery forgets its applications; its workers register again."""
        os.killpg(self.procs[0].pid, signal.SIGKILL)
        self.procs[0].wait()
        time.sleep(down_s)
        with open(self.root / "master.log", "ab") as log:
            self.procs[0] = subprocess.Popen(
                self.master_argv, env=self.env or base_env(), stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip

    def alive_workers(self) -> int:
        try:
            with urllib.request.urlopen(f"{self.ui}/json/", timeout=2) as r:
                state = json.load(r)
        except OSError:
            return -1
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def worker_pids(self) -> list[int]:
        return [p.pid for p in self.procs[1:]]

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for cg in self.cgroups:
            with contextlib.suppress(OSError):  # (a process of it may still be exiting)
                cg.rmdir()
        shutil.rmtree(self.root, ignore_errors=True)

    def logs(self) -> str:
        return "\n".join(
            f"== {f.name}\n{f.read_text(errors='replace')[-3000:]}"
            for f in sorted(self.root.glob("*.log"))
        )


def start(
    workers: int,
    *,
    hide: Sequence[Path] = (),
    worker_memory: str = "1g",
    timeout: float = 60.0,
    cpu_quota: float | None = None,
    daemon_conf: dict[str, str] | None = None,
) -> Cluster:
    """A master on 127.0.0.1 and ``workers`` one-core workers, each under ``unshare -m``
    with a tmpfs over every path of ``hide`` (and, with ``cpu_quota``, in a cgroup that
    caps its CPU at that many cores)."""
    check_unshare()
    root = Path(tempfile.mkdtemp(prefix="ggsci-cluster-"))
    port, ui_port = free_port(), free_port()
    cluster = Cluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}", root)
    env = base_env()
    if daemon_conf:  # the master's and workers' own Spark settings (authentication, say)
        env["SPARK_DAEMON_JAVA_OPTS"] = " ".join(f"-D{k}={v}" for k, v in daemon_conf.items())
    cluster.env = env

    def launch(name: str, argv: list[str]) -> None:
        log = open(root / f"{name}.log", "wb")  # noqa: SIM115 (the child keeps it)
        proc = subprocess.Popen(
            argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        cluster.procs.append(proc)

    cluster.master_argv = [
        str(SPARK_CLASS), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
        "--port", str(port), "--webui-port", str(ui_port),
    ]  # fmt: skip
    try:
        launch("master", cluster.master_argv)
        mounts = "".join(f'mount -t tmpfs -o size=4m ggsci-hidden "{p}"; ' for p in hide)
        for i in range(workers):
            work = root / f"worker{i}"
            work.mkdir()
            join = ""
            if cpu_quota is not None:
                cg = _cpu_cgroup(f"{root.name}-worker{i}", cpu_quota)
                cluster.cgroups.append(cg)
                join = f'echo $$ > "{cg / "cgroup.procs"}"; '
            launch(
                f"worker{i}",
                ["unshare", "-m", "sh", "-c", f'set -e; {join}{mounts}exec "$@"', "sh",
                 str(SPARK_CLASS), "org.apache.spark.deploy.worker.Worker", cluster.url,
                 "--host", "127.0.0.1", "--cores", "1", "--memory", worker_memory,
                 "--webui-port", str(free_port()), "--work-dir", str(work)],
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while cluster.alive_workers() < workers:
            dead = [p for p in cluster.procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise ClusterError(
                    f"the cluster did not start ({cluster.alive_workers()} of {workers} "
                    f"workers alive)\n{cluster.logs()}"
                )
            time.sleep(0.25)
    except BaseException:
        cluster.stop()
        raise
    return cluster


#: Where a cgroup with a CPU quota is made: cgroup v2's unified tree (``cpu.max``) when its
#: cpu controller is on, else v1's cpu hierarchy (``cpu.cfs_quota_us``).
_CGROUP_V2: Final = Path("/sys/fs/cgroup")
_CGROUP_V1: Final = Path("/sys/fs/cgroup/cpu")
_PERIOD_US: Final = 100_000


def _cpu_cgroup(name: str, cores: float) -> Path:
    quota = max(1000, int(cores * _PERIOD_US))
    try:
        if "cpu" in (_CGROUP_V2 / "cgroup.subtree_control").read_text().split():
            cg = _CGROUP_V2 / name
            cg.mkdir()
            (cg / "cpu.max").write_text(f"{quota} {_PERIOD_US}")
            return cg
    except OSError:
        pass
    try:
        cg = _CGROUP_V1 / name
        cg.mkdir()
        (cg / "cpu.cfs_period_us").write_text(str(_PERIOD_US))
        (cg / "cpu.cfs_quota_us").write_text(str(quota))
    except OSError as exc:
        raise ClusterError(f"cannot make a cgroup with a CPU quota here: {exc}") from None
    return cg


def start_or_fail(workers: int, **options: Any) -> Cluster:
    """:func:`start` for a test fixture: a cluster that cannot start fails the test."""
    import pytest

    try:
        return start(workers, **options)
    except ClusterError as exc:
        pytest.fail(f"cannot start the standalone cluster: {exc}")


def bare_python(dest: Path) -> Path:
    """An executor's Python as docs/cluster.md says to build one: a virtual environment of
    this Python version holding only pyspark (with its py4j) and pyarrow, here linked to
    the driver's copies (the same versions). Nothing else of the driver's environment
    (pyparsing, ggsci) is importable in it. Returns its interpreter."""
    import sys
    import venv

    venv.EnvBuilder(with_pip=False, symlinks=True).create(dest)
    site = next(dest.glob("lib/python3*/site-packages"))
    for name in ("pyspark", "py4j", "pyarrow"):
        spec_dir = Path(__import__(name).__file__ or "").parent
        (site / name).symlink_to(spec_dir)
    python = dest / "bin" / "python"
    probe = subprocess.run(
        [str(python), "-c", "import pyspark, pyarrow\ntry:\n import pyparsing\nexcept "
         "ImportError: print('bare')"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    if probe.stdout.strip() != "bare":
        raise ClusterError(f"cannot build a bare executor Python ({sys.version}): {probe}")
    return python
