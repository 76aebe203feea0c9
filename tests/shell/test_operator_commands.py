"""The operator's day (issue 15): the global --home, exit statuses, and the GGSCI commands
that used to answer 'Invalid command'."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.home.layout import Home
from ggsci.cli import build_app

from .conftest import Shell

runner = CliRunner()


@pytest.fixture(autouse=True)
def no_gghome(monkeypatch: pytest.MonkeyPatch) -> None:
    """No $GGHOME; what a command sets in this process is undone afterwards."""
    monkeypatch.setenv("GGHOME", "")


def test_global_home_reaches_every_subcommand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Home(tmp_path / "h")
    home.create_subdirs()
    monkeypatch.chdir(tmp_path)  # no dirprm/ here: without --home the user-data home is used
    result = runner.invoke(build_app(), ["--home", str(home.root), "db", "create", "src"])
    assert result.exit_code == 0, result.output
    assert (home.dirdb / "SRC").is_dir()
    os.environ["GGHOME"] = ""
    listed = runner.invoke(build_app(), ["--home", str(home.root), "db", "list"])
    assert "SRC" in listed.output


def test_global_home_wins_over_a_current_directory_with_dirprm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ggsci --home H extract ...`` reads H's files even where the current directory is a
    home too (--home, then $GGHOME, then the current directory)."""
    home = Home(tmp_path / "h")
    home.create_subdirs()
    (home.dirprm / "e1.prm").write_text("EXTRACT e1\nBR BRINTERVAL 10M\n")
    here = Home(tmp_path / "cwd")
    here.create_subdirs()
    monkeypatch.chdir(here.root)
    result = runner.invoke(
        build_app(), ["--home", str(home.root), "extract", "paramfile", "dirprm/e1.prm"]
    )
    assert result.exit_code != 0
    assert "BRINTERVAL must be from 20M to 96H" in result.output, result.output


def test_obey_syntax_only_on_a_missing_file_is_one_line_and_status_1(tmp_path: Path) -> None:
    missing = tmp_path / "nope.oby"
    checked = runner.invoke(build_app(), ["obey", "--syntax-only", str(missing)])
    assert checked.exit_code == 1
    assert checked.output == (
        f"ERROR: Cannot open obey file {missing} (No such file or directory).\n"
    )


def test_help_lists_the_group_forms_of_lag_send_stop(shell: Shell) -> None:
    for verb in ("LAG", "SEND", "STOP"):
        for kind in ("REPLICAT", "ER"):
            out = shell.run(f"HELP {verb} {kind}")
            assert out.startswith(f"{verb} {kind}: ")
            assert f"{verb} {{EXTRACT | REPLICAT | ER}}" in out, (
                verb,
                kind,
            )


def _encrypted(out: str) -> str:
    return next(ln for ln in out.splitlines() if ln.startswith("Encrypted password:")).split()[-1]


def test_encrypt_password_round_trips_through_dblogin(shell: Shell, home: Home) -> None:
    import sqlite3

    sqlite3.connect(home.root / "tgt.db").close()
    out = shell.run("ENCRYPT PASSWORD s3cret, AES256, ENCRYPTKEY DEFAULT")
    assert out.startswith("Using AES256 encryption with DEFAULT key.\n") and shell.ok
    assert out.endswith("Algorithm used:  AES256\n")
    enc = _encrypted(out)
    assert "s3cret" not in enc and enc.startswith("AAD")
    assert "s3cret" not in home.ggserr_log.read_text()  # the command is logged masked
    assert shell.run(f"DBLOGIN USERID gg@tgt.db, PASSWORD {enc}, AES256, ENCRYPTKEY DEFAULT") == (
        "Successfully logged into database.\n"
    )
    assert shell.session.login is not None and shell.session.login.password == "s3cret"
    # a changed character, or another key, is refused (GCM authenticates), never garbage
    broken = enc[:-2] + ("A" if enc[-2] != "A" else "B") + enc[-1]
    out = shell.run(f"DBLOGIN USERID gg@tgt.db, PASSWORD {broken}, ENCRYPTKEY DEFAULT")
    assert out == (
        "ERROR: Unable to log in: The password is not one ENCRYPT PASSWORD made with key DEFAULT.\n"
    )


