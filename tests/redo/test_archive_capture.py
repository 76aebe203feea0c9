"""Archived-log-only capture over an archive location: the Extract's read loop on its own
cache and trail writer (engine/extract/archive.py): waiting for the next archive, a missing
sequence, restart without a duplicate, a start inside a log (EXTRBA)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from engine.changes import Position
from engine.extract.archive import ArchiveCapture, ArchiveState
from engine.logdump.dump import dump_files
from engine.logdump.views import DisplayOptions
from engine.redo import dictionary
from engine.redo.catalog import MissingLogError
from engine.trail.writer import TrailWriter
from tests.redo.corpus import CHECKPOINT, LOG15, LOG16, need

FMT = "arch%t_%s_%r.dbf"


def _rows(dirdat: Path) -> list[dict[str, object]]:
    buf = io.StringIO()
    dump_files(
        sorted(dirdat.iterdir()), buf, as_json=True, options=DisplayOptions(fileheader="OFF")
    )
    recs = [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]
    return [r for r in recs if r["io_type"] not in (None, 170)]


def _capture(arch: Path, tmp: Path, start: ArchiveState) -> tuple[ArchiveCapture, TrailWriter]:
    writer = TrailWriter.open(tmp / "dirdat" / "lt", durable=False)
    cap = ArchiveCapture(str(arch), FMT, dictionary.load(need(CHECKPOINT)), lambda t: t.owner == "OLR_TEST",
                         writer, tmp / "dirtmp", start)  # fmt: skip
    return cap, writer


def test_waits_for_archives_then_writes_the_one_transaction_once(tmp_path: Path) -> None:
    arch = tmp_path / "arch"
    arch.mkdir()
    cap, writer = _capture(arch, tmp_path, ArchiveState(Position(1, 15, 0)))
    assert cap.poll() == 0  # nothing archived yet: wait
    shutil.copy(need(LOG15), arch / LOG15.name)
    assert cap.poll() == 1  # the commit is in sequence 15
    assert cap.current == Position(1, 16, 0)
    assert cap.poll() == 0  # sequence 16 not there yet
    shutil.copy(need(LOG16), arch / LOG16.name)
    assert cap.poll() == 0 and cap.current == Position(1, 17, 0)
    state = cap.state
    writer.close()
    (row,) = _rows(tmp_path / "dirdat")
    assert row["tokens"] == {
        "ORAROWID": "AAARwWAAYAAAAAOAAA",
        "LOGCSN": "2267707",
        "TRANID": "10.12.572",
    }
    assert row["columns"] == {"ID": "1", "NAME": "hello world"}
    # a restart from the saved state (the oldest open transaction's start) writes nothing again
    again, writer = _capture(
        arch, tmp_path, ArchiveState.from_json(json.loads(json.dumps(state.to_json())))
    )
    assert state.recovery.sequence == 15 and again.poll() == 0
    writer.close()
    assert len(_rows(tmp_path / "dirdat")) == 1


def test_a_missing_sequence_abends_naming_it(tmp_path: Path) -> None:
    arch = tmp_path / "arch"
    arch.mkdir()
    shutil.copy(need(LOG16), arch / LOG16.name)
    cap, writer = _capture(arch, tmp_path, ArchiveState(Position(1, 15, 0)))
    with pytest.raises(
        MissingLogError, match="OGG-00446: Could not find archived log for sequence 15 thread 1"
    ):
        cap.poll()
    writer.close()


def test_a_start_after_the_commit_writes_nothing(tmp_path: Path) -> None:
    """EXTRBA past the transaction's records (the 5.4 is at block 0x246): nothing to write."""
    arch = tmp_path / "arch"
    arch.mkdir()
    shutil.copy(need(LOG15), arch / LOG15.name)
    cap, writer = _capture(arch, tmp_path, ArchiveState(Position(1, 15, 0x247 * 512)))
    assert cap.poll() == 0
    writer.close()
    cap, writer = _capture(
        arch, tmp_path, ArchiveState(Position(1, 15, 0x243 * 512))
    )  # the LWN of the insert
    assert cap.poll() == 1
    writer.close()
