"""Paths of the real Oracle redo material (outside the repository; tests skip without it)."""

from __future__ import annotations

from pathlib import Path

import pytest


def _root() -> Path:
    """``../shared/corpus/real`` from the repository root (a worktree may sit one level deeper)."""
    repo = Path(__file__).resolve().parents[2]
    for up in (repo.parent, *repo.parent.parents):
        cand = up / "shared" / "corpus" / "real" / "oracle-redo"
        if cand.is_dir():
            return cand
    return repo.parent / "shared" / "corpus" / "real" / "oracle-redo"


ROOT = _root()
OLR = ROOT / "olr-23ai-free"
ORACDC = ROOT / "oracdc-19c"
LOG15 = OLR / "arch1_15_1224959854.dbf"
LOG16 = OLR / "arch1_16_1224959854.dbf"
CHECKPOINT = OLR / "TEST-chkpt-2266634.json"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"corpus absent: {path}")
    return path
