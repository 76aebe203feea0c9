"""The code a cluster's executors need, packed to travel with the application.

An Extract on a Spark cluster ships ggsci's packages (``engine``, ``params``, ``ggsci``),
with the compiled kernels this interpreter loads, as one zip archive through
``spark.archives``: each executor unpacks it in its working directory under
:data:`UNPACKED` and its Python workers find the packages there first (``PYTHONPATH``, set
by :mod:`engine.cluster.spark`). An executor needs only a Python of the same version (the kernels
are built for it) with ``pyspark`` and ``pyarrow``; ggsci need not be installed there.
The pure-Python libraries the tasks' code imports (:data:`DEPENDENCIES`: ``pyparsing``,
which comes with the expression model of ``FILTER``/``WHERE`` in the mining plan) travel
in the same archive, at the driver's version: pyspark, pyarrow and the standard library
are all an executor's Python needs (docs/cluster.md, "The executors' environment";
``tests/extract/test_executor_env.py`` imports and runs the miner in exactly that).

The archive is built from the files this process imports, so that the executors run
exactly the driver's code; its name carries a digest of its content, so an unchanged
install reuses the archive already built.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

#: ggsci's packages (a task may import any of them).
PACKAGES: Final = ("engine", "params", "ggsci")
#: The other packages a task imports, shipped too (pure Python, the driver's version).
DEPENDENCIES: Final = ("pyparsing",)
#: What an executor's Python must have itself (documented; everything else is shipped).
EXECUTOR_NEEDS: Final = ("pyspark", "py4j", "pyarrow")
#: The directory an executor unpacks the archive into (its working directory's child).
UNPACKED: Final = "ggsci_code"
#: Package data the code reads at run time (params/data/*.txt, the log4j configuration...).
_DATA: Final = (".txt", ".json", ".properties")


class ShipError(Exception):
    """The code cannot be packed (a package is not importable from files)."""


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise ShipError(f"package {name} is not importable from a directory")
    return Path(locations[0])


def _wanted(path: Path) -> bool:
    name = path.name
    if name.endswith(".py") or name.endswith(_DATA):
        return True
    # Only the kernels built for this interpreter (an executor must run the same version).
    return any(name.endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES)


def files() -> Iterator[tuple[str, Path]]:
    """``(name in the archive, file)`` for every file shipped, sorted by name."""
    out: list[tuple[str, Path]] = []
    for pkg in PACKAGES + DEPENDENCIES:
        root = package_dir(pkg)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for f in filenames:
                path = Path(dirpath) / f
                if _wanted(path):
                    out.append((f"{pkg}/{path.relative_to(root).as_posix()}", path))
    yield from sorted(out)


def _ours(path: Path) -> bool:
    """Whether ``path`` is an archive this user built: a regular file (not a link), ours,
    writable by nobody else. Anything else with its name (another user's file planted in
    a directory left open) is built again over it: executors run what the archive holds."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISREG(st.st_mode)
        and st.st_uid == os.geteuid()
        and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def build_archive(dest_dir: Path) -> Path:
    """The zip of :func:`files` in ``dest_dir`` (built unless one with the same content is
    there already)."""
    listing = list(files())
    digest = hashlib.sha256()
    for name, path in listing:
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    out = dest_dir / f"ggsci-code-{digest.hexdigest()[:16]}.zip"
    if _ours(out):
        return out
    dest_dir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)  # (then created anew: a link left there is not written through)
    with open(tmp, "xb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as z:
        for name, path in listing:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, path.read_bytes())
    os.replace(tmp, out)
    return out
