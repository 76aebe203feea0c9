"""Append-mode recovery: torn tails, partly written transactions (TRUNCATE and MARK),
and the property that a crash at any byte followed by a restart leaves every complete
transaction in the trail exactly once, in order."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.trail import (
    CorruptRecordError,
    RecoveryMode,
    TrailName,
    TrailPosition,
    TrailReader,
    TrailRecord,
    TrailWriter,
    complete_transactions,
    encode_record,
    find_last_complete_transaction,
)
from engine.trail.envelope import record_length
from engine.trail.layout import IOType, TransInd
from engine.trail.writer import seal


def _txn(csn: int, rows: int) -> list[bytes]:
    out = []
    for i in range(rows):
        ind = TransInd.of(i, rows)
        out.append(
            encode_record(
                TrailRecord(
                    io_type=IOType.INSERT,
                    table="US03.STUDENT",
                    columns=((0, f"{csn}-{i}"),),
                    trans_ind=ind,
                    rowid="AAASrPAAEAAAAQ2AAK",
                    logcsn=str(csn) if i == 0 else None,
                    tranid=f"1.1.{csn}" if i == 0 else None,
                )
            )
        )
    return out


def _open(root: Path, **kw: object) -> TrailWriter:
    return TrailWriter.open(root / "aa", durable=False, **kw)  # type: ignore[arg-type]


def _committed(root: Path) -> list[str]:
    with TrailReader(root / "aa") as reader:
        pairs = [(e.position, r) for e, r in reader.records()]
    return [txn[0][1].logcsn or "?" for txn in complete_transactions(pairs)]


def _all_rows(root: Path) -> list[str]:
    with TrailReader(root / "aa") as reader:
        return [r.columns[0][1] or "" for _, r in reader.records() if r.columns]


def test_torn_record_is_cut_and_last_transaction_reported(tmp_path: Path) -> None:
    with _open(tmp_path) as w:
        w.append(*_txn(100, 3))
        end = w.append(*_txn(101, 1))
    path = tmp_path / "aa000000000"
    with open(path, "ab") as raw:
        raw.write(_txn(102, 1)[0][:57])
    w = _open(tmp_path, roll_on_restart=False)
    assert w.recovery is not None
    assert w.recovery.torn_bytes == 57
    assert w.recovery.action == "none"
    last = w.recovery.last_transaction
    assert last is not None and (last.logcsn, last.tranid, last.end) == ("101", "1.1.101", end)
    assert w.position == end
    w.close()
    assert _committed(tmp_path) == ["100", "101"]


def test_partial_transaction_truncated(tmp_path: Path) -> None:
    with _open(tmp_path) as w:
        end = w.append(*_txn(100, 2))
    with open(tmp_path / "aa000000000", "ab") as raw:
        raw.write(b"".join(_txn(101, 3)[:2]))
    w = _open(tmp_path, recovery=RecoveryMode.OVERWRITE)
    assert w.recovery is not None
    assert (w.recovery.action, w.recovery.partial_records) == ("truncated", 2)
    assert w.recovery.resume == end
    assert w.position.seqno == 1  # GoldenGate continues in a new file after a restart
    w.append(*_txn(101, 3))
    w.close()
    assert _all_rows(tmp_path) == ["100-0", "100-1", "101-0", "101-1", "101-2"]


def test_partial_transaction_spanning_files_truncated(tmp_path: Path) -> None:
    w = _open(tmp_path)
    end = w.append(*_txn(100, 1))
    partial = _txn(101, 4)
    w.append(*partial[:2])
    w.rollover()
    w.append(partial[2])
    w.close()
    w = _open(tmp_path, recovery=RecoveryMode.OVERWRITE, roll_on_restart=False)
    assert w.recovery is not None
    assert w.recovery.partial_records == 3
    assert w.recovery.resume == end
    assert not (tmp_path / "aa000000001").exists()
    w.close()
    assert _all_rows(tmp_path) == ["100-0"]


def test_last_transaction_whose_first_record_is_in_an_earlier_file(tmp_path: Path) -> None:
    w = _open(tmp_path)
    records = _txn(100, 3)
    w.append(*records[:2])
    w.rollover()
    end = w.append(records[2])
    w.close()
    last, partial, _ = find_last_complete_transaction(TrailName.parse(tmp_path / "aa"))
    assert partial == 0
    assert last is not None and (last.logcsn, last.tranid, last.end) == ("100", "1.1.100", end)


def test_partial_transaction_marked(tmp_path: Path) -> None:
    with _open(tmp_path) as w:
        w.append(*_txn(100, 1))
    with open(tmp_path / "aa000000000", "ab") as raw:  # as the writer writes them: sealed
        raw.write(seal(b"".join(_txn(101, 3)[:2])))
    w = _open(tmp_path, recovery=RecoveryMode.APPEND)
    assert w.recovery is not None
    assert (w.recovery.action, w.recovery.partial_records) == ("marked", 2)
    w.append(*_txn(101, 3))
    w.close()
    # History is kept: the partial rows are still in the trail, then the marker ...
    assert _all_rows(tmp_path) == ["100-0", "101-0", "101-1", "101-0", "101-1", "101-2"]
    with TrailReader(tmp_path / "aa") as reader:
        ops = [r.op_name for _, r in reader.records()]
    assert ops.count("RestartAbend") == 1
    # ... and transaction assembly drops the partial copy.
    assert _committed(tmp_path) == ["100", "101"]


def test_no_complete_transaction_at_all(tmp_path: Path) -> None:
    with _open(tmp_path) as w:
        header_end = w.position
    with open(tmp_path / "aa000000000", "ab") as raw:
        raw.write(_txn(100, 2)[0])
    w = _open(tmp_path, roll_on_restart=False, recovery=RecoveryMode.OVERWRITE)
    assert w.recovery is not None
    assert w.recovery.last_transaction is None
    assert w.recovery.resume == header_end
    w.close()
    assert _all_rows(tmp_path) == []


def _crash_mid_transaction(root: Path) -> bytes:
    """A trail whose writer died inside transaction 101: its first two records are
    written, the third is torn. Returns the file's bytes after the crash."""
    with _open(root) as w:
        w.append(*_txn(100, 1))
    whole = _txn(101, 3)
    with open(root / "aa000000000", "ab") as raw:  # as the writer writes them: sealed
        raw.write(seal(b"".join(whole[:2])) + seal(whole[2])[:40])
    return (root / "aa000000000").read_bytes()


