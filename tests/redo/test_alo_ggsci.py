"""An Extract over a real Oracle database's archived logs, through ``ggsci`` as a user runs
it: ``ggsci db attach``, the parameter file (SOURCEDB, TRANLOGOPTIONS ARCHIVEDLOGONLY),
``ADD EXTRACT ..., TRANLOG, EXTSEQNO 15, EXTRBA 0``, ``ADD EXTTRAIL``, ``ggsci extract
paramfile ... --stop-at-eof`` and ``ggsci logdump --json`` (each a child process), then the
same run again (nothing written twice), and a missing sequence (OGG-00446 naming it).
The errors of ``db attach`` and of a parameter file without ARCHIVEDLOGONLY are one line.

A run that is a group's last in a test may be ``ggsci extract`` in this process
(:func:`_extract_here`: the same command, on the test session's Spark, no JVM started):
it takes the group's lock for this process's life, so only the last; the runs before it
are child processes, so it restarts from what they left on disk."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from engine.extract.alo import ArchiveCatalog
from engine.extract.start import ExtractError, initial_positions
from engine.home.checkpoints import Position as CpPosition
from engine.home.checkpoints import ReadCheckpoint, load_checkpoints
from engine.home.layout import Home
from engine.redo.catalog import list_logs
from engine.redo.framing import read_header, seal
from engine.redo.layout import LOG_HEADER, redo_time
from ggsci.cli import build_app
from tests.harness.secretargs import stdin_args
from tests.redo.corpus import CHECKPOINT, LOG15, LOG16, need
from tests.shell.conftest import Shell

FMT = "arch%t_%s_%r.dbf"
PRM = "EXTRACT e1\nSOURCEDB ora23\n{tranlog}EXTTRAIL ./dirdat/aa\nTABLE OLR_TEST.*;\n"
ALO = "TRANLOGOPTIONS ARCHIVEDLOGONLY\n"


def _ggsci(home: Path, *args: str, timeout: float = 180.0) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GGHOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "ggsci", *args],
        env=env, cwd=home, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def _home(tmp_path: Path, logs: tuple[Path, ...], tranlog: str = ALO) -> tuple[Path, Path]:
    home = Home(tmp_path / "gghome")
    home.create_subdirs()
    arch = tmp_path / "arch"
    arch.mkdir()
    for log in logs:
        shutil.copy(need(log), arch / log.name)
    (home.dirprm / "e1.prm").write_text(PRM.format(tranlog=tranlog))
    return home.root, arch


def _attach(root: Path, arch: Path, logs: int) -> None:
    r = _ggsci(root, "db", "attach", "ora23", "--archive", str(arch),
               "--dictionary", str(need(CHECKPOINT)), "--format", FMT)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Database ORA23 attached: archived logs arch%t_%s_%r.dbf under ")
    assert r.stdout.endswith(f"({logs} now), dictionary of 20 table(s).\n")


def _add(root: Path) -> None:
    r = _ggsci(root, "run", "ADD EXTRACT e1, TRANLOG, EXTSEQNO 15, EXTRBA 0",
               "ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")  # fmt: skip
    assert "EXTRACT added." in r.stdout and "EXTTRAIL added." in r.stdout, r.stdout + r.stderr


def _extract_here(root: Path) -> Result:
    """``ggsci extract paramfile dirprm/e1.prm --stop-at-eof`` in this process."""
    argv = ["extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof", "--home", str(root)]
    r = cli.invoke(build_app(), argv)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r


def _rows(root: Path) -> list[dict[str, object]]:
    files = sorted(str(p) for p in (root / "dirdat").iterdir())
    r = _ggsci(root, "logdump", "--json", "--fileheader", "OFF", *files)
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    return [x for x in recs if x["io_type"] not in (None, 170)]


def test_the_fixture_through_ggsci_once_and_a_restart_writes_nothing_twice(
    tmp_path: Path,
) -> None:
    root, arch = _home(tmp_path, (LOG15, LOG16))
    _attach(root, arch, 2)
    r = _ggsci(root, "db", "logs", "ora23")  # by name now
    assert r.returncode == 0, r.stderr
    assert [ln.split()[:2] for ln in r.stdout.splitlines()[1:]] == [["1", "15"], ["1", "16"]]
    _add(root)
    run = _ggsci(root, "extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof")
    assert run.returncode == 0, run.stderr
    assert "1 trail record(s) to ./dirdat/aa" in run.stdout
    (row,) = _rows(root)
    assert (row["op"], row["table"]) == ("Insert", "OLR_TEST.TEST_CDC")
    assert row["columns"] == {"ID": "1", "NAME": "hello world"}
    assert row["tokens"]["TRANID"] == "10.12.572"  # type: ignore[index]
    assert row["tokens"]["LOGCSN"] == "2267707"  # type: ignore[index]
    cps = load_checkpoints(Home(root), "EXTRACT", "E1")
    assert cps is not None and cps.csn is not None
    # the last commit read (the database's own transactions too), as for the embedded source
    assert cps.csn.latest_csn is not None and cps.csn.latest_csn >= 2267707
    (read,) = cps.reads
    assert (read.current.seqno, read.current.rba) == (17, 0)
    assert read.current.timestamp == "2026-03-07 01:44:40"  # the last commit's redo time
    info = _ggsci(root, "run", "INFO EXTRACT e1")
    assert "Seqno 17, RBA 0" in info.stdout, info.stdout
    again = _extract_here(root)  # (the group's last run: in this process)
    assert again.exit_code == 0, again.output
    assert "0 trail record(s)" in again.stdout
    assert len(_rows(root)) == 1


def test_a_missing_sequence_abends_naming_it(tmp_path: Path) -> None:
    root, arch = _home(tmp_path, (LOG16,))
    _attach(root, arch, 1)
    _add(root)
    run = _extract_here(root)  # (its only run: in this process)
    assert run.exit_code == 1
    assert "OGG-00446" in run.stderr
    assert "Could not find archived log for sequence 15 thread 1" in run.stderr
    assert "Traceback" not in run.output
    assert "Could not find archived log for sequence 15" in (root / "ggserr.log").read_text()


def test_a_log_of_another_incarnation_abends_after_what_comes_before_it(tmp_path: Path) -> None:
    """Sequence 15, then a 16 of another incarnation: 15 is captured and made durable (its
    transaction in the trail, the checkpoint past it), then OGG-02028 names 16, as GoldenGate
    reads up to the log it refuses. With the right 16 in place, a restart writes nothing
    twice."""
    root, arch = _home(tmp_path, (LOG15,))
    data = bytearray(need(LOG16).read_bytes())
    h = read_header(bytes(data))
    at = h.block_size + LOG_HEADER.fields[LOG_HEADER.names.index("resetlogs_id")].offset
    data[at] ^= 0x01  # the resetlogs id in block 1's header, changed and the block resealed
    seal(data, h.block_size, h.block_size, h.order)
    other = arch / f"arch1_16_{h.resetlogs_id ^ 1}.dbf"
    other.write_bytes(bytes(data))
    _attach(root, arch, 2)
    _add(root)
    run = _ggsci(root, "extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "OGG-02028" in run.stderr and f"{other} (thread 1 sequence 16) belongs to" in run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    (row,) = _rows(root)
    assert row["tokens"]["TRANID"] == "10.12.572"  # type: ignore[index]
    cps = load_checkpoints(Home(root), "EXTRACT", "E1")
    assert cps is not None
    (read,) = cps.reads
    assert (read.current.seqno, read.current.rba) == (16, 0)
    other.unlink()
    shutil.copy(need(LOG16), arch / LOG16.name)
    again = _extract_here(root)  # (the group's last run: in this process)
    assert again.exit_code == 0, again.output
    assert "0 trail record(s)" in again.stdout and len(_rows(root)) == 1


# -- one-line mistakes, in process ---------------------------------------------------------
cli = CliRunner()


def _invoke(root: Path, *args: str) -> tuple[int, str]:
    r = cli.invoke(build_app(), ["db", *args, "--home", str(root)])
    return r.exit_code, r.output


def test_attach_mistakes_are_one_line(tmp_path: Path) -> None:
    root, arch = _home(tmp_path, ())
    dic = str(need(CHECKPOINT))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    cases = [
        (("attach", "no good!", "--archive", str(arch), "--dictionary", dic), "invalid"),
        (("attach", "x", "--archive", str(tmp_path / "none"), "--dictionary", dic), "not a dir"),
        (("attach", "x", "--archive", str(arch), "--dictionary", str(bad)), "bad.json"),
        (("attach", "x", "--archive", str(arch), "--dictionary", dic, "--format", "a.dbf"),
         "has no %s"),
    ]  # fmt: skip
    for args, what in cases:
        code, out = _invoke(root, *args)
        assert code == 1 and what in out and len(out.strip().splitlines()) == 1, out
    assert not (root / "dirdb" / "X").exists()
    code, out = _invoke(root, "attach", "x", "--archive", str(arch), "--dictionary", dic)
    assert code == 0, out
    code, out = _invoke(root, "attach", "x", "--archive", str(arch), "--dictionary", dic)
    assert code == 1 and "already attached" in out
    assert _invoke(root, "list")[1].splitlines() == ["X (attached: Oracle archived logs)"]
    code, out = _invoke(root, "drop", "x")
    assert code == 0 and "detached" in out and not (root / "dirdb" / "X").exists()


def test_sourcedb_of_an_attached_database_needs_archivedlogonly(tmp_path: Path) -> None:
    root, arch = _home(tmp_path, (LOG15,), tranlog="")
    _invoke(root, "attach", "ora23", "--archive", str(arch), "--dictionary",
            str(need(CHECKPOINT)), "--format", FMT)  # fmt: skip
    r = cli.invoke(
        build_app(), ["extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof", "--home", str(root)]
    )
    assert r.exit_code == 1
    assert "OGG-00664" in r.output and "add TRANLOGOPTIONS ARCHIVEDLOGONLY" in r.output
    assert "Traceback" not in r.output


def test_scn_and_begin_time_position_in_the_log_that_holds_them(tmp_path: Path) -> None:
    """Where ADD EXTRACT's SCN / BEGIN / EXTSEQNO start an attached database's Extract: as
    the embedded database's (engine/extract/start.py), over the archive location's logs."""
    arch = tmp_path / "arch"
    arch.mkdir()
    for log in (LOG15, LOG16):
        shutil.copy(need(log), arch / log.name)
    logs = list_logs(str(arch), FMT)
    h15, h16 = (f.header for f in logs)
    cat = ArchiveCatalog(str(arch), FMT)

    def at(cp: CpPosition | None) -> tuple[int, int]:
        reads = (ReadCheckpoint.at("TRANLOG", cp),) if cp is not None else ()
        p = initial_positions(tmp_path / "none", reads, 1, cat.logs)[1]
        return p.sequence, p.offset

    assert at(CpPosition(scn=h16.first_scn))[0] == 16
    seq, off = at(CpPosition(scn=2267707))
    assert seq == 15 and off > 0  # the first record at or after the SCN
    assert at(CpPosition(scn=h16.next_scn))[0] == 16  # past every record: the end of 16
    assert at(None) == (15, 0)  # the oldest there
    assert at(CpPosition(seqno=16, rba=512)) == (16, 512)
    assert h15.next_scn <= h16.first_scn
    with pytest.raises(ExtractError, match=r"OGG-00446 Not able to establish initial position"):
        at(CpPosition(scn=h15.first_scn - 1))  # sequence 14 and older are not there
    # BEGIN time: the first record at or after it
    later = (datetime(*redo_time(h16.next_time)) + timedelta(hours=1)).isoformat(" ")
    assert at(CpPosition(timestamp=later)) == (16, logs[1].size)  # past every record
    start15 = datetime(*redo_time(h15.first_time)) + timedelta(seconds=1)
    assert at(CpPosition(timestamp=start15.isoformat(" ")))[0] == 15


def test_params_check_names_the_missing_archivedlogonly(tmp_path: Path) -> None:
    root, arch = _home(tmp_path, (), tranlog="")
    prm = str(root / "dirprm" / "e1.prm")
    r = cli.invoke(build_app(), ["params", "check", prm])
    assert r.exit_code == 0, r.output  # nothing attached yet: SOURCEDB names no database here
    _invoke(root, "attach", "ora23", "--archive", str(arch), "--dictionary",
            str(need(CHECKPOINT)))  # fmt: skip
    r = cli.invoke(build_app(), ["params", "check", prm])
    assert r.exit_code == 1
    assert "e1.prm:2:1: error: SOURCEDB ORA23 is an attached database read from its archived " \
        "logs: add TRANLOGOPTIONS ARCHIVEDLOGONLY" in r.output  # fmt: skip
    (root / "dirprm" / "e1.prm").write_text(PRM.format(tranlog=ALO))
    assert cli.invoke(build_app(), ["params", "check", prm]).exit_code == 0


def _wait(what: Callable[[], bool], timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.3)


def _read_at(root: Path) -> int:
    cps = load_checkpoints(Home(root), "EXTRACT", "E1")
    return cps.reads[0].current.seqno if cps is not None and cps.reads else 0


def test_the_group_process_waits_for_the_next_archive_and_serves_showtrans(
    tmp_path: Path,
) -> None:
    """The Extract as its group process (as START EXTRACT runs it): sequence 15 only, then 16
    archived while it runs; SEND SHOWTRANS and STATUS are answered; STOP stops it."""
    root, arch = _home(tmp_path, (LOG15,))
    _attach(root, arch, 1)
    _add(root)
    env = {**os.environ, "GGHOME": str(root)}
    log = tmp_path / "process.out"
    with log.open("w") as out_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "engine.runtime.process", "EXTRACT", "E1", "--home", str(root)],
            env=env, cwd=root, stdout=out_file, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        _wait(lambda: _read_at(root) == 16)  # sequence 15 read, 16 not archived yet: waits
        assert proc.poll() is None
        out = _ggsci(root, "run", "SEND EXTRACT e1, SHOWTRANS").stdout
        assert "ERROR" not in out, out
        status = _ggsci(root, "run", "SEND EXTRACT e1, STATUS").stdout
        assert "thread 1 seq 16 rba 0" in status, status
        shutil.copy(LOG16, arch / LOG16.name)
        _wait(lambda: _read_at(root) == 17)
        stopped = _ggsci(root, "run", "STOP EXTRACT e1").stdout
        assert proc.wait(timeout=60) == 0, stopped + log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    (row,) = _rows(root)
    assert row["columns"] == {"ID": "1", "NAME": "hello world"}


def test_altarchivelogdest_and_altarchivedlogformat_replace_the_attached_ones(
    tmp_path: Path,
) -> None:
    """Attached with an empty location and the default format; the parameter file points at
    where the logs really are, under their own names (in process: no Spark is started)."""
    root, arch = _home(tmp_path, (LOG15, LOG16))
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out = _invoke(root, "attach", "ora23", "--archive", str(empty), "--dictionary",
                        str(need(CHECKPOINT)))  # fmt: skip
    assert code == 0 and "(0 now)" in out, out
    (root / "dirprm" / "e1.prm").write_text(
        PRM.format(
            tranlog=f"{ALO}TRANLOGOPTIONS ALTARCHIVELOGDEST {arch}\n"
            f"TRANLOGOPTIONS ALTARCHIVEDLOGFORMAT '{FMT}'\n"
        )
    )
    shell = Shell(Home(root))
    shell.run("ADD EXTRACT e1, TRANLOG, EXTSEQNO 15, EXTRBA 0")
    shell.run("ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")
    r = cli.invoke(
        build_app(), ["extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof", "--home", str(root)]
    )
    assert r.exit_code == 0, r.output
    assert "1 trail record(s) to ./dirdat/aa" in r.output
    assert (root / "dirdat" / "aa000000000").exists()


def test_a_corrupt_log_abends_and_the_restart_writes_nothing_twice(tmp_path: Path) -> None:
    """Sequence 15 read and its transaction written; then 16 arrives damaged (a flipped byte
    in a block: its checksum): one line and exit 1, the checkpoint still at the commit
    written; with the good 16 in its place the run goes on and writes nothing again."""
    root, arch = _home(tmp_path, (LOG15,))
    _invoke(root, "attach", "ora23", "--archive", str(arch), "--dictionary",
            str(need(CHECKPOINT)), "--format", FMT)  # fmt: skip
    shell = Shell(Home(root))
    shell.run("ADD EXTRACT e1, TRANLOG, EXTSEQNO 15, EXTRBA 0")
    shell.run("ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")
    argv = ("extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof")
    r = _ggsci(root, *argv)  # (a process of its own: the group's lock is the process's)
    assert r.returncode == 0 and "1 trail record(s)" in r.stdout, r.stderr
    bad = bytearray(need(LOG16).read_bytes())
    bad[3 * 512 + 100] ^= 0xFF
    (arch / LOG16.name).write_bytes(bytes(bad))
    r = _ggsci(root, *argv)
    # (issue 24: under the redo-corrupt code, once; not OGG-00446, "log not found")
    assert r.returncode == 1 and "GGS-SRC-0302" in r.stderr and "sequence 16" in r.stderr
    assert "OGG-00446" not in r.stderr and r.stderr.count("GGS-") == 1, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    cps = load_checkpoints(Home(root), "EXTRACT", "E1")
    assert cps is not None and cps.csn is not None and cps.csn.latest_csn == 2267707
    shutil.copy(LOG16, arch / LOG16.name)
    good = _extract_here(root)  # (the group's last run: in this process)
    assert good.exit_code == 0 and "0 trail record(s)" in good.stdout, good.output
    (row,) = _rows(root)
    assert row["tokens"]["TRANID"] == "10.12.572"  # type: ignore[index]


def test_an_archive_in_object_storage(tmp_path: Path, s3_server: str) -> None:
    """Attached by an s3:// location (the local S3 server): db logs by name, and the Extract
    reads the logs through engine/storage (in process: no Spark is started)."""
    from engine import storage

    base = storage.join(s3_server, "arch")
    for p in (LOG15, LOG16):
        storage.put_file(need(p), storage.join(base, p.name))
    root, _arch = _home(tmp_path, ())
    (bare, stdin), secret = stdin_args(base)
    r = cli.invoke(build_app(), ["db", "attach", "ora23", "--archive", bare, stdin, "--dictionary",
                   str(need(CHECKPOINT)), "--format", FMT, "--home", str(root)], input=secret)  # fmt: skip
    code, out = r.exit_code, r.output
    assert code == 0 and "(2 now)" in out, out
    code, out = _invoke(root, "logs", "ora23")
    assert code == 0 and [ln.split()[1] for ln in out.splitlines()[1:]] == ["15", "16"], out
    code, out = _invoke(root, "attach", "ora24", "--archive", "ftp://host/arch",
                        "--dictionary", str(need(CHECKPOINT)))  # fmt: skip
    assert code == 1 and len(out.strip().splitlines()) == 1, out
    assert out.startswith("GGS-REDO-0020: archive location ftp://host/arch: "), out
    shell = Shell(Home(root))
    shell.run("ADD EXTRACT e1, TRANLOG, EXTSEQNO 15, EXTRBA 0")
    shell.run("ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")
    r = cli.invoke(
        build_app(), ["extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof", "--home", str(root)]
    )
    assert r.exit_code == 0 and "1 trail record(s)" in r.output, r.output


@pytest.mark.parametrize(
    ("start", "written"),
    [("SCN 2267707", 1), ("SCN 2267708", 0), ("BEGIN 2026-03-07 01:44:39", 1), ("BEGIN NOW", 0)],
)
def test_add_extract_scn_and_begin_position_the_run(
    tmp_path: Path, start: str, written: int
) -> None:
    """ADD EXTRACT ..., SCN n: the commit at SCN 2267707 is written from SCN 2267707 on, not
    from 2267708; BEGIN a second before the insert: written; BEGIN NOW (the shell's clock is
    a week after the logs): from after the last record archived. (A begin point before the
    oldest archived log is OGG-00446: test_begin_before_the_oldest_log_is_ogg_00446.)"""
    root, arch = _home(tmp_path, (LOG15, LOG16))
    _invoke(root, "attach", "ora23", "--archive", str(arch), "--dictionary",
            str(need(CHECKPOINT)), "--format", FMT)  # fmt: skip
    shell = Shell(Home(root))
    out = shell.run(f"ADD EXTRACT e1, TRANLOG, {start}")
    assert shell.ok, out
    shell.run("ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")
    r = cli.invoke(
        build_app(), ["extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof", "--home", str(root)]
    )
    assert r.exit_code == 0 and f" {written} trail record(s)" in r.output, r.output


def test_begin_before_the_oldest_log_is_ogg_00446(tmp_path: Path) -> None:
    """A begin point older than the oldest archived log there, which had a predecessor: the
    Extract cannot establish its start, one line (as the embedded database's Extract)."""
    root, _arch = _home(tmp_path, (LOG15, LOG16))
    _invoke(root, "attach", "ora23", "--archive", str(_arch), "--dictionary",
            str(need(CHECKPOINT)), "--format", FMT)  # fmt: skip
    shell = Shell(Home(root))
    shell.run("ADD EXTRACT e1, TRANLOG, BEGIN 2000-01-01 00:00")
    shell.run("ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")
    r = cli.invoke(
        build_app(), ["extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof", "--home", str(root)]
    )
    assert r.exit_code == 1 and "OGG-00446" in r.output, r.output
    assert "its oldest available log is sequence 15" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize(
    ("options", "columns"),
    [
        ("TABLE OLR_TEST.*, COLS (ID);", [{"ID": "1"}]),
        ("TABLE OLR_TEST.*, WHERE (ID > 1);", []),
        ("TRANLOGOPTIONS EXCLUDEUSER OLR_TEST\nTABLE OLR_TEST.*;", []),
        (
            "TRANLOGOPTIONS EXCLUDEUSER SOMEONE\nTABLE OLR_TEST.*;",
            [{"ID": "1", "NAME": "hello world"}],
        ),
    ],
)
def test_table_options_and_excludeuser_act(
    tmp_path: Path, options: str, columns: list[dict[str, str]]
) -> None:
    """TABLE row options and the transaction filters of TRANLOGOPTIONS act on an attached
    database's Extract as on the embedded one's (the same driver applies them)."""
    root, arch = _home(tmp_path, (LOG15,))
    (root / "dirprm" / "e1.prm").write_text(
        f"EXTRACT e1\nSOURCEDB ora23\nTRANLOGOPTIONS ARCHIVEDLOGONLY\nEXTTRAIL ./dirdat/aa\n{options}\n"
    )
    _invoke(root, "attach", "ora23", "--archive", str(arch), "--dictionary",
            str(need(CHECKPOINT)), "--format", FMT)  # fmt: skip
    shell = Shell(Home(root))
    shell.run("ADD EXTRACT e1, TRANLOG, EXTSEQNO 15, EXTRBA 0")
    shell.run("ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")
    r = cli.invoke(
        build_app(), ["extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof", "--home", str(root)]
    )
    assert r.exit_code == 0, r.output
    assert "OGG-10144" not in r.output, r.output  # nothing "not used"
    assert [row["columns"] for row in _rows(root)] == columns
