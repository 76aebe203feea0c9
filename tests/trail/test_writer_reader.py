"""Trail files: naming, the file header at RBA 0, appends, rollover, durability positions,
reading across files and following a file that is being appended to."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from trail_seed002 import EXAMPLES, STUDENT, TABLE

from engine.trail import (
    CorruptRecordError,
    FileHeader,
    TrailIOError,
    TrailPosition,
    TrailReader,
    TrailRecord,
    TrailWriter,
    encode_record,
)
from engine.trail.layout import IOType
from engine.trail.metadata import metadata_kind
from engine.trail.writer import seal


def _clock() -> int:
    return 1_364_774_398_000_000


def _insert(i: int, trans_ind: int = 3) -> bytes:
    return encode_record(
        TrailRecord(
            io_type=IOType.INSERT,
            table=TABLE,
            columns=((0, str(i)), (1, f"name{i}")),
            trans_ind=trans_ind,
            io_time_us=1_000_000 * i,
            rowid="AAASrPAAEAAAAQ2AAK",
            logcsn=str(1000 + i) if trans_ind in (0, 3) else None,
            tranid=f"1.2.{i}" if trans_ind in (0, 3) else None,
        )
    )


def _open(tmp_path: Path, **kw: object) -> TrailWriter:
    return TrailWriter.open(tmp_path / "dirdat" / "aa", clock=_clock, durable=False, **kw)  # type: ignore[arg-type]


def test_first_file_name_and_header_at_rba_0(tmp_path: Path) -> None:
    with _open(tmp_path, header_info={"Producer": "ggsci extract", "DbName": "SRC"}) as w:
        start = w.position
        assert w.current_file == tmp_path / "dirdat" / "aa000000000"
    entries = list(TrailReader(tmp_path / "dirdat" / "aa"))
    assert len(entries) == 1 and entries[0].rba == 0
    header = entries[0].record
    assert isinstance(header, FileHeader)
    assert header.get("Producer") == "ggsci extract"
    assert header.get("Seqno") == 0
    assert header.get("CreationTime") == _clock()
    assert start == TrailPosition(0, entries[0].length)


def test_default_header_names_host_and_program(tmp_path: Path) -> None:
    with _open(tmp_path):
        pass
    header = next(iter(TrailReader(tmp_path / "dirdat" / "aa"))).record
    assert isinstance(header, FileHeader)
    assert header.get("Producer") == "ggsci"
    assert header.get("HostName") and header.get("OSName") and header.get("ProducerVersion")


def test_append_returns_positions_and_records_are_contiguous(tmp_path: Path) -> None:
    w = _open(tmp_path)
    seed = [e.record for records in EXAMPLES.values() for e in records]
    first = w.position
    ends = [w.append(encode_record(r)) for r in seed]
    durable = w.sync()
    assert durable == ends[-1] == w.durable_position
    w.close()
    entries = [e for e in TrailReader(tmp_path / "dirdat" / "aa") if e.rba > 0]
    assert [e.record for e in entries] == seed
    assert entries[0].position == first
    for a, b in itertools.pairwise(entries):
        assert b.rba == a.rba + a.length
    assert [e.end for e in entries] == ends


def test_sync_position_is_the_durable_end(tmp_path: Path) -> None:
    w = _open(tmp_path)
    before = w.durable_position
    w.append(_insert(1))
    assert w.durable_position == before  # appended, not yet durable
    pos = w.sync()
    assert pos == w.position and (tmp_path / "dirdat" / "aa000000000").stat().st_size == pos.rba
    w.close()


def test_rollover_at_max_bytes_and_header_is_completed(tmp_path: Path) -> None:
    w = _open(tmp_path, max_bytes=1000)
    for i in range(30):
        w.append(_insert(i))
    w.close()
    trail = tmp_path / "dirdat"
    files = sorted(trail.glob("aa0*"))
    names = [p.name for p in files]
    assert names[0] == "aa000000000" and len(names) > 3
    assert all(p.stat().st_size <= 1000 for p in files)
    entries = list(TrailReader(trail / "aa"))
    headers = [e for e in entries if isinstance(e.record, FileHeader)]
    rows = [e.record for e in entries if isinstance(e.record, TrailRecord)]
    assert [h.seqno for h in headers] == list(range(len(names)))
    assert [r.columns[0][1] for r in rows] == [str(i) for i in range(30)]
    first = headers[0].record
    assert isinstance(first, FileHeader)
    assert first.get("FileSize") == (trail / "aa000000000").stat().st_size
    assert first.get("FirstCSN") == "1000"
    count = sum(1 for e in entries if e.seqno == 0 and isinstance(e.record, TrailRecord))
    assert first.get("RecordCount") == count
    assert first.get("LastCSN") == str(1000 + count - 1)


def test_explicit_rollover(tmp_path: Path) -> None:
    w = _open(tmp_path)
    w.append(_insert(1))
    pos = w.rollover()
    assert pos.seqno == 1
    w.append(_insert(2))
    w.close()
    seqnos = [
        e.seqno
        for e in TrailReader(tmp_path / "dirdat" / "aa")
        if isinstance(e.record, TrailRecord)
    ]
    assert seqnos == [0, 1]


def test_table_definition_precedes_first_use_in_each_file(tmp_path: Path) -> None:
    w = _open(tmp_path)
    w.define_table(STUDENT)
    w.append(_insert(1), _insert(2))
    w.rollover()
    w.append(_insert(3))
    w.close()
    ops = [
        (e.seqno, metadata_kind(e.record) or e.record.op_name)
        for e in TrailReader(tmp_path / "dirdat" / "aa")
        if isinstance(e.record, TrailRecord)
    ]
    # 12.2+ (the default release): a DDR, then the table's TDR, in each file
    assert ops == [
        (0, "DDR"), (0, "TDR"), (0, "Insert"), (0, "Insert"),
        (1, "DDR"), (1, "TDR"), (1, "Insert"),
    ]  # fmt: skip


def test_reader_started_mid_file_knows_column_names(tmp_path: Path) -> None:
    w = _open(tmp_path)
    w.define_table(STUDENT)
    w.append(_insert(1))
    middle = w.append(_insert(2))
    w.append(_insert(3))
    w.close()
    reader = TrailReader(tmp_path / "dirdat" / "aa", start=middle)
    got = list(reader.records())
    assert [r.columns[0][1] for _, r in got] == ["3"]
    assert reader.tables[TABLE].name_of(1) == "FIRST_NAME"


def test_reader_follows_a_file_being_appended(tmp_path: Path) -> None:
    w = _open(tmp_path)
    reader = TrailReader(tmp_path / "dirdat" / "aa")
    assert len(list(reader)) == 1  # the header
    w.append(_insert(1))
    w.flush()
    assert [r.columns[0][1] for _, r in reader.records()] == ["1"]
    assert list(reader) == []  # nothing new
    # Half a record on disk: the reader waits for the rest.
    path = w.current_file
    record = seal(_insert(2))  # as the writer writes it into a file with checksums
    with open(path, "ab") as raw:
        raw.write(record[:50])
    assert list(reader) == []
    with open(path, "ab") as raw:
        raw.write(record[50:])
    assert [r.columns[0][1] for _, r in reader.records()] == ["2"]
    w.close()


def test_reader_moves_to_the_next_file_after_the_old_one_is_drained(tmp_path: Path) -> None:
    w = _open(tmp_path)
    reader = TrailReader(tmp_path / "dirdat" / "aa")
    list(reader)
    w.append(_insert(1))
    w.rollover()  # the old file got its last record before the new file appeared
    w.append(_insert(2))
    w.flush()
    got = [(e.seqno, r.columns[0][1]) for e, r in reader.records()]
    assert got == [(0, "1"), (1, "2")]
    assert reader.position.seqno == 1
    w.close()


def test_incomplete_record_before_a_later_file_is_corruption(tmp_path: Path) -> None:
    w = _open(tmp_path)
    w.append(_insert(1))
    w.rollover()
    w.close()
    with open(tmp_path / "dirdat" / "aa000000000", "ab") as raw:
        raw.write(_insert(2)[:30])
    with pytest.raises(CorruptRecordError):
        list(TrailReader(tmp_path / "dirdat" / "aa"))


def test_one_writer_per_trail(tmp_path: Path) -> None:
    w = _open(tmp_path)
    with pytest.raises(TrailIOError):
        _open(tmp_path)
    w.close()


def test_garbage_is_never_appended(tmp_path: Path) -> None:
    w = _open(tmp_path)
    with pytest.raises(CorruptRecordError):
        w.append(b"G\x01\x00\x0cnot a record")
    w.close()


def test_bad_trail_names(tmp_path: Path) -> None:
    with pytest.raises(TrailIOError):
        TrailWriter.open(tmp_path / "abc")
    with pytest.raises(TrailIOError):
        TrailWriter.open(tmp_path / "1a")


def _records_after_headers(trail: Path) -> list[bytes]:
    """Every record of the trail's files but their file headers, as written."""
    from engine.trail.envelope import record_length
    from engine.trail.writer import split_records

    out = []
    for path in sorted(trail.parent.glob(trail.name + "0*")):
        data = path.read_bytes()
        out.extend(split_records(data[record_length(data, 0) :]))  # after the file header
    return out