def test_append_mode_is_the_default_and_keeps_the_partial_transaction(tmp_path: Path) -> None:
    crashed = _crash_mid_transaction(tmp_path)
    w = _open(tmp_path)  # no recovery argument: append mode
    assert w.recovery is not None
    assert (w.recovery.action, w.recovery.partial_records, w.recovery.torn_bytes) == (
        "marked",
        2,
        40,
    )
    assert w.position.seqno == 1  # the re-captured transaction goes to a new file
    w.append(*_txn(101, 3))
    w.close()
    # The records stay byte for byte (the torn 40 bytes are replaced by the marker; the
    # file header is completed at close).
    kept = (tmp_path / "aa000000000").read_bytes()
    head = record_length(crashed, 0)
    assert kept[record_length(kept, 0) :].startswith(crashed[head:-40])
    with TrailReader(tmp_path / "aa") as reader:
        seen = [
            (e.seqno, r.op_name, r.columns[0][1] if r.columns else "") for e, r in reader.records()
        ]
    assert seen == [
        (0, "Insert", "100-0"),
        (0, "Insert", "101-0"),
        (0, "Insert", "101-1"),
        (0, "RestartAbend", ""),
        (1, "Insert", "101-0"),
        (1, "Insert", "101-1"),
        (1, "Insert", "101-2"),
    ]
    assert _committed(tmp_path) == ["100", "101"]


def test_transaction_reader_hands_out_the_rewritten_transaction_once(tmp_path: Path) -> None:
    from engine.trail.txreader import TransactionReader

    _crash_mid_transaction(tmp_path)
    reader = TransactionReader(tmp_path / "aa")
    # Before the restart the reader sees transaction 100 only (101 has no end yet).
    assert [t.logcsn for t in reader.poll()] == ["100"]
    with _open(tmp_path) as w:
        w.append(*_txn(101, 3))
    got = list(reader.poll())
    reader.close()
    assert [t.logcsn for t in got] == ["101"]
    assert [r.columns[0][1] for r in got[0].records] == ["101-0", "101-1", "101-2"]


def test_a_transaction_begun_inside_an_unmarked_one_is_refused(tmp_path: Path) -> None:
    """Without the marker the partial records have no known fate: readers refuse the
    trail rather than apply them (or the transaction twice)."""
    from engine.trail.txreader import TransactionReader

    _crash_mid_transaction(tmp_path)
    with _open(tmp_path) as w:
        w.append(*_txn(101, 3))
    path = tmp_path / "aa000000000"
    with TrailReader(tmp_path / "aa") as reader:
        marker = next(e for e, r in reader.records() if r.io_type == IOType.RESTART_ABEND)
    data = path.read_bytes()
    path.write_bytes(data[: marker.rba] + data[marker.rba + marker.length :])
    with pytest.raises(CorruptRecordError, match="no recovery marker"):
        _committed(tmp_path)
    reader = TransactionReader(tmp_path / "aa")
    with pytest.raises(CorruptRecordError, match="no recovery marker"):
        list(reader.poll())
    reader.close()


