"""GGSCI sessions without a terminal: replies, screens (golden), errors, history, OBEY."""

from __future__ import annotations

import os
from dataclasses import replace

from engine.home.checkpoints import CsnState, Position, load_checkpoints, save_checkpoints
from engine.home.layout import Home
from engine.home.status import ProcessFile, State, start_ticks, write_process_file

from .conftest import Shell, check_golden


def setup_groups(shell: Shell) -> None:
    for line in (
        "ADD EXTRACT ext1, TRANLOG, BEGIN 2026-03-14 09:00, DESC 'orders capture'",
        "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1, MEGABYTES 100",
        "ADD EXTRACT pump1, EXTTRAILSOURCE ./dirdat/lt",
        "ADD RMTTRAIL ./dirrmt/rt, EXTRACT pump1",
        "ADD REPLICAT rep1, EXTTRAIL ./dirrmt/rt, CHECKPOINTTABLE gg.ckpt",
        "ADD EXTRACT load1, SOURCEISTABLE",
    ):
        shell.run(line)
        assert shell.ok, line


def mark_running(home: Home, kind: str, name: str, started: str) -> None:
    pid = os.getpid()
    write_process_file(
        home, ProcessFile(kind, name, pid, State.RUNNING, started, ticks=start_ticks(pid))
    )


def test_add_replies(shell: Shell) -> None:
    replies = [
        shell.run("ADD EXTRACT ext1, TRANLOG, BEGIN NOW"),
        shell.run("add exttrail ./dirdat/lt, extract ext1"),
        shell.run("ADD EXTRACT pump, EXTTRAILSOURCE ./dirdat/lt"),
        shell.run("ADD RMTTRAIL ./dirrmt/rt, EXTRACT pump, MEGABYTES 50"),
        shell.run("ADD REPLICAT rep1, EXTTRAIL ./dirrmt/rt"),
        shell.run("ALTER EXTRACT ext1, EXTSEQNO 3, EXTRBA 1024"),
        shell.run("DELETE REPLICAT rep1"),
    ]
    check_golden("replies_add.txt", "".join(replies))


def test_errors_are_one_line_each(shell: Shell) -> None:
    setup_groups(shell)
    out = "".join(
        shell.run(line)
        for line in (
            "ADD EXTRACT ext1, TRANLOG, BEGIN NOW",
            "ADD EXTRACT toolongname, TRANLOG, BEGIN NOW",
            "ADD EXTRACT e2, INTEGRATED TRANLOG, BEGIN NOW",
            "ADD EXTRACT e3, TRANLOG",
            "ADD EXTTRAIL ./dirdat/abc, EXTRACT ext1",
            "ADD EXTTRAIL ./dirdat/lt, EXTRACT pump1",
            "INFO EXTRACT nosuch",
            "START EXTRACT ext1",
            "SEND EXTRACT ext1, STATUS",
            "ADD EXTRAKT x",
            "REGISTER EXTRACT ext1 DATABASE",
            "CREATE WALLET",
        )
    )
    check_golden("errors.txt", out)


def test_info_all(shell: Shell, home: Home) -> None:
    setup_groups(shell)
    cps = load_checkpoints(home, "EXTRACT", "EXT1")
    assert cps is not None
    save_checkpoints(home, replace(cps, lag_seconds=3.0, updated="2026-03-14 09:26:48"))
    mark_running(home, "EXTRACT", "EXT1", "2026-03-14 09:20:00")
    write_process_file(
        home, ProcessFile("REPLICAT", "REP1", 2**22 + 7, State.RUNNING, "2026-03-14 09:21:00")
    )
    screens = (
        shell.run("INFO ALL") + shell.run("info all tasks") + shell.run("INFO ALL ALLPROCESSES")
    )
    check_golden("info_all.txt", screens)


def test_info_extract_detail_and_showch(shell: Shell, home: Home) -> None:
    setup_groups(shell)
    cps = load_checkpoints(home, "EXTRACT", "EXT1")
    assert cps is not None
    read = cps.reads[0]
    current = Position(seqno=24, rba=18464196, scn=1440415, timestamp="2026-03-14 09:26:50.000000",
                       redo_file="/u01/oradata/SRC/redo/thread1_seq24.log")  # fmt: skip
    save_checkpoints(
        home,
        replace(
            cps,
            reads=(replace(read, current=current),),
            lag_seconds=3.0,
            updated="2026-03-14 09:26:51",
            batch_id=17,
            # the last transaction written and the restart position (LOGBSN)
            csn=CsnState(1440412, "5.15.930", 1440001, "2026-03-14 09:00:00"),
        ),
    )
    mark_running(home, "EXTRACT", "EXT1", "2026-03-14 09:20:00")
    text = (
        shell.run("INFO EXTRACT ext1")
        + shell.run("INFO EXTRACT ext1, DETAIL")
        + shell.run("info ext ext1, showch")
        + shell.run("INFO EXTRACT pump1, DETAIL")
        + shell.run("INFO REPLICAT rep1")
        + shell.run("STATUS ER *")
    )
    pid_line = f"{'Process ID':<21}{os.getpid()}"
    assert pid_line in text
    check_golden("info_extract.txt", text.replace(pid_line, f"{'Process ID':<21}<pid>"), home)


