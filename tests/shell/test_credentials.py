"""Credential store (mode 0600, never shows a password) and DBLOGIN resolution."""

from __future__ import annotations

import sqlite3
import stat

from engine.home.credstore import CredentialStore
from engine.home.layout import Home

from .conftest import Shell


def test_store_lifecycle_and_mode(shell: Shell, home: Home) -> None:
    assert shell.run("ADD CREDENTIALSTORE") == "Credential store created.\n"
    assert shell.run("ADD CREDENTIALSTORE").startswith("ERROR: Credential store already exists")
    out = shell.run("ALTER CREDENTIALSTORE ADD USER GGATE_ADMIN, PASSWORD Secret1, ALIAS gg1")
    assert out == "Credential store in ./dircrd/ altered.\n"
    shell.run("alter credentialstore add user gg_ext@src1 password Secret2 alias oggext domain d2")
    path = CredentialStore(home).path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    info = shell.run("INFO CREDENTIALSTORE")
    assert info == (
        "Reading from credential store ./dircrd/:\n\nDefault domain: OracleGoldenGate\n\n"
        "  Alias: gg1\n  Userid: GGATE_ADMIN\n\n"
    )
    assert "Alias: oggext\n  Userid: gg_ext@src1" in shell.run("INFO CREDENTIALSTORE DOMAIN d2")
    transcript = shell.out.getvalue() + home.ggserr_log.read_text()
    assert "Secret1" not in transcript and "Secret2" not in transcript
    out = shell.run("ALTER CREDENTIALSTORE ADD USER GGATE_ADMIN PASSWORD x ALIAS gg1")
    assert out.startswith("ERROR: Alias gg1 already exists")
    assert shell.run(
        "ALTER CREDENTIALSTORE REPLACE USER GGATE_ADMIN PASSWORD y ALIAS gg1"
    ).endswith("altered.\n")
    assert CredentialStore(home).lookup("gg1").password == "y"
    shell.run("ALTER CREDENTIALSTORE DELETE USER GGATE_ADMIN ALIAS gg1")
    assert "gg1" not in shell.run("INFO CREDENTIALSTORE")


def test_password_is_asked_for_when_not_given(home: Home) -> None:
    shell = Shell(home, answers=["typed-secret"])
    shell.run("ADD CREDENTIALSTORE")
    shell.run("ALTER CREDENTIALSTORE ADD USER u1 ALIAS a1")
    assert shell.prompts == ["Password: "]
    assert CredentialStore(home).lookup("a1").password == "typed-secret"


def test_dblogin_embedded_database_and_prompt(shell: Shell, home: Home) -> None:
    from engine.embedded.database import create_database, open_database
    from engine.embedded.sql import execute

    create_database(home.dirdb, "src1")
    with open_database(home.dirdb, "src1") as db:  # users are changed by SQL
        assert execute(db, db.session("s"), "CREATE USER gg IDENTIFIED BY pw").feedback == (
            "User created."
        )
    shell.run("ADD CREDENTIALSTORE")
    shell.run("ALTER CREDENTIALSTORE ADD USER gg@src1 PASSWORD pw ALIAS gg1")
    assert shell.run("DBLOGIN USERIDALIAS gg1") == "Successfully logged into database.\n"
    assert shell.session.prompt() == "GGSCI (testhost as gg@SRC1) 4> "
    assert shell.run("DBLOGIN USERID ggadmin, PASSWORD ggadmin") == (
        "Successfully logged into database.\n"
    )  # the user every embedded database is created with
    assert shell.session.prompt().startswith("GGSCI (testhost as ggadmin@SRC1)")
    assert shell.run("DBLOGIN USERID other, PASSWORD x") == (
        "ERROR: Unable to log in: ORA-01017: invalid username/password; logon denied\n"
    )


def test_dblogin_sqlite_file_and_errors(shell: Shell, home: Home) -> None:
    db = home.root / "target.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table t (x int)")
    assert shell.run("DBLOGIN USERID app@target.db, PASSWORD pw") == (
        "Successfully logged into database.\n"
    )
    assert shell.session.login is not None and shell.session.login.kind == "sqlite"
    out = shell.run("DBLOGIN USERID c##ggs_admin@ORCLPDB1, PASSWORD x")
    assert out.startswith("ERROR: Unable to log in: Database ORCLPDB1 not found")
    assert shell.run("DBLOGIN USERIDALIAS nosuch").startswith(
        "ERROR: Unable to log in: Credential store not found"
    )
    assert shell.run("DBLOGIN SOURCEDB missing.db").startswith(
        "ERROR: Unable to log in: SQLite database"
    )


def test_checkpoint_table_in_an_sqlite_target(home: Home) -> None:
    shell = Shell(home, answers=["password-for-dblogin", "y"])
    target = home.root / "target.db"
    sqlite3.connect(target).close()
    assert (
        shell.run("ADD CHECKPOINTTABLE gg.ckpt")
        == "ERROR: Not logged into database, use DBLOGIN.\n"
    )
    shell.run("DBLOGIN USERID app@target.db")
    assert (
        shell.run("ADD CHECKPOINTTABLE gg.ckpt")
        == "Successfully created checkpoint table gg.ckpt.\n"
    )
    with sqlite3.connect(target) as conn:
        cols = [r[1] for r in conn.execute("pragma table_info(ckpt)")]
        lox = [r[1] for r in conn.execute("pragma table_info(ckpt_lox)")]
    assert cols[:4] == ["group_name", "group_key", "seqno", "rba"] and "log_cmplt_xids" in cols
    assert lox == [
        "group_name",
        "group_key",
        "log_cmplt_csn",
        "log_cmplt_xids_seq",
        "log_cmplt_xids",
    ]
    assert shell.run("ADD CHECKPOINTTABLE gg.ckpt").startswith(
        "ERROR: Checkpoint table gg.ckpt already"
    )
    assert shell.run("INFO CHECKPOINTTABLE gg.ckpt") == (
        "Checkpoint table gg.ckpt exists (0 checkpoint row(s)).\n"
    )
    home.globals_file.write_text("GGSCHEMA gg\nCHECKPOINTTABLE gg.ckpt\n")
    assert shell.run("DELETE CHECKPOINTTABLE") == "Successfully deleted checkpoint table gg.ckpt.\n"
    assert shell.prompts[-1].startswith("Are you sure you want to delete checkpoint table gg.ckpt?")
    assert shell.run("INFO CHECKPOINTTABLE").startswith("ERROR: Checkpoint table gg.ckpt does not")
