"""Secrets never leave the credential store: reports, ggserr.log (events and the GGSCI command
log), params show and the shell's history mask them (issue 12)."""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path

import pytest
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from engine.home.layout import Home
from engine.runtime.events import Event, Severity, log_event
from engine.runtime.report import ReportWriter
from ggsci.runner import run_stream
from ggsci.shell.session import PrivateFileHistory, interactive, make_history
from params.masking import MASK, mask_secrets
from tests.shell.conftest import Shell

NOW = datetime(2026, 3, 14, 9, 0, 0)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("USERID gg, PASSWORD s3cret", f"USERID gg, PASSWORD {MASK}"),
        (
            "userid gg, password s3cret, ENCRYPTKEY DEFAULT",
            f"userid gg, password {MASK}, ENCRYPTKEY DEFAULT",
        ),
        ('PASSWORD "with space" AES128', f"PASSWORD {MASK} AES128"),
        ("TRANLOGOPTIONS ASMPASSWORD a1;", f"TRANLOGOPTIONS ASMPASSWORD {MASK};"),
        ("USERID gg/s3cret@orcl", f"USERID gg/{MASK}@orcl"),
        (
            "TARGETDB postgresql://gg:s3cret@db.example:5432/t",
            f"TARGETDB postgresql://gg:{MASK}@db.example:5432/t",
        ),
        ("s3://key:secret@bucket/x", f"s3://key:{MASK}@bucket/x"),
        ("host=h password=s3cret dbname=t", f"host=h password={MASK} dbname=t"),
        (
            "postgresql://h/t?user=gg&password=s3cret&x=1",
            f"postgresql://h/t?user=gg&password={MASK}&x=1",
        ),
        ("postgresql://gg@h/t and http://h:8080/p", "postgresql://gg@h/t and http://h:8080/p"),
        ("TABLE hr.emp; MAP hr.*, TARGET hr.*;", "TABLE hr.emp; MAP hr.*, TARGET hr.*;"),
    ],
)
def test_mask_secrets(text: str, masked: str) -> None:
    assert mask_secrets(text) == masked
    assert mask_secrets(masked) == masked


def test_a_report_echoes_parameters_masked_and_is_private(tmp_path: Path) -> None:
    report = tmp_path / "dirrpt" / "REP1.rpt"
    writer = ReportWriter(report, lambda: NOW)
    writer.start(
        "Oracle GoldenGate Delivery for Oracle",
        None,
        ["REPLICAT rep1", "USERID gg, PASSWORD s3cret", "TARGETDB postgresql://gg:pw2@h/t"],
    )
    writer.event(
        Event("OGG-00664", Severity.ERROR, "cannot reach postgresql://gg:pw2@h/t", "Delivery")
    )
    writer.line("connected to postgresql://gg:pw2@h/t")
    text = report.read_text()
    assert "s3cret" not in text and "pw2" not in text
    assert f"USERID gg, PASSWORD {MASK}" in text and f"postgresql://gg:{MASK}@h/t" in text
    assert report.stat().st_mode & 0o777 == 0o600
    report.chmod(0o644)  # a report of an older version: aged with the owner's mode only
    ReportWriter(report, lambda: NOW).start("Delivery", None, [])
    assert (tmp_path / "dirrpt" / "REP10.rpt").stat().st_mode & 0o777 == 0o600


def test_ggserr_log_masks_a_url_in_an_event(tmp_path: Path) -> None:
    log = tmp_path / "ggserr.log"
    text = "Replicat cannot open its target postgresql://gg:s3cret@h/t: refused"
    line = log_event(log, Event("OGG-00664", Severity.ERROR, text, "Delivery"), lambda: NOW)
    assert "s3cret" not in log.read_text() and "s3cret" not in line
    assert f"postgresql://gg:{MASK}@h/t" in log.read_text()


def test_every_ggsci_command_is_logged_with_its_secrets_masked(tmp_path: Path) -> None:
    home = Home(tmp_path / "gghome")
    home.create_subdirs()
    shell = Shell(home)
    for line in (
        "DBLOGIN USERID gg, PASSWORD s3cret1",
        "DBLOGIN SOURCEDB postgresql://gg:s3cret2@127.0.0.1:1/t",
        "DBLOGIN USERID gg/s3cret3@db",
        "ENCRYPT PASSWORD s3cret4 AES128 ENCRYPTKEY DEFAULT",
        "ALTER CREDENTIALSTORE ADD USER gg PASSWORD s3cret5 ALIAS a1",
    ):
        shell.run(line)
    log = home.ggserr_log.read_text()
    assert log.count("OGG-00987") == 5 and "s3cret" not in log
    assert f"PASSWORD {MASK}" in log and f"gg:{MASK}@127.0.0.1" in log