def test_transactions_given_sealed_are_written_as_the_writer_seals_them(tmp_path: Path) -> None:
    """The Extract's tasks seal what they close (MinePlan.seal): the trail is the same,
    through a rollover inside a transaction and the Metadata records of each new file."""
    writers = {
        side: TrailWriter.open(tmp_path / side / "aa", clock=_clock, durable=False, max_bytes=900)
        for side in ("drv", "tsk")  # (names of one length: the same file headers)
    }
    for w in writers.values():
        w.define_table(STUDENT)
        assert w.seals_records
    for t in range(12):
        blob = b"".join(_insert(10 * t + i, trans_ind=i % 3) for i in range(1 + t % 4))
        n = 1 + t % 4
        writers["drv"].append_transaction(blob, n, [TABLE], 1_000_000, str(t))
        writers["tsk"].append_transaction(seal(blob), n, [TABLE], 1_000_000, str(t), sealed=True)
    for w in writers.values():
        w.close()
    driver = _records_after_headers(tmp_path / "drv" / "aa")
    assert len(list((tmp_path / "drv").glob("aa0*"))) > 3  # rollovers inside transactions
    assert driver == _records_after_headers(tmp_path / "tsk" / "aa")


def test_sealed_records_are_refused_where_files_carry_no_checksum(tmp_path: Path) -> None:
    w = TrailWriter.open(tmp_path / "aa", clock=_clock, durable=False, checksum=False)
    assert not w.seals_records
    with pytest.raises(TrailIOError, match="no checksums"):
        w.append_transaction(seal(_insert(1)), 1, [TABLE], 1_000_000, "1", sealed=True)
    w.close()
