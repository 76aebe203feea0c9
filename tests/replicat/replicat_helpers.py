"""Building trails and homes for pump and Replicat tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from engine.home.groups import GroupDef, GroupKind, GroupStore, SourceType
from engine.home.layout import Home
from engine.trail.codec import encode_record
from engine.trail.layout import IOType, TransInd
from engine.trail.model import Columns, TableDef, TrailRecord
from engine.trail.writer import TrailWriter, seal
from params.check import check_file
from params.models import ParamFile

EMP = TableDef("HR.EMP", ("ID", "NAME", "SAL"))

Op = tuple[int, str, Columns] | tuple[int, str, Columns, Columns]


def txn_records(csn: int, ops: Sequence[Op], tranid: str | None = None) -> list[TrailRecord]:
    """One transaction's records: ``(io_type, table, columns[, before_columns])`` each."""
    out = []
    n = len(ops)
    for i, op in enumerate(ops):
        io_type, table, cols = op[0], op[1], op[2]
        before: Columns = op[3] if len(op) > 3 else ()  # type: ignore[misc]
        out.append(
            TrailRecord(
                io_type=io_type,
                table=table,
                columns=cols,
                before_columns=before,
                before_after="B" if io_type == IOType.DELETE else "A",
                trans_ind=TransInd.of(i, n),
                io_time_us=1_700_000_000_000_000 + csn,
                logcsn=str(csn) if i == 0 else None,
                tranid=(tranid or f"1.{csn % 48}.{csn}") if i == 0 else None,
            )
        )
    return out


def write_trail(
    path: Path,
    txns: Sequence[list[TrailRecord]],
    tables: Sequence[TableDef] = (EMP,),
    *,
    partial: list[TrailRecord] | None = None,
) -> None:
    """Append transactions (and optionally the first records of an unfinished one)."""
    writer = TrailWriter.open(path, durable=False, roll_on_restart=False)
    for t in tables:
        writer.define_table(t)
    for records in txns:
        writer.append_many(encode_record(r) for r in records)
    last = writer.current_file
    writer.close()
    if partial:  # as a writer killed in the middle of a transaction leaves its file
        with open(last, "ab") as handle:
            handle.write(seal(b"".join(encode_record(r) for r in partial)))


def ins(i: int, name: str = "n", sal: int = 1) -> Op:
    return (IOType.INSERT, "HR.EMP", ((0, str(i)), (1, f"{name}{i}"), (2, str(sal))))


def upd(i: int, sal: int) -> Op:
    return (IOType.FIELDCOMP, "HR.EMP", ((0, str(i)), (2, str(sal))))


def dele(i: int) -> Op:
    return (IOType.DELETE, "HR.EMP", ((0, str(i)),))


def add_group(home: Home, kind: GroupKind, name: str, source: SourceType, path: str) -> GroupDef:
    group = GroupDef(
        kind=kind, name=name, source=source, created="2024-01-01 00:00:00", source_path=path
    )
    GroupStore(home).save(group)
    return group


def model(home: Home, name: str, text: str) -> ParamFile:
    path = home.dirprm / f"{name}.prm"
    path.write_text(text)
    result = check_file(path, cwd=home.root)
    assert not result.errors, result.errors
    return result.model
