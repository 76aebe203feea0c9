"""Where a Spark task's time goes: one 16 MB split of the throughput backlog, stage by stage.

Runs the stages of :func:`engine.extract.redo_source.decode_split` one after the other on
one split, in this process, best of ``--repeat`` runs each:

- ``walk_ms``: reading the split and walking it (block headers checked, payloads joined,
  frames and their CRC-32, change vectors, values, events: :meth:`Miner.walk`);
- ``close_ms``: closing the transactions begun and ended in the split;
- ``pack_ms``: pickling and compressing the result;
- ``driver_unpack_ms``: the driver's part, decompressing and unpickling it.

Needs the backlog of ``benchmarks/extract_throughput.py --backlog DIR``. Prints
``name=value`` lines; the last is ``task_ms``, the task's stages together.

    python benchmarks/extract_stages.py --backlog /tmp/xb10k [--split 1] [--repeat 7]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from engine.extract import redo_source as rs
from engine.extract.decode import Selection
from engine.extract.miner import Miner, close, mine_plan
from engine.source.dictionary import load_dictionary


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backlog", type=Path, required=True)
    ap.add_argument("--split", type=int, default=1, help="which 16 MB split of the backlog")
    ap.add_argument("--repeat", type=int, default=7)
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
        packed = rs._packed(rs.SplitResult(split, items, resume, n, sequence, 0, 0))
        t = took("pack_ms", t)
        rs._unpacked(packed)
        took("driver_unpack_ms", t)
    print(f"native={miner._walker is not None}")
    print(f"records={n}")
    print(f"events={len(out)}")
    print(f"result_bytes={len(packed)}")
    for stage, seconds in best.items():
        print(f"{stage}={seconds * 1000:.1f}")
    task = sum(v for k, v in best.items() if k != "driver_unpack_ms")
    print(f"task_ms={task * 1000:.1f}")


if __name__ == "__main__":
    main()
