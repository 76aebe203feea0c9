"""Optional C kernels for the hottest loops (built by ``setup.py`` when a compiler is there).

Each kernel has a pure-Python twin that is the readable statement of what it does and the
reference its tests compare it with. :func:`load` returns the compiled module, or None when
it was not built or when ``GGSCI_NATIVE=0`` is set in the environment (to run, measure or
test the Python paths).

``GGSCI_NATIVE=require`` makes a kernel that cannot be loaded an error
(:class:`KernelMissing`) instead of a silent fallback to Python, several times slower. The
Extract sets it in the Spark tasks of a cluster (``spark.executorEnv``, engine/cluster/spark.py):
there a missing kernel means that the shipped code did not reach an executor or does not
fit its interpreter, and the task must fail saying so.
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
from types import ModuleType
from typing import Final

#: The compiled kernels (``engine/_native/<name>.c``).
KERNELS: Final = ("pgdecode", "redomine", "redopack", "rowscan", "trailkit", "txngroup")
#: The start of :class:`KernelMissing`'s message (the driver finds it in a task's failure).
MISSING: Final = "GGSCI-KERNEL-MISSING"


class KernelMissing(ImportError):
    """A kernel required by ``GGSCI_NATIVE=require`` could not be imported."""


def mode() -> str:
    """``0`` (Python paths), ``require`` (kernels or fail) or ``1`` (kernels when built)."""
    return os.environ.get("GGSCI_NATIVE", "1").strip().lower() or "1"


def enabled() -> bool:
    """False when ``GGSCI_NATIVE=0`` asks for the pure-Python paths."""
    return mode() != "0"


def load(name: str) -> ModuleType | None:
    """The compiled kernel ``engine._native.<name>``, or None (not built, or disabled)."""
    if not enabled():
        return None
    try:
        return importlib.import_module(f"engine._native.{name}")
    except ImportError as exc:
        if mode() == "require":
            raise KernelMissing(
                f"{MISSING}: the C kernel engine._native.{name} cannot be loaded on host "
                f"{socket.gethostname()} by {sys.executable} ({exc}). Ship the compiled "
                "kernels with the application (docs/cluster.md) or set GGSCI_NATIVE=0 to "
                "run the Python code paths."
            ) from exc
        return None


def available() -> bool:
    """Whether every kernel loads here (the driver checks this before it ships them)."""
    return enabled() and all(_loads(n) for n in KERNELS)


def _loads(name: str) -> bool:
    try:
        importlib.import_module(f"engine._native.{name}")
    except ImportError:
        return False
    return True
