"""Logdump's SAVE: records of the open file, from the current position, copied to a new
trail file (seed 003: GGSComment records, IOType 205, "at the beginning and end of data
that is saved to a file with Logdump's SAVE command").

The new file is a trail file of its own: a file header (the source's checksum setting,
Producer ``ggsci logdump``, RecordCount and FileSize filled in), the opening comment, the
Metadata records that name the columns of the saved records' tables (copied from before
the position when they are there), the records byte for byte, the closing comment. Readers
skip comments (they are outside transactions), so Logdump, a pump or a Replicat can read
it; a transaction cut by the count stays open at the end, as in any trail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.trail.codec import encode_record
from engine.trail.errors import TrailError
from engine.trail.fileheader import encode_file_header, new_file_header
from engine.trail.files import TrailName
from engine.trail.layout import CHECKSUM_CRC32, IOType, TransInd
from engine.trail.metadata import defines_table, is_ddr
from engine.trail.model import FileHeader, TrailRecord
from engine.trail.reader import FileCursor
from engine.trail.releases import DEFAULT_RELEASE, release_of_level
from engine.trail.writer import seal

COMMENT_NAME = "*Comment*"


class SaveError(Exception):
    """SAVE cannot be carried out; one line."""


@dataclass(frozen=True, slots=True)
class SaveResult:
    records: int  # records copied (comments and added Metadata records not counted)
    start_rba: int
    end_rba: int  # source RBA after the last record copied


def _comment(text: str, io_time_us: int) -> bytes:
    return encode_record(
        TrailRecord(
            io_type=IOType.GGS_COMMENT,
            table=COMMENT_NAME,
            columns=((0, text),),
            trans_ind=TransInd.WHOLE,
            io_time_us=io_time_us,
        )
    )


def save_records(
    source: Path,
    start_rba: int,
    count: int,
    target: Path,
    *,
    overwrite: bool,
    comments: bool,
    clock: Callable[[], int],
) -> SaveResult:
    """Copy up to ``count`` records of ``source`` from ``start_rba`` to a new file."""
    if target.exists() and not overwrite:
        raise SaveError(f"File {target} exists; SAVE {target} ! ... to overwrite it.")
    if target.resolve() == source.resolve():
        raise SaveError("SAVE cannot write the file it reads.")
    definitions: dict[str, bytes] = {}
    copied: list[bytes] = []
    written_defs: set[str] = set()
    checksums = False
    ddr: bytes | None = None  # the source file's DDR, when it stands before the position
    ddr_copied = False
    release = DEFAULT_RELEASE
    saved = 0
    end = start_rba
    with open(source, "rb") as raw, FileCursor(source, 0, verify=False) as cursor:

        def raw_bytes(rba: int, length: int) -> bytes:
            raw.seek(rba)
            return raw.read(length)

        for entry in cursor:
            record = entry.record
            if isinstance(record, FileHeader):
                checksums = record.get("Checksum", 0) == CHECKSUM_CRC32
                release = release_of_level(record.compatibility) or DEFAULT_RELEASE
                continue
            if entry.rba < start_rba:
                if is_ddr(record):
                    ddr = raw_bytes(entry.rba, entry.length)
                elif defines_table(record):
                    definitions[record.table] = raw_bytes(entry.rba, entry.length)
                continue
            if saved >= count:
                break
            if is_ddr(record):
                ddr_copied = True
            elif defines_table(record):
                written_defs.add(record.table)
            elif record.table in definitions and record.table not in written_defs:
                if ddr is not None and not ddr_copied:
                    copied.append(ddr)
                    ddr_copied = True
                copied.append(definitions[record.table])
                written_defs.add(record.table)
            copied.append(raw_bytes(entry.rba, entry.length))
            saved += 1
            end = entry.rba + entry.length
    now = clock()
    if comments:
        begin = _comment(f"Logdump SAVE of {source} from RBA {start_rba}", now)
        finish = _comment(
            f"Logdump SAVE of {source}: {saved} records, RBA {start_rba} to {end}", now
        )
        copied = [seal(begin) if checksums else begin, *copied]
        copied.append(seal(finish) if checksums else finish)
    try:
        seqno = TrailName.of_file(target)[1]
    except TrailError:
        seqno = 0
    tokens = new_file_header(
        seqno=seqno,
        file_name=str(target),
        creation_time_us=now,
        info={"Producer": "ggsci logdump"},
        release=release,
    )
    if checksums:
        tokens["Checksum"] = CHECKSUM_CRC32
    body = b"".join(copied)
    tokens["RecordCount"] = len(copied)
    tokens["FileSize"] = len(encode_file_header(tokens)) + len(body)
    try:
        with open(target, "wb") as out:
            out.write(encode_file_header(tokens))
            out.write(body)
    except OSError as exc:
        raise SaveError(f"Cannot write {target}: {exc.strerror}") from exc
    return SaveResult(saved, start_rba, end)
