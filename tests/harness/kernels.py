"""The compiled C kernels, for the tests that hold each to its pure-Python twin.

A machine without a C compiler installs without them and runs the Python paths; there the
comparison tests skip, with the reason, instead of failing the whole run at import. Under CI
(``CI=true``, as ``.ci/run`` is run) a kernel missing is an error, never a skip: the
comparisons must run there.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def _reason(name: str) -> str:
    return (
        f"the C kernel engine._native.{name} is not built (no C compiler at install): "
        "its comparison with the Python twin is skipped"
    )


def _required(name: str) -> None:
    """Under CI a kernel that is not there fails the run (it must be built and compared)."""
    if os.environ.get("CI", "").lower() in ("1", "true"):
        raise RuntimeError(f"CI: the C kernel engine._native.{name} is missing or disabled")


def kernel(name: str) -> ModuleType:
    """The kernel, or a skip of the calling test module."""
    if kernel_or_none(name) is None:
        _required(name)
    module: ModuleType = pytest.importorskip(f"engine._native.{name}", reason=_reason(name))
    return module


def kernel_or_none(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"engine._native.{name}")
    except ImportError:
        return None


def needs(name: str) -> pytest.MarkDecorator:
    """Mark one test that compares the kernel ``name`` with its twin."""
    if kernel_or_none(name) is None:
        _required(name)
    return pytest.mark.skipif(kernel_or_none(name) is None, reason=_reason(name))


def loaded(name: str) -> pytest.MarkDecorator:
    """Mark one test that runs the kernel ``name`` the way the engine loads it
    (:func:`engine._native.load`: not when ``GGSCI_NATIVE=0`` disables the kernels)."""
    from engine._native import load

    if load(name) is None:
        _required(name)
    return pytest.mark.skipif(
        load(name) is None,
        reason=f"the C kernel engine._native.{name} is disabled (GGSCI_NATIVE=0) or not built",
    )
