"""Where a Spark task's time goes: one 16 MB split of the throughput backlog, stage by stage.

Runs the stages of :func:`engine.extract.redo_source.decode_split` one after the other on
one split, in this process, best of ``--repeat`` runs each:

- ``walk_ms``: reading the split and walking it (block headers checked, payloads joined,
  frames and their CRC-32, change vectors, values, events: :meth:`Miner.walk`);
- ``close_ms``: closing the transactions begun and ended in the split;
- ``pack_ms``: pickling and compressing the result (``pickle_ms`` and ``compress_ms``
  of it, with the codec of ``redo_source._CODEC``);
- ``driver_unpack_ms``: the driver's part, decompressing and unpickling it.

``--codecs`` also prints, per codec pyarrow has (zstd at several levels, lz4, none), the
compressed size and the milliseconds to compress and decompress this split's result.

Needs the backlog of ``benchmarks/extract_throughput.py --backlog DIR``. Prints
``name=value`` lines; the last is ``task_ms``, the task's stages together.

    python benchmarks/extract_stages.py --backlog /tmp/xb10k [--split 1] [--repeat 7]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from engine.embedded.dictionary import load_dictionary
from engine.extract import redo_source as rs
from engine.extract.tasks.closing import close
from engine.extract.tasks.decode import Selection
from engine.extract.tasks.miner import Miner
from engine.extract.tasks.plan import mine_plan


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backlog", type=Path, required=True)
    ap.add_argument("--split", type=int, default=1, help="which 16 MB split of the backlog")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--codecs", action="store_true", help="compare the result codecs too")
    args = ap.parse_args()
    root = args.backlog / "BENCH"
    plan = mine_plan(load_dictionary(root / "dictionary.json"), Selection(everything=True))
    miner = Miner(plan)
    split = rs.plan(root / "redo", {}, 16 << 20)[args.split]
    best: dict[str, float] = {}

    def took(stage: str, since: float) -> float:
        now = time.perf_counter()
        best[stage] = min(best.get(stage, float("inf")), now - since)
        return now

    for _ in range(args.repeat):
        t = time.perf_counter()
        out, n, resume, sequence = miner.walk(split.path, split.start, split.end)
        t = took("walk_ms", t)
        items = close(out, plan, sequence)
        t = took("close_ms", t)
        result = rs.SplitResult(split, items, resume, n, sequence, 0, 0)
        packed = rs._packed(result)
        t = took("pack_ms", t)
        rs._unpacked(packed)
        t = took("driver_unpack_ms", t)
        raw = rs._pickled(result)
        t = took("pickle_ms", t)
        rs._codec().compress(raw, asbytes=True)
        took("compress_ms", t)
    print(f"native={miner._walker is not None}")
    print(f"records={n}")
    print(f"events={len(out)}")
    print(f"result_bytes={len(packed)}")
    for stage, seconds in best.items():
        print(f"{stage}={seconds * 1000:.1f}")
    if args.codecs:
        _codecs(raw, args.repeat)
    task = sum(v for k, v in best.items() if k in ("walk_ms", "close_ms", "pack_ms"))
    print(f"task_ms={task * 1000:.1f}")


def _codecs(raw: memoryview, repeat: int) -> None:
    """``codec=<name>:<level> bytes=... compress_ms=... decompress_ms=...`` lines."""
    import pyarrow as pa

    print(f"codec=none bytes={len(raw)} compress_ms=0 decompress_ms=0")
    for name, level in (("zstd", 1), ("zstd", -1), ("zstd", -3), ("zstd", -5), ("lz4", None)):
        codec = pa.Codec(name, compression_level=level)
        done: dict[str, float] = {}
        for _ in range(repeat):
            t = time.perf_counter()
            packed = codec.compress(raw, asbytes=True)
            t2 = time.perf_counter()
            codec.decompress(packed, decompressed_size=len(raw), asbytes=True)
            t3 = time.perf_counter()
            done["c"] = min(done.get("c", 1e9), t2 - t)
            done["d"] = min(done.get("d", 1e9), t3 - t2)
        print(
            f"codec={name}:{level} bytes={len(packed)} compress_ms={done['c'] * 1000:.1f} "
            f"decompress_ms={done['d'] * 1000:.1f}"
        )


if __name__ == "__main__":
    main()
