"""Shell fixtures: a fresh home, a session on string streams with a fixed clock and host,
and golden-file comparison (``--regen-golden`` rewrites the files)."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from engine.home.layout import Home
from ggsci.dispatch.table import bind, execute
from ggsci.session import Session
from tests.harness import golden

GOLDEN = Path(__file__).parent / "golden"
FIXED_NOW = datetime(2026, 3, 14, 9, 26, 53)


class Shell:
    """A GGSCI session driven by a test: :meth:`run` returns what one command printed."""

    def __init__(self, home: Home, answers: list[str] | None = None) -> None:
        self.out = io.StringIO()
        self.answers = list(answers or [])
        self.prompts: list[str] = []
        self.edits: list[list[str]] = []
        self.now = FIXED_NOW
        self.session = bind(
            Session(
                home,
                self.out,
                read_line=self._answer,
                read_secret=self._answer,
                clock=lambda: self.now,
                host="testhost",
                user="tester",
                editor=self._edit,
            )
        )
        self.ok = True

    def _answer(self, prompt: str) -> str | None:
        self.prompts.append(prompt)
        return self.answers.pop(0) if self.answers else None

    def _edit(self, argv: list[str]) -> int:
        self.edits.append(argv)
        return 0

    def run(self, line: str) -> str:
        start = self.out.tell()
        outcome = execute(self.session, line)
        self.ok = outcome.ok
        self.out.seek(start)
        text = self.out.read()
        self.out.seek(0, io.SEEK_END)
        return text


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "gghome")
    h.create_subdirs()
    return h


@pytest.fixture
def shell(home: Home) -> Shell:
    return Shell(home)


def check_golden(name: str, text: str, home: Home | None = None) -> None:
    """Compare ``text`` with ``golden/<name>``; the home's path is written as ``$GGHOME``."""
    if home is not None:
        text = text.replace(str(home.root), "$GGHOME")
    golden.check(GOLDEN / name, text)


@pytest.fixture
def root_home() -> Iterator[Home]:
    """A home every user may search the way to (tests as another user, trust_helpers)."""
    from .trust_helpers import open_home

    home = open_home()
    try:
        yield home
    finally:
        shutil.rmtree(home.root.parent, ignore_errors=True)
