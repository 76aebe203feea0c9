"""How Logdump shows records: the GHDR block, the record line and data area (DETAIL
OFF/ON/DATA), GGS tokens, the file header (FILEHEADER OFF/ON/DETAIL), COUNT, and the
``--json`` object per record. Pure functions from decoded records to lines of text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.trail.checksum import CrcCheck
from engine.trail.codec import area_entries as encode_columns
from engine.trail.codec import token_entries, user_tokens
from engine.trail.fileheader import encode_file_header
from engine.trail.layout import (
    FILE_HEADER_NAME,
    HEADER_TOKEN_IDS,
    HEADER_TOKENS,
    IO_TYPE_NAMES,
    ORIG_NODE_DDR,
    ORIG_NODE_TDR,
    TDR_VERSION,
    TOKEN_CHECKSUM,
    TOKEN_NAMES,
    TOKEN_USER,
    HeaderKind,
    IOType,
)
from engine.trail.metadata import ddr_fields, defines_table, indexes, metadata_kind
from engine.trail.model import FileHeader, TableDef, TrailRecord, micros_to_datetime
from engine.trail.reader import TrailEntry
from engine.trail.releases import level_name

RULE = "_" * 67
_BYTES_PER_LINE = 20


def hexdump(data: bytes) -> list[str]:
    """Logdump's hex view: 20 bytes a line in 2-byte groups, then the printable text."""
    lines = []
    for start in range(0, len(data), _BYTES_PER_LINE):
        chunk = data[start : start + _BYTES_PER_LINE]
        groups = " ".join(chunk[i : i + 2].hex() for i in range(0, len(chunk), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{groups:<49} | {text}")
    return lines


def _ends(data: bytes, lines: int = 3) -> list[str]:
    """:func:`hexdump` of a piece of a continued row (up to 65 KB): its first and last
    ``lines`` lines, and how many bytes are between them."""
    width = lines * _BYTES_PER_LINE
    if len(data) <= 2 * width + _BYTES_PER_LINE:
        return hexdump(data)
    tail = len(data) - width
    return [
        *hexdump(data[:width]),
        f"... {tail - width} bytes (offset {width} to {tail - 1}) not shown ...",
        *hexdump(data[tail:]),
    ]


def invalid_time(micros: int) -> str:
    """How a time field that is no date (a corrupt or foreign trail) is shown: its bits."""
    return f"invalid time 0x{micros & 0xFFFF_FFFF_FFFF_FFFF:016x}"


def logdump_time(micros: int) -> str:
    """``2013/03/31 23:59:58.000.000``, as Logdump prints IO times."""
    try:
        moment = micros_to_datetime(micros)
    except (OverflowError, ValueError):
        return invalid_time(micros)
    us = moment.microsecond
    return f"{moment:%Y/%m/%d %H:%M:%S}.{us // 1000:03d}.{us % 1000:03d}"


def iso_time(micros: int) -> str:
    try:
        return f"{micros_to_datetime(micros):%Y-%m-%d %H:%M:%S.%f}"
    except (OverflowError, ValueError):
        return invalid_time(micros)


def _char(value: int) -> str:
    return chr(value) if 32 <= value < 127 else "."


def _cell(label: str, shown: str, hex_text: str) -> str:
    return f"{label:<11}: {shown:>5}  ({hex_text})"


@dataclass
class DisplayOptions:
    ghdr: bool = True
    detail: str = "ON"  # OFF, ON or DATA
    fileheader: str = "DETAIL"  # OFF, ON or DETAIL


@dataclass
class Views:
    """Renders entries of one trail file; remembers the table definitions it meets so
    that column names and TDR indexes can be shown."""

    options: DisplayOptions = field(default_factory=DisplayOptions)
    tables: dict[str, TableDef] = field(default_factory=dict)
    tdr_index: dict[str, int] = field(default_factory=dict)

    def learn(self, entry: TrailEntry) -> None:
        record = entry.record
        if isinstance(record, TrailRecord) and defines_table(record):
            self.tables[record.table] = TableDef.from_record(record)
            tdr = indexes(record)[1] if record.orig_node == ORIG_NODE_TDR else 0
            self.tdr_index[record.table] = tdr or len(self.tdr_index) + 1

    # -- text ------------------------------------------------------------------------------
    def render(self, entry: TrailEntry) -> list[str]:
        self.learn(entry)
        record = entry.record
        if isinstance(record, FileHeader):
            return self.file_header(entry, record)
        lines: list[str] = []
        if self.options.ghdr:
            lines += self.ghdr(record)
        lines += self.body(entry, record)
        return lines

    def ghdr(self, r: TrailRecord) -> list[str]:
        rec_length = len(_data_area(r))
        continued = "Y" if r.continued else "N"
        rows = [
            (
                _cell("Hdr-Ind", "E", "x45"),
                _cell("Partition", _char(r.partition), f"x{r.partition:02x}"),
            ),
            (
                _cell("UndoFlag", _char(r.undo_flag), f"x{r.undo_flag:02x}"),
                _cell("BeforeAfter", r.before_after, f"x{ord(r.before_after):02x}"),
            ),
            (
                _cell("RecLength", str(rec_length), f"x{rec_length:04x}"),
                f"{'IO Time':<11}: {logdump_time(r.io_time_us)}",
            ),
            (
                _cell("IOType", str(r.io_type), f"x{r.io_type:02x}"),
                _cell("OrigNode", str(r.orig_node), f"x{r.orig_node:02x}"),
            ),
            (
                _cell("TransInd", _char(r.trans_ind), f"x{r.trans_ind:02x}"),
                _cell("FormatType", r.format_type, f"x{ord(r.format_type):02x}"),
            ),
            (
                _cell("SyskeyLen", str(r.syskey_len), f"x{r.syskey_len:02x}"),
                _cell("Incomplete", _char(r.incomplete), f"x{r.incomplete:02x}"),
            ),
            (
                self._audit_rba(r),
                f"{'AuditPos':<11}: {r.audit_pos}",
            ),
            (
                _cell("Continued", continued, f"x{int(r.continued):02x}"),
                _cell("RecCount", str(r.rec_count), f"x{r.rec_count:02x}"),
            ),
        ]
        return [RULE, *(f"{left:<30}{right}" for left, right in rows), ""]

    @staticmethod
    def _audit_rba(r: TrailRecord) -> str:
        """A DDR/TDR carries its DDR/TDR index pair where other records have AuditRBA."""
        if r.io_type == IOType.METADATA and r.orig_node in (ORIG_NODE_DDR, ORIG_NODE_TDR):
            ddr, tdr = indexes(r)
            return f"DDR/TDR index:   ({ddr:03d}, {tdr:03d})     "  # 32 wide, as Logdump
        return f"{'AuditRBA':<11}: {r.audit_rba:>10}"

    def body(self, entry: TrailEntry, r: TrailRecord) -> list[str]:
        data = _data_area(r)
        lines = [f"{logdump_time(r.io_time_us)} {r.op_name:<20} Len {len(data):>5} RBA {entry.rba}"]
        if r.io_type == IOType.METADATA and r.orig_node in (ORIG_NODE_DDR, ORIG_NODE_TDR):
            crc = checksum_lines(entry.crc) if entry.crc is not None else []
            return [*lines, *metadata_lines(r), *crc, ""]
        name = f"Name: {r.table}"
        if r.table in self.tdr_index and r.io_type != IOType.METADATA:
            name += f"  (TDR Index: {self.tdr_index[r.table]})"
        lines.append(name)
        if r.segment is not None:
            lines += self._piece(r, r.segment)
        elif r.before_columns:
            lines += self._image("Before Image:", r, r.before_columns)
        label = "Before Image:" if r.before_after == "B" else "After  Image:"
        if r.segment is None:
            lines += self._image(label, r, r.columns)
        users = user_tokens(r)
        if users:
            size = sum(len(v) for t, _, v in r.extra_tokens if t == TOKEN_USER)
            lines += ["", f"User tokens:   {size} bytes"]
            lines += [f"{name:<20}: {'NULL' if v is None else v}" for name, v in users]
        tokens = [t for t in token_entries(r) if t[0] != TOKEN_USER]
        if tokens or entry.crc is not None:
            lines += ["", "GGS tokens:"]
            for tid, info, value in tokens:
                tname = TOKEN_NAMES.get(tid, "")
                lines.append(
                    f"TokenID x{tid[0]:02x} '{_char(tid[0])}' {tname:<16} Info x{info:02x}"
                    f"  Length {len(value):>4}"
                )
                lines += hexdump(value)
        if entry.crc is not None:
            lines += checksum_lines(entry.crc)
        lines.append("")
        return lines

    @staticmethod
    def _piece(r: TrailRecord, segment: tuple[bytes, bytes]) -> list[str]:
        """A piece of a continued row (continued.py): its bytes, which may end inside a
        column entry, and where the row goes on."""
        before, data = segment
        more = "the row goes on in the next record" if r.continued else "the last piece"
        lines = [f"Continued row, piece {r.rec_count} ({more})"]
        if before:
            lines += [f"{'Before Image bytes:':<58}Partition x{r.partition:02x}"]
            lines += _ends(before)
        label = "Before Image bytes:" if r.before_after == "B" else "After  Image bytes:"
        lines += [f"{label:<58}Partition x{r.partition:02x}", *_ends(data)]
        return lines

    def _image(
        self, label: str, r: TrailRecord, columns: tuple[tuple[int, str | None], ...]
    ) -> list[str]:
        lines = [f"{label:<58}Partition x{r.partition:02x}"]
        lines += hexdump(encode_columns(columns))
        if self.options.detail in ("ON", "DATA"):
            definition = self.tables.get(r.table)
            for index, value in columns:
                raw = encode_columns(((index, value),))[4:]
                name = f" {definition.name_of(index)}" if definition else ""
                lines.append(
                    f"Column {index} (x{index:04x}), Length {len(raw)} (x{len(raw):04x}).{name}"
                )
                if self.options.detail == "DATA":
                    lines += ["  " + line for line in hexdump(raw)]
        return lines

    def file_header(self, entry: TrailEntry, header: FileHeader) -> list[str]:
        created = header.get("CreationTime", 0)
        when = logdump_time(created if isinstance(created, int) else 0)
        lines = [
            f"{when} {'FileHeader':<20} Len {entry.length:>5} RBA {entry.rba}",
            f"Name: {FILE_HEADER_NAME}",
        ]
        if self.options.fileheader in ("ON", "DETAIL"):
            lines += hexdump(encode_file_header(dict(header.tokens))[8:-4])
        if self.options.fileheader == "DETAIL":
            for name, value in header.tokens.items():
                tid = HEADER_TOKEN_IDS[name]
                kind = HEADER_TOKENS[tid][1]
                shown = (
                    logdump_time(value)
                    if kind is HeaderKind.I64 and isinstance(value, int) and value
                    else value
                )
                if name == "Compatibility" and isinstance(value, int):
                    shown = level_name(value)
                lines.append(f"  TokenID x{tid[0]:02x} '{tid.decode()}' {name:<16}: {shown}")
        lines.append("")
        return lines

    # -- json ------------------------------------------------------------------------------
    def json(self, file: str, entry: TrailEntry) -> dict[str, Any]:
        self.learn(entry)
        return record_json(file, entry, self.tables)


def _columns_json(
    r: TrailRecord, columns: tuple[tuple[int, str | None], ...], tables: dict[str, TableDef]
) -> dict[str, str | None]:
    definition = tables.get(r.table) if r.io_type != IOType.METADATA else None
    if definition is None:
        return {str(index): value for index, value in columns}
    return {definition.name_of(index): value for index, value in columns}


def record_json(file: str, entry: TrailEntry, tables: dict[str, TableDef]) -> dict[str, Any]:
    """The ``logdump --json`` object of one record (next record at rba + length)."""
    record = entry.record
    if isinstance(record, FileHeader):
        return {
            "file": file,
            "rba": entry.rba,
            "length": entry.length,
            "io_type": None,
            "op": "FileHeader",
            "header": dict(record.tokens),
        }
    out: dict[str, Any] = {
        "file": file,
        "rba": entry.rba,
        "length": entry.length,
        "io_type": record.io_type,
        "op": record.op_name,
        **_metadata_json(record),
        "trans_ind": record.trans_ind,
        "before_after": record.before_after,
        "io_time": iso_time(record.io_time_us),
        "table": record.table,
        "columns": _columns_json(record, record.columns, tables),
        **_piece_json(record),
        "tokens": {"ORAROWID": record.rowid, "LOGCSN": record.logcsn, "TRANID": record.tranid},
    }
    if record.extra_tokens and (users := user_tokens(record)):
        out["user_tokens"] = dict(users)
    if record.before_columns:
        out["before_columns"] = _columns_json(record, record.before_columns, tables)
    if entry.crc is not None:
        out["checksum"] = "ok" if entry.crc.ok else entry.crc.describe()
    return out


def _data_area(r: TrailRecord) -> bytes:
    """The data area's bytes as the record holds them (a piece of a continued row: its own)."""
    return r.segment[1] if r.segment is not None else encode_columns(r.columns)


def _piece_json(record: TrailRecord) -> dict[str, Any]:
    """A piece of a continued row: its place and how many area bytes it holds."""
    if record.segment is None:
        return {}
    before, data = record.segment
    return {
        "continued": record.continued,
        "rec_count": record.rec_count,
        "piece_bytes": {"before": len(before), "data": len(data)},
    }


def _metadata_json(record: TrailRecord) -> dict[str, Any]:
    kind = metadata_kind(record)
    if kind is None:
        return {}
    ddr, tdr = indexes(record) if record.orig_node in (ORIG_NODE_DDR, ORIG_NODE_TDR) else (0, 0)
    return {"metadata": kind, "ddr_index": ddr, "tdr_index": tdr}


def metadata_lines(r: TrailRecord) -> list[str]:
    """A DDR or TDR as Logdump shows it (the fields ggsci's records carry; GoldenGate's
    TDR has 25 per column, ggsci's the column name only)."""
    if r.orig_node == ORIG_NODE_DDR:
        return (
            [f"Database Name: {r.table}", "*"]
            + [f"{name}: {value}" for name, value in ddr_fields(r)]
            + ["*"]
        )
    names = [v if v is not None else str(i) for i, v in r.columns]
    return [
        f"Table Name: {r.table}",
        "*",
        " 1)Name          2)Column Index",
        "*",
        f"TDR version: {TDR_VERSION}",
        f"Definition for table {r.table}",
        f"Columns: {len(names)}",
        *(f"{name:<30} {index:>5}" for (index, _), name in zip(r.columns, names, strict=True)),
        "End of definition",
    ]


def checksum_lines(crc: CrcCheck) -> list[str]:
    """The checksum token (ours) as Logdump shows tokens, and what checking it found."""
    if crc.stored is None:
        return [f"Checksum   : MISSING: {crc.describe()}"]
    return [
        f"TokenID x{TOKEN_CHECKSUM[0]:02x} '{TOKEN_CHECKSUM.decode()}' "
        f"{TOKEN_NAMES[TOKEN_CHECKSUM]:<16} Info x00  Length    4",
        f"Checksum   : {'ok' if crc.ok else 'MISMATCH'}: {crc.describe()}",
    ]


# -- COUNT -------------------------------------------------------------------------------
def count_lines(path: str, entries: Iterable[TrailEntry]) -> list[str]:
    """Logdump's COUNT summary over the records of one file. The records of a partial
    transaction that a RestartAbend marker closes (append-mode recovery) are counted as
    records but belong to no transaction: the averages leave them out, and a line says
    how many there were."""
    ops: Counter[str] = Counter()
    images: Counter[str] = Counter()
    metadata: Counter[str] = Counter()
    records = data_bytes = transactions = checked = mismatched = 0
    open_records = open_bytes = partial = partial_bytes = 0
    for entry in entries:
        if entry.crc is not None:
            checked += 1
            mismatched += not entry.crc.ok
        record = entry.record
        if isinstance(record, FileHeader):
            continue
        records += 1
        kind = metadata_kind(record)
        if kind is not None:  # DDR/TDR: counted apart, never as data
            metadata[kind] += 1
            continue
        size = len(_data_area(record))
        data_bytes += size
        ops[IO_TYPE_NAMES.get(record.io_type, f"IOType{record.io_type}")] += 1
        if record.io_type == IOType.RESTART_ABEND:
            partial += open_records
            partial_bytes += open_bytes
            open_records = open_bytes = 0
        if record.is_transactional:
            images["Before Images" if record.before_after == "B" else "After Images"] += 1
            open_records += 1
            open_bytes += size
            if record.ends_transaction and not record.continued:  # (a row's last piece)
                transactions += 1
                open_records = open_bytes = 0

    def row(label: str, value: int) -> str:
        return f"{label}{value:>{max(31 - len(label), 1)}}"

    data_records = records - sum(metadata.values())
    lines = [
        f"LogTrail {path} has {records} records",
        row("Total Data Bytes", data_bytes),
        row("  Avg Bytes/Record", data_bytes // data_records if data_records else 0),
    ]
    lines += [row(name, n) for name, n in sorted(ops.items())]
    lines += [row(name, n) for name, n in sorted(images.items())]
    if metadata:
        lines.append(row("Metadata Records", sum(metadata.values())))
        lines += [row(f"  {kind}", n) for kind, n in sorted(metadata.items())]
    if partial:
        lines.append(row("Partial Trans Records", partial))
    if transactions:
        tx_records = sum(n for name, n in images.items()) - partial
        lines += [
            f"Average of {transactions} Transactions",
            row("    Bytes/Trans .....", (data_bytes - partial_bytes) // transactions),
            row("    Records/Trans ...", tx_records // transactions),
        ]
    if checked:
        lines += [row("Checksums verified", checked), row("Checksum mismatches", mismatched)]
    return lines
