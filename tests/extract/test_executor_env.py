"""The executor contract (docs/cluster.md, "The executors' environment"): a Python with only
pyspark (and its py4j) and pyarrow, plus the archive the Extract ships, imports everything
a mining task imports and loads a mining plan with FILTER and WHERE expressions in it.
Here without a cluster: an isolated interpreter (``-I -S``: no site-packages, no
``PYTHONPATH``) whose path is the unpacked archive and a directory holding only those
packages. tests/extract/test_cluster.py runs its workers on such an environment too.
"""

from __future__ import annotations

import pickle
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from engine._native import MISSING
from engine.cluster.ship import EXECUTOR_NEEDS, build_archive, package_dir
from engine.cluster.spark import task_failure
from engine.cluster.worker import CANNOT_RUN, FAILED
from engine.extract.redo_source import MINER_MODULES, CannotRun
from params.check import check_text


def bare_site(dest: Path) -> Path:
    """A directory holding only what an executor's Python must have (symbolic links)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in EXECUTOR_NEEDS:
        (dest / name).symlink_to(package_dir(name))
    return dest


def run_bare(tmp_path: Path, code: str, *, drop: tuple[str, ...] = ()) -> list[str]:
    """``code`` run by an isolated Python whose path is the shipped archive (unpacked, less
    the files matching the globs ``drop``) and :func:`bare_site`; its output lines."""
    unpacked = tmp_path / "ggsci_code"
    with zipfile.ZipFile(build_archive(tmp_path / "ship")) as z:
        z.extractall(unpacked)
    for pattern in drop:
        for path in unpacked.glob(pattern):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    site = bare_site(tmp_path / "site")
    head = f"import sys\nsys.path[:0] = [{str(unpacked)!r}, {str(site)!r}]\n"
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", head + code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_a_bare_python_runs_what_a_task_imports(tmp_path: Path) -> None:
    model = check_text(
        "EXTRACT e\nSOURCEDB src\nEXTTRAIL ./dirdat/ra\n"
        "TABLE US03.T, FILTER (FEE > 3), WHERE (NAME = 'x');\n"
    ).model
    plan = tmp_path / "tables.pickle"
    plan.write_bytes(pickle.dumps(model.tables))
    where, kind = run_bare(
        tmp_path,
        "import pickle, importlib\n"
        f"for m in {MINER_MODULES!r}: importlib.import_module(m)\n"
        "from engine.cluster.worker import warm_task\n"
        f"print(warm_task({MINER_MODULES!r}, iter([]))[0])\n"
        f"tables = pickle.loads(open({str(plan)!r}, 'rb').read())\n"
        "print(type(tables[0].filters[0].condition).__name__)\n"
        "bad = [m.__name__ for m in list(sys.modules.values())\n"
        "       if 'site-packages' in (getattr(m, '__file__', None) or '')]\n"
        "assert not bad, bad\n",
    )[:2]
    assert where.startswith(f"{tmp_path / 'ggsci_code'}/engine on "), where
    assert kind == "Binary"


def test_an_executor_without_the_kernels_says_so_in_its_result(tmp_path: Path) -> None:
    """A mining task (and the warm-up task) on a Python that cannot load the kernels
    returns one line instead of failing: Spark cannot retry it on another executor and
    hide the broken one; the driver abends with that line."""
    mined, warmed = run_bare(
        tmp_path,
        "import os\nos.environ['GGSCI_NATIVE'] = 'require'\n"
        "from engine.cluster.worker import run_task, warm_task\n"
        "print(list(run_task('engine.extract.redo_source:mine_task', None, iter([])))[0].decode())\n"
        f"print(warm_task({MINER_MODULES!r}, iter([]))[0])\n",
        drop=("engine/_native/*.so",),  # kernels built for another platform, say
    )[:2]
    assert mined.startswith(CANNOT_RUN.decode() + MISSING), mined
    assert warmed.startswith(FAILED + MISSING), warmed
    line = task_failure(CannotRun(mined.removeprefix(CANNOT_RUN.decode())))
    assert line is not None and line.startswith("the C kernel engine._native.")
    assert "cannot be loaded on host" in line and "GGSCI_NATIVE=0" in line


def test_a_missing_module_on_an_executor_is_one_line(tmp_path: Path) -> None:
    """The modules Spark ships the tasks' functions from (engine.cluster.worker,
    engine.cluster.spark) import without any of ggsci's dependencies, so that an executor
    missing one reports it in one line (the warm-up task's result) rather than failing
    the task with a traceback (Spark would retry it, and the driver print 100 lines)."""
    (line,) = run_bare(
        tmp_path,
        "import engine.cluster.spark\nfrom engine.cluster.worker import warm_task\n"
        f"print(warm_task({MINER_MODULES!r}, iter([]))[0])\n",
        drop=("pyparsing",),  # as if it were not shipped
    )
    assert line.startswith(FAILED) and "cannot run the shipped code" in line, line
    assert "No module named 'pyparsing'" in line
