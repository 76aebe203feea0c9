"""TRANLOGOPTIONS ALTARCHIVEDLOGFORMAT checked by ``params check`` with the rule the Extract
reads names by (params/archformat.py, re-used by engine/redo/archnames.py): a format the
Extract cannot tell sequences apart by is a positioned error naming the parameter, not an
abend when the Extract starts."""

from __future__ import annotations

import pytest

from params.check import check_text

BASE = "EXTRACT e1\nSOURCEDB ORA23\nEXTTRAIL ./dirdat/aa\n"


@pytest.mark.parametrize(
    ("fmt", "says"),
    [
        ("'log_%t_%r.arc'", "has no %s"),
        ("arch/%t_%s_%r.dbf", "names a directory"),
        ("''", "is empty"),
    ],
)
def test_a_format_the_extract_cannot_read_by_is_a_positioned_error(fmt: str, says: str) -> None:
    line = f"TRANLOGOPTIONS ARCHIVEDLOGONLY, ALTARCHIVEDLOGFORMAT {fmt}\n"
    r = check_text(BASE + line + "TABLE a.b;\n", "e1.prm")
    assert not r.ok
    (err,) = r.errors
    assert err.message.startswith("TRANLOGOPTIONS ALTARCHIVEDLOGFORMAT") and says in err.message
    col = line.index(fmt) + 1  # at the format itself
    assert (err.origin.line, err.origin.col) == (4, col), err
    assert r.model.tranlog.alt_archived_log_format is None


@pytest.mark.parametrize("fmt", ["arch%t_%s_%r.dbf", "'%h_%S.arc'", "o1_mf_%t_%s_%h_.arc"])
def test_a_format_with_a_sequence_is_taken(fmt: str) -> None:
    line = f"TRANLOGOPTIONS ARCHIVEDLOGONLY, ALTARCHIVEDLOGFORMAT {fmt}\n"
    r = check_text(BASE + line + "TABLE a.b;\n", "e1.prm")
    assert r.ok, [d.message for d in r.errors]
    assert r.model.tranlog.alt_archived_log_format == fmt.strip("'")
