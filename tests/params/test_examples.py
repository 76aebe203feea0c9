"""The shipped examples: valid ones pass, the broken one fails with its six errors."""

from __future__ import annotations

from pathlib import Path

from params.check import check_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_example_parameter_files_are_valid() -> None:
    files = sorted((EXAMPLES / "dirprm").glob("*.prm"))
    assert {f.name for f in files} >= {"ext1.prm", "pump1.prm", "rep1.prm", "mgr.prm"}
    for f in files:
        r = check_file(f, cwd=EXAMPLES)
        assert r.ok, (f.name, [d.message for d in r.errors])
    ext1 = check_file(EXAMPLES / "dirprm" / "ext1.prm", cwd=EXAMPLES).model
    assert ext1.login.sourcedb == "demo" and ext1.tables[0].keycols == ("employee_id",)


def test_broken_example_reports_every_mistake() -> None:
    r = check_file(EXAMPLES / "broken" / "ext2.prm", cwd=EXAMPLES)
    assert [(d.origin.line, d.origin.col) for d in r.errors] == [
        (6, 15), (6, 31), (7, 17), (7, 41), (8, 16), (9, 21)
    ]  # fmt: skip
