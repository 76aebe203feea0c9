"""The one SparkSession of a process: built once, configured for where it runs, quiet.

Only engine processes (Extract, the foreground ``ggsci extract``) call :func:`get_session`;
the shell never does. Spark's own log4j output goes to a file (``dirrpt/<group>_spark.log``
of the home, or the path given), never to the user's screen or report.

Where the master comes from, first found (Spark's conventions: the launcher's flag, then
the environment, then the files; docs/cluster.md):

1. ``spark-submit --master`` when the process was launched by ``spark-submit`` (which
   also owns every setting it was given: ``--conf``, ``--properties-file``);
2. ``ggsci extract ... --master URL``;
3. ``$GGSCI_SPARK_MASTER``;
4. ``SPARKMASTER`` in the Extract's parameter file, then in GLOBALS;
5. ``local[*]``.

Settings, later wins: ggsci's defaults below, ``SPARKPROPERTIES`` files (GLOBALS, then the
Extract's), ``SPARKCONF`` lines (GLOBALS, then the Extract's), and under ``spark-submit``
whatever it was given. On a cluster master (anything but ``local``) ggsci also ships its
code (:mod:`engine.cluster.ship`), requires the C kernels in the tasks, and asks for executors by
dynamic allocation (released after a minute idle) unless told otherwise.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from engine.cluster.cause import cause
from engine.cluster.watch import Limits, SparkFault, Watchdog, bounded
from engine.cluster.worker import FAILED, warm_task
from engine.errors import GGError
from params.sparksettings import setting_error

if TYPE_CHECKING:  # pyspark is imported lazily: importing this module starts nothing
    from pyspark.sql import SparkSession

    from engine.home.layout import Home
    from params.models import ParamFile, SparkParams

DEFAULT_MASTER = "local[*]"
#: The environment variable that names a master (below the command line, above the files).
MASTER_ENV: Final = "GGSCI_SPARK_MASTER"
#: Set by spark-submit for the Python program it runs (pyspark joins its JVM).
SUBMIT_ENV: Final = "PYSPARK_GATEWAY_PORT"
#: A batch mines at least this many splits (more when the share has more cores): each batch
#: is a Spark job, about 100 ms of CPU whatever its size (the JVM's scheduling, py4j, the
#: tasks' set-up), so 16 rather than 8 halves that in a catch-up; a batch holds about 5 MB
#: of mined results a split on the driver (docs/cluster.md, "Scaling on this machine").
MIN_BATCH_SPLITS: Final = 16
#: On a cluster, unless set otherwise: executors come and go with the work (the shuffle
#: tracking stands for an external shuffle service, which the Extract does not need).
#: A bounded share by default: at most DEFAULT_SHARE cores (``spark.cores.max`` on a standalone
#: master, ``maxExecutors`` executors of one core elsewhere), since the driver applies the
#: mined batches alone and more cores than it keeps busy only hold the cluster
#: (docs/cluster.md, "A bounded share").
DEFAULT_SHARE: Final = 8
CLUSTER_DEFAULTS: Final[Mapping[str, str]] = {
    "spark.cores.max": str(DEFAULT_SHARE),
    "spark.dynamicAllocation.maxExecutors": str(DEFAULT_SHARE),
    "spark.dynamicAllocation.enabled": "true",
    "spark.dynamicAllocation.shuffleTracking.enabled": "true",
    "spark.dynamicAllocation.minExecutors": "0",
    "spark.dynamicAllocation.executorIdleTimeout": "60s",
}
#: The JVMs' flags: a deep stack (deep Python pickles, no StackOverflowError at a stop), and
#: little JIT and GC work, since our JVMs only schedule tasks and relay their bytes: C1 only
#: and the serial collector cut the driver JVM's CPU in a catch-up from 1.9 s to 0.7 s
#: (benchmarks/extract_scaling.py, local[1], 2,000 transactions; docs/cluster.md).
JVM_FLAGS: Final = "-Xss32m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
#: The names spark-submit gives an application it was not given ``--name`` for (its script's).
_DEFAULT_APP_NAMES: Final = frozenset({"__main__.py", os.path.basename(sys.argv[0] or "")} - {""})
_lock = threading.Lock()
_session: list[Any] = []
_own_jvm: list[Any] = []  # the driver JVM this process launched (not spark-submit's): its Popen


class SparkConfigError(GGError):
    """A Spark setting that cannot be used (one line for the user, with an OGG code)."""

    def __init__(self, text: str, code: str = "OGG-01668") -> None:
        super().__init__(code, text)


@dataclass(frozen=True)
class SparkSettings:
    """``master`` None: the one spark-submit chose. ``extra``: the user's settings (they
    win over ggsci's). ``ship_dir``: where the code archive for a cluster is built."""

    master: str | None = DEFAULT_MASTER
    app_name: str = "ggsci"
    log_file: Path = Path("spark.log")
    shuffle_partitions: int = 4
    extra: dict[str, str] = field(default_factory=dict)
    ship_dir: Path | None = None


