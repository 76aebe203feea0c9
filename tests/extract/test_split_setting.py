"""``GGSCI_EXTRACT_SPLIT_MB``: a whole number of MB from 1, anything else the default (a split
of 0 bytes would read nothing and never move on)."""

from __future__ import annotations

import pytest

from engine.extract import run
from engine.extract.redo_source import DEFAULT_SPLIT_BYTES


@pytest.mark.parametrize(
    ("value", "want"),
    [("1", 1 << 20), ("64", 64 << 20), ("0", DEFAULT_SPLIT_BYTES), ("00", DEFAULT_SPLIT_BYTES),
     ("-1", DEFAULT_SPLIT_BYTES), ("1.5", DEFAULT_SPLIT_BYTES), ("", DEFAULT_SPLIT_BYTES)],
)  # fmt: skip
def test_the_split_size_setting(monkeypatch: pytest.MonkeyPatch, value: str, want: int) -> None:
    monkeypatch.setenv("GGSCI_EXTRACT_SPLIT_MB", value)
    assert run._split_bytes() == want
