"""``TRANLOGOPTIONS ALTARCHIVELOGDEST`` names where an Extract reads archived logs: a
relative path (it would point wherever the Extract runs from: the Manager starts it in the
home, ``ggsci extract paramfile`` in the user's directory) and a control character are
refused by ``params check`` at the path's position, never followed at run time."""

from __future__ import annotations

import pytest

from params.check import check_text

PRM = (
    "EXTRACT e1\nSOURCEDB ora\nTRANLOGOPTIONS ARCHIVEDLOGONLY\n"
    "TRANLOGOPTIONS ALTARCHIVELOGDEST {dest}\nEXTTRAIL ./dirdat/aa\nTABLE A.*;\n"
)


@pytest.mark.parametrize(
    ("dest", "said"),
    [
        ("arch", "arch: give the absolute path"),
        ("./arch", "./arch: give the absolute path"),
        ("../../x", "../../x: give the absolute path"),
        ("~/arch", "~/arch: give the absolute path"),
        ("INSTANCE ora1 arch", "arch: give the absolute path"),
        ('"/a\x00b"', "holds a control character"),
        ('"/a\x01b"', "holds a control character"),
    ],
)
def test_a_relative_or_control_character_destination_is_refused(dest: str, said: str) -> None:
    result = check_text(PRM.format(dest=dest))
    (error,) = [d for d in result.diagnostics if d.code == "value"]
    assert error.message.startswith("TRANLOGOPTIONS ALTARCHIVELOGDEST ") and said in error.message
    assert error.origin.line == 4 and error.origin.col >= 34


@pytest.mark.parametrize(
    "dest", ["/abs/arch", "'/with space/arch'", "s3://b/x?region=r", "file:///mnt/arch",
             "PRIMARY INSTANCE ora1 /arch/1"],
)  # fmt: skip
def test_an_absolute_path_or_a_storage_url_is_taken(dest: str) -> None:
    result = check_text(PRM.format(dest=dest))
    assert not [d for d in result.diagnostics if d.code == "value"], result.diagnostics
    assert result.model is not None and len(result.model.tranlog.alt_archive_log_dests) == 1