def submitted(env: Mapping[str, str] | None = None) -> bool:
    """Whether this process was launched by ``spark-submit``."""
    return SUBMIT_ENV in (os.environ if env is None else env)


def is_local(master: str) -> bool:
    return master.lower().split("[", 1)[0] in ("local", "local-cluster")


#: What keeps a cluster's traffic private: the applications authenticated (their RPC and
#: block transfers), and the traffic encrypted by Spark's own AES protocol or by TLS.
_AUTHENTICATED: Final = ("spark.authenticate",)
_ENCRYPTED: Final = ("spark.network.crypto.enabled", "spark.ssl.rpc.enabled")
UNPROTECTED_CODE: Final = "OGG-25370"


def unprotected(conf: Mapping[str, str]) -> str | None:
    """The warning an Extract writes when its session's master is on the network (not
    ``local``) and its traffic is not authenticated or not encrypted (docs/security.md,
    "Spark task data"): the task data (rows of redo, an archive location's credentials)
    then crosses the network in clear, or any host that reaches the master can join. None
    when it is protected, or local."""
    master = conf.get("spark.master", DEFAULT_MASTER)
    if is_local(master):
        return None

    def on(key: str) -> bool:
        return conf.get(key, "false").strip().lower() == "true"

    off = [k for k in _AUTHENTICATED if not on(k)]
    if not any(on(k) for k in _ENCRYPTED):
        off.append(_ENCRYPTED[0])
    if not off:
        return None
    return (
        f"The Spark master {master} is on the network and {' and '.join(off)} "
        f"{'is' if len(off) == 1 else 'are'} not true: the tasks' data (rows of redo, an "
        "archive location's credentials) crosses the network unprotected. Set SPARKCONF "
        "spark.authenticate=true (with spark.authenticate.secret) and "
        "spark.network.crypto.enabled=true (docs/security.md, Spark task data)."
    )


def resolve_master(
    cli: str | None, files: list[SparkParams], env: Mapping[str, str] | None = None
) -> str | None:
    """The master by the order of this module's docstring; None: spark-submit's.
    ``files``: the parameters of the files, the most specific first."""
    env = os.environ if env is None else env
    if submitted(env):
        if cli:
            raise SparkConfigError(
                f"--master {cli} is given to a process launched by spark-submit: give the "
                "master once, as spark-submit --master."
            )
        return None
    if cli:
        return cli
    if env.get(MASTER_ENV):
        return env[MASTER_ENV]
    for f in files:
        if f.master:
            return f.master
    return DEFAULT_MASTER


