from __future__ import annotations

from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "real"


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"real-world corpus not present at {CORPUS}")
    return CORPUS
