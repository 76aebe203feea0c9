"""The small engine pieces GGSCI relies on: event lines, mgr.prm, purge rules, IPC, reports."""

from __future__ import annotations

import os
import stat
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from engine.home.checkpoints import Checkpoints, Position, ReadCheckpoint, save_checkpoints
from engine.home.groups import GroupDef, GroupKind, GroupStore, SourceType
from engine.home.layout import Home
from engine.manager.params import ManagerParamError, PurgeRule, parse_manager_params
from engine.manager.purge import purge_candidates
from engine.runtime.events import CAPTURE_COMPONENT, Event, Severity, ggsci_command
from engine.runtime.ipc import HandlerTable, IpcError, Reply, Request, send_request, serving
from engine.runtime.report import age_reports


def test_event_line_format() -> None:
    when = datetime(2014, 9, 10, 2, 24, 19)
    ev = Event("OGG-01635", Severity.INFO, "text", CAPTURE_COMPONENT, "ext1.prm")
    assert ev.format(when) == (
        "2014-09-10 02:24:19  INFO    OGG-01635  Oracle GoldenGate Capture "
        "for Oracle, ext1.prm:  text"
    )
    warn = Event("OGG-01027", Severity.WARNING, "x", CAPTURE_COMPONENT)
    assert warn.format(when).startswith("2014-09-10 02:24:19  WARNING OGG-01027  ")
    assert ggsci_command("ggate", "start EXT1").text == "GGSCI command (ggate): start EXT1."


def test_manager_params() -> None:
    params = parse_manager_params(
        "-- manager\nPORT 7809\nDYNAMICPORTLIST 7810-7820\nAUTOSTART ER *\n"
        "AUTORESTART EXTRACT E*, RETRIES 3, &\n  WAITMINUTES 1, RESETMINUTES 30\n"
        "PURGEOLDEXTRACTS ./dirdat/*, USECHECKPOINTS, MINKEEPFILES 3\n"
    )
    assert params.port == 7809
    assert params.autostart[0].matches("REPLICAT", "R1")
    rule = params.autorestart[0]
    assert (rule.retries, rule.wait_minutes, rule.reset_minutes) == (3, 1.0, 30.0)
    assert rule.target.matches("EXTRACT", "EXT1") and not rule.target.matches("REPLICAT", "EXT1")
    assert params.purge == (PurgeRule("./dirdat/*", True, 0.0, 3),)
    assert params.dynamic_ports == tuple(range(7810, 7821))
    with pytest.raises(ManagerParamError, match=r"mgr\.prm:1:6: error: PORT: expected a whole"):
        parse_manager_params("PORT x\n")
    assert parse_manager_params("PORT 0\n").port == 0  # the system chooses


def _trail_files(home: Home, prefix: str, seqnos: range) -> list[Path]:
    files = []
    for seq in seqnos:
        path = home.dirdat / f"{prefix}{seq:09d}"
        path.write_bytes(b"x")
        files.append(path)
    return files


def test_purge_uses_the_slowest_reader(home: Home) -> None:
    files = _trail_files(home, "lt", range(5))
    store = GroupStore(home)
    for name, seq in (("PUMP", 3), ("PUMP2", 2)):
        store.save(
            GroupDef(
                GroupKind.EXTRACT,
                name,
                SourceType.EXTTRAILSOURCE,
                "2026-01-01",
                source_path="./dirdat/lt",
            )
        )
        save_checkpoints(
            home,
            Checkpoints(name, "EXTRACT", (ReadCheckpoint.at("./dirdat/lt", Position(seqno=seq)),)),
        )
    now = datetime.now()
    assert purge_candidates(home, PurgeRule("./dirdat/lt*"), now) == files[:2]
    assert purge_candidates(home, PurgeRule("./dirdat/lt*", min_keep_files=4), now) == files[:1]
    assert purge_candidates(home, PurgeRule("./dirdat/*", min_keep_hours=1), now) == []
    later = now + timedelta(hours=2)
    assert purge_candidates(home, PurgeRule("./dirdat/*", min_keep_hours=1), later) == files[:2]


def test_purge_keeps_trails_nobody_reads_unless_told(home: Home) -> None:
    files = _trail_files(home, "zz", range(3))
    assert purge_candidates(home, PurgeRule("dirdat/zz*"), datetime.now()) == []
    assert (
        purge_candidates(home, PurgeRule("dirdat/zz*", use_checkpoints=False), datetime.now())
        == files[:2]
    )


def test_ipc_round_trip_errors_and_mode(tmp_path: Path) -> None:
    table = HandlerTable()

    @table.register("ECHO", "REPEAT")
    def echo(request: Request) -> Reply:
        return Reply((request.command, *request.args))

    table.add("BOOM", lambda r: 1 / 0)  # type: ignore[arg-type,return-value]
    path = tmp_path / "x.sock"
    with serving(path, table):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert send_request(path, "echo a, b") == Reply(("ECHO", "a", "b"))
        assert send_request(path, "repeat").lines == ("REPEAT",)
        unknown = send_request(path, "NOPE")
        assert not unknown.ok and "valid: BOOM, ECHO, REPEAT" in unknown.lines[0]
        boom = send_request(path, "BOOM")
        assert not boom.ok and boom.lines == ("ERROR: request failed: division by zero",)
    assert not path.exists()
    with pytest.raises(IpcError, match="no process answers"):
        send_request(path, "ECHO")


def test_reports_age_ten_deep(tmp_path: Path) -> None:
    report = tmp_path / "EXT1.rpt"
    for generation in range(12):
        report.write_text(f"run {generation}\n")
        age_reports(report)
    assert not report.exists()
    assert (tmp_path / "EXT10.rpt").read_text() == "run 11\n"
    assert (tmp_path / "EXT19.rpt").read_text() == "run 2\n"
    assert not (tmp_path / "EXT110.rpt").exists()


def test_ipc_works_with_paths_longer_than_a_unix_socket_allows(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    path = deep / "EXT1.pce.sock"
    assert len(str(path)) > 108
    table = HandlerTable()
    table.add("PING", lambda r: Reply(("pong",)))
    cwd = os.getcwd()
    with serving(path, table):
        assert send_request(path, "PING").lines == ("pong",)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert os.getcwd() == cwd
