"""The shell imports Logdump: the trail and Logdump packages must not pull in pyspark."""

from __future__ import annotations

import subprocess
import sys


def test_trail_and_logdump_do_not_import_pyspark() -> None:
    code = (
        "import sys, engine.trail, engine.logdump, engine.logdump.dump, ggsci.cli_logdump;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