def read_properties(path: Path) -> dict[str, str]:
    """A Spark properties file (``key value``, ``key=value`` or ``key: value`` lines; ``#``
    and ``!`` comments), as ``spark-submit --properties-file`` reads it."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise SparkConfigError(
            f"Spark properties file {path} cannot be read: {exc}", "OGG-01091"
        ) from exc
    out: dict[str, str] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find(c) for c in " \t=:") if i > 0), default=-1)
        if cut < 0:
            raise SparkConfigError(f"{path}:{n}: expected 'key value', found {line!r}")
        key, value = line[:cut], line[cut:].lstrip(" \t")
        if value[:1] in "=:":
            value = value[1:].strip()
        if not key.startswith("spark."):
            raise SparkConfigError(f"{path}:{n}: {key!r} is not a Spark setting (spark.*)")
        out[key] = value
    return out


def user_conf(files: list[SparkParams], root: Path) -> dict[str, str]:
    """The settings of the files (the most specific first): properties files, then
    SPARKCONF lines, each the general file's before the specific one's."""
    out: dict[str, str] = {}
    general_first = list(reversed(files))
    for f in general_first:
        if f.properties:
            path = Path(f.properties)
            out.update(read_properties(path if path.is_absolute() else root / path))
    for f in general_first:
        out.update(dict(f.conf))
    if "spark.master" in out:
        raise SparkConfigError("spark.master is set in a properties file: use SPARKMASTER.")
    for key, value in out.items():
        why = setting_error(key, value)
        if why is not None:
            raise SparkConfigError(why)
    return out


def settings_for(
    files: list[SparkParams],
    root: Path,
    *,
    cli_master: str | None,
    app_name: str,
    log_file: Path,
    ship_dir: Path,
    env: Mapping[str, str] | None = None,
) -> SparkSettings:
    """An Extract's settings from its parameter file's and GLOBALS' Spark parameters."""
    return SparkSettings(
        master=resolve_master(cli_master, files, env),
        app_name=app_name,
        log_file=log_file,
        extra=user_conf(files, root),
        ship_dir=ship_dir,
    )


def _log_config() -> str:
    return str(resources.files("engine.cluster").joinpath("spark_log4j2.properties"))


def _launched_conf() -> dict[str, str]:
    """What spark-submit gave the JVM it launched (its --master, --conf, properties)."""
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return dict(SparkConf().getAll())


def cluster_conf(s: SparkSettings, ours: dict[str, str]) -> dict[str, str]:
    """What a cluster master adds: the shipped code, kernels required in the tasks (unless
    ``GGSCI_NATIVE=0`` here), executors that come and go; the user's settings win."""
    from engine import _native
    from engine.cluster.ship import UNPACKED, ShipError, build_archive

    conf = {**ours, **CLUSTER_DEFAULTS}
    conf["spark.executorEnv.GGSCI_NATIVE"] = "0" if not _native.enabled() else "require"
    if _native.enabled() and not _native.available():
        raise SparkConfigError(
            "The C kernels are not built on this host (no compiler at install?): they cannot "
            "be shipped to the cluster. Rebuild (pip install) or set GGSCI_NATIVE=0."
        )
    try:
        archive = build_archive(s.ship_dir or s.log_file.parent / "ship")
    except (ShipError, OSError) as exc:
        raise SparkConfigError(f"The code for the executors cannot be packed: {exc}") from exc
    conf["spark.archives"] = f"{archive}#{UNPACKED}"
    conf["spark.executorEnv.PYTHONPATH"] = UNPACKED
    # Executors run out of the driver's file system: they log where their worker says.
    conf["spark.executor.extraJavaOptions"] = JVM_FLAGS
    return joined(conf, s.extra)


#: Settings that are lists: the user's entries are added after ggsci's, not instead of them.
_LISTS: Final = {"spark.archives": ",", "spark.executorEnv.PYTHONPATH": ":"}


def joined(ours: dict[str, str], theirs: Mapping[str, str]) -> dict[str, str]:
    """``ours`` updated with ``theirs``; for a list setting both, ggsci's entries first."""
    out = {**ours, **theirs}
    for key, sep in _LISTS.items():
        if key in ours and key in theirs and ours[key] != theirs[key]:
            out[key] = ours[key] + sep + theirs[key]
    return out


def session_conf(s: SparkSettings, master: str) -> dict[str, str]:
    """Every setting the session is built with (for ``master``)."""
    java_opts = (
        f"-Dlog4j2.configurationFile=file:{_log_config()} "
        f"-Dggsci.spark.log={s.log_file.resolve()} {JVM_FLAGS}"
    )
    ours = {
        "spark.app.name": s.app_name,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(s.shuffle_partitions),
        "spark.driver.extraJavaOptions": java_opts,
        "spark.executor.extraJavaOptions": java_opts,
        "spark.python.worker.reuse": "true",
        # a task's result (a few compressed splits, about 0.6 MB each) goes back in its
        # status message instead of through the block manager (above 1 MB by default):
        # half the JVM's CPU a MB of results (docs/cluster.md). Spark caps it at the RPC
        # message size.
        "spark.task.maxDirectResultSize": "64m",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
    }
    if is_local(master):
        return {**ours, **s.extra}
    return cluster_conf(s, ours)