def test_overwrite_mode_truncates_and_writes_no_marker(tmp_path: Path) -> None:
    crashed = _crash_mid_transaction(tmp_path)
    w = _open(tmp_path, recovery=RecoveryMode.OVERWRITE)
    assert w.recovery is not None and w.recovery.action == "truncated"
    w.append(*_txn(101, 3))
    w.close()
    assert len((tmp_path / "aa000000000").read_bytes()) < len(crashed)
    with TrailReader(tmp_path / "aa") as reader:
        ops = [r.op_name for _, r in reader.records()]
    assert "RestartAbend" not in ops
    assert _all_rows(tmp_path) == ["100-0", "101-0", "101-1", "101-2"]


def test_zero_filled_tail_is_torn(tmp_path: Path) -> None:
    with _open(tmp_path) as w:
        end = w.append(*_txn(100, 1))
    with open(tmp_path / "aa000000000", "ab") as raw:
        raw.write(b"\x00" * 300)
    w = _open(tmp_path, roll_on_restart=False)
    assert w.recovery is not None and w.recovery.torn_bytes == 300
    assert w.position == end
    w.close()


def test_corruption_inside_the_file_is_not_cut_away(tmp_path: Path) -> None:
    with _open(tmp_path) as w:
        first = w.append(*_txn(100, 1))
        w.append(*_txn(101, 1))
    path = tmp_path / "aa000000000"
    data = bytearray(path.read_bytes())
    data[first.rba] = ord("X")  # the second record's G tag
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptRecordError):
        _open(tmp_path)
    assert path.read_bytes() == bytes(data)


@st.composite
def _workload(draw: st.DrawFn) -> tuple[list[int], int, int, bool]:
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=12))
    return sizes, draw(st.integers(0, 10**9)), draw(st.integers(0, 10**9)), draw(st.booleans())


@given(_workload())
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_crash_anywhere_then_restart_gives_each_transaction_once(
    tmp_path_factory: pytest.TempPathFactory, workload: tuple[list[int], int, int, bool]
) -> None:
    sizes, file_pick, byte_pick, mark = workload
    root = tmp_path_factory.mktemp("crash")
    txns = {100 + i: _txn(100 + i, n) for i, n in enumerate(sizes)}
    with _open(root, max_bytes=400) as w:
        for records in txns.values():
            w.append(*records)
    # The crash: the newest surviving file ends at an arbitrary byte; later ones never
    # got written.
    files = sorted(root.glob("aa0*"))
    keep = file_pick % len(files)
    for later in files[keep + 1 :]:
        later.unlink()
    victim = files[keep]
    size = victim.stat().st_size
    with open(victim, "r+b") as raw:
        raw.truncate(byte_pick % (size + 1))
    # The restart: recover, then Extract re-captures every transaction committed after
    # the last complete one in the trail.
    mode = RecoveryMode.APPEND if mark else RecoveryMode.OVERWRITE
    with _open(root, max_bytes=400, recovery=mode) as w:
        assert w.recovery is not None
        last = w.recovery.last_transaction
        done = int(last.logcsn) if last is not None and last.logcsn else 0
        for csn, records in txns.items():
            if csn > done:
                w.append(*records)
    assert _committed(root) == [str(csn) for csn in txns]
    if not mark:
        rows = _all_rows(root)
        assert len(rows) == len(set(rows)) == sum(sizes)


def test_positions_round_trip_json() -> None:
    pos = TrailPosition(3, 1234)
    assert TrailPosition.from_json(pos.to_json()) == pos


_WRITER_SCRIPT = """
import sys
from engine.trail import TrailWriter, TrailRecord, encode_record
from engine.trail.layout import TransInd
root, mode = sys.argv[1], sys.argv[2]
with TrailWriter.open(root + "/aa", max_bytes=20_000) as w:
    print("ready", flush=True)
    csn = 100
    while True:
        rows = 1 + csn % 4
        for i in range(rows):
            w.append(encode_record(TrailRecord(
                io_type=5, table="US03.STUDENT", columns=((0, f"{csn}-{i}"),),
                trans_ind=TransInd.of(i, rows), rowid="AAASrPAAEAAAAQ2AAK",
                logcsn=str(csn) if i == 0 else None, tranid=f"1.1.{csn}" if i == 0 else None)))
            w.flush()
        if csn % 3 == 0:
            w.sync()
        csn += 1
"""


@pytest.mark.parametrize(("delay", "mode"), [(0.05, "truncate"), (0.2, "mark"), (0.4, "truncate")])
def test_kill_9_during_appends_then_restart(tmp_path: Path, delay: float, mode: str) -> None:
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER_SCRIPT, str(tmp_path), mode],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()
    recovery = RecoveryMode.APPEND if mode == "mark" else RecoveryMode.OVERWRITE
    with _open(tmp_path, max_bytes=20_000, recovery=recovery) as w:
        assert w.recovery is not None
        last = w.recovery.last_transaction
        assert last is not None and last.logcsn is not None
        done = int(last.logcsn)
        # Extract re-captures from the next transaction on: ten more of them.
        for csn in range(done + 1, done + 11):
            w.append(*_txn(csn, 1 + csn % 4))
    assert _committed(tmp_path) == [str(c) for c in range(100, done + 11)]
