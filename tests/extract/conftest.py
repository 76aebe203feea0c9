"""Fixtures for Extract tests: a home with an embedded source database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.home.layout import Home


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    return h


SqlRunner = Callable[[str, str], None]


@pytest.fixture
def source(home: Home) -> Iterator[tuple[Path, Callable[[], Database]]]:
    """The root of database SRC and a function that opens it (one opener at a time)."""
    root = create_database(home.dirdb, "src", threads=2)
    yield root, lambda: Database(root)


def run_sql(db: Database, script: list[tuple[str, str]]) -> None:
    """Run ``(session, statement)`` pairs in order, sessions created on first use."""
    sessions = {}
    for name, sql in script:
        if name not in sessions:
            sessions[name] = db.session(name)
        execute(db, sessions[name], sql)
