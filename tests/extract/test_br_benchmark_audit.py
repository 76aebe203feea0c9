"""benchmarks/br_recovery.py's audit of lost and duplicated transactions, proven by deliberate
mutations of a real trail (issue 29): a crash run's trail is compared with a run that never
crashed; dropping a transaction, repeating one, changing a record of one and slipping in a
foreign one are each caught, and the untouched trail audits clean."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from engine.trail import TrailRecord, TrailWriter, encode_record
from engine.trail.layout import IOType, TransInd
from engine.trail.recovery import restart_marker

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "br_recovery.py"


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("br_recovery", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def _txn(xid: str, keys: list[int]) -> list[bytes]:
    n = len(keys)
    return [
        encode_record(
            TrailRecord(
                io_type=IOType.INSERT,
                table="WL.WL_T01",
                columns=((0, str(k)), (1, "v")),
                trans_ind=TransInd.of(i, n),
                logcsn="100" if i == 0 else None,
                tranid=xid if i == 0 else None,
            )
        )
        for i, k in enumerate(keys)
    ]


def _home(root: Path, txns: list[list[bytes]]) -> Path:
    with TrailWriter.open(root / "dirdat" / "lt", durable=False) as writer:
        for records in txns:
            writer.append(*records)
    return root


def test_the_audit_catches_each_mutation(tmp_path: Path) -> None:
    bench = _benchmark()
    clean = [_txn(f"1.{i}.7", [i * 10, i * 10 + 1]) for i in range(5)]
    want = bench.transactions(_home(tmp_path / "clean", clean))
    assert len(want) == 5
    same = bench.transactions(_home(tmp_path / "same", clean))
    assert bench.audit(want, same) == (0, 0)
    dropped = bench.transactions(_home(tmp_path / "dropped", clean[:2] + clean[3:]))
    assert bench.audit(want, dropped) == (1, 0)
    repeated = bench.transactions(_home(tmp_path / "repeated", [*clean, clean[1]]))
    assert bench.audit(want, repeated) == (0, 1)
    changed = [*clean[:4], _txn("1.4.7", [40, 99])]
    assert bench.audit(want, bench.transactions(_home(tmp_path / "changed", changed))) == (1, 0)
    foreign = [*clean, _txn("9.9.9", [1])]
    assert bench.audit(want, bench.transactions(_home(tmp_path / "foreign", foreign))) == (0, 1)
    # a transaction cut by a kill, closed by the RestartAbend marker and written again whole
    # (append-mode recovery) is one transaction, not a duplicate
    cut = [*clean[:3], clean[3][:1], [encode_record(restart_marker(0))], *clean[3:]]
    assert bench.audit(want, bench.transactions(_home(tmp_path / "cut", cut))) == (0, 0)
