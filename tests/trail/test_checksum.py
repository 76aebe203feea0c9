"""Per-record checksums (engine/trail/checksum.py): the header flag, the token, the
writer's sealing on every path, the reader's check, and Logdump's view of it."""

from __future__ import annotations

import io
import zlib
from pathlib import Path

import pytest
from trail_seed002 import EXAMPLES, STUDENT

from engine.logdump.dump import dump_files
from engine.logdump.session import LogdumpSession
from engine.logdump.views import DisplayOptions
from engine.trail import TrailReader, TrailWriter, decode_exact, encode_record
from engine.trail.checksum import CHECKSUM_ENTRY, check_record, seal_record
from engine.trail.codec import row_record
from engine.trail.errors import ChecksumError
from engine.trail.fileheader import decode_file_header
from engine.trail.layout import TransInd
from engine.trail.model import TrailPosition, TrailRecord

RECORDS = [e.record for records in EXAMPLES.values() for e in records]
SIZES = [e.length for records in EXAMPLES.values() for e in records]


def _write(tmp_path: Path, *, checksum: bool, transaction: bool = False) -> Path:
    with TrailWriter.open(tmp_path / "aa", durable=False, checksum=checksum) as w:
        w.define_table(STUDENT)
        if transaction:  # the Extract's path: one transaction's records, concatenated
            w.append(encode_record(RECORDS[0]))
            blob = b"".join(encode_record(r) for r in RECORDS[1:4])
            w.append_transaction(blob, 3, [STUDENT.table], 0, RECORDS[1].logcsn)
        else:
            w.append(*(encode_record(r) for r in RECORDS))
    return tmp_path / "aa000000000"


def _entries(path: Path) -> list[tuple[int, int]]:
    return [(e.rba, e.length) for e in TrailReader(path.parent / "aa") if e.rba]


def test_header_says_whether_records_carry_a_checksum(tmp_path: Path) -> None:
    on = _write(tmp_path / "on", checksum=True)
    off = _write(tmp_path / "off", checksum=False)
    assert decode_file_header(on.read_bytes())[0].get("Checksum") == 1
    assert decode_file_header(off.read_bytes())[0].get("Checksum") is None
    # Each data record grows by the 8-byte token (its T area was there: ORAROWID).
    sizes_on = [n for _, n in _entries(on)][2:]  # after the DDR and the TDR
    sizes_off = [n for _, n in _entries(off)][2:]
    assert sizes_off == SIZES
    assert sizes_on == [n + 8 for n in SIZES]


@pytest.mark.parametrize("transaction", [False, True])
def test_every_record_is_sealed_and_reads_back_the_same(tmp_path: Path, transaction: bool) -> None:
    path = _write(tmp_path, checksum=True, transaction=transaction)
    data = path.read_bytes()
    entries = list(TrailReader(tmp_path / "aa"))
    assert entries[0].crc is None  # the file header carries none
    for e in entries[1:]:
        assert e.crc is not None and e.crc.ok
        assert data[e.rba + e.length - 12 : e.rba + e.length - 8] == CHECKSUM_ENTRY
        covered = data[e.rba : e.rba + e.length - 8]
        assert int.from_bytes(data[e.rba + e.length - 8 : e.rba + e.length - 4]) == zlib.crc32(
            covered
        )
    # The decoder drops the token: the records are what was written, not one token more.
    rows = [e.record for e in entries[3:]]
    want = RECORDS[: len(rows)]
    if transaction:
        assert [(r.columns, r.logcsn) for r in rows] == [(r.columns, r.logcsn) for r in want]
    else:
        assert rows == want


def test_a_record_without_tokens_gets_a_token_area() -> None:
    bare = row_record(5, b"T.X", b"", b"", None, 1, 2)
    sealed = seal_record(bare)
    assert len(sealed) == len(bare) + 12
    crc = check_record(sealed, 0, len(sealed))
    assert crc is not None and crc.ok
    assert decode_exact(sealed) == decode_exact(bare)


