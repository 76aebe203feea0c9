"""One table of OGG message codes (engine/messages.py): the code base uses no other code, and
docs/messages.md is what the table generates."""

from __future__ import annotations

import re
from pathlib import Path

from engine.errors import CODE
from engine.messages import DOC, MESSAGES, markdown

ROOT = Path(__file__).resolve().parents[2]


def codes_in_source() -> dict[str, str]:
    found: dict[str, str] = {}
    for package in ("engine", "ggsci", "params"):
        for path in (ROOT / package).rglob("*.py"):
            if path == ROOT / "engine" / "messages.py":
                continue  # the table itself
            for code in CODE.findall(path.read_text()):
                found.setdefault(code, str(path.relative_to(ROOT)))
    return found


def test_every_code_the_code_base_writes_is_in_the_table() -> None:
    missing = {c: f for c, f in codes_in_source().items() if c not in MESSAGES}
    assert not missing, f"add these to engine/messages.py: {missing}"


def test_the_table_holds_no_code_nothing_writes() -> None:
    used = codes_in_source()
    assert sorted(c for c in MESSAGES if c not in used) == []


def test_every_entry_is_a_code_with_a_severity_and_a_meaning() -> None:
    for code, message in MESSAGES.items():
        assert re.fullmatch(r"OGG-\d{5}", code)
        assert message.severity in {"INFO", "WARNING", "ERROR"}
        assert message.meaning.endswith(".")


def test_docs_messages_is_generated_from_the_table() -> None:
    assert DOC.read_text() == markdown(), "run: python -m engine.messages --write"