def jvm_env(master: str) -> dict[str, str]:
    """Environment defaults for the driver's JVM: a local session binds to the loopback
    (nothing outside this host talks to it); a cluster's executors call the driver back, so
    it binds where Spark chooses (``spark.driver.host``/``spark.driver.bindAddress`` or
    ``$SPARK_LOCAL_IP`` choose otherwise)."""
    return {"SPARK_LOCAL_IP": "127.0.0.1"} if is_local(master) else {}


def get_session(settings: SparkSettings | None = None) -> SparkSession:
    """The process's SparkSession, created on first call (about 5–10 s: a JVM starts)."""
    with _lock:
        if _session:
            return _session[0]  # type: ignore[no-any-return]
        s = settings or SparkSettings()
        s.log_file.parent.mkdir(parents=True, exist_ok=True)
        # Python workers run this interpreter (it has the project and pyarrow) unless the
        # settings name another (spark.pyspark.python: the executors' interpreter).
        python = s.extra.get("spark.pyspark.python")
        if python:
            os.environ["PYSPARK_PYTHON"] = python
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        launched: dict[str, str] = {}
        master = s.master
        if master is None:  # spark-submit's JVM is running: its settings stand
            launched = _launched_conf()
            master = launched.get("spark.master", DEFAULT_MASTER)
            for key, value in launched.items():
                why = setting_error(key, value)
                if why is not None:
                    raise SparkConfigError(f"spark-submit's {why}")
        for k, v in jvm_env(master).items():
            os.environ.setdefault(k, v)
        if launched.get("spark.app.name") in _DEFAULT_APP_NAMES:
            del launched["spark.app.name"]  # spark-submit named it after the script: ours
        # spark-submit's settings stand (its list settings keep ggsci's entries first)
        conf = joined(session_conf(s, master), launched)
        conf = {k: v for k, v in conf.items() if launched.get(k) != v}
        builder = SparkSession.builder
        if s.master is not None:
            builder = builder.master(s.master)
        for k, v in conf.items():
            builder = builder.config(k, v)
        since = s.log_file.stat().st_size if s.log_file.is_file() else 0
        try:
            if s.master is not None:  # (under spark-submit its JVM runs already)
                _launch_jvm(s.log_file, launch_conf(s.master, conf))
                _own_jvm.append(_gateway_process())
            session = builder.getOrCreate()
        except Exception as exc:  # one line: the cause, never Spark's traceback
            where = "spark-submit's" if s.master is None else str(master)
            raise SparkConfigError(
                f"The Spark session cannot start (master {where}): "
                f"{cause(exc, None if s.master is None else s.log_file, since)}"
            ) from None
        session.sparkContext.setLogLevel("WARN")
        _session.append(session)
        return session


def launch_conf(master: str, conf: Mapping[str, str]) -> dict[str, str]:
    """The settings the driver's JVM is launched with: PySpark puts each on spark-submit's
    command line (``--conf k=v``), which every local user can read in ``/proc/PID/cmdline``
    for the JVM's whole life, so a setting that names a secret (``spark.authenticate.secret``,
    ``spark.hadoop.fs.s3a.secret.key``, ``spark.executorEnv.AWS_SECRET_ACCESS_KEY``:
    :func:`params.masking.secret_key`) is left out; the session's builder sets it over the
    gateway, before the SparkContext that reads it is made."""
    from params.masking import secret_key

    return {"spark.master": master, **{k: v for k, v in conf.items() if not secret_key(k)}}


