"""Disk full in dirtmp or dirchk (issue 28): a bare ``OSError: [Errno 28] No space left on
device`` without the file. Now one line naming the file. A real full file system: a tmpfs of
a few pages, mounted over the directory and filled (CI runs as root, which may mount)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.changes import Kind, Lcr, Position
from engine.extract.cache import TransactionCache
from engine.home.checkpoints import Checkpoints, save_checkpoints
from engine.home.groups import GroupDef, GroupKind, GroupStore, SourceType
from engine.home.layout import Home
from engine.runtime.process import os_error_text, run_group
from engine.trail.layout import IOType
from trust.test_pump_restart_checksums import PUMP_PRM, source_trail


@contextlib.contextmanager
def full(directory: Path) -> Iterator[None]:
    """``directory`` on a 16 KiB tmpfs, filled up."""
    if os.geteuid() != 0:
        pytest.fail("this test mounts a tmpfs and must run as root (CI does)")
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16k,mode=0700", "tmpfs", str(directory)], check=True
    )
    try:
        fill(directory / "filler")
        yield
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=True)


def fill(path: Path) -> None:
    with contextlib.suppress(OSError), open(path, "wb") as fh:
        while True:
            fh.write(b"\0" * 4096)
            fh.flush()


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    return h


def test_a_full_dirchk_names_the_checkpoint_file(home: Home) -> None:
    with full(home.dirchk), pytest.raises(OSError) as exc:
        save_checkpoints(home, Checkpoints("EXT1", "EXTRACT"))
    assert exc.value.errno == 28 and exc.value.filename == str(home.dirchk / "EXT1.cpe")
    assert os_error_text(exc.value, home) == (
        "Cannot write dirchk/EXT1.cpe (error 28, No space left on device)."
    )


def test_a_full_dirtmp_names_the_page_out_file(home: Home) -> None:
    spill = home.dirtmp / "EXT1"
    with full(home.dirtmp):
        cache = TransactionCache(spill, budget=0)
        with pytest.raises(OSError) as exc:
            for n in range(200):
                cache.add(
                    Lcr(
                        Kind.ROW,
                        "1.2.3",
                        Position(1, 1, n * 100),
                        n * 100 + 50,
                        scn=1000 + n,
                        time_us=n,
                        io_type=IOType.INSERT,
                        table="A.B",
                        columns=((0, "x" * 500),),
                        ref=f"r{n}",
                    )
                )
    assert exc.value.errno == 28
    assert os_error_text(exc.value, home) == (
        "Cannot write dirtmp/EXT1/txn_1_2_3.spill (error 28, No space left on device)."
    )


def test_a_group_process_abends_with_one_line_naming_the_file(
    home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pump whose dirchk is full abends at its first checkpoint: OGG-01668 naming the
    file in ggserr.log and the report, no traceback."""
    source_trail(home, 1, 3)
    GroupStore(home).save(
        GroupDef(GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "x", "./dirdat/lt")
    )
    # its output trail on this host (EXTTRAIL): the disk, not a Collector, is what it meets
    (home.dirprm / "pmp.prm").write_text(
        PUMP_PRM.replace("RMTHOST localhost, MGRPORT 7809\nRMTTRAIL", "EXTTRAIL")
    )
    group_file = (home.dirchk / "PMP.grp").read_bytes()
    with full(home.dirchk):  # the group file is there, nothing more fits
        (home.dirchk / "filler").unlink()
        (home.dirchk / "PMP.grp").write_bytes(group_file)
        os.chmod(home.dirchk / "PMP.grp", 0o600)
        fill(home.dirchk / "filler")
        assert run_group(home, "EXTRACT", "pmp") == 1
    log = home.ggserr_log.read_text()
    line = "Cannot write dirchk/PMP.cpe (error 28, No space left on device)."
    assert f"ERROR   OGG-01668  Oracle GoldenGate Capture for Oracle, pmp.prm:  {line}" in log
    report = (home.dirrpt / "PMP.rpt").read_text()
    assert line in report and "Traceback" not in report
    assert "Traceback" not in capsys.readouterr().err
