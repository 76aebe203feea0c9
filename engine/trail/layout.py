"""The trail wire format as tables: section tags, struct formats, token ids, limits.

Everything is big-endian (``>``). A record is a sequence of sections, each introduced by
a 4-byte section header ``tag:1 flag:1 length:2``::

    G  flag 1  length = whole record (G header .. Z trailer)      envelope
    H  flag 0  length = 35 + len(table name)                      row header (data records)
    F  flag 0  length = bytes of file-header tokens               file header record only
    B  flag 0  length = bytes of before-image column entries      IOType 115, 134, 135 only
    D  flag 0  length = bytes of column entries                   data area
    T  flag 0  length = bytes of token entries                    token area (may be absent)
    Z  flag 1  length = whole record, repeated                    trailer

A column entry is ``index:2 length:2 null:2 vlen:2 value`` where ``length = 4 + vlen`` and
``null`` is 0 for a value, 0xFFFF for SQL NULL (then ``vlen`` is 0). A token entry is
``id:1 info:1 length:2 value``. ``docs/trail_format.md`` walks through a seed example byte
by byte; this module is the single source of those numbers.
"""

from __future__ import annotations

import struct
from enum import IntEnum
from typing import Final

# -- section headers ---------------------------------------------------------------------
SECTION: Final = struct.Struct(">cBH")  # tag, flag, length
SECTION_SIZE: Final = SECTION.size  # 4

TAG_ENVELOPE: Final = b"G"
TAG_ROW_HEADER: Final = b"H"
TAG_FILE_HEADER: Final = b"F"
TAG_BEFORE_IMAGE: Final = b"B"
TAG_DATA: Final = b"D"
TAG_TOKENS: Final = b"T"
TAG_TRAILER: Final = b"Z"

FLAG_WHOLE_RECORD: Final = 1  # G and Z: the length covers the whole record
FLAG_SECTION: Final = 0

# Sections that may follow the H (or F) section, in this order, each at most once.
BODY_SECTION_ORDER: Final[tuple[bytes, ...]] = (TAG_BEFORE_IMAGE, TAG_DATA, TAG_TOKENS)

# -- the H row header: 35 fixed bytes, then the table name (ASCII) -----------------------
#   off size field         fmt
#   0   1    Hdr-Ind       c   always b"E"
#   1   1    UndoFlag      B
#   2   1    IOType        B
#   3   1    TransInd      B   0 begin, 1 middle, 2 end, 3 whole
#   4   1    SyskeyLen     B
#   5   1    Continued     c   b"N" / b"Y"
#   6   1    Partition     B   4 = FieldComp internal format
#   7   1    BeforeAfter   c   b"B" / b"A"
#   8   1    OrigNode      B
#   9   1    FormatType    c   b"R" read from the log / b"F" fetched
#   10  1    Incomplete    B   obsolete, 0
#   11  8    IO Time       q   microseconds since 1970-01-01, source-local clock
#   19  4    AuditRBA      I   redo log sequence
#   23  8    AuditPos      Q   byte offset in that redo log
#   31  2    RecCount      H
#   33  2    name length   H
ROW_HEADER: Final = struct.Struct(">cBBBBcBcBcBqIQHH")
ROW_HEADER_SIZE: Final = ROW_HEADER.size  # 35
HDR_IND: Final = b"E"
OFF_IO_TYPE: Final = 2
OFF_TRANS_IND: Final = 3
OFF_CONTINUED: Final = 5
OFF_BEFORE_AFTER: Final = 7
OFF_IO_TIME: Final = 11
OFF_REC_COUNT: Final = 31
OFF_NAME_LENGTH: Final = 33

