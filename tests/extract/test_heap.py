"""A mining process keeps the C heap a split needs from one split to the next (engine.cluster.heap)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.cluster.heap import users_own
from engine.extract import run as extract_engine
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from params.check import check_text

ROOT = Path(__file__).resolve().parents[2]

#: A split's shape for malloc: three 16 MB buffers at once (the read, the joined payloads,
#: their copy), all free when the split is done; the page faults of each split after the
#: first two, in a fresh interpreter.
SPLITS = """
import json, resource, sys
if sys.argv[1] == "worker":
    from engine.cluster.worker import settle_worker
    settle_worker()
faults = []
for _ in range(6):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    bufs = [b"r" * (16 << 20) for _ in range(3)]
    del bufs
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(json.dumps(faults[2:]))
"""


def _faults(how: str, **env: str) -> list[int]:
    done = subprocess.run(
        [sys.executable, "-c", SPLITS, how],
        capture_output=True, text=True, check=True, cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **env},
    )  # fmt: skip
    faults: list[int] = json.loads(done.stdout)
    return faults


def test_a_settled_worker_takes_no_fresh_pages_split_after_split() -> None:
    buffer = (16 << 20) // 4096  # pages
    # glibc's own thresholds: the free top of the heap (over its 32 MB) goes back to the
    # system after every split, and the next split faults those pages in again (here: 2
    # buffers of the 3 each time)
    assert all(f >= buffer for f in _faults("plain"))
    assert sum(_faults("worker")) < buffer // 10
    # the user's own thresholds stand: here glibc's defaults, written out
    assert all(f >= buffer for f in _faults("worker", MALLOC_TRIM_THRESHOLD_=str(128 << 10)))


def test_the_users_malloc_settings_are_told() -> None:
    assert not users_own({"PATH": "/bin", "GLIBC_TUNABLES": "glibc.rtld.optional_static_tls=1"})
    assert users_own({"MALLOC_MMAP_THRESHOLD_": "65536"})
    assert users_own({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"})


def test_an_extract_keeps_its_heap(
    home: Home, source: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[bool] = []

    def keep() -> bool:
        calls.append(True)
        return True

    monkeypatch.setattr(extract_engine, "keep_heap", keep)
    model = check_text("EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\nTABLE hr.*;\n").model
    ExtractRun(home, model, None, lambda *_: None, spark=None, durable=False).close()
    assert calls == [True]
