"""Golden files: one switch to regenerate them and one comparison.

Regenerate with ``make test PYTEST_ARGS=--regen-golden`` (``pytest --regen-golden``, set by
tests/conftest.py) or ``GGSCI_REGEN_GOLDEN=1``; a test then writes what it got and passes, and
``git diff`` shows what changed. Otherwise a missing or different file fails, naming itself.
"""

from __future__ import annotations

import os
from pathlib import Path

_REGEN = [os.environ.get("GGSCI_REGEN_GOLDEN") == "1"]


def set_regenerating(on: bool) -> None:
    _REGEN[0] = _REGEN[0] or on


def regenerating() -> bool:
    return _REGEN[0]


def check(path: Path, text: str) -> None:
    """``text`` against the golden file ``path`` (written instead while regenerating)."""
    if regenerating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"missing golden file {path}; run with --regen-golden"
    assert text == path.read_text(), f"{path.name} differs from its golden file"