def test_encrypt_with_a_key_from_enckeys(shell: Shell, home: Home) -> None:
    import sqlite3

    sqlite3.connect(home.root / "tgt.db").close()
    assert shell.run("ENCRYPT PASSWORD pw, ENCRYPTKEY superkey") == (
        "ERROR: No ENCKEYS file in the home: key superkey cannot be found.\n"
    )
    (home.root / "ENCKEYS").write_text(
        "-- name  value\nsuperkey 0x420E61BE7002D63560929CCA17A4E1FB\n"
        "otherkey 0x027742185BBF232D7C664A5E1A76B040\n"
    )
    (home.root / "ENCKEYS").chmod(0o600)
    out = shell.run("ENCRYPT PASSWORD pw, ENCRYPTKEY superkey")
    assert out.startswith("Using AES128 encryption with key superkey.") and shell.ok
    enc = _encrypted(out)
    assert shell.run(f"DBLOGIN USERID u@tgt.db, PASSWORD {enc}, ENCRYPTKEY superkey").startswith(
        "Successfully"
    )
    assert "not one ENCRYPT PASSWORD made with key otherkey" in shell.run(
        f"DBLOGIN USERID u@tgt.db, PASSWORD {enc}, ENCRYPTKEY otherkey"
    )
    assert "Key nokey is not in the ENCKEYS file." in shell.run(
        "ENCRYPT PASSWORD x, ENCRYPTKEY nokey"
    )
    (home.root / "ENCKEYS").chmod(0o666)
    assert "it is not used" in shell.run("ENCRYPT PASSWORD x, ENCRYPTKEY superkey")
    assert "BLOWFISH is not offered" in shell.run("ENCRYPT PASSWORD x, BLOWFISH")


def test_set_editor_show_and_versions(shell: Shell, home: Home) -> None:
    assert shell.run("SET EDITOR nano") == "" and shell.ok
    shell.run("EDIT PARAMS e1")
    assert shell.edits[-1] == ["nano", str(home.dirprm / "e1.prm")]
    show = shell.run("SHOW")
    assert "Editor:  nano" in show and f"Current directory: {home.root}" in show
    assert f"Parameters (.prm)              {home.dirprm}" in show
    versions = shell.run("VERSIONS")
    assert versions.startswith("ggsci ") and "Operating System:" in versions
    assert "Node: testhost" in versions and "Database:" not in versions


def test_info_param_and_getparaminfo(shell: Shell, home: Home) -> None:
    out = shell.run("INFO PARAM table")
    assert out.startswith(
        "param name    : table\nstatus        : acted on by ggsci's processes\n"
        "component(s)  : EXTRACT\n"
    ), out
    assert "\n  COLS                acted on by ggsci's processes\n" in out
    lines = shell.run("INFO PARAM map").splitlines()
    assert "component(s)  : REPLICAT" in lines and "  TARGET                 acted on" in "\n".join(
        lines
    )
    assert "component(s)  : MANAGER" in shell.run("INFO PARAM PORT")
    assert "component(s)  : EXTRACT\n" in shell.run("INFO PARAM RMTHOST")  # not a Replicat's
    assert "did you mean TABLE" in shell.run("INFO PARAM tabel") and not shell.ok
    assert shell.run("GETPARAMINFO FILE params.txt").startswith("Parameter information of ")
    assert "Parameter:  USERID" in (home.root / "params.txt").read_text()


def test_cleanup_keeps_save_runs_of_history(shell: Shell, home: Home) -> None:
    from dataclasses import replace

    from engine.home.checkpoints import checkpoint_path, load_checkpoints
    from engine.home.jsonfile import write_json

    shell.run("ADD EXTRACT e1, TRANLOG, BEGIN NOW")
    cps = load_checkpoints(home, "EXTRACT", "E1")
    assert cps is not None
    write_json(checkpoint_path(home, "EXTRACT", "E1"), replace(cps, history=(cps,) * 3).to_json())
    assert shell.run("CLEANUP EXTRACT e1, SAVE 1") == "Deleted EXTRACT E1 run history.\n"
    after = load_checkpoints(home, "EXTRACT", "E1")
    assert after is not None and len(after.history) == 1 and after.reads == cps.reads
    shell.run("CLEANUP EXTRACT e1")
    after = load_checkpoints(home, "EXTRACT", "E1")
    assert after is not None and after.history == ()


def test_not_offered_lines(shell: Shell) -> None:
    assert shell.run("INFO MARKERS").startswith("INFO MARKER: DDL markers come from")
    assert shell.ok
    out = shell.run("CONNECT https://host:9011 deployment d AS oggadmin PASSWORD x")
    assert out.startswith("ERROR: CONNECT: this is the classic GGSCI interface")
    assert out.count("\n") == 1


