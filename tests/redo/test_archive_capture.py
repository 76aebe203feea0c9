"""The archive location of an attached database as the Extract's catalog
(engine/extract/alo.py, ArchiveCatalog): the logs by their headers, the next sequence not
there yet (wait), a missing one (OGG-00446 naming thread and sequence), a log of another
incarnation (refused by name), a log being copied in (not there yet)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from engine.changes import Position
from engine.embedded.catalog import RedoGapError
from engine.extract.alo import ALT_FORMAT, ArchiveCatalog
from engine.redo import layout as L
from engine.redo.framing import Lwn, build_log, build_record, read_header, seal
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
    # sequence 15 is read first, as GoldenGate reads it; 16 is refused when reading is at it
    assert [i.sequence for i in cat.for_reading({1: Position(1, 15, 0)})] == [15]
    with pytest.raises(RedoGapError) as got:
        cat.for_reading({1: Position(1, 16, 0)})
    assert got.value.code == "OGG-02028"
    assert f"{other} (thread 1 sequence 16) belongs to incarnation" in got.value.message


def test_a_gap_after_the_next_log_is_refused_once_reading_reaches_it(tmp_path: Path) -> None:
    """Sequence 15 there, 16 missing, 17 there: 15 is read first (as GoldenGate reads it),
    then the gap is OGG-00446 naming 16."""
    arch = _arch(tmp_path, LOG15)
    h = read_header(need(LOG16).read_bytes())
    seventeen = dataclasses.replace(h, sequence=17, first_scn=h.next_scn)  # built by the writer
    rec = build_record("<", h.next_scn, 1, [], Lwn(0, 1, 1, h.next_scn, 0))
    (arch / f"arch1_17_{h.resetlogs_id}.dbf").write_bytes(build_log(seventeen, [[rec]]))
    cat = ArchiveCatalog(str(arch), FMT)
    assert [i.sequence for i in cat.for_reading({1: Position(1, 15, 0)})] == [15]
    with pytest.raises(RedoGapError) as got:
        cat.for_reading({1: Position(1, 16, 0)})
    assert got.value.code == "OGG-00446"
    assert "Could not find archived log for sequence 16 thread 1" in got.value.message


def test_a_log_being_copied_in_is_not_there_yet(tmp_path: Path) -> None:
    arch = _arch(tmp_path, LOG15)
    half = need(LOG16).read_bytes()
    (arch / LOG16.name).write_bytes(half[: len(half) // 2])
    cat = ArchiveCatalog(str(arch), FMT)
    assert [i.sequence for i in cat.for_reading({1: Position(1, 15, 0)})] == [15]
    shutil.copy(need(LOG16), arch / LOG16.name)
    assert [i.sequence for i in cat.for_reading({1: Position(1, 15, 0)})] == [15, 16]


def test_a_log_cut_short_with_the_next_there_says_so(tmp_path: Path) -> None:
    """Before: ``Could not find archived log for sequence 15 ... (sequence 16 is there)``."""
    arch = _arch(tmp_path, LOG16)
    whole = need(LOG15).read_bytes()
    (arch / LOG15.name).write_bytes(whole[:100000])
    with pytest.raises(RedoGapError) as got:
        ArchiveCatalog(str(arch), FMT).for_reading({1: Position(1, 15, 0)})
    assert got.value.code == "OGG-00446"
    m = got.value.message
    assert f"{arch / LOG15.name} (thread 1 sequence 15) is there but shorter than" in m
    assert f"(100000 of {len(whole)} bytes) while sequence 16 is there" in m and "copy it" in m


def test_a_format_without_a_sequence_names_the_parameter_once(tmp_path: Path) -> None:
    """Before: ``OGG-00446 archived log unreadable: LOG_ARCHIVE_FORMAT ... has no %s``."""
    arch = _arch(tmp_path, LOG15)
    cat = ArchiveCatalog(str(arch), "log_%t_%r.arc", fmt_name=ALT_FORMAT)
    with pytest.raises(RedoGapError) as got:
        cat.for_reading({1: Position(1, 15, 0)})
    assert got.value.code == "OGG-10144"
    assert got.value.message == (
        "TRANLOGOPTIONS ALTARCHIVEDLOGFORMAT 'log_%t_%r.arc' has no %s (the log sequence number)."
    )


def test_a_missing_location_is_named_once(tmp_path: Path) -> None:
    where = tmp_path / "nodir"
    with pytest.raises(RedoGapError) as got:
        ArchiveCatalog(str(where), FMT).files()
    assert got.value.code == "OGG-00446"
    assert got.value.message.count(str(where)) == 1, got.value.message


def test_a_file_the_format_names_that_is_no_log_keeps_its_code(tmp_path: Path) -> None:
    """Before: under OGG-00446 ("log not found") with the reader's code inside the text."""
    arch = _arch(tmp_path, LOG15)
    (arch / "arch1_16_1224959854.dbf").write_bytes(b"\0" * 16384)
    with pytest.raises(RedoGapError) as got:
        ArchiveCatalog(str(arch), FMT).files()
    assert got.value.code.startswith("GGS-REDO-") and "GGS-" not in got.value.message
    assert "arch1_16_1224959854.dbf" in got.value.message


def test_what_a_run_that_read_nothing_waits_for(tmp_path: Path) -> None:
    """Each thread with no whole log from its position on, and the files the format does
    not name; nothing when every thread has one."""
    arch = _arch(tmp_path, LOG15)
    cat = ArchiveCatalog(str(arch), FMT)
    assert cat.waiting({1: Position(1, 15, 0)}) is None
    line = cat.waiting({1: Position(1, 16, 0), 2: Position(2, 1, 0)})
    assert line == (
        f"Nothing read: waiting for thread 1 sequence 16 and thread 2 sequence 1, not archived "
        f"under {arch} named by LOG_ARCHIVE_FORMAT '{FMT}' yet."
    )
    other = ArchiveCatalog(str(arch), "log_%t_%s.arc", fmt_name=ALT_FORMAT)
    line = other.waiting({1: Position(1, 15, 0)})
    assert line is not None and line.startswith("Nothing read: waiting for thread 1 sequence 15")
    assert line.endswith(
        "named by TRANLOGOPTIONS ALTARCHIVEDLOGFORMAT 'log_%t_%s.arc' yet (1 other file there "
        "not named by it)."
    )
