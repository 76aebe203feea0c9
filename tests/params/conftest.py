from __future__ import annotations

import os
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "real"
GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("GGSCI_REGEN_GOLDEN") == "1"


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"real-world corpus not present at {CORPUS}")
    return CORPUS