def test_delete_exttrail_of_a_running_extract_is_refused(shell: Shell, home: Home) -> None:
    from engine.home.status import ProcessLock

    shell.run("ADD EXTRACT e1, TRANLOG, BEGIN NOW")
    shell.run("ADD EXTTRAIL ./dirdat/lt, EXTRACT e1")
    lock = ProcessLock.acquire(home, "EXTRACT", "E1")  # as the running E1 holds it
    try:
        out = shell.run("DELETE EXTTRAIL ./dirdat/lt")
    finally:
        lock.release()
    assert out == (
        "ERROR: EXTTRAIL ./dirdat/lt is written by EXTRACT E1, which is running; stop it "
        "before you delete the trail.\n"
    )
    assert "./dirdat/lt" in shell.run("INFO EXTTRAIL *")  # still there
    assert shell.run("DELETE EXTTRAIL ./dirdat/lt").startswith("Deleting exttrail ./dirdat/lt")


def test_embedded_database_users_and_ora_01017(shell: Shell, home: Home) -> None:
    from engine.embedded.database import create_database, open_database
    from engine.embedded.errors import SqlError
    from engine.embedded.sql import execute

    create_database(home.dirdb, "src")
    denied = "ERROR: Unable to log in: ORA-01017: invalid username/password; logon denied\n"
    assert shell.run("DBLOGIN USERID ggadmin@src, PASSWORD wrong") == denied
    assert shell.run("DBLOGIN USERID nobody@src, PASSWORD ggadmin") == denied
    assert shell.run("DBLOGIN USERID ggadmin@src, PASSWORD ggadmin").startswith("Successfully")
    with open_database(home.dirdb, "src") as db:
        s = db.session("dba")
        assert execute(db, s, "ALTER USER ggadmin IDENTIFIED BY n3w").feedback == "User altered."
        with pytest.raises(SqlError, match="conflicts with another user"):
            execute(db, s, "CREATE USER GGADMIN IDENTIFIED BY x")
        assert execute(db, s, "CREATE USER rep IDENTIFIED BY r").feedback == "User created."
        assert execute(db, s, "DROP USER rep").feedback == "User dropped."
        with pytest.raises(SqlError, match="does not exist"):
            execute(db, s, "DROP USER rep")
    assert shell.run("DBLOGIN USERID ggadmin@src, PASSWORD ggadmin") == denied
    assert shell.run("DBLOGIN USERID ggadmin@src, PASSWORD n3w").startswith("Successfully")
    assert shell.run("DBLOGIN USERID rep@src, PASSWORD r") == denied
    # SOURCEDB alone is the operating-system login of the home's owner, as before
    assert shell.run("DBLOGIN SOURCEDB src").startswith("Successfully")


def test_run_never_prints_two_blank_lines_in_a_row(home: Home) -> None:
    commands = ["INFO ALL", "ADD EXTRACT e1, TRANLOG, BEGIN NOW", "INFO EXTRACT e1", "INFO ALL"]
    result = runner.invoke(build_app(), ["--home", str(home.root), "run", *commands])
    assert result.exit_code == 0, result.output
    assert "\n\n\n" not in result.output and not result.output.startswith("\n")
    assert "MANAGER     STOPPED\n\nEXTRACT added.\n\nEXTRACT    E1" in result.output


def test_view_params_completes_group_names_and_files(shell: Shell, home: Home) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from ggsci.shell.completion import GGSCICompleter

    shell.run("ADD REPLICAT rep1, EXTTRAIL ./dirdat/lt")
    (home.dirprm / "rep1.prm").write_text("REPLICAT rep1\n")
    completer = GGSCICompleter(home)

    def complete(text: str) -> list[str]:
        doc = Document(text, len(text))
        return [c.text for c in completer.get_completions(doc, CompleteEvent())]

    assert complete("VIEW PARAMS re") == ["REP1"]
    assert complete("EDIT PARAMS R") == ["REP1"]
    assert complete("VIEW PARAMS dirprm/r") == ["dirprm/rep1.prm"]
    assert "STATS" in complete("STA")


def test_screens_are_goldengates(shell: Shell, home: Home) -> None:
    from .conftest import check_golden

    shell.run("SET EDITOR vi")
    text = "".join(
        f"GGSCI> {line}\n{shell.run(line)}"
        for line in (
            "SHOW",
            "INFO PARAM TABLE",
            "INFO PARAM BATCHSQL",
            "HELP STATS",
            "HELP ENCRYPT",
        )
    )
    check_golden("operator_screens.txt", text, home)


