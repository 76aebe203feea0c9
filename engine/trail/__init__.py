"""The trail: record model, codec, trail files, writer, reader and append-mode recovery.

Public API (what Extract, pumps, Replicat and Logdump use)::

    encode_record(TrailRecord) -> bytes              pure; runs on Spark executors
    encode_row(io_type, table, columns, **fields)    the same without a TrailRecord
    decode_record(buf, offset) -> (TrailRecord, length)
    RecordStream().feed(bytes); iter(...)            incremental decoding
    TrailWriter.open("dirdat/aa", megabytes=..., recovery=RecoveryMode.APPEND,
                     release=parse_release("12.2"), objectdefs=True)   # releases.py
        .define_table(TableDef) .append(*bytes) .sync() -> durable TrailPosition
        .rollover() .close() .recovery -> RecoveryResult
    TrailReader("dirdat/aa", start=TrailPosition(seqno, rba))  iterate TrailEntry
    recover_trail / find_last_complete_transaction / complete_transactions

Errors (errors.py): TrailError > IncompleteRecordError, CorruptRecordError (>
ChecksumError), TrailingBytesError, RecordLimitError, FileVersionError, TrailIOError,
ReleaseError. FORMAT RELEASE (releases.py): the file header's Compatibility and, from
12.2, DDR/TDR metadata records (metadata.py) before each table's first record per file.
Record checksums (checksum.py): ``TrailWriter.open(..., checksum=True)`` seals records
with a CRC-32 token; readers check it (``TrailEntry.crc``). Nothing here imports pyspark.
"""

from engine.trail.checksum import CrcCheck
from engine.trail.codec import (
    DecodedRecord,
    RecordStream,
    decode_any,
    decode_exact,
    decode_record,
    encode_record,
    encode_row,
)
from engine.trail.errors import (
    ChecksumError,
    CorruptRecordError,
    FileVersionError,
    IncompleteRecordError,
    RecordLimitError,
    TrailError,
    TrailingBytesError,
    TrailIOError,
)
from engine.trail.fileheader import decode_file_header, encode_file_header
from engine.trail.files import TrailName
from engine.trail.layout import IO_TYPE_NAMES, IOType, TransInd
from engine.trail.model import FileHeader, TableDef, TrailPosition, TrailRecord
from engine.trail.reader import FileCursor, TrailEntry, TrailReader
from engine.trail.recovery import (
    CompletedTransaction,
    RecoveryMode,
    RecoveryResult,
    complete_transactions,
    find_last_complete_transaction,
    recover_trail,
)
from engine.trail.writer import TrailWriter

__all__ = [
    "IO_TYPE_NAMES",
    "ChecksumError",
    "CompletedTransaction",
    "CorruptRecordError",
    "CrcCheck",
    "DecodedRecord",
    "FileCursor",
    "FileHeader",
    "FileVersionError",
    "IOType",
    "IncompleteRecordError",
    "RecordLimitError",
    "RecordStream",
    "RecoveryMode",
    "RecoveryResult",
    "TableDef",
    "TrailEntry",
    "TrailError",
    "TrailIOError",
    "TrailName",
    "TrailPosition",
    "TrailReader",
    "TrailRecord",
    "TrailWriter",
    "TrailingBytesError",
    "TransInd",
    "complete_transactions",
    "decode_any",
    "decode_exact",
    "decode_file_header",
    "decode_record",
    "encode_file_header",
    "encode_record",
    "encode_row",
    "find_last_complete_transaction",
    "recover_trail",
]
