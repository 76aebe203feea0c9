"""Cut seed 002's redo dumps into test-vector files (run once; the output is committed).

Each example section of the seed contributes the text of its redo records, from each
``REDO RECORD`` line up to the seed's "The above redo record consists..." commentary.
Usage: ``python tests/source/cut_seed_vectors.py SEED_FILE OUT_DIR``.
"""

from __future__ import annotations

import sys
from pathlib import Path

SECTIONS = [
    ("Single Row Insertion", "01_single_row_insert"),
    ("Single Row Updates", "02_single_row_update"),
    ("Single row deletes", "03_single_row_delete"),
    ("Multi-Row Updates", "04_multi_row_update"),
    ("Multi-Row Deletes", "05_multi_row_delete"),
    ("Array Inserts", "06_array_insert"),
    ("Direct load inserts", "07_direct_path_insert"),
]


def cut(seed: list[str]) -> dict[str, list[str]]:
    starts = [seed.index(title) for title, _ in SECTIONS] + [len(seed)]
    out: dict[str, list[str]] = {}
    for (_, name), lo, hi in zip(SECTIONS, starts, starts[1:], strict=False):
        lines: list[str] = []
        inside = False
        for line in seed[lo:hi]:
            if line.startswith("REDO RECORD"):
                inside = True
            elif line.startswith("The above redo record consists"):
                inside = False
            if inside:
                lines.append(line)
        out[name] = lines
    return out


def main() -> None:
    seed = Path(sys.argv[1]).read_text(encoding="utf-8").splitlines()
    outdir = Path(sys.argv[2])
    for name, lines in cut(seed).items():
        (outdir / f"{name}.dump").write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