# -- column entries and token entries ----------------------------------------------------
COLUMN: Final = struct.Struct(">HHHH")  # index, length (4 + vlen), null indicator, vlen
COLUMN_SIZE: Final = COLUMN.size  # 8
NULL_ABSENT: Final = 0x0000
NULL_PRESENT: Final = 0xFFFF
# (ours) A value longer than one entry can say (``length`` is 2 bytes: at most
# MAX_SEGMENT_LENGTH bytes) is written as consecutive entries of the same column index, each
# full one with this null indicator ("the value goes on in the next entry"), the last with
# NULL_ABSENT; a reader joins their bytes before decoding the text.
NULL_SEGMENT: Final = 0x0001
MAX_SEGMENT_LENGTH: Final = 0xFFFF - 4

TOKEN: Final = struct.Struct(">cBH")  # id, info, length
TOKEN_SIZE: Final = TOKEN.size  # 4

# -- limits (checked before anything is allocated) ---------------------------------------
MAX_RECORD_LENGTH: Final = 0xFFFF  # G/Z length is 2 bytes
MAX_TABLE_NAME_LENGTH: Final = 512
MAX_COLUMN_INDEX: Final = 0xFFFF
MAX_TOKEN_LENGTH: Final = 4096
MIN_RECORD_LENGTH: Final = 3 * SECTION_SIZE  # G, one body section, Z
# The largest value that can fit a record at all (G, H, D, one column entry, Z, no name).
MAX_VALUE_LENGTH: Final = MAX_RECORD_LENGTH - (4 * SECTION_SIZE + ROW_HEADER_SIZE + COLUMN_SIZE)
# -- continued records (seed 003: Continued, RecCount, IOType 161 RecordFragment) ----------
# A row whose record would pass MAX_PIECE_LENGTH is written as several records, in one write
# and one file: the base record (the row's own IOType, Continued Y, RecCount 1, all its
# tokens) and RecordFragment records (IOType 161, RecCount 2, 3, ..., Continued Y but the last
# N), each with the base record's other header fields and table name. Each piece holds the
# next bytes of the row's before-image area (its B section, when it has some) and then of its
# data area (its D section, always present, maybe empty): a reader joins the B and the D
# bytes of the pieces in order and decodes the columns from the joined areas. A piece may
# end in the middle of a column entry. MAX_PIECE_LENGTH leaves room for the checksum token
# the writer adds to each piece (checksum.py: at most 12 bytes).
MAX_PIECE_LENGTH: Final = MAX_RECORD_LENGTH - 12
MAX_PIECES: Final = 0xFFFF  # RecCount is 2 bytes
# Fixed width of the file-header tokens that are patched when a file is closed.
PATCHABLE_TEXT_WIDTH: Final = 24


class IOType(IntEnum):
    """Operation types, numbered as GoldenGate numbers them (SHOW RECTYPE)."""

    DELETE = 3
    INSERT = 5
    UPDATE = 10
    FIELDCOMP = 15
    PURGEDATA = 100
    KEYFIELDCOMP = 115
    UNIFIED_UPDATE = 134  # before and after image in one record (UPDATERECORDFORMAT)
    UNIFIED_PK_UPDATE = 135  # the same for an update of the key (seed 003: 135-UNIFIED PKUPDATE)
    RECORD_FRAGMENT = 161  # the pieces after the base record of a continued row (seed 003)
    METADATA = 170  # DDR / TDR metadata record (12.2+ trails), OrigNode says which
    GGS_COMMENT = 205  # Logdump SAVE's comment before and after the saved records (seed 003)
    RESTART_ABEND = 211  # our number: recovery marker after a partly written transaction


IO_TYPE_NAMES: Final[dict[int, str]] = {
    IOType.DELETE: "Delete",
    IOType.INSERT: "Insert",
    IOType.UPDATE: "Update",
    IOType.FIELDCOMP: "FieldComp",
    IOType.PURGEDATA: "GGSPurgedata",
    IOType.KEYFIELDCOMP: "GGSKeyFieldComp",
    IOType.UNIFIED_UPDATE: "GGSUnifiedUpdate",
    IOType.UNIFIED_PK_UPDATE: "GGSUnifiedPKUpdate",
    IOType.RECORD_FRAGMENT: "RecordFragment",
    IOType.METADATA: "Metadata",
    IOType.GGS_COMMENT: "GGSComment",
    IOType.RESTART_ABEND: "RestartAbend",
}

