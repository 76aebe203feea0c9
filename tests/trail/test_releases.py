"""FORMAT RELEASE: each release's file header and metadata records (golden Logdump screens
per release), NO_OBJECTDEFS, three-part names before 12.1, readers refusing a newer
release, unknown releases refused in one line, and readers that filter by table never
taking a DDR/TDR for data."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from trail_seed002 import EXAMPLES, STUDENT

from engine.logdump import DisplayOptions, LogdumpSession
from engine.logdump.dump import dump_files
from engine.trail import TrailReader, TrailRecord, TrailWriter, encode_record
from engine.trail.errors import FileVersionError, ReleaseError
from engine.trail.fileheader import decode_file_header, encode_file_header
from engine.trail.layout import COMPATIBILITY_LEVEL, IOType
from engine.trail.metadata import metadata_kind
from engine.trail.model import TableDef
from engine.trail.recovery import complete_transactions
from engine.trail.releases import (
    DEFAULT_RELEASE,
    NEWEST_LEVEL,
    RELEASES,
    parse_release,
    release_of_level,
)
from engine.trail.txreader import TransactionReader
from params.catalog import FORMAT_RELEASES
from params.check import check_text
from tests.harness import golden as golden_files

GOLDEN = Path(__file__).parent / "golden"
CREATED = 1_364_774_400_000_000  # 2013-04-01 00:00:00
INFO = {"Producer": "ggsci extract", "DbName": "SRC", "GroupName": "EXT1"}


def _write(path: Path, release: str | None, *, objectdefs: bool = True, examples: int = 7) -> Path:
    with TrailWriter.open(
        path,
        clock=lambda: CREATED,
        durable=False,
        checksum=False,
        header_info=INFO,
        release=parse_release(release) if release else None,
        objectdefs=objectdefs,
    ) as writer:
        writer.define_table(STUDENT)
        for records in list(EXAMPLES.values())[:examples]:
            writer.append(*(encode_record(e.record) for e in records))
    return path.with_name(path.name + "000000000")


def _kinds(path: Path) -> list[str]:
    return [
        metadata_kind(e.record) or e.record.op_name
        for e in TrailReader(path.with_name(path.name[:2]))
        if isinstance(e.record, TrailRecord)
    ]


def test_the_release_table_is_the_checker_s_and_the_reader_s() -> None:
    assert tuple(RELEASES) == FORMAT_RELEASES
    assert NEWEST_LEVEL == COMPATIBILITY_LEVEL == max(r.level for r in RELEASES.values())
    assert DEFAULT_RELEASE is RELEASES["21.1"]
    # GoldenGate's levels: an 11.2 trail says 3, 12.2 ("values 0 to 5") says 5.
    assert (RELEASES["11.2"].level, RELEASES["12.2"].level) == (3, 5)
    levels = [r.level for r in RELEASES.values()]
    assert levels == sorted(set(levels))


@pytest.mark.parametrize("name", list(RELEASES))
def test_logdump_screen_per_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Golden screens: the file header (Compatibility, DbUniqueName from 21.1), the DDR
    and TDR (12.2+) or none (11.2, 12.1), then the first data record."""
    monkeypatch.chdir(tmp_path)
    path = _write(Path("dirdat/aa"), name, examples=1)
    out = io.StringIO()
    dump_files([path], out, options=DisplayOptions())
    golden = GOLDEN / f"logdump_release_{name}.txt"
    if golden_files.regenerating():
        golden.write_text(out.getvalue())
    assert out.getvalue() == golden.read_text(), f"{golden.name} differs"
    header = decode_file_header(path.read_bytes())[0]
    release = RELEASES[name]
    assert header.compatibility == release.level
    assert release_of_level(header.compatibility) is release
    assert ("DbUniqueName" in header.tokens) == (name == "21.1")
    metadata = ["DDR", "TDR"] if release.metadata else []
    assert _kinds(path) == [*metadata, "Insert"]


def test_no_objectdefs_writes_no_metadata_records(tmp_path: Path) -> None:
    path = _write(tmp_path / "aa", "21.1", objectdefs=False, examples=1)
    assert _kinds(path) == ["Insert"]
    assert decode_file_header(path.read_bytes())[0].compatibility == RELEASES["21.1"].level