def _launch_jvm(log_file: Path, conf: Mapping[str, str]) -> None:
    """Launch the driver's JVM (with ``conf``, as the session's builder would) with the log
    file as its standard error, for its whole life, so that its start-up chatter never
    reaches the user's screen; this process's own standard error is redirected only while
    the JVM is launched (a message the Extract writes while the session still starts, its
    start-up bound, reaches the screen)."""
    from pyspark import SparkConf, SparkContext

    saved = os.dup(2)
    with open(log_file, "ab") as log:
        os.dup2(log.fileno(), 2)
        try:
            SparkContext._ensure_initialized(conf=SparkConf().setAll(list(conf.items())))
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def task_slots(session: SparkSession) -> int:
    """How many tasks the session's share runs at once: ``spark.cores.max`` when set on a
    standalone master, else dynamic allocation's ``maxExecutors`` × ``spark.executor.cores``
    (1 on YARN and Kubernetes when not set),
    else Spark's default parallelism (the cores of ``local[N]``, or the executors' cores
    now)."""
    sc = session.sparkContext
    conf = sc.getConf()
    cores_max = conf.get("spark.cores.max")
    standalone = (conf.get("spark.master") or "").startswith("spark://")
    if standalone and cores_max and cores_max.isdigit() and int(cores_max) > 0:
        return int(cores_max)
    dyn = (conf.get("spark.dynamicAllocation.enabled") or "").lower() == "true"
    most = conf.get("spark.dynamicAllocation.maxExecutors")
    per = conf.get("spark.executor.cores") or ("1" if dyn and not standalone else None)
    if dyn and most and per and most.isdigit() and per.isdigit():
        return max(1, int(most) * int(per))
    return max(1, sc.defaultParallelism)


def batch_splits(session: SparkSession) -> int:
    """Splits a batch mines (one wave of the share's tasks; another is mined ahead)."""
    return max(MIN_BATCH_SPLITS, task_slots(session))


def warm_workers(session: SparkSession, modules: tuple[str, ...]) -> list[str]:
    """Start the session's Python workers, one per core, and import ``modules`` in each
    (1.5–2 s on this machine): a process pays this once at start, with the JVM, instead of
    in its first batch. On a cluster this is also where each executor that runs one of these
    tasks checks that it can import the shipped code and load the kernels: a task that
    cannot says so in its result (it does not fail, so Spark's retries on another executor
    cannot hide it) and this raises :class:`SparkConfigError` with that line. Returns where
    the tasks imported ggsci from (``dir on host``)."""
    sc = session.sparkContext
    n = max(1, sc.defaultParallelism)
    rdd = sc.parallelize(range(n), n).mapPartitions(functools.partial(warm_task, modules))
    got = sorted(set(rdd.collect()))
    failed = [g.removeprefix(FAILED) for g in got if g.startswith(FAILED)]
    if failed:
        raise SparkConfigError(task_failure(RuntimeError(failed[0])) or failed[0])
    return got


def globals_spark(globals_file: Path, root: Path) -> SparkParams:
    """The Spark parameters of GLOBALS (none when there is no GLOBALS); a GLOBALS with
    errors is refused with its first one (``ggsci params check GLOBALS`` shows them all)."""
    from params.check import check_file
    from params.errors import render_line
    from params.models import SparkParams

    if not globals_file.is_file():
        return SparkParams()
    result = check_file(globals_file, cwd=root)
    if not result.ok:
        raise SparkConfigError(
            f"GLOBALS has {len(result.errors)} error(s), the first: "
            f"{render_line(result.errors[0])}",
            "OGG-10144",
        )
    return result.model.spark


def extract_session(
    home: Home,
    model: ParamFile,
    name: str,
    cli_master: str | None,
    modules: tuple[str, ...],
    watch: Watchdog | None = None,
) -> tuple[SparkSession, str]:
    """An Extract's session: settings from its parameter file, GLOBALS, the environment and
    the command line; its Python workers started with ``modules`` imported. Returns it with
    a line for the report (master, share, where the tasks' code comes from). Raises
    :class:`SparkConfigError` with one line for a setting or a task that fails, or when the
    application does not start within its bound; ``watch`` (:mod:`engine.cluster.watch`)
    then goes on watching the application."""
    return start_session(extract_settings(home, model, name, cli_master), modules, watch)


def extract_settings(
    home: Home, model: ParamFile, name: str, cli_master: str | None
) -> SparkSettings:
    """An Extract's session settings from its parameter file, GLOBALS, the environment and
    the command line (at once, without a JVM): a bad one raises :class:`SparkConfigError`."""
    files = [model.spark, globals_spark(home.globals_file, home.root)]
    return settings_for(
        files,
        home.root,
        cli_master=cli_master,
        app_name=f"ggsci-extract-{name}",
        log_file=home.dirrpt / f"{name}_spark.log",
        ship_dir=home.dirtmp / "ship",
    )