#: (ours, never written: IOType is one byte) added to the IOType of a row event whose
#: record is a before image (GETUPDATEBEFORES without UPDATERECORDFORMAT): the record is
#: written with the IOType ``io_type & 0xFF`` and BeforeAfter B. A delete is B as well.
BEFORE_IMAGE: Final = 0x100


def wire_io_type(io_type: int) -> tuple[int, bytes]:
    """The IOType byte and BeforeAfter of a row event's ``io_type`` (:data:`BEFORE_IMAGE`)."""
    if io_type & BEFORE_IMAGE:
        return io_type & 0xFF, b"B"
    return io_type, b"B" if io_type == IOType.DELETE else b"A"


_UPDATE_TYPES: Final = frozenset({IOType.UPDATE, IOType.FIELDCOMP, IOType.KEYFIELDCOMP})


def event_io_type(io_type: int, before_after: str) -> int:
    """The io type of a record read from a trail as the row rules see it: an update's
    before image (BeforeAfter B; a delete is B as well, and a change) with BEFORE_IMAGE."""
    if before_after == "B" and io_type in _UPDATE_TYPES:
        return io_type | BEFORE_IMAGE
    return io_type


# Records that are not row operations and sit outside transactions.
NON_TRANSACTIONAL_IO_TYPES: Final = frozenset(
    {IOType.METADATA, IOType.RESTART_ABEND, IOType.GGS_COMMENT}
)


class TransInd(IntEnum):
    BEGIN = 0
    MIDDLE = 1
    END = 2
    WHOLE = 3

    @classmethod
    def of(cls, index: int, count: int) -> TransInd:
        """The TransInd of record ``index`` (from 0) of a transaction of ``count``."""
        if count == 1:
            return cls.WHOLE
        if index == 0:
            return cls.BEGIN
        return cls.END if index == count - 1 else cls.MIDDLE


# -- metadata records (IOType 170) of 12.2+ trails -----------------------------------------
# Logdump tells them apart by OrigNode: 1 = DDR (database definition), 2 = TDR (table
# definition). The H header's AuditRBA field holds the DDR/TDR index pair: DDR index in
# the high 16 bits, TDR index in the low 16 (a DDR has TDR index 0). ggsci's first format
# (Compatibility 1) wrote a table definition with OrigNode 0, read as a TDR.
ORIG_NODE_DDR: Final = 1
ORIG_NODE_TDR: Final = 2
# The DDR's data area: column entry i holds field i (values are text).
DDR_FIELDS: Final[tuple[str, ...]] = (
    "DDR Version",
    "Database type",
    "Character set ID",
    "National character set ID",
    "Global name",
)
DDR_VERSION: Final = "1"
TDR_VERSION: Final = "1"


def ddr_tdr_index(ddr: int, tdr: int) -> int:
    """The AuditRBA value of a metadata record."""
    return (ddr << 16) | tdr


def split_ddr_tdr_index(audit_rba: int) -> tuple[int, int]:
    return audit_rba >> 16, audit_rba & 0xFFFF


