"""Where the golden files of the params tests are, and whether to regenerate them."""

from __future__ import annotations

from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
