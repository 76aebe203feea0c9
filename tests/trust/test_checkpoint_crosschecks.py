"""Checkpoints that cannot lie (issue 28): a pump's read position moved to another record
boundary of its input trail is found at start, even with the file's checksum made to match
(OGG-01705 naming the file and both positions); without the checksum made to match, the
seal finds it first (OGG-00444). A position ALTER EXTRACT set is never refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from shell.conftest import Shell

from engine.home.checkpoints import checkpoint_path, load_checkpoints
from engine.home.groups import GroupKind, SourceType, checked_checkpoints
from engine.home.jsonfile import seal
from engine.home.layout import Home
from engine.home.trust import BadFile
from engine.pump import PumpError
from engine.replicat import ReplicatError
from engine.replicat.engine import ReplicatRun
from engine.trail.txreader import TransactionReader
from trust.test_pump_restart_checksums import source_trail, start_pump

from replicat_helpers import add_group, ins, model, txn_records, write_trail  # isort: skip


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    return h


def boundaries(home: Home) -> list[tuple[int, int]]:
    """(Seqno, RBA) after each whole transaction of the local trail."""
    reader = TransactionReader(home.root / "dirdat" / "lt")
    try:
        return [(t.end.seqno, t.end.rba) for t in reader.poll()]
    finally:
        reader.close()


def copy_all(home: Home) -> int:
    run = start_pump(home)
    try:
        run.poll()
        run.checkpoint()
        return int(run.copied_transactions)
    finally:
        run.close()


def edit_read_position(home: Home, seqno: int, rba: int, *, reseal: bool) -> None:
    path = checkpoint_path(home, "EXTRACT", "PMP")
    data = json.loads(path.read_text())
    for key in ("startup", "recovery", "current"):
        data["reads"][0][key].update(seqno=seqno, rba=rba)
    path.write_text(json.dumps(seal(data) if reseal else data, indent=1))


def test_a_read_position_moved_to_another_record_boundary_is_found(home: Home) -> None:
    source_trail(home, 1, 12)
    ends = boundaries(home)
    assert copy_all(home) == 12
    source_trail(home, 13, 3)  # more arrives while the pump is down
    seqno, rba = ends[8]  # three transactions back: they would be copied twice
    edit_read_position(home, seqno, rba, reseal=False)
    with pytest.raises(BadFile, match=r"dirchk/PMP.cpe is corrupt \(checksum mismatch\)"):
        checked_checkpoints(home, "EXTRACT", "PMP")
    edit_read_position(home, seqno, rba, reseal=True)
    with pytest.raises(PumpError) as exc:
        start_pump(home)
    assert exc.value.code == "OGG-01705"
    assert f"the read position Seqno {seqno}, RBA {rba} is not the one that was read" in str(
        exc.value
    )


def test_a_moved_mark_does_not_hide_a_moved_position(home: Home) -> None:
    """The attacker moves the mark too: the bytes before the position tell."""
    source_trail(home, 1, 12)
    ends = boundaries(home)
    assert copy_all(home) == 12
    seqno, rba = ends[9]
    path = checkpoint_path(home, "EXTRACT", "PMP")
    data = json.loads(path.read_text())
    for key in ("startup", "recovery", "current"):
        data["reads"][0][key].update(seqno=seqno, rba=rba)
    data["extra"]["read_mark"].update(seqno=seqno, rba=rba)
    path.write_text(json.dumps(seal(data), indent=1))
    with pytest.raises(PumpError, match="are not the ones that were read there"):
        start_pump(home)


def test_alter_extract_extseqno_extrba_is_never_refused(home: Home) -> None:
    source_trail(home, 1, 12)
    ends = boundaries(home)
    assert copy_all(home) == 12
    shell = Shell(home)
    for seqno, rba in (ends[8], (0, 0)):
        out = shell.run(f"ALTER EXTRACT pmp, EXTSEQNO {seqno}, EXTRBA {rba}")
        assert out == "EXTRACT altered.\n", out
        run = start_pump(home)  # no abend: the user asked for this position
        try:
            cps = load_checkpoints(home, "EXTRACT", "PMP")
            assert cps is not None and cps.altered
            assert (run.reader.position.seqno, run.reader.position.rba) == (seqno, rba)
        finally:
            run.close()
    run = start_pump(home)  # copies what ALTER asked for, then checkpoints with a mark
    try:
        run.poll()
        run.checkpoint()
    finally:
        run.close()
    start_pump(home).close()  # and a plain restart after it is believed


def test_a_replicat_read_position_moved_is_found_and_alter_is_not_refused(home: Home) -> None:
    """The same for a Replicat that keeps its progress in its checkpoint file (no
    checkpoint table): a moved read position would apply transactions twice or skip them."""
    conn = sqlite3.connect(home.root / "tgt.db")
    conn.execute("CREATE TABLE emp (id NUMERIC PRIMARY KEY, name TEXT, sal NUMERIC)")
    conn.close()
    trail = home.root / "dirrmt" / "bb"
    write_trail(trail, [txn_records(100 + i, [ins(i)]) for i in range(6)])
    group = add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, "./dirrmt/bb")
    prm = "REPLICAT rep\nTARGETDB ./tgt.db\nASSUMETARGETDEFS\nMAP hr.*, TARGET hr.*;\n"

    def replicat() -> ReplicatRun:
        return ReplicatRun(home, model(home, "rep", prm), group, lambda *_: None)

    r = replicat()
    r.run(lambda: False, stop_at_eof=True)
    r.close()
    reader = TransactionReader(trail)
    ends = [(t.end.seqno, t.end.rba) for t in reader.poll()]
    reader.close()
    path = checkpoint_path(home, "REPLICAT", "REP")
    data = json.loads(path.read_text())
    seqno, rba = ends[3]
    for key in ("startup", "recovery", "current"):
        data["reads"][0][key].update(seqno=seqno, rba=rba)
    path.write_text(json.dumps(seal(data), indent=1))
    with pytest.raises(ReplicatError) as exc:
        replicat()
    assert exc.value.code == "OGG-01705" and "dirchk/REP.cpr does not match trail" in str(exc.value)
    out = Shell(home).run(f"ALTER REPLICAT rep, EXTSEQNO {ends[-1][0]}, EXTRBA {ends[-1][1]}")
    assert out == "REPLICAT altered.\n", out
    r = replicat()  # the position the user gave: believed
    r.run(lambda: False, stop_at_eof=True)
    r.close()
    replicat().close()  # and the mark it published after
