"""Reading Oracle's own redo: framing (blocks, checksums, LWNs, records, vectors), then every
change vector decoded, then the capture of committed transactions; over the 23ai fixture
logs (../shared/corpus/real/oracle-redo/olr-23ai-free), repeated. Prints per stage the
records/s and MB/s, and last ``framing_mb_s=...``.

    python benchmarks/oracle_redo_read.py [--rounds N]
"""

from __future__ import annotations

import argparse
import fnmatch
import time
from pathlib import Path

from engine.redo import capture, dictionary, framing, vectors

HERE = Path(__file__).resolve().parents[1]


def _corpus() -> Path:
    for up in (HERE.parent, *HERE.parent.parents):
        p = up / "shared" / "corpus" / "real" / "oracle-redo" / "olr-23ai-free"
        if p.is_dir():
            return p
    raise SystemExit("corpus absent: ../shared/corpus/real/oracle-redo/olr-23ai-free")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    root = _corpus()
    logs = [(root / n).read_bytes() for n in ("arch1_15_1224959854.dbf", "arch1_16_1224959854.dbf")]
    mb = sum(len(d) for d in logs) / 1e6 * args.rounds
    dic = dictionary.load(root / "TEST-chkpt-2266634.json")

    t0 = time.perf_counter()
    n = sum(1 for _ in range(args.rounds) for d in logs for _r in framing.iter_records(d))
    t_frame = time.perf_counter() - t0

    t0 = time.perf_counter()
    for _ in range(args.rounds):
        for d in logs:
            for r in framing.iter_records(d):
                for v in r.vectors:
                    vectors.decode(v)
    t_dec = time.perf_counter() - t0

    t0 = time.perf_counter()
    txns = 0
    for _ in range(args.rounds):
        cap = capture.Capture(dic, lambda t: fnmatch.fnmatch(t.full_name, "OLR_TEST.*"))
        for d in logs:
            for r in framing.iter_records(d):
                txns += len(cap.feed(r))
    t_cap = time.perf_counter() - t0
    assert txns == args.rounds

    print(f"records={n} bytes_mb={mb:.2f}")
    print(f"decode_all_vectors_records_s={n / t_dec:.0f} decode_all_vectors_mb_s={mb / t_dec:.2f}")
    print(f"capture_records_s={n / t_cap:.0f} capture_mb_s={mb / t_cap:.2f}")
    print(f"framing_records_s={n / t_frame:.0f} framing_mb_s={mb / t_frame:.2f}")


if __name__ == "__main__":
    main()
