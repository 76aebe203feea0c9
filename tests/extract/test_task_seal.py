"""The tasks seal the records of the transactions they close (MinePlan.seal: the trail's
CHECKSUM tokens made where the work is parallel, not on the driver): the trail is the one
the driver's own sealing writes, in one process and on Spark."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from engine.embedded.sql import execute
from engine.extract.capture import Capture
from engine.trail.writer import TrailWriter
from tests.harness.livecheck import capture_for, trail_content

from .test_rac_live import drain, two_threads

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _source(tmp_path: Path) -> tuple[Any, Path]:
    """Transactions of 1 to 5 rows on two threads, one rolled back."""
    home, root, db, a, b = two_threads(tmp_path)
    for t in range(30):
        s = a if t % 2 else b
        for i in range(1 + t % 5):
            execute(db, s, f"INSERT INTO wl.t VALUES ({100 * t + i})")
        execute(db, s, "ROLLBACK" if t == 7 else "COMMIT")
    db.close()
    return home, root


def _capture(home: Any, root: Path, trail: str, spark: SparkSession | None) -> bytes:
    cap, writer = capture_for(home, root, trail, spark)
    drain(cap)
    cap.close()
    writer.close()
    return trail_content(home, trail)[1]


@pytest.fixture
def noted(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each closed transaction the driver wrote came sealed."""
    seen: list[bool] = []
    real = Capture._close

    def close(self: Capture, c: Any, out: list[bytes]) -> None:
        if c.count:
            seen.append(c.sealed)
        real(self, c, out)

    monkeypatch.setattr(Capture, "_close", close)
    return seen


def test_sealed_in_the_miner_is_the_drivers_trail(
    tmp_path: Path, noted: list[bool], monkeypatch: pytest.MonkeyPatch, spark: SparkSession
) -> None:
    home, root = _source(tmp_path)
    tasks = _capture(home, root, "ts", spark)  # sealed in the Spark tasks
    assert noted and all(noted)
    here = _capture(home, root, "hs", None)  # sealed by the miner in this process
    assert all(noted)
    noted.clear()
    monkeypatch.setattr(TrailWriter, "seals_records", property(lambda self: False))
    driver = _capture(home, root, "dr", None)  # sealed by the writer, as before
    assert noted and not any(noted)
    assert tasks == here == driver
