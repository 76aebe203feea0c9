"""``python -m engine.runtime.daemon OUTFILE CMD...``: start CMD fully detached, then exit at once.

The caller waits for this short-lived process, so the daemon it leaves behind is nobody's child:
it survives the caller, is reaped by init, and its output goes to OUTFILE.
"""

from __future__ import annotations

import subprocess
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("usage: python -m engine.runtime.daemon OUTFILE CMD...\n")
        return 2
    with open(argv[0], "ab") as out:
        subprocess.Popen(
            argv[1:],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
