"""The quickstart's set-up lines name what exists (issue 29: it named ``make venv``, which the
Makefile did not have, and did not say how ``ggsci`` gets on PATH)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "quickstart.md").read_text()


def test_every_make_target_the_quickstart_names_exists() -> None:
    targets = sorted(set(re.findall(r"`make ([a-z.]+)`", PAGE)))
    assert "venv" in targets
    for target in targets:
        dry = subprocess.run(
            ["make", "-n", target], cwd=ROOT, capture_output=True, text=True, check=False
        )
        assert dry.returncode == 0, (target, dry.stderr)


def test_make_venv_says_how_to_put_ggsci_on_path() -> None:
    dry = subprocess.run(
        ["make", "-n", "venv"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "export PATH=" in dry and ".venv/bin" in dry
    assert 'export PATH="$PWD/.venv/bin:$PATH"' in PAGE