def test_info_trails(shell: Shell) -> None:
    setup_groups(shell)
    check_golden("info_trails.txt", shell.run("INFO EXTTRAIL *") + shell.run("INFO RMTTRAIL"))


def test_alter_repositions_and_etrollover(shell: Shell, home: Home) -> None:
    setup_groups(shell)
    assert shell.run("ALTER EXTRACT ext1, EXTSEQNO 26, EXTRBA 338") == "EXTRACT altered.\n"
    cps = load_checkpoints(home, "EXTRACT", "EXT1")
    assert cps is not None and cps.altered
    assert (cps.reads[0].current.seqno, cps.reads[0].current.rba) == (26, 338)
    shell.run("ALTER EXTRACT ext1, ETROLLOVER")
    cps = load_checkpoints(home, "EXTRACT", "EXT1")
    assert cps is not None and cps.writes[0].position.seqno == 1
    assert "OGG-01520" in home.ggserr_log.read_text()


def test_delete_with_wildcard_asks_unless_bang(home: Home) -> None:
    shell = Shell(home, answers=["n"])
    setup_groups(shell)
    assert shell.run("DELETE EXTRACT * ") == "Nothing deleted.\n"
    assert shell.prompts == ["Are you sure you want to delete all groups matching *? (y/n) "]
    out = shell.run("DELETE EXTRACT p* !")
    assert out == "Deleted EXTRACT PUMP1.\n"


def test_every_command_is_logged_with_passwords_masked(shell: Shell, home: Home) -> None:
    shell.run("ADD CREDENTIALSTORE")
    shell.run("alter credentialstore add user gg password s3cret alias gg1")
    shell.run("INFO ALL")
    shell.run("FROB")
    log = home.ggserr_log.read_text().splitlines()
    assert log[0] == (
        "2026-03-14 09:26:53  INFO    OGG-00987  Oracle GoldenGate Command "
        "Interpreter for Oracle:  GGSCI command (tester): ADD CREDENTIALSTORE."
    )
    assert "password ********" in log[1] and "s3cret" not in home.ggserr_log.read_text()
    assert log[3].endswith("GGSCI command (tester): FROB.")


def test_history_bang_and_fc(home: Home) -> None:
    shell = Shell(home, answers=["        d", "", "//"])
    shell.run("INFO ALL")
    shell.run("HELP OBEY")
    shell.run("INFO ALLX")
    out = shell.run("HISTORY")
    assert out.splitlines()[2:] == [
        "    1: INFO ALL",
        "    2: HELP OBEY",
        "    3: INFO ALLX",
        "    4: HISTORY",
    ]
    assert shell.run("! 2").startswith("HELP OBEY\nOBEY: ")
    assert shell.run("!info").startswith("INFO ALLX\nERROR")
    out = shell.run("FC 3")
    assert out.startswith("GGSCI (testhost) 7> INFO ALLX\nGGSCI (testhost) 7> INFO ALL\n\nProgram")
    assert shell.prompts[:2] == ["GGSCI (testhost) 7..", "GGSCI (testhost) 7.."]
    assert shell.ok
    assert shell.run("FC") == "GGSCI (testhost) 8> INFO ALL\nCommand cancelled.\n"
    assert shell.run("! 99") == "ERROR: Command 99 not found in history.\n"


def test_fc_edit_keys() -> None:
    """The examples of GGSCI's FC documentation."""
    from ggsci.dispatch.basic import apply_fc_edit

    assert apply_fc_edit("send mgr", "        i childstatus") == "send mgr childstatus"
    assert apply_fc_edit("info mgr", "     rextract extjd") == "info extract extjd"
    assert apply_fc_edit("info extract extjd, detail", " " * 18 + "d" * 8) == "info extract extjd"
    assert apply_fc_edit("info mgr", "     extract extjd") == "info extract extjd"
    assert apply_fc_edit("info extract ext1", "                ") == "info extract ext1"


