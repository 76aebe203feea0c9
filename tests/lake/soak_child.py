"""The lakehouse Replicat of a soak home as a process of its own (tests/lake/test_lake_soak.py).

``python soak_child.py HOME KIND [--die-after N] [--mutate]``: apply the trail to its end
and exit 0. ``--die-after N``: SIGKILL itself right after the N-th table commit (a kill
between that step and the next). ``--mutate``: the deliberate fault the audit must catch,
table commits that carry the data without the Replicat's position.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "replicat"))


def main(argv: list[str]) -> int:
    from lakehelp import lake_run

    from engine.home.layout import Home
    from engine.targets.lake import tables
    from engine.targets.lake.delta import DeltaLakeTable
    from engine.targets.lake.iceberg import IcebergTable

    root, kind = Path(argv[0]), argv[1]
    die_after = int(argv[argv.index("--die-after") + 1]) if "--die-after" in argv else None
    if "--mutate" in argv:
        from deltalake import CommitProperties

        DeltaLakeTable._record = lambda self, stamp: CommitProperties()  # type: ignore[method-assign]
        IcebergTable._record = lambda self, stamp: {}  # type: ignore[method-assign]
    if die_after is not None:
        commits = [0]
        for name in ("commit_apply", "commit_append", "commit_reduced", "commit_table"):
            for cls in (DeltaLakeTable, IcebergTable):
                original = getattr(cls, name)

                def counted(self, *a, _o=original):  # type: ignore[no-untyped-def]
                    _o(self, *a)
                    commits[0] += 1
                    if commits[0] >= die_after:
                        os.kill(os.getpid(), signal.SIGKILL)

                setattr(cls, name, counted)
    assert tables  # (imported for the patches' classes)
    home = Home(root)
    r, _ = lake_run(home, kind, (root / "maps.txt").read_text(), ops=6, reuse=True)
    r.run(lambda: False, stop_at_eof=True, idle=0.01)
    r.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