def start_session(
    settings: SparkSettings, modules: tuple[str, ...], watch: Watchdog | None = None
) -> tuple[SparkSession, str]:
    """The session of ``settings`` with its Python workers started (``modules`` imported),
    and its line for the report; :class:`SparkConfigError` when it cannot start (see
    :func:`extract_session`)."""
    watch = watch or Watchdog(Limits())
    try:
        watch.limits = Limits.of(settings.extra)
        watch.follow_log(None if settings.master is None else settings.log_file)
        session = bounded(lambda: get_session(settings), watch)
        sc = session.sparkContext
        if is_local(sc.master):
            watch.started()
        else:
            watch.attach(sc)
        try:
            origins = warm_workers(session, modules)
        except SparkConfigError:
            raise
        except Exception as exc:
            if watch.fault is not None:
                raise watch.fault from None
            line = task_failure(exc)
            text = line or f"The executors' first tasks failed: {cause(exc)}"
            raise SparkConfigError(text) from None
        if watch.fault is not None:
            raise watch.fault
        watch.started()
    except SparkFault as fault:
        watch.close()
        raise SparkConfigError(fault.text, fault.code) from None
    conf = sc.getConf()
    summary = (
        f"Spark master {conf.get('spark.master')} (application {conf.get('spark.app.name')}, "
        f"{sc.applicationId}), {task_slots(session)} task slot(s), "
        f"{batch_splits(session)} split(s) a batch; the tasks run ggsci from " + "; ".join(origins)
    )
    if sc.uiWebUrl:  # SPARKCONF spark.ui.enabled=true
        summary += f"; Spark UI {sc.uiWebUrl}"
    return session, summary


def task_failure(exc: BaseException) -> str | None:
    """The one line a failed Spark job carries from ggsci's own checks in the task (a kernel
    that cannot be loaded), or None."""
    from engine._native import MISSING

    for line in str(exc).splitlines():
        at = line.find(MISSING)
        if at >= 0:
            return line[at + len(MISSING) + 1 :].strip()
    return None


def stop_session() -> None:
    with _lock:
        if _session:
            _session.pop().stop()
        _own_jvm.clear()


def _gateway_process() -> Any:
    """The driver JVM's process PySpark launched for this process (its ``Popen``)."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    return getattr(gateway, "proc", None)


def abandon_session() -> bool:
    """End at once the driver JVM this process launched, after a cluster fault it abends on
    (a frozen executor, a lost master): left to exit by itself, the JVM's shutdown hook
    stops the SparkContext, which waits on the executor that does not answer (about 100 s
    on a frozen one) while the application keeps its cores on the master. Killed, the master
    sees its driver gone and frees them at once. A JVM this process did not launch (under
    ``spark-submit``, whose process it is) is left as it is. Whether one was ended.

    It does not wait for a session start in flight (:func:`get_session` holds ``_lock``
    while the SparkContext registers: Spark's standalone client alone retries a refusing
    master for 60 s): the JVM is ended under it, so the process abends at its start-up bound,
    not a minute later."""
    try:
        proc = _own_jvm.pop()  # (atomic: needs no lock)
    except IndexError:
        proc = None
    if _lock.acquire(blocking=False):  # (else a start in flight: it fails with its JVM)
        _session.clear()
        _lock.release()
    if proc is None or proc.poll() is not None:
        return False
    _quiet_accumulators()
    _quiet_gateway()
    proc.kill()
    proc.wait()
    return True


def _quiet_gateway() -> None:
    """py4j reports a command that meets the killed JVM (a finalizer's delete of a Java
    object the session held, a session start in flight) with ``logging.exception`` on the
    root logger, which with no handler set up prints it and its traceback on standard error
    (test_a_wrong_driver_host caught one under the Extract's one error line): the process
    ends on that line, so a root logger without handlers gets a NullHandler."""
    import logging

    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.NullHandler())


def _quiet_accumulators() -> None:
    """PySpark's accumulator server (a thread of this process the JVM is connected to) sees
    its connection end with the JVM and would print the EOFError's traceback: it is told to
    stop, and what it meets on the way out is not printed."""
    from pyspark import SparkContext

    server = getattr(SparkContext._active_spark_context, "_accumulatorServer", None)
    if server is not None:
        server.server_shutdown = True
        server.handle_error = lambda _request, _address: None