def test_obey_and_nesting(shell: Shell, home: Home) -> None:
    inner = home.dirprm / "inner.oby"
    inner.write_text("INFO ALL\n")
    outer = home.dirprm / "outer.oby"
    outer.write_text("-- a comment\nADD EXTRACT e1, TRANLOG, BEGIN NOW\nOBEY dirprm/inner.oby\n")
    out = shell.run("OBEY dirprm/outer.oby")
    assert "ERROR: Nested OBEY scripts not allowed. Use ALLOWNESTED to allow nested scripts." in out
    assert not shell.ok
    shell.run("ALLOWNESTED")
    shell.run("DELETE EXTRACT e1")
    out = shell.run("OBEY dirprm/outer.oby")
    assert shell.ok and "MANAGER     STOPPED" in out
    assert "GGSCI (testhost) " in out and "> INFO ALL" in out
    assert out.rstrip().endswith("End of obey file dirprm/outer.oby.")


def test_create_subdirs_help_shell_exit(tmp_path: object, home: Home) -> None:
    shell = Shell(Home(home.root / "fresh"))
    out = shell.run("CREATE SUBDIRS")
    assert "Parameter files" in out and "dirprm: created" in out
    assert (shell.session.home.root / "dirchk").is_dir()
    assert "dirprm: already exists" in shell.run("CREATE SUBDIRS")
    assert "ADD EXTRACT" in shell.run("HELP")
    assert "ADD EXTRACT group" in shell.run("help add ext")
    assert shell.run("SHELL echo hello") == "hello\n"
    from ggsci.dispatch.table import execute

    assert execute(shell.session, "EXIT").exit
    assert execute(shell.session, "quit").exit


def test_oracle_only_commands_answer_one_line(shell: Shell) -> None:
    out = shell.run("ADD TRANDATA hr.emp")
    assert out.count("\n") == 1 and "embedded source logs every column" in out and shell.ok
    out = shell.run("CREATE WALLET")
    assert out.startswith("CREATE WALLET: the Oracle wallet is not offered") and shell.ok
    assert shell.run("REGISTER EXTRACT e1 DATABASE").startswith("ERROR: REGISTER EXTRACT")
    assert not shell.ok


def test_view_and_edit_params(shell: Shell, home: Home) -> None:
    (home.dirprm / "ext1.prm").write_text("EXTRACT ext1\nEXTTRAIL ./dirdat/lt\nTABLE hr.*;\n")
    assert shell.run("VIEW PARAMS ext1") == "\nEXTRACT ext1\nEXTTRAIL ./dirdat/lt\nTABLE hr.*;\n\n"
    assert shell.run("VIEW PARAMS nosuch").startswith("ERROR: Parameter file ")
    out = shell.run("EDIT PARAMS ext1")
    assert shell.edits[-1][-1] == str(home.dirprm / "ext1.prm")
    assert shell.ok, out
    (home.dirprm / "bad.prm").write_text("EXTRACT bad\nWARNLONGTRANS 1X\nNOSUCHPARAM 1\n")
    out = shell.run("EDIT PARAMS bad")
    assert not shell.ok
    assert "bad.prm:3:" in out and out.rstrip().endswith("error(s).")


def test_view_report_and_ggsevt(shell: Shell, home: Home) -> None:
    (home.dirrpt / "EXT1.rpt").write_text("report line\n")
    shell.run("ADD EXTRACT ext1, TRANLOG, BEGIN NOW")
    assert shell.run("VIEW REPORT ext1") == "\nreport line\n\n"
    assert "GGSCI command (tester): ADD EXTRACT ext1" in shell.run("VIEW GGSEVT")


def test_showch_n_shows_earlier_checkpoints(shell: Shell, home: Home) -> None:
    setup_groups(shell)
    cps = load_checkpoints(home, "EXTRACT", "EXT1")
    assert cps is not None
    for batch in range(1, 13):
        save_checkpoints(
            home, replace(cps, batch_id=batch, updated=f"2026-03-14 09:{batch:02d}:00")
        )
    saved = load_checkpoints(home, "EXTRACT", "EXT1")
    assert saved is not None and [h.batch_id for h in saved.history] == list(range(11, 1, -1))
    out = shell.run("INFO EXTRACT ext1, SHOWCH 2")
    assert "Batch ID = 12" in out
    assert "Checkpoint History #1 (Last Update Time = 2026-03-14 09:11:00, Batch ID = 11):" in out
    assert "Checkpoint History #2 (Last Update Time = 2026-03-14 09:10:00, Batch ID = 10):" in out
    assert "Checkpoint History #3" not in out
