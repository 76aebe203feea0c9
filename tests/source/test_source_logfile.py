"""The database's logs in Oracle's format: round-trip, byte-range splits, torn tails,
corruption, switches; LWNs end at commits, never at flush points."""

from __future__ import annotations

import itertools
import os
import random
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.embedded.errors import RedoCorruptError, RedoTruncatedError
from engine.embedded.logfile import BLOCK, LogWriter, read_header, read_records
from engine.embedded.logs import LogSet, list_logs
from engine.redo.ids import Xid
from engine.redo.model import ChangeVector, Column, Commit, Kdo, Ktb, RedoRecord


def _records(w: LogWriter, n: int, seed: int = 1) -> list[RedoRecord]:
    """``n`` row records, every fifth with a commit (an LWN ends there: the records of one
    LWN carry its time, as Oracle's dumps show them)."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        cols = tuple(
            Column(j, rnd.randbytes(rnd.choice([1, 7, 100, 700])) if rnd.random() > 0.1 else None)
            for j in range(rnd.randint(0, 6))
        )
        kdo = Kdo("IRP", Ktb(xid=Xid(1, 2, 3)), 0x01000436, 0x01000432, slot=i % 100,
                  cc=len(cols), columns=cols)  # fmt: skip
        cvs = [ChangeVector(11, 2, kdo, obj=76495, dba=0x01000436)]
        if i % 5 == 4:
            cvs.append(ChangeVector(5, 4, Commit(2, 3)))
        rec = RedoRecord(
            1, w.next_rba(), 1000 + i, 1, datetime(2020, 1, 1, 0, 0, (i // 5) % 60), tuple(cvs)
        )
        w.append(rec)
        out.append(rec)
    w.flush()
    return out


def _key(r: RedoRecord) -> tuple[object, ...]:
    return (r.rba, r.scn, r.subscn, r.timestamp, r.changes)


def _keys(records: object) -> list[tuple[object, ...]]:
    return [_key(getattr(r, "record", r)) for r in records]  # type: ignore[attr-defined]


@pytest.fixture
def log(tmp_path: Path) -> tuple[Path, list[RedoRecord]]:
    path = tmp_path / "000000007.log"
    w = LogWriter(path, 1, 7, 1000, 0)
    recs = _records(w, 400)
    w.flush()  # a crash would leave what is flushed: no close
    return path, recs


def test_round_trip_and_positions(log: tuple[Path, list[RedoRecord]]) -> None:
    path, recs = log
    located = list(read_records(path))
    assert _keys(located) == _keys(recs)
    for lr in located:
        assert lr.sequence == 7
        rba = lr.record.rba
        assert lr.offset == rba.block * BLOCK + rba.offset  # RBA = where it is
        assert lr.offset % BLOCK >= 16
    for a, b in itertools.pairwise(located):
        assert a.end <= b.offset  # resume points chain (the next LWN from a fresh block)
        assert a.end == b.offset or b.record.lwn is not None
    assert read_header(path).sequence == 7


@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(0, 400 * 1200), min_size=1, max_size=6))
def test_any_split_reads_each_record_once(
    cuts: list[int], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("split") / "000000001.log"
    if not path.exists():
        w = LogWriter(path, 1, 1, 1, 0)
        _records(w, 200, seed=5)
        w.flush()
    whole = [lr.record for lr in read_records(path)]
    bounds = [0, *sorted(c % os.path.getsize(path) for c in cuts), None]
    parts = []
    for a, b in itertools.pairwise(bounds):
        parts += [lr.record for lr in read_records(path, a, b)]
    assert parts == whole


def test_resume_from_end_offset(log: tuple[Path, list[RedoRecord]]) -> None:
    path, recs = log
    located = list(read_records(path))
    mid = located[123]
    assert _keys(read_records(path, mid.end)) == _keys(recs[124:])
    assert _keys(read_records(path, mid.offset)) == _keys(recs[123:])


def test_torn_tail_every_cut(log: tuple[Path, list[RedoRecord]], tmp_path: Path) -> None:
    """A current log cut inside its last LWN reads without that LWN (five records)."""
    path, recs = log
    located = list(read_records(path))
    first = located[-5]  # the last LWN's first record
    assert first.record.lwn is not None
    data = path.read_bytes()
    for cut in range(first.offset - 16, len(data), 61):
        torn = tmp_path / "000000008.log"
        torn.write_bytes(data[:cut])
        assert _keys(read_records(torn)) == _keys(recs[:-5])
        if cut > first.offset - 16:
            with pytest.raises(RedoTruncatedError):
                list(read_records(torn, strict=True))


def test_writer_reopen_truncates_torn_tail(log: tuple[Path, list[RedoRecord]]) -> None:
    path, recs = log
    last = list(read_records(path))[-1]
    with open(path, "r+b") as fh:
        fh.truncate(last.end - 5)
    w = LogWriter(path, 1, 7, 1000, 0)
    assert w.records == len(recs) - 5
    more = _records(w, 5, seed=9)
    w.close()
    assert _keys(read_records(path, strict=True)) == _keys(recs[:-5] + more)


def test_corruption_is_detected(log: tuple[Path, list[RedoRecord]]) -> None:
    path, _ = log
    located = list(read_records(path))
    data = bytearray(path.read_bytes())
    data[located[10].offset + 30] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(RedoCorruptError):
        list(read_records(path))
    data[5 * BLOCK + 3] ^= 0xFF  # a block header
    path.write_bytes(bytes(data))
    with pytest.raises(RedoCorruptError):
        list(read_records(path, 5 * BLOCK))


def test_archived_log_with_torn_tail_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "000000001.log"
    w = LogWriter(path, 1, 1, 1, 0)
    _records(w, 20)
    w.close(archive=True, next_scn=5000)
    h = read_header(path)
    assert h.archived and h.next_scn == 5000
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:
        fh.truncate(size - 3)
    with pytest.raises(RedoCorruptError):
        list(read_records(path))


def test_logset_switch_by_size_and_request(tmp_path: Path) -> None:
    logs = LogSet(tmp_path, 20_000, lambda: 0)
    for t in (1, 2):
        w = logs.writer(t, 100)
        _records(w, 60)
        logs.after_append(t, 200)
    logs.switch(1, 300)
    logs.close()
    infos = list_logs(tmp_path)
    t1 = [i for i in infos if i.thread == 1]
    t2 = [i for i in infos if i.thread == 2]
    assert [i.sequence for i in t1] == [1, 2, 3]
    assert [i.archived for i in t1] == [True, True, False]
    assert t1[1].next_scn == 300 and t1[2].first_scn == 300
    assert [i.sequence for i in t2] == [1, 2]
    assert all(list(read_records(i.path)) is not None for i in infos)


def test_read_frames_and_peek(log: tuple[Path, list[RedoRecord]]) -> None:
    from engine.embedded.logfile import decode_frame, peek, read_frames

    path, _recs = log
    frames = list(read_frames(path, 3000, 90_000))
    located = list(read_records(path, 3000, 90_000))
    assert [(o, e) for o, e, _ in frames] == [(lr.offset, lr.end) for lr in located]
    assert [decode_frame(p, 7, o) for o, _, p in frames] == [lr.record for lr in located]
    thread, scn, ts, _n = peek(frames[0][2])
    assert (thread, scn) == (1, located[0].record.scn)
    assert ts == (located[0].record.timestamp - datetime(1970, 1, 1)).total_seconds() * 10**6


def test_the_extracts_splits_cover_every_record_once(tmp_path: Path) -> None:
    """The Extract's split planning (redo_source.thread_splits) over logs the database wrote:
    each record is read by exactly one split (the one its first byte lies in)."""
    from engine.extract.redo_source import logs_by_thread, thread_splits

    logs = LogSet(tmp_path, 30_000, lambda: 0)
    for t in (1, 2):
        _records(logs.writer(t, 1), 80, seed=t)
        logs.after_append(t, 2)
    logs.close()
    infos = list_logs(tmp_path)
    whole = [lr.record for i in infos for lr in read_records(i.path)]
    splits = [
        s
        for thread, ls in logs_by_thread(infos).items()
        for s in thread_splits(thread, ls, None, 4096)
    ]
    assert len(splits) > len(infos)
    parts = [lr.record for sp in splits for lr in read_records(Path(sp.path), sp.start, sp.end)]
    assert parts == whole


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.sampled_from([0, 1, 9, 480, 487, 488, 496, 992, 1200]), max_size=30),
    commits=st.sets(st.integers(0, 30)),
    flushes=st.sets(st.integers(0, 30)),
)
def test_the_bytes_do_not_depend_on_flush_points(
    sizes: list[int], commits: set[int], flushes: set[int],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:  # fmt: skip
    """An LWN ends at a commit (or at LWN_LIMIT), not when the database flushes: the same
    records give the same log whenever it flushed them."""
    out = []
    for flush_at in (set(), flushes):
        path = tmp_path_factory.mktemp("flush") / "000000003.log"
        w = LogWriter(path, 1, 3, 1, 0)
        for i, n in enumerate(sizes):
            kdo = Kdo("IRP", Ktb(), 1, 1, cc=1, columns=(Column(0, bytes([i % 251]) * n or None),))
            cvs = [ChangeVector(11, 2, kdo)]
            if i in commits:
                cvs.append(ChangeVector(5, 4, Commit(1, 1)))
            w.append(RedoRecord(1, w.next_rba(), 10 + i, 1, datetime(2020, 1, 1), tuple(cvs)))
            if i in flush_at:
                w.flush(everything=False)  # the database's periodic flush
        w.close()
        out.append(path.read_bytes())
    assert out[0] == out[1]
