"""The transactions at a trail's end that share its last commit SCN (engine/trail/tail.py):
what a restarted Extract must not write again when two redo threads commit at one SCN."""

from __future__ import annotations

from pathlib import Path

from engine.extract.tasks.assemble import finish_fragments
from engine.trail.codec import row_record
from engine.trail.model import TableDef
from engine.trail.recovery import find_last_complete_transaction
from engine.trail.tail import tranids_at
from engine.trail.writer import TrailWriter


def _write(tmp_path: Path, txns: list[tuple[int, str, int]]) -> TrailWriter:
    writer = TrailWriter.open(tmp_path / "aa", durable=False)
    writer.define_table(TableDef("HR.EMP", ("ID",)))
    for scn, xid, rows in txns:
        blob = b"".join(row_record(5, b"HR.EMP", b"", b"", None, 1, i) for i in range(rows))
        data = finish_fragments([blob], xid, scn, 1_000_000, 0, rows)
        writer.append_transaction(data, rows, ["HR.EMP"], 1_000_000, str(scn))
    writer.close()
    return writer


def test_the_transactions_at_the_last_scn_are_found(tmp_path: Path) -> None:
    writer = _write(tmp_path, [(5, "1.1.1", 2), (7, "2.2.2", 1), (7, "3.3.3", 3)])
    last, _, _ = find_last_complete_transaction(writer.trail)
    assert last is not None and last.logcsn == "7"
    path = writer.trail.file(last.end.seqno)
    assert tranids_at(path, last.end.rba, "7") == {"2.2.2", "3.3.3"}
    assert tranids_at(path, last.end.rba, "5") == set()  # the walk stops at the last SCN


def test_one_transaction_at_the_last_scn(tmp_path: Path) -> None:
    writer = _write(tmp_path, [(5, "1.1.1", 1), (6, "2.2.2", 2)])
    last, _, _ = find_last_complete_transaction(writer.trail)
    assert last is not None
    assert tranids_at(writer.trail.file(last.end.seqno), last.end.rba, "6") == {"2.2.2"}
