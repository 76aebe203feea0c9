"""The C heap of a long-lived mining process: a Spark task's Python worker keeps the memory a
split needs instead of handing it back to the system after every split.

A split of redo is read into a 16 MB buffer, joined into a second one and copied into a
third, beside the events made from it: about 50 MB of C heap that is free again when the
split is done. glibc's malloc gives the top of its heap back to the system once more than
its trim threshold (by default twice its last large free, at most 64 MB) lies free there,
and a worker's next split then takes every page again as a fresh, zeroed page fault. In a
``local[2]`` catch-up of a million row changes the two Python workers took about 175,000
such faults, with 0.55–1.17 s of system CPU (73,000 and 0.25–0.45 s with this); a miner
looping over splits in one process, whose heap holds other things above the split's, took
none after its first two (benchmarks/extract_scaling.py; docs/cluster.md, "Sizing" and
"Scaling on this machine"). The driver's mining threads, whose malloc arenas
grew and shrank about 4,700 times in the same catch-up, keep theirs the same way.

:func:`keep_heap` fixes the thresholds (which also stops glibc's adjusting them): blocks of
up to :data:`MMAP_AT` come from the heap, and free memory at its top is kept up to
:data:`KEEP_FREE`. A worker's resident memory stays at its largest split's, at most that
much more than without it. Python's own object arenas are not affected (they are mapped
apart from malloc's heap). Elsewhere than glibc (macOS, musl) it does nothing, and where
the process's environment sets malloc's thresholds itself (:data:`USER_SETTINGS`: on
executors through ``spark.executorEnv.*``) those stand.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Final

#: glibc's mallopt(3) parameters.
M_TRIM_THRESHOLD: Final = -1
M_MMAP_THRESHOLD: Final = -3

#: Free memory kept at the top of the heap: a split's buffers (3 × 16 MB) with its events
#: and results, twice over for a split larger than the default.
KEEP_FREE: Final = 256 << 20
#: Blocks below this come from the heap, not mmap(2): glibc's largest on 64-bit (a 16 MB
#: split's buffers are under it; mallopt refuses more).
MMAP_AT: Final = 32 << 20


#: Environment variables by which a user sets glibc's malloc thresholds.
USER_SETTINGS: Final = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_")


def users_own(environ: Mapping[str, str]) -> bool:
    """Whether ``environ`` sets malloc's thresholds (:data:`USER_SETTINGS`, or a
    ``glibc.malloc`` tunable in ``GLIBC_TUNABLES``)."""
    return any(k in environ for k in USER_SETTINGS) or "glibc.malloc." in environ.get(
        "GLIBC_TUNABLES", ""
    )


def _glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError):  # not a name this system knows (musl, macOS)
        return False


@functools.cache
def keep_heap() -> bool:
    """Fix this process's malloc thresholds (once; a worker calls it when it settles:
    :func:`engine.cluster.worker.settle_worker`). True when they were set; False when
    the environment sets them (:func:`users_own`), the C library is not glibc or it refused
    them."""
    if users_own(os.environ) or not _glibc():
        return False
    import ctypes  # (here: only a process that mines needs it)

    # the C library the interpreter is linked with (no search: find_library runs ldconfig)
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_AT)) and bool(mallopt(M_TRIM_THRESHOLD, KEEP_FREE))