def test_three_part_names_need_12_1(tmp_path: Path) -> None:
    record = TrailRecord(IOType.INSERT, "CDB1.US03.STUDENT", ((0, "1"),))
    with TrailWriter.open(tmp_path / "aa", durable=False, release=RELEASES["11.2"]) as w:
        with pytest.raises(ReleaseError, match=r"three-part name.*11\.2"):
            w.append(encode_record(record))
        with pytest.raises(ReleaseError, match="three-part name"):  # the Extract's path
            w.append_transaction(encode_record(record), 1, [record.table], 0, None)
    with TrailWriter.open(tmp_path / "bb", durable=False, release=RELEASES["12.1"]) as w:
        w.append(encode_record(record))


def test_unknown_releases_are_one_clear_line() -> None:
    with pytest.raises(ReleaseError, match=r"FORMAT RELEASE 13\.4 is not .*known: 11\.2, 12\.1"):
        parse_release("13.4")
    assert parse_release("12.2.0.1") is RELEASES["12.2"]
    result = check_text("EXTRACT e\nEXTTRAIL ./dirdat/aa, FORMAT RELEASE 9.5\nTABLE a.b;\n")
    assert [e.message for e in result.errors] == [
        "FORMAT RELEASE 9.5 is not a trail format release ggsci writes "
        "(known: 11.2, 12.1, 12.2, 12.3, 18.1, 19.1, 21.1)"
    ]
    ok = check_text(
        "EXTRACT e\nEXTTRAIL ./dirdat/aa, FORMAT RELEASE 12.1, NO_OBJECTDEFS\nTABLE a.b;\n"
    )
    assert not ok.errors
    trail = ok.model.trails[0]
    assert (trail.format_release, trail.objectdefs) == ("12.1", False)


def test_a_reader_refuses_a_newer_release(tmp_path: Path) -> None:
    path = _write(tmp_path / "aa", None, examples=1)
    data = bytearray(path.read_bytes())
    header, length = decode_file_header(bytes(data))
    tokens = dict(header.tokens)
    tokens["Compatibility"] = NEWEST_LEVEL + 1
    newer = encode_file_header(tokens)
    assert len(newer) == length
    path.write_bytes(newer + bytes(data[length:]))
    with pytest.raises(FileVersionError, match=f"level {NEWEST_LEVEL + 1} is newer"):
        list(TrailReader(tmp_path / "aa"))
    reader = TransactionReader(tmp_path / "aa")
    with pytest.raises(FileVersionError):
        list(reader.poll())
    reader.close()


def test_writer_keeps_the_existing_release_unless_told(tmp_path: Path) -> None:
    _write(tmp_path / "aa", "12.1", examples=1)
    _write(tmp_path / "aa", None, examples=1)  # restart without FORMAT RELEASE: 12.1 kept
    _write(tmp_path / "aa", "19.1", examples=1)  # an explicit release: the next file
    levels = [
        (e.seqno, e.record.compatibility)
        for e in TrailReader(tmp_path / "aa")
        if not isinstance(e.record, TrailRecord)
    ]
    assert levels == [(0, 4), (1, 4), (2, 8)]
    assert _kinds(tmp_path / "aa") == ["Insert", "Insert", "DDR", "TDR", "Insert"]


def test_set_release_rewrites_an_empty_file_and_rolls_a_used_one(tmp_path: Path) -> None:
    with TrailWriter.open(tmp_path / "aa", durable=False) as w:
        w.define_table(STUDENT)
        w.set_release(RELEASES["12.1"])  # nothing written yet: same file, new header
        assert w.position.seqno == 0
        w.append(encode_record(EXAMPLES["single_insert"][0].record))
        w.set_release(RELEASES["12.2"])  # records there: a new file
        assert w.position.seqno == 1
        w.append(encode_record(EXAMPLES["single_insert"][0].record))
    assert _kinds(tmp_path / "aa") == ["Insert", "DDR", "TDR", "Insert"]