# -- GGS tokens of the T area ------------------------------------------------------------
TOKEN_ORAROWID: Final = b"R"
TOKEN_LOGCSN: Final = b"L"
TOKEN_TRANID: Final = b"6"
# (ours, beyond GoldenGate) CRC-32 of the record, the last entry of the T area of every
# record of a file whose header says Checksum 1; see engine/trail/checksum.py.
TOKEN_CHECKSUM: Final = b"C"
CHECKSUM_LENGTH: Final = 4
# (ours: GoldenGate keeps user tokens in an area of their own) a TOKENS (...) user token:
# value = name, NUL, value in UTF-8; Info x01 for a NULL value. Logdump shows it TKN-style.
TOKEN_USER: Final = b"U"
TOKEN_NAMES: Final[dict[bytes, str]] = {
    TOKEN_USER: "USERTOKEN",
    TOKEN_ORAROWID: "ORAROWID",
    TOKEN_LOGCSN: "LOGCSN",
    TOKEN_TRANID: "TRANID",
    TOKEN_CHECKSUM: "CHECKSUM",
}
# ORAROWID value = 18-character rowid, NUL, then the rowid kind byte (1 = heap row): 20 bytes,
# shown by TrailAnalyzer in seed 002 as "AAASrPAAEAAAAQ2AAK 1".
ROWID_SUFFIX: Final = b"\x00\x01"


# -- file header tokens (F section), id -> (name, kind) ----------------------------------
class HeaderKind(IntEnum):
    TEXT = 0  # UTF-8 text
    U32 = 1  # >I
    U64 = 2  # >Q
    I64 = 3  # >q (times: microseconds since 1970)
    PATCHED_TEXT = 4  # text padded with NUL to PATCHABLE_TEXT_WIDTH, rewritten at close


HEADER_TOKENS: Final[dict[bytes, tuple[str, HeaderKind]]] = {
    b"0": ("Signature", HeaderKind.TEXT),
    b"1": ("Compatibility", HeaderKind.U32),
    b"2": ("CharSet", HeaderKind.TEXT),
    b"3": ("CreationTime", HeaderKind.I64),
    b"4": ("URI", HeaderKind.TEXT),
    b"5": ("FileName", HeaderKind.TEXT),
    b"6": ("MultiPart", HeaderKind.U32),
    b"7": ("Seqno", HeaderKind.U32),
    b"8": ("FileSize", HeaderKind.U64),
    b"9": ("FirstCSN", HeaderKind.PATCHED_TEXT),
    b"A": ("LastCSN", HeaderKind.PATCHED_TEXT),
    b"B": ("FirstIOTime", HeaderKind.I64),
    b"C": ("LastIOTime", HeaderKind.I64),
    b"D": ("RecordCount", HeaderKind.U64),
    b"E": ("HostName", HeaderKind.TEXT),
    b"F": ("OSName", HeaderKind.TEXT),
    b"G": ("DbVendor", HeaderKind.TEXT),
    b"H": ("DbName", HeaderKind.TEXT),
    b"I": ("DbInstance", HeaderKind.TEXT),
    b"J": ("DbVersion", HeaderKind.TEXT),
    b"K": ("DbCharSet", HeaderKind.TEXT),
    b"L": ("Producer", HeaderKind.TEXT),
    b"M": ("ProducerVersion", HeaderKind.TEXT),
    b"N": ("GroupName", HeaderKind.TEXT),
    b"O": ("Checksum", HeaderKind.U32),  # 1: every record ends its T area with a CRC-32
    b"P": ("DbUniqueName", HeaderKind.TEXT),  # FORMAT RELEASE 21.1 and later
}
HEADER_TOKEN_IDS: Final[dict[str, bytes]] = {name: tid for tid, (name, _) in HEADER_TOKENS.items()}
HEADER_U32: Final = struct.Struct(">I")
HEADER_U64: Final = struct.Struct(">Q")
HEADER_I64: Final = struct.Struct(">q")
SIGNATURE: Final = "GGSCI-TRAIL"
CHECKSUM_CRC32: Final = 1  # the file header's Checksum value when records carry one
COMPATIBILITY_LEVEL: Final = 9  # the newest level this code reads (releases.NEWEST_LEVEL)
FILE_HEADER_NAME: Final = "*FileHeader*"

# -- trail file names ---------------------------------------------------------------------
TRAIL_PREFIX_LENGTH: Final = 2
TRAIL_SEQNO_DIGITS: Final = 9
MAX_TRAIL_SEQNO: Final = 10**TRAIL_SEQNO_DIGITS - 1
