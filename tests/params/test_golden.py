"""Golden renderings of errors: every ``golden/*.prm`` against its ``.out``.

Set ``--regen-golden`` to rewrite the ``.out`` files; every mismatch is reported
together.
"""

from __future__ import annotations

from pathlib import Path

from golden_paths import GOLDEN

from params.check import check_file
from params.errors import render
from tests.harness import golden


def rendering(path: Path) -> str:
    r = check_file(path, env={"TGT_HOST": "target1"}, cwd=path.parent)
    here, up = str(path.parent), str(path.parent.parent)
    lines = [
        render(d).replace(here + "/", "").replace(here, "<golden>").replace(up, "<golden>/..")
        for d in r.diagnostics
    ]
    lines.append(f"ok={r.ok}")
    return "\n".join(lines) + "\n"


def test_golden_error_renderings() -> None:
    cases = sorted(GOLDEN.glob("*.prm"))
    assert cases
    mismatches = []
    for case in cases:
        got = rendering(case)
        expected_file = case.with_suffix(".out")
        if golden.regenerating():
            expected_file.write_text(got)
            continue
        expected = expected_file.read_text() if expected_file.exists() else "<missing>"
        if got != expected:
            mismatches.append(f"--- {case.name}\nexpected:\n{expected}\ngot:\n{got}")
    assert not mismatches, "\n".join(mismatches)
