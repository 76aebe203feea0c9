"""Heartbeat fixtures: a home with an embedded source SRC and an SQLite file tgt.db, a GGSCI
shell on it (the shell tests' session: fixed clock, user ``tester``), and a clock that
processes can be given so that every timestamp they write is known."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from shell.conftest import Shell

from engine.embedded.database import create_database
from engine.home.layout import Home


@dataclass
class Tick:
    """A clock for one process: returns ``now`` and then moves it on by ``step``."""

    now: datetime
    step: timedelta = timedelta(0)

    def __call__(self) -> datetime:
        t = self.now
        self.now = t + self.step
        return t


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    create_database(h.dirdb, "src")
    sqlite3.connect(h.root / "tgt.db").close()
    return h


@pytest.fixture
def shell(home: Home) -> Shell:
    return Shell(home)
