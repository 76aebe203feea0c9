"""Metadata records of 12.2+ trails: the DDR (database definition record) and the TDR
(table definition record), both IOType 170, as Logdump shows them.

* A **DDR** (OrigNode 1, DDR/TDR index ``(d, 0)``) describes the source database; its H
  header names the database (Logdump: ``Database Name:``) and its data area holds the
  fields of ``layout.DDR_FIELDS`` as column entries, field i at index i.
* A **TDR** (OrigNode 2, index ``(d, t)``) defines one table: H names the table, the data
  area holds column i's name at index i. Data records of the table follow it; Logdump
  shows them as ``Name: OWNER.TABLE  (TDR Index: t)``.

The writer puts one DDR before the first TDR of each file and a TDR before the first
record of each table in each file (writer.py). ggsci's first trail format wrote the
table definition alone, with OrigNode 0: :func:`defines_table` reads both.
"""

from __future__ import annotations

from engine.trail.layout import (
    DDR_FIELDS,
    DDR_VERSION,
    ORIG_NODE_DDR,
    ORIG_NODE_TDR,
    IOType,
    TransInd,
    ddr_tdr_index,
    split_ddr_tdr_index,
)
from engine.trail.model import TableDef, TrailRecord


def is_metadata(record: TrailRecord) -> bool:
    return record.io_type == IOType.METADATA


def is_ddr(record: TrailRecord) -> bool:
    return record.io_type == IOType.METADATA and record.orig_node == ORIG_NODE_DDR


def defines_table(record: TrailRecord) -> bool:
    """A TDR (or the legacy table definition): a metadata record that is not a DDR."""
    return record.io_type == IOType.METADATA and record.orig_node != ORIG_NODE_DDR


def metadata_kind(record: TrailRecord) -> str | None:
    """``DDR``, ``TDR`` or None (not a metadata record)."""
    if record.io_type != IOType.METADATA:
        return None
    return "DDR" if record.orig_node == ORIG_NODE_DDR else "TDR"


def indexes(record: TrailRecord) -> tuple[int, int]:
    """The (DDR, TDR) index pair of a metadata record."""
    return split_ddr_tdr_index(record.audit_rba)


def ddr_record(
    io_time_us: int,
    *,
    global_name: str,
    charset: str = "UTF-8",
    database_type: str = "ORACLE",
    ddr_index: int = 1,
) -> TrailRecord:
    values = (DDR_VERSION, database_type, charset, "UTF-16", global_name)
    return TrailRecord(
        io_type=IOType.METADATA,
        table=global_name,
        columns=tuple(enumerate(values)),
        trans_ind=TransInd.WHOLE,
        io_time_us=io_time_us,
        orig_node=ORIG_NODE_DDR,
        audit_rba=ddr_tdr_index(ddr_index, 0),
        partition=0,
    )


def tdr_record(table: TableDef, io_time_us: int, *, ddr_index: int, tdr_index: int) -> TrailRecord:
    return TrailRecord(
        io_type=IOType.METADATA,
        table=table.table,
        columns=tuple(enumerate(table.column_names)),
        trans_ind=TransInd.WHOLE,
        io_time_us=io_time_us,
        orig_node=ORIG_NODE_TDR,
        audit_rba=ddr_tdr_index(ddr_index, tdr_index),
        partition=0,
    )


def ddr_fields(record: TrailRecord) -> list[tuple[str, str]]:
    """The DDR's fields by name (an index no field is known for is shown by number)."""
    out = []
    for index, value in record.columns:
        name = DDR_FIELDS[index] if index < len(DDR_FIELDS) else f"Field {index}"
        out.append((name, "" if value is None else value))
    return out
