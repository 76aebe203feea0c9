"""How fast a large parameter file is checked: a generated 1,000-line Extract file.

Prints ``name=value`` lines; the last is the headline figure (milliseconds per check of
the whole file, median of several runs). Target: well under a second.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from params.check import check_text


def make_file(lines: int) -> str:
    head = [
        "EXTRACT big1",
        "USERIDALIAS ggsrc DOMAIN OracleGoldenGate",
        "EXTTRAIL ./dirdat/bg",
        "BR BRINTERVAL 2H, BRDIR ./BR",
        "WARNLONGTRANS 2H, CHECKINTERVAL 10M",
        "TRANLOGOPTIONS EXCLUDEUSER ggadmin PURGEORPHANEDTRANSACTIONS",
        "MACRO #keys PARAMS (#k) BEGIN KEYCOLS (#k) END;",
        "GETTRUNCATES",
    ]
    body: list[str] = []
    i = 0
    while len(head) + len(body) < lines - 3:
        match i % 4:
            case 0:
                body.append(
                    f"TABLE app{i % 7}.orders_{i}, #keys (id), WHERE (status = 'OPEN'); -- t{i}"
                )
            case 1:
                body.append(f"TABLE app{i % 7}.items_{i},")
                body.append("  COLS (id, sku, qty, price),")
                body.append("  TOKENS (TK_HOST = @GETENV('GGENVIRONMENT', 'HOSTNAME'));")
            case 2:
                body.append(f"TABLEEXCLUDE app{i % 7}.tmp_{i}*")
            case _:
                body.append(f"TABLE app{i % 7}.t{i}, FILTER (@STRFIND(name, 'x') > 0);")
        i += 1
    while len(head) + len(body) < lines:
        body.append(f"-- padding comment {len(body)}")
    return "\n".join(head + body) + "\n"


def main() -> None:
    text = make_file(1000)
    result = check_text(text, "big.prm", env={})
    assert result.ok, result.errors[:3]
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        check_text(text, "big.prm", env={})
        times.append(time.perf_counter() - t0)
    print(f"lines={len(text.splitlines())}")
    print(f"statements={len(result.statements)}")
    print(f"tables={len(result.model.tables)}")
    print(f"best_ms={min(times) * 1000:.1f}")
    print(f"median_ms={statistics.median(times) * 1000:.1f}")


if __name__ == "__main__":
    main()
