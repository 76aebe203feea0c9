"""The lakehouse Replicat's tests use the trail helpers of tests/replicat."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "replicat"))