def test_a_changed_byte_is_a_checksum_error_naming_file_and_rba(tmp_path: Path) -> None:
    path = _write(tmp_path, checksum=True)
    target = _entries(path)[2]  # the first seed record (after the DDR and the TDR)
    data = bytearray(path.read_bytes())
    value = data.index(b"Sherwood", target[0])  # inside a column value: still decodes
    data[value] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(ChecksumError) as caught:
        list(TrailReader(tmp_path / "aa"))
    text = str(caught.value)
    assert f"{path}, RBA {target[0]}" in text and "mismatch" in text
    # Without verifying, the record comes back with the failed check (Logdump).
    entries = list(TrailReader(tmp_path / "aa", verify=False))
    bad = [e for e in entries if e.crc is not None and not e.crc.ok]
    assert [e.rba for e in bad] == [target[0]]


def test_without_checksums_a_changed_byte_is_read_as_it_is(tmp_path: Path) -> None:
    path = _write(tmp_path, checksum=False)
    data = bytearray(path.read_bytes())
    data[data.index(b"Sherwood")] ^= 0x01  # S -> R
    path.write_bytes(bytes(data))
    names = [r.column_map.get(2) for _, r in TrailReader(tmp_path / "aa").records()]
    assert "Rherwood" in names  # the old behaviour: nothing can tell


def test_a_missing_token_in_a_checksum_file_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, checksum=True)
    with open(path, "ab") as raw:  # a record appended by something that does not seal
        raw.write(encode_record(TrailRecord(5, STUDENT.table, ((0, "1"),), TransInd.WHOLE)))
    with pytest.raises(ChecksumError, match="no checksum token"):
        list(TrailReader(tmp_path / "aa"))


def test_the_setting_holds_per_file(tmp_path: Path) -> None:
    with TrailWriter.open(tmp_path / "aa", durable=False, checksum=False) as w:
        w.append(encode_record(RECORDS[0]))
    with TrailWriter.open(tmp_path / "aa", durable=False, checksum=True) as w:
        w.append(encode_record(RECORDS[1]))  # rolled over on restart: file 1 has checksums
    first = [e.crc for e in TrailReader(tmp_path / "aa") if e.seqno == 0]
    second = [e.crc for e in TrailReader(tmp_path / "aa") if e.seqno == 1 and e.rba]
    assert first == [None, None] and all(c is not None and c.ok for c in second)


def test_logdump_shows_the_check_and_the_mismatch(tmp_path: Path) -> None:
    path = _write(tmp_path, checksum=True)
    target = _entries(path)[2][0]
    data = bytearray(path.read_bytes())
    data[data.index(b"Sherwood", target)] ^= 0x01
    path.write_bytes(bytes(data))
    out = io.StringIO()
    count = dump_files([path], out, options=DisplayOptions(ghdr=False, detail="OFF"))
    text = out.getvalue()
    assert count == 1 + 2 + 15  # every record shown, the bad one included
    assert text.count("TokenID x43 'C' CHECKSUM") == 17  # the DDR and TDR have one too
    assert text.count("Checksum   : ok: CRC-32 x") == 16
    assert text.count("Checksum   : MISMATCH: CRC-32 mismatch") == 1
    assert f"{path}: 1 record(s) failed their checksum" in text
    json_out = io.StringIO()
    dump_files([path], json_out, as_json=True)
    assert json_out.getvalue().count('"checksum": "ok"') == 16
    session = io.StringIO()
    LogdumpSession(io.StringIO(f"OPEN {path}\nCOUNT\nEXIT\n"), session).run()
    assert "\nChecksums verified           17\nChecksum mismatches           1\n" in (
        session.getvalue()
    )


def test_a_reader_started_after_a_bad_row_record_goes_on(tmp_path: Path) -> None:
    """ALTER ... EXTRBA past a damaged record: the reader's look at the file's start (for
    table definitions) passes over it; a damaged table definition there is an error."""
    path = _write(tmp_path, checksum=True)
    _ddr, metadata, first, second = _entries(path)[:4]
    data = bytearray(path.read_bytes())
    data[data.index(b"Sherwood", first[0])] ^= 0x01
    path.write_bytes(bytes(data))
    after = TrailPosition(0, second[0])
    rows = [r for _, r in TrailReader(tmp_path / "aa", start=after).records()]
    assert len(rows) == 14 and rows[0] == RECORDS[1]
    data[data.index(b"FIRST_NAME", metadata[0])] ^= 0x01  # the Metadata record's column name
    path.write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match=f"RBA {metadata[0]}: CRC-32 mismatch"):
        list(TrailReader(tmp_path / "aa", start=after))
