"""Numeric ranges come from each parameter's own reference page, even where two parameters
share an option name (issue 29: DISCARDFILE MEGABYTES 4096, from a held-out real file, was
refused with the trail's 1 to 2000)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.replicat.discard import DiscardFile
from params.check import check_text

REPLICAT = "REPLICAT r\nTARGETDB x\n{}\nMAP a.b, TARGET a.b;\n"
EXTRACT = "EXTRACT e\nSOURCEDB s\n{}\nTABLE a.b;\n"


def _errors(text: str) -> list[str]:
    return [d.message for d in check_text(text).diagnostics if d.is_error]


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("DISCARDFILE ./dirrpt/r.dsc, MEGABYTES 4096, PURGE", None),
        ("DISCARDFILE ./dirrpt/r.dsc, MEGABYTES 4097", "MEGABYTES must be 1 to 4096 (got 4097)"),
        ("DISCARDFILE ./dirrpt/r.dsc, MEGABYTES 0", "MEGABYTES must be 1 to 4096 (got 0)"),
        ("DISCARDFILE ./dirrpt/r.dsc, MAXBYTES 2147483646", None),
        ("DISCARDFILE ./dirrpt/r.dsc, MAXBYTES 2147483647", "MAXBYTES must be 1 to 2147483646"),
        ("DISCARDFILE ./dirrpt/r.dsc, MAXBYTES 10, MEGABYTES 1", "MAXBYTES or MEGABYTES, not both"),
    ],
)
def test_discardfile_sizes_use_the_discardfile_page(line: str, error: str | None) -> None:
    errors = _errors(REPLICAT.format(line))
    assert (errors == []) if error is None else any(error in e for e in errors), errors


@pytest.mark.parametrize(
    "line", ["EXTTRAIL ./dirdat/aa, MEGABYTES 2001", "EXTFILE ./dirdat/x, MEGABYTES 2001"]
)
def test_trail_and_file_megabytes_keep_their_own_range(line: str) -> None:
    assert any("MEGABYTES must be 1 to 2000 (got 2001)" in e for e in _errors(EXTRACT.format(line)))


def test_maxbytes_acts_on_the_discard_file(tmp_path: Path) -> None:
    model = check_text(REPLICAT.format("DISCARDFILE ./dirrpt/r.dsc, MAXBYTES 1000")).model
    assert model.discard is not None and model.discard.max_bytes == 1000
    d = DiscardFile(tmp_path / "r.dsc", append=False, megabytes=None, max_bytes=1000)
    assert d.limit == 1000
    assert DiscardFile(tmp_path / "s.dsc", append=False, megabytes=4096).limit == 4096 << 20
