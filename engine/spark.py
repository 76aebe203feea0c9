"""The one SparkSession of a process: built once, configured for this machine, quiet.

Only engine processes (Extract, pump, Replicat, the foreground ``ggsci extract``) call
:func:`get_session`; the shell never does. The master is ``local[*]`` unless the GLOBALS
file (``SPARKMASTER``) or ``$GGSCI_SPARK_MASTER`` names another. Spark's own log4j output
goes to a file (``dirrpt/spark.log`` of the home, or the path given), never to the
user's screen or report.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pyspark is imported lazily: importing this module starts nothing
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
_lock = threading.Lock()
_session: list[Any] = []


@dataclass(frozen=True)
class SparkSettings:
    master: str = DEFAULT_MASTER
    app_name: str = "ggsci"
    log_file: Path = Path("spark.log")
    shuffle_partitions: int = 4
    extra: dict[str, str] = field(default_factory=dict)


def master_from(globals_file: Path | None = None, env: dict[str, str] | None = None) -> str:
    """``$GGSCI_SPARK_MASTER``, else ``SPARKMASTER url`` in GLOBALS, else ``local[*]``."""
    env = dict(os.environ) if env is None else env
    if env.get("GGSCI_SPARK_MASTER"):
        return env["GGSCI_SPARK_MASTER"]
    if globals_file is not None and globals_file.is_file():
        for line in globals_file.read_text(errors="replace").splitlines():
            words = line.split("--", 1)[0].split()
            if len(words) >= 2 and words[0].upper() == "SPARKMASTER":
                return words[1]
    return DEFAULT_MASTER


def _log_config() -> str:
    return str(resources.files("engine").joinpath("spark_log4j2.properties"))


def get_session(settings: SparkSettings | None = None) -> SparkSession:
    """The process's SparkSession, created on first call (about 5–10 s: a JVM starts)."""
    with _lock:
        if _session:
            return _session[0]  # type: ignore[no-any-return]
        s = settings or SparkSettings()
        s.log_file.parent.mkdir(parents=True, exist_ok=True)
        # Python workers must run this interpreter (it has the project and pyarrow).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        java_opts = (
            f"-Dlog4j2.configurationFile=file:{_log_config()} "
            f"-Dggsci.spark.log={s.log_file.resolve()} -Xss32m"
        )
        builder = (
            SparkSession.builder.master(s.master)
            .appName(s.app_name)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", str(s.shuffle_partitions))
            .config("spark.driver.extraJavaOptions", java_opts)
            .config("spark.executor.extraJavaOptions", java_opts)
            .config("spark.python.worker.reuse", "true")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        )
        for k, v in s.extra.items():
            builder = builder.config(k, v)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # The JVM inherits our stderr; give it the log file instead, for its whole life,
        # so that its start-up chatter never reaches the user's screen.
        saved = os.dup(2)
        with open(s.log_file, "ab") as log:
            os.dup2(log.fileno(), 2)
            try:
                session = builder.getOrCreate()
            finally:
                os.dup2(saved, 2)
                os.close(saved)
        session.sparkContext.setLogLevel("WARN")
        _session.append(session)
        return session


def warm_workers(session: SparkSession, modules: tuple[str, ...]) -> None:
    """Start the session's Python workers, one per core, and import ``modules`` in each
    (1.5–2 s on this machine): a process pays this once at start, with the JVM, instead of
    in its first batch."""
    sc = session.sparkContext
    n = max(1, sc.defaultParallelism)
    sc.parallelize(range(n), n).mapPartitions(lambda _: _imported(modules)).collect()


def _imported(modules: tuple[str, ...]) -> list[int]:
    import importlib

    for name in modules:
        importlib.import_module(name)
    return [len(modules)]


def stop_session() -> None:
    with _lock:
        if _session:
            _session.pop().stop()
