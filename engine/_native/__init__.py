"""Optional C kernels for the hottest loops (built by ``setup.py`` when a compiler is there).

Each kernel has a pure-Python twin that is the readable statement of what it does and the
reference its tests compare it with. :func:`load` returns the compiled module, or None when
it was not built or when ``GGSCI_NATIVE=0`` is set in the environment (to run, measure or
test the Python paths).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def enabled() -> bool:
    """False when ``GGSCI_NATIVE=0`` asks for the pure-Python paths."""
    return os.environ.get("GGSCI_NATIVE", "1") != "0"


def load(name: str) -> ModuleType | None:
    """The compiled kernel ``engine._native.<name>``, or None (not built, or disabled)."""
    if not enabled():
        return None
    try:
        return importlib.import_module(f"engine._native.{name}")
    except ImportError:
        return None