def test_a_script_echoes_its_commands_and_parse_errors_masked(tmp_path: Path) -> None:
    """``ggsci < FILE`` (its output often kept in a file): the echoed command and the line a
    parse error shows are masked, and the error quotes no piece of a malformed password."""
    home = Home(tmp_path / "gghome")
    home.create_subdirs()
    out = io.StringIO()
    script = [
        "DBLOGIN SOURCEDB postgresql://gg:my s3cretA@127.0.0.1:1/t\n",
        "DBLOGIN USERID gg, PASSWORD s3cretB junk junk\n",
        "INFO ALL junk\n",
    ]
    assert run_stream(home, script, out) == 1
    text = out.getvalue()
    assert "s3cret" not in text, text
    assert "GGSCI (" in text and f"postgresql://gg:{MASK}@127.0.0.1:1/t" in text, text
    assert f"ERROR: Unexpected '{MASK}'. (column " in text, text
    assert "ERROR: Unexpected 'junk'. (column 10)\n  INFO ALL junk\n           ^" in text, text


def test_history_across_sessions_is_off_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert isinstance(make_history(env={}), InMemoryHistory)
    old = tmp_path / "ggsci" / "history"  # where an older version kept every line
    old.parent.mkdir()
    FileHistory(str(old)).store_string("DBLOGIN USERID gg, PASSWORD s3cret")
    old.chmod(0o644)
    assert isinstance(make_history(env={"GGSCI_HISTORY": "off"}), InMemoryHistory)
    assert "s3cret" not in old.read_text() and old.stat().st_mode & 0o777 == 0o600


def test_a_history_file_is_private_and_holds_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "data" / "history"
    history = make_history(env={"GGSCI_HISTORY": str(path)})
    assert isinstance(history, PrivateFileHistory)
    assert path.stat().st_mode & 0o777 == 0o600
    home = Home(tmp_path / "gghome")
    home.create_subdirs()
    keys = (
        "ADD CREDENTIALSTORE\r"
        "ALTER CREDENTIALSTORE ADD USER gg PASSWORD s3cret1 ALIAS a1\r"
        "ALTER CREDENTIALSTORE ADD USER gg2 ALIAS a2\r"
        "typed-at-the-prompt-s3cret2\r"  # the answer to "Password: "
        "INFO ALL\r"
        "!2\r"  # GGSCI's own in-session history still has the line with PASSWORD
        "EXIT\r"
    )
    out = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        interactive(home, out, input=pipe, output=DummyOutput(), history=history)
    assert "already exists" in out.getvalue()  # ALTER ... a1 ran again
    assert "ALTER CREDENTIALSTORE ADD USER gg PASSWORD s3cret1 ALIAS a1" in history.get_strings()
    stored = list(FileHistory(str(path)).load_history_strings())
    assert "INFO ALL" in stored and "ALTER CREDENTIALSTORE ADD USER gg2 ALIAS a2" in stored
    assert "s3cret" not in path.read_text()
    assert all("s3cret2" not in s for s in history.get_strings())


def test_an_old_history_file_is_cleaned_and_made_private(tmp_path: Path) -> None:
    path = tmp_path / "history"
    old = FileHistory(str(path))
    for line in ("INFO ALL", "DBLOGIN USERID gg, PASSWORD s3cret", "STATUS MANAGER"):
        old.store_string(line)
    path.chmod(0o644)
    history = PrivateFileHistory(path)
    assert path.stat().st_mode & 0o777 == 0o600 and "s3cret" not in path.read_text()
    assert list(history.load_history_strings()) == ["STATUS MANAGER", "INFO ALL"]


@pytest.mark.parametrize(
    ("target", "kept"),
    [
        ("postgresql://gg:s3cret@db.example:5432/t", "postgresql://gg@db.example:5432/t"),
        ("postgresql://gg@h/t?password=s3cret&sslmode=off", "postgresql://gg@h/t?sslmode=off"),
        ("postgresql://gg@h/t", "postgresql://gg@h/t"),
        ("/srv/gg/tgt.db", "/srv/gg/tgt.db"),
    ],
)
def test_the_heartbeat_registry_never_writes_a_password(
    tmp_path: Path, target: str, kept: str
) -> None:
    """ADD HEARTBEATTABLE after a login whose URL carries a password records the URL without
    it (the Manager authenticates as libpq does without one); DELETE finds the entry by
    either spelling."""
    from engine.heartbeat import registry

    home = Home(tmp_path / "h")
    home.create_subdirs()
    entry = registry.Entry("postgresql", target, "T", None, "GG_HEARTBEAT", "gg")
    registry.put(home, entry)
    text = registry.registry_path(home).read_text()
    assert "s3cret" not in text
    assert [e.target for e in registry.load(home)] == [kept]
    registry.put(home, entry)  # the same database again: replaced, not added
    assert len(registry.load(home)) == 1
    registry.remove(home, "postgresql", target)
    assert registry.load(home) == []
