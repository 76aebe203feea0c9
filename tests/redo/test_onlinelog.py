"""The online log writer: LWNs appended in Oracle's format read back by the same framing code
that reads Oracle's own logs (checksums, block numbers, record sizes exactly consumed); the
log switch; the side file; a torn tail cut on reopen."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.embedded.dump_parse import parse_dump
from engine.redo import framing as F
from engine.redo import layout as L
from engine.redo import onlinelog as O
from engine.redo import payloads as P
from engine.redo.errors import RedoError
from engine.redo.model import RedoRecord

SOURCE = Path(__file__).resolve().parents[1] / "source"
SEED: list[RedoRecord] = [
    r
    for p in sorted((SOURCE / "vectors").glob("*.dump"))
    for r in parse_dump(p.read_text().splitlines()).records
]


def _header(order: L.Order = "<", bs: int = 512, seq: int = 7, first_scn: int = 100) -> F.LogHeader:
    return O.new_header(thread=2, sequence=seq, first_scn=first_scn, first_time=1000,
                        dbid=42, db_name="DB", resetlogs_id=9, resetlogs_scn=1,
                        order=order, block_size=bs)  # fmt: skip


def _vectors(rec: RedoRecord, order: L.Order) -> bytes:
    return b"".join(P.encode_vector(cv, order) for cv in rec.changes)


def _write(path: Path, groups: list[list[RedoRecord]], order: L.Order = "<", bs: int = 512
           ) -> tuple[O.OnlineLog, list[tuple[int, int]]]:  # fmt: skip
    log = O.OnlineLog.create(path, _header(order, bs))
    where = []
    for g in groups:
        for r in g:
            where.append(log.add(r.scn, r.subscn, _vectors(r, order), P.redo_time_of(r.timestamp)))
        log.flush()
    return log, where


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("bs", [512, 1024, 4096])
def test_a_switched_log_reads_as_oracle_s(tmp_path: Path, order: L.Order, bs: int) -> None:
    groups = [SEED[i : i + 4] for i in range(0, len(SEED), 4)]
    path = tmp_path / "000000007.log"
    log, where = _write(path, groups, order, bs)
    last = SEED[-1]
    log.close(archive=True, next_scn=last.scn + 1, next_time=2000)
    data = path.read_bytes()
    h = F.read_header(data)
    assert (h.order, h.block_size, h.thread, h.sequence) == (order, bs, 2, 7)
    assert (h.first_scn, h.next_scn, h.next_time, h.blocks) == (
        100,
        last.scn + 1,
        2000,
        len(data) // bs,
    )
    assert h.description == f"T 0002, S 0000000007, SCN 0x{100:016x}-0x{last.scn + 1:016x}"
    stats = F.ReadStats()
    recs = list(F.iter_records(data, h, stats))
    assert stats.lwns == len(groups) and stats.blocks == h.blocks - 2
    assert len(recs) == len(SEED)
    for rec, model, (start, end) in zip(recs, SEED, where, strict=True):
        assert rec.rba.block * bs + rec.rba.offset == start and end - start >= rec.size
        back = P.decode_record(rec, model.timestamp, model.thread)
        assert back.changes == tuple(P.decode_vector(F.parse_record(
            P.encode_record(model, order), order).vectors[i]) for i in range(len(model.changes)))  # fmt: skip
    lwn_starts = [r for r in recs if r.lwn]
    for g, r in zip(groups, lwn_starts, strict=True):
        assert r.lwn is not None and r.lwn.scn == g[-1].scn
        assert r.lwn.time == P.redo_time_of(g[-1].timestamp)
    side = O.read_side(path)
    assert side is not None and side.archived and side.end == len(data)


def test_a_current_log_has_no_counted_blocks_and_its_side_file_the_end(tmp_path: Path) -> None:
    path = tmp_path / "000000007.log"
    log, _where = _write(path, [SEED[:3], SEED[3:5]])
    data = path.read_bytes()
    h = F.read_header(data)
    assert h.next_scn == L.OPEN_SCN and h.blocks == 2
    assert list(F.iter_records(data, h)) == []  # Oracle's reader alone reads nothing yet
    side = O.read_side(path)
    assert side is not None and side.end == len(data) == log.end and not side.archived
    log.flush(progress=(SEED[4].scn, log.end))
    side2 = O.read_side(path)
    assert side2 is not None and (side2.progress_scn, side2.progress_offset) == (
        SEED[4].scn,
        log.end,
    )
    whole = replace_blocks(data, side.end)
    assert [r.scn for r in F.iter_records(whole)] == [r.scn for r in SEED[:5]]
    log.close()


def replace_blocks(data: bytes, end: int) -> bytes:
    """The log's blocks up to ``end`` with a header counting them: what the switch writes."""
    h = F.read_header(data)
    head = O.header_blocks(h, end // h.block_size, end // h.block_size)
    return head + data[len(head) : end]


def test_a_torn_tail_is_cut_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "000000007.log"
    log, _ = _write(path, [SEED[:3], SEED[3:6]])
    good = log.end
    for r in SEED[6:12]:  # a third LWN written but not recorded in the side file
        log.add(r.scn, r.subscn, _vectors(r, "<"), 0)
    log.flush(record=False)
    third = log.end
    log.close()
    O.write_side(path, O.Side(end=good, first_scn=100))
    # whole: kept
    again = O.OnlineLog.reopen(path)
    assert again.end == third and path.stat().st_size == third
    again.close()
    # cut short inside the third LWN: cut back to the second's end
    O.write_side(path, O.Side(end=good, first_scn=100))
    with open(path, "r+b") as fh:
        fh.truncate(third - 100)
    again = O.OnlineLog.reopen(path)
    assert again.end == good and path.stat().st_size == good
    # the writer goes on after it, and the records read back
    again.add(SEED[12].scn, 1, _vectors(SEED[12], "<"), 0)
    again.close(archive=True, next_scn=10**7)
    assert [r.scn for r in F.iter_records(path.read_bytes())] == [
        r.scn for r in [*SEED[:6], SEED[12]]
    ]


def test_a_damaged_block_after_the_recorded_end_is_cut(tmp_path: Path) -> None:
    path = tmp_path / "000000007.log"
    log, _ = _write(path, [SEED[:3]])
    good = log.end
    for r in SEED[3:9]:
        log.add(r.scn, r.subscn, _vectors(r, "<"), 0)
    log.end_lwn()
    log.close()
    O.write_side(path, O.Side(end=good, first_scn=100))
    data = bytearray(path.read_bytes())
    data[good + 700] ^= 0x10
    path.write_bytes(bytes(data))
    assert O.OnlineLog.reopen(path).end == good


def test_the_side_file_is_absent_for_a_foreign_log_and_refused_when_damaged(tmp_path: Path) -> None:
    path = tmp_path / "000000007.log"
    assert O.read_side(path) is None
    O.write_side(path, O.Side(end=1024, first_scn=5, prev_sequence=6))
    side = O.read_side(path)
    assert side == O.Side(end=1024, first_scn=5, prev_sequence=6)
    raw = bytearray(O.side_path(path).read_bytes())
    raw[30] ^= 1
    O.side_path(path).write_bytes(bytes(raw))
    assert O.read_side(path) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(range(len(SEED))), min_size=1, max_size=6), min_size=1,
                max_size=5), st.sampled_from(["<", ">"]), st.sampled_from([512, 1024]))  # fmt: skip
def test_any_lwns_read_back(tmp_path_factory: pytest.TempPathFactory, picks: list[list[int]],
                            order: L.Order, bs: int) -> None:  # fmt: skip
    path = tmp_path_factory.mktemp("lwn") / "000000007.log"
    groups = [[SEED[i] for i in g] for g in picks]
    log, where = _write(path, groups, order, bs)
    log.close(archive=True, next_scn=10**8)
    recs = list(F.iter_records(path.read_bytes()))
    assert [r.rba.block * bs + r.rba.offset for r in recs] == [w[0] for w in where]
    assert [r.scn for r in recs] == [r.scn for g in groups for r in g]


def test_damage_anywhere_in_a_switched_log_is_found(tmp_path: Path) -> None:
    path = tmp_path / "000000007.log"
    log, _ = _write(path, [SEED[:5], SEED[5:9]])
    log.close(archive=True, next_scn=10**7)
    data = path.read_bytes()
    for at in range(0, len(data), 97):
        bad = bytearray(data)
        bad[at] ^= 0x04
        with pytest.raises(RedoError):
            list(F.iter_records(bytes(bad)))
