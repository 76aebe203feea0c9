"""RECOVERYOPTIONS APPENDMODE | OVERWRITEMODE: parsed, checked, and what the Extract and
the pump open their trail with (engine/trail/recovery.py)."""

from __future__ import annotations

import pytest

from engine.trail.recovery import RecoveryMode
from params.check import check_text

BASE = "EXTRACT e1\nUSERID u, PASSWORD p\nEXTTRAIL ./dirdat/aa\n"


@pytest.mark.parametrize(
    ("line", "option", "mode"),
    [
        ("", "APPENDMODE", RecoveryMode.APPEND),
        ("RECOVERYOPTIONS APPENDMODE\n", "APPENDMODE", RecoveryMode.APPEND),
        ("RECOVERYOPTIONS overwritemode\n", "OVERWRITEMODE", RecoveryMode.OVERWRITE),
    ],
)
def test_mode_read_from_the_parameter_file(line: str, option: str, mode: RecoveryMode) -> None:
    r = check_text(BASE + line + "TABLE a.b;\n", "e1.prm")
    assert r.ok, [d.message for d in r.errors]
    assert r.model.recovery_options == option
    assert RecoveryMode.of_option(r.model.recovery_options) is mode
    assert not [d for d in r.diagnostics if "RECOVERYOPTIONS" in d.message]


@pytest.mark.parametrize("line", ["RECOVERYOPTIONS\n", "RECOVERYOPTIONS TRUNCATEMODE\n"])
def test_a_missing_or_unknown_mode_is_one_error(line: str) -> None:
    r = check_text(BASE + line + "TABLE a.b;\n", "e1.prm")
    assert not r.ok
    assert len(r.errors) == 1
    assert "APPENDMODE or OVERWRITEMODE" in r.errors[0].message
