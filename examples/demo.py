"""``make demo``: what ggsci does today, run the way a user runs it.

1. Checks the example parameter files (``ggsci params check``) and shows one rendered.
2. Checks a broken file and shows the positioned errors GoldenGate users get.
Each later part of the product extends this script with what it adds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def ggsci(*args: str, cwd: Path = HERE) -> int:
    cmd = [sys.executable, "-m", "ggsci", *args]
    print(f"\n$ ggsci {' '.join(args)}", flush=True)
    return subprocess.run(cmd, cwd=cwd, check=False).returncode


def banner(text: str) -> None:
    print(f"\n{'=' * 78}\n{text}\n{'=' * 78}", flush=True)


def main() -> int:
    banner("1. The example parameter files are valid")
    files = sorted(str(p.relative_to(HERE)) for p in (HERE / "dirprm").glob("*.prm"))
    if ggsci("params", "check", "--quiet", *files) != 0:
        print("demo: the example files should be valid", file=sys.stderr)
        return 1
    ggsci("params", "show", "dirprm/pump1.prm")

    banner("2. A file with mistakes: every problem, with its position")
    if ggsci("params", "check", "broken/ext2.prm") != 1:
        print("demo: the broken file should fail the check", file=sys.stderr)
        return 1
    print("\n(exit status 1: the file has errors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