# -- readers that filter by table never take a metadata record for data -------------------
def _two_tables(tmp_path: Path) -> Path:
    other = TableDef("US03.COURSE", ("COURSE_KEY", "TITLE"))
    with TrailWriter.open(tmp_path / "aa", durable=False, header_info=INFO) as w:
        w.define_table(STUDENT)
        w.define_table(other)
        w.append(encode_record(EXAMPLES["single_insert"][0].record))
        w.append(encode_record(TrailRecord(IOType.INSERT, other.table, ((0, "7"), (1, "x")))))
        for records in list(EXAMPLES.values())[1:]:
            w.append(*(encode_record(e.record) for e in records))
    return tmp_path / "aa000000000"


def test_transaction_readers_hand_out_data_records_only(tmp_path: Path) -> None:
    path = _two_tables(tmp_path)
    assert _kinds(path)[:4] == ["DDR", "TDR", "Insert", "TDR"]  # each table's TDR once
    reader = TransactionReader(tmp_path / "aa")
    txns = list(reader.poll())
    reader.close()
    records = [r for t in txns for r in t.records]
    assert len(txns) == 8 and len(records) == 16
    assert all(r.io_type != IOType.METADATA for r in records)
    assert sorted(reader.tables) == ["US03.COURSE", "US03.STUDENT"]  # from the TDRs only
    positions = [(e.position, r) for e, r in TrailReader(tmp_path / "aa").records()]
    grouped = list(complete_transactions((p, r) for p, r in positions))
    assert sum(len(g) for g in grouped) == 16


def test_logdump_filter_and_count_keep_metadata_apart(tmp_path: Path) -> None:
    path = _two_tables(tmp_path)
    out = io.StringIO()
    script = (
        f"OPEN {path}\nCOUNT\nFILTER INCLUDE FILENAME US03.COURSE\nCOUNT\n"
        "FILTER CLEAR\nFILTER RECTYPE Metadata\nCOUNT\nEXIT\n"
    )
    LogdumpSession(io.StringIO(script), out).run()
    counts = out.getvalue().split("has ")[1:]
    whole, course, metadata = counts
    assert whole.startswith("19 records")  # 16 data, DDR, two TDRs
    assert "Metadata Records              3" in whole and "  TDR                         2" in whole
    assert "Insert                        8" in whole and "Total Data Bytes            904" in whole
    # FILTER INCLUDE FILENAME: the table's data record, not its TDR
    assert course.startswith("1 records") and "Metadata" not in course.split("Logdump")[0]
    assert metadata.startswith("3 records")


def test_a_reopened_file_keeps_its_ddr_and_tdr_numbering(tmp_path: Path) -> None:
    """Reopened without rolling over (the replicat helpers do): no second DDR; TDRs are
    numbered on (a table registered again by the new writer gets its TDR again)."""
    other = TableDef("US03.COURSE", ("COURSE_KEY", "TITLE"))
    with TrailWriter.open(tmp_path / "aa", durable=False) as w:
        w.define_table(STUDENT)
        w.append(encode_record(EXAMPLES["single_insert"][0].record))
    with TrailWriter.open(tmp_path / "aa", durable=False, roll_on_restart=False) as w:
        w.define_table(STUDENT)
        w.define_table(other)
        w.append(encode_record(EXAMPLES["single_insert"][0].record))
        w.append(encode_record(TrailRecord(IOType.INSERT, other.table, ((0, "7"),))))
    metadata = [
        (metadata_kind(e.record), e.record.audit_rba)
        for e in TrailReader(tmp_path / "aa")
        if isinstance(e.record, TrailRecord) and metadata_kind(e.record)
    ]
    assert metadata == [("DDR", 0x10000), ("TDR", 0x10001), ("TDR", 0x10002), ("TDR", 0x10003)]


def test_logdump_scanformetadata(tmp_path: Path) -> None:
    path = _two_tables(tmp_path)
    out = io.StringIO()
    script = f"OPEN {path}\nSFMD TDR 2\nPOS 0\nSCANFORMETADATA DDR\nSFMD DDR\nSFMD x y\nEXIT\n"
    LogdumpSession(io.StringIO(script), out).run()
    text = out.getvalue()
    assert "Table Name: US03.COURSE" in text and "Table Name: US03.STUDENT" not in text
    assert "Database Name: SRC" in text
    assert "No DDR metadata record found after RBA" in text  # one DDR per file
    assert "usage: SCANFORMETADATA | SFMD [DDR|TDR] [index|NEXT]" in text
