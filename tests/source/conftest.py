"""Fixtures for the embedded source database tests: fresh databases on a manual clock."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest

from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database

VECTORS = Path(__file__).parent / "vectors"
SQL = Path(__file__).parent / "sql"


@pytest.fixture
def make_db(tmp_path: Path) -> Iterator[Callable[..., Database]]:
    """``make_db(name="DB", threads=1, log_bytes=...)`` -> an open database (closed after)."""
    opened: list[Database] = []

    def make(name: str = "DB", threads: int = 1, log_bytes: int = 64 * 1024 * 1024) -> Database:
        root = tmp_path / name
        if not (root / "data.sqlite").exists():
            create_database(tmp_path, name, threads, log_bytes)
        db = Database(root, clock=ManualClock(datetime(2013, 3, 31, 23, 59, 58), step=0.5))
        opened.append(db)
        return db

    yield make
    for db in opened:
        with contextlib.suppress(Exception):  # already closed by the test
            db.close()
