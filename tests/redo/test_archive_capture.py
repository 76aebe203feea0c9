"""The archive location of an attached database as the Extract's catalog
(engine/extract/alo.py, ArchiveCatalog): the logs by their headers, the next sequence not
there yet (wait), a missing one (OGG-00446 naming thread and sequence), a log of another
incarnation (refused by name), a log being copied in (not there yet)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.changes import Position
from engine.embedded.catalog import RedoGapError
from engine.extract.alo import ArchiveCatalog
from engine.redo import layout as L
from engine.redo.framing import read_header, seal
from tests.redo.corpus import LOG15, LOG16, need

FMT = "arch%t_%s_%r.dbf"


def _arch(tmp_path: Path, *logs: Path) -> Path:
    arch = tmp_path / "arch"
    arch.mkdir(exist_ok=True)
    for log in logs:
        shutil.copy(need(log), arch / log.name)
    return arch


def test_the_logs_by_their_headers_and_waiting_for_the_next(tmp_path: Path) -> None:
    arch = _arch(tmp_path)
    cat = ArchiveCatalog(str(arch), FMT)
    assert cat.for_reading({1: Position(1, 15, 0)}) == []  # nothing archived yet: wait
    _arch(tmp_path, LOG15)
    (info,) = cat.for_reading({1: Position(1, 15, 0)})
    assert (info.thread, info.sequence, info.archived) == (1, 15, True)
    h = read_header(need(LOG15).read_bytes()[:8192])
    assert (info.first_scn, info.next_scn) == (h.first_scn, h.next_scn)
    assert [i.sequence for i in cat.for_reading({1: Position(1, 16, 0)})] == [15]  # 16: wait


def test_a_missing_sequence_names_thread_and_sequence(tmp_path: Path) -> None:
    arch = _arch(tmp_path, LOG16)
    with pytest.raises(RedoGapError) as got:
        ArchiveCatalog(str(arch), FMT).for_reading({1: Position(1, 15, 0)})
    assert got.value.code == "OGG-00446"
    assert got.value.message.startswith(
        f"Could not find archived log for sequence 15 thread 1 under {arch}"
    )


def test_a_log_of_another_incarnation_is_refused_by_name(tmp_path: Path) -> None:
    arch = _arch(tmp_path, LOG15)
    data = bytearray(need(LOG16).read_bytes())
    h = read_header(data)
    # the resetlogs id in block 1's header, changed and the block resealed
    at = h.block_size + L.LOG_HEADER.fields[L.LOG_HEADER.names.index("resetlogs_id")].offset
    data[at] ^= 0x01
    seal(data, h.block_size, h.block_size, h.order)
    other = arch / "arch1_16_1224959855.dbf"
    other.write_bytes(bytes(data))
    cat = ArchiveCatalog(str(arch), FMT)
    with pytest.raises(RedoGapError) as got:
        cat.for_reading({1: Position(1, 15, 0)})
    assert got.value.code == "OGG-02028"
    assert f"{other} (thread 1 sequence 16) belongs to incarnation" in got.value.message


def test_a_log_being_copied_in_is_not_there_yet(tmp_path: Path) -> None:
    arch = _arch(tmp_path, LOG15)
    half = need(LOG16).read_bytes()
    (arch / LOG16.name).write_bytes(half[: len(half) // 2])
    cat = ArchiveCatalog(str(arch), FMT)
    assert [i.sequence for i in cat.for_reading({1: Position(1, 15, 0)})] == [15]
    shutil.copy(need(LOG16), arch / LOG16.name)
    assert [i.sequence for i in cat.for_reading({1: Position(1, 15, 0)})] == [15, 16]
