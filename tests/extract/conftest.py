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


def rewrite_header(log: Path, **changes: int) -> None:
    """Blocks 0 and 1 of Oracle log ``log`` rewritten with ``changes`` to its header
    (:class:`engine.redo.framing.LogHeader` fields) and resealed; block 0's block count made
    to agree with the header's."""
    from dataclasses import replace

    from engine.redo import framing
    from engine.redo.onlinelog import header_blocks

    data = bytearray(log.read_bytes())
    h = framing.read_header(data)
    new = replace(h, **changes)
    data[: 2 * h.block_size] = header_blocks(new, new.blocks, max(new.blocks, h.file_blocks + 1))
    log.write_bytes(bytes(data))