def test_a_manager_that_does_not_answer_is_named_without_its_socket_file(
    shell: Shell, home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engine.runtime.control as control
    from engine.home.status import MANAGER, socket_path
    from engine.runtime.ipc import IpcError

    def refused(path: Path, text: str, timeout: float) -> None:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as exc:
            raise IpcError(f"no process answers on {path.name}: {exc.strerror}") from exc

    monkeypatch.setattr(control, "manager_info", lambda h: object())
    monkeypatch.setattr(control, "send_request", refused)
    monkeypatch.setattr("ggsci.dispatch.processes.manager_info", lambda h: object())
    out = shell.run("SEND MANAGER CHILDSTATUS")
    assert out.endswith(
        "ERROR: Manager does not answer (Connection refused); see VIEW GGSEVT.\n"
    ), out
    assert ".sock" not in out and socket_path(home, MANAGER, MANAGER).name not in out


@pytest.mark.parametrize(
    ("line", "start", "ok"),
    [
        ("ADD TRACETABLE ggs.trace", "ADD TRACETABLE: trace tables", True),
        ("INFO TRACETABLE", "INFO TRACETABLE: trace tables", True),
        ("FLUSH SEQUENCE hr.*", "FLUSH SEQUENCE: FLUSH SEQUENCE updates", True),
        ("DUMPDDL SHOW 5", "DUMPDDL: DUMPDDL reads", True),
        ("MININGDBLOGIN USERIDALIAS x", "ERROR: MININGDBLOGIN: a downstream mining", False),
    ],
)
def test_oracle_only_commands_answer_one_line(
    shell: Shell, line: str, start: str, ok: bool
) -> None:
    out = shell.run(line)
    assert out.startswith(start) and out.count("\n") == 1 and shell.ok is ok


def test_help_answers_every_command_of_the_issue(shell: Shell) -> None:
    """HELP INFO PARAM used to be read as INFO PARAMS and found nothing; the Oracle-internals
    commands, CONNECT and the checkpoint-table commands had no HELP."""
    for topic in (
        "STATS", "STATS REPLICAT", "SET EDITOR", "VERSIONS", "SHOW", "CLEANUP REPLICAT",
        "ENCRYPT PASSWORD", "INFO PARAM", "INFO MARKER", "INFO MARKERS", "GETPARAMINFO",
        "INFO TRACETABLE", "FLUSH SEQUENCE", "DUMPDDL", "MININGDBLOGIN", "REGISTER EXTRACT",
        "UNREGISTER REPLICAT", "INFO TRANDATA", "CONNECT", "ADD CHECKPOINTTABLE",
        "INFO RMTTRAIL", "SEND MANAGER",
    ):  # fmt: skip
        out = shell.run(f"HELP {topic}")
        assert shell.ok and out.startswith(topic), (topic, out)
    assert "GETPARAMINFO" in shell.run("HELP SEND REPLICAT")
    assert shell.run("HELP INFO NOSUCH") == "ERROR: No help for INFO NOSUCH.\n"


def test_global_home_reaches_logdump_and_params(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ggsci --home H logdump dirdat/lt000000000`` and ``... params check dirprm/x.prm``
    read H's files from anywhere, as every sub-command honours the global --home."""
    from engine.trail.model import TableDef
    from engine.trail.writer import TrailWriter

    home = Home(tmp_path / "h")
    home.create_subdirs()
    writer = TrailWriter.open(home.dirdat / "lt", durable=False, roll_on_restart=False)
    writer.define_table(TableDef("HR.EMP", ("ID",)))
    writer.close()
    (home.dirprm / "e1.prm").write_text("EXTRACT e1\nEXTTRAIL ./dirdat/lt\nTABLE hr.*;\n")
    monkeypatch.chdir(tmp_path)
    dumped = runner.invoke(build_app(), ["--home", str(home.root), "logdump", "dirdat/lt000000000"])
    assert dumped.exit_code == 0, dumped.output
    assert "FileHeader" in dumped.output
    os.environ["GGHOME"] = ""
    checked = runner.invoke(
        build_app(), ["--home", str(home.root), "params", "check", "dirprm/e1.prm"]
    )
    assert checked.exit_code == 0 and "OK (extract, 0 error(s)" in checked.output, checked.output
    os.environ["GGHOME"] = ""
    (home.dirprm / "i.oby").write_text("INFO ALL\n")
    for args in (["obey"], ["obey", "--syntax-only"]):
        obeyed = runner.invoke(build_app(), ["--home", str(home.root), *args, "dirprm/i.oby"])
        assert obeyed.exit_code == 0 and "Cannot open" not in obeyed.output, obeyed.output
    os.environ["GGHOME"] = ""
    missing = runner.invoke(build_app(), ["logdump", "dirdat/lt000000000"])  # no home: cwd's
    assert missing.exit_code == 1 and "TRAIL-006" in missing.output
