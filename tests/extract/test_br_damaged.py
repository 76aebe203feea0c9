"""A newest BR checkpoint with a good SHA-256 but a bad body (issue 28: ``[1]``,
``taken_us: 1e999`` and the other shapes found) made the Extract abend with a raw Python
error until the file was deleted. Now the checkpoint before it is used when it is there, else
normal recovery (OGG-01643), and the Extract goes on."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from engine.extract import br as br_module
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from params.check import check_text

from .test_br import PRM, Log, Source, _po_fixture, persist_t27, trail

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(name="src")
def _src(source: Any) -> Any:
    s = Source(source[0])
    yield s
    s.db.close()


BAD_BODIES: dict[str, Any] = {
    "a list": [1],
    "taken_us infinite": {"taken_us": 1e999},
    "seq infinite": {"seq": 1e999},
    "restart not positions": {"restart": {"1": 5}},
    "a thread named x": {"current": {"x": {"thread": 1, "sequence": 1, "offset": 0}}},
    "objects not objects": {"objects": [5]},
    "object fields wrong": {"objects": [{"xid": 1}]},
    "selection a number": {"selection": 7},
    "ignored a map": {"ignored": {"a": 1}},
    "negative offset": {"current": {"1": {"thread": 1, "sequence": 1, "offset": -1}}},
    "nested deep": {"extra": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]},
}


def seal_cp(body: Any) -> bytes:
    raw = json.dumps(body, sort_keys=True, allow_nan=True).encode()
    return raw + b"\n" + hashlib.sha256(raw).hexdigest().encode() + b"\n"


def bad_newest(bdir: Path, shape: Any) -> Path:
    """A checkpoint after the newest one, its body ``shape`` (merged into the newest body
    when a dict), with a matching SHA-256."""
    newest = max(p for p in bdir.iterdir() if p.name.startswith("CP."))
    body = json.loads(newest.read_bytes().rstrip(b"\n").rpartition(b"\n")[0])
    seq = int(newest.name.rsplit(".", 1)[1]) + 1
    path = bdir / f"CP.E1.{seq:09d}"
    path.write_bytes(seal_cp({**body, **shape} if isinstance(shape, dict) else shape))
    return path


@pytest.mark.parametrize("shape", BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_a_bad_newest_checkpoint_falls_back_to_the_one_before(tmp_path: Path, shape: Any) -> None:
    _po_fixture(tmp_path)
    bdir = tmp_path / "BR"
    path = bad_newest(bdir, shape)
    br = br_module.BoundedRecovery(bdir, "E1", 1200)
    assert br.due(0) in (True, False)  # the schedule reads the newest valid one, no error
    restored = br.load()
    assert restored.path.name == "CP.E1.000000002" and len(restored.txns) == 1
    (passed,) = restored.passed
    assert passed.startswith(f"{path.name}: ")
    for other in bdir.iterdir():  # the only one: normal recovery, one line
        if other.name.startswith("CP.") and other != path:
            other.unlink()
    br = br_module.BoundedRecovery(bdir, "E1", 1200)
    br.due(0)
    with pytest.raises(br_module.BrError, match=f"^{path.name}: "):
        br.load()


@pytest.mark.parametrize("shape", [[1], {"taken_us": 1e999}], ids=["list", "1e999"])
def test_the_extract_starts_past_a_bad_newest_checkpoint(
    home: Home, src: Source, spark: SparkSession, shape: Any
) -> None:
    persist_t27(home, src, spark)
    bdir = home.root / "BR" / "E1"
    bad = bad_newest(bdir, shape)
    log = Log()
    run = ExtractRun(home, check_text(PRM).model, None, log, spark=spark, durable=False)
    canceled = [t for c, t in log.items if c == "OGG-01643"]
    assert canceled and bad.name in canceled[0] and "the checkpoint before it" in canceled[0]
    assert "OGG-01641" in log.codes()  # bounded recovery from the one before
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    for p in bdir.iterdir():  # now every checkpoint is bad: normal recovery
        if p.name.startswith("CP."):
            p.write_bytes(seal_cp(shape))
    log = Log()
    run = ExtractRun(home, check_text(PRM).model, None, log, spark=spark, durable=False)
    assert "OGG-01643" in log.codes() and "OGG-10019" in log.codes()
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    src.commit("T27")
    run = ExtractRun(home, check_text(PRM).model, None, Log(), spark=spark, durable=False)
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    assert trail(home) == ["C1", "T27"]
