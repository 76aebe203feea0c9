"""ADD / ALTER / INFO / DELETE HEARTBEATTABLE and DELETE HEARTBEATENTRY: GGSCI's replies
(goldens), the objects they leave in each kind of database, and one-line errors."""

from __future__ import annotations

import sqlite3

import pytest

from engine.embedded.database import Database, create_database
from engine.embedded.scheduler import load_jobs
from engine.heartbeat import registry
from engine.home.layout import Home

from .conftest import Shell, check_golden


@pytest.fixture
def home(home: Home) -> Home:
    """The shell's home with an embedded source SRC and an SQLite file tgt.db."""
    create_database(home.dirdb, "src")
    sqlite3.connect(home.root / "tgt.db").close()
    return home


def transcript(shell: Shell, *lines: str) -> str:
    return "".join(f"GGSCI> {line}\n{shell.run(line)}" for line in lines)


def test_embedded_source_add_info_alter_delete(home: Home, shell: Shell) -> None:
    text = transcript(
        shell,
        "ADD HEARTBEATTABLE",
        "DBLOGIN SOURCEDB src",
        "INFO HEARTBEATTABLE",
        "ADD HEARTBEATTABLE",
        "ADD HEARTBEATTABLE",
        "INFO HEARTBEATTABLE",
        "ALTER HEARTBEATTABLE, FREQUENCY 10, RETENTION_TIME 7, PURGE_FREQUENCY 2",
        "INFO HEARTBEATTABLE",
        "ALTER HEARTBEATTABLE TARGETONLY",
        "DELETE HEARTBEATTABLE",
        "INFO HEARTBEATTABLE",
    )
    check_golden("heartbeat_embedded.txt", text, home)


def test_embedded_objects_are_in_the_dictionary_and_the_scheduler(home: Home, shell: Shell) -> None:
    shell.run("DBLOGIN SOURCEDB src")
    shell.run("ADD HEARTBEATTABLE, FREQUENCY 5")
    with Database(home.dirdb / "SRC") as db:
        assert {"TESTER.GG_HEARTBEAT_SEED", "TESTER.GG_HEARTBEAT", "TESTER.GG_HEARTBEAT_HISTORY",
                "TESTER.GG_HEARTBEAT_SETTINGS"} <= set(db.dictionary.tables)  # fmt: skip
        assert db.dictionary.tables["TESTER.GG_HEARTBEAT_SEED"].key == ("LOCAL_DATABASE",)
        assert [j.name for j in load_jobs(db.conn)] == [
            "GG_PURGE_HEARTBEATS",
            "GG_UPDATE_HEARTBEATS",
        ]
        seed = db.conn.execute('SELECT LOCAL_DATABASE FROM "TESTER$GG_HEARTBEAT_SEED"').fetchall()
        assert seed == [("SRC",)]
        views = db.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name"
        ).fetchall()
        assert views == [("TESTER$GG_LAG",), ("TESTER$GG_LAG_HISTORY",)]
    [entry] = registry.load(home)
    assert (entry.kind, entry.database, entry.owner) == ("embedded", "SRC", "TESTER")
    shell.run("ALTER HEARTBEATTABLE, TARGETONLY")  # no update job any more
    with Database(home.dirdb / "SRC") as db:
        assert [j.name for j in load_jobs(db.conn)] == ["GG_PURGE_HEARTBEATS"]
    shell.run("DELETE HEARTBEATTABLE")
    with Database(home.dirdb / "SRC") as db:
        assert not [t for t in db.dictionary.tables if t.startswith("TESTER.")]
        assert load_jobs(db.conn) == []
    assert registry.load(home) == []


def test_sqlite_target(home: Home, shell: Shell) -> None:
    text = transcript(
        shell,
        "DBLOGIN USERID gg@./tgt.db",
        "ADD HEARTBEATTABLE, TARGETONLY, RETENTION_TIME 3",
        "INFO HEARTBEATTABLE",
        "ALTER HEARTBEATTABLE, NOTARGETONLY, FREQUENCY 0",
        "INFO HEARTBEATTABLE",
        "DELETE HEARTBEATENTRY rep1",
        "DELETE HEARTBEATTABLE !",
    )
    check_golden("heartbeat_sqlite.txt", text, home)


def test_sqlite_objects(home: Home, shell: Shell) -> None:
    shell.run("DBLOGIN USERID gg@./tgt.db")
    shell.run("ADD HEARTBEATTABLE")
    conn = sqlite3.connect(home.root / "tgt.db")
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"gg_heartbeat", "gg_heartbeat_seed", "gg_heartbeat_history",
            "gg_heartbeat_settings", "gg_lag", "gg_lag_history"} <= names  # fmt: skip
    assert conn.execute("SELECT LOCAL_DATABASE FROM gg_heartbeat_seed").fetchall() == [("TGT",)]
    assert conn.execute(
        "SELECT FREQUENCY, RETENTION_TIME, PURGE_FREQUENCY, TARGET_ONLY FROM gg_heartbeat_settings"
    ).fetchall() == [(60, 30, 1, "N")]


def test_delete_heartbeatentry(home: Home) -> None:
    shell = Shell(home, answers=["password", "n", "y"])
    shell.run("DBLOGIN USERID gg@./tgt.db")
    shell.run("ADD HEARTBEATTABLE")
    conn = sqlite3.connect(home.root / "tgt.db")
    rows = [
        ("SRC", "EXT1", "PMP1", "REP1"),
        ("SRC", "EXT2", "PMP1,PMP2", "REP2"),
        ("SRC2", "EXT3", None, "REP3"),
    ]
    conn.executemany(
        "INSERT INTO gg_heartbeat (REMOTE_DATABASE, INCOMING_EXTRACT, INCOMING_ROUTING_PATH, "
        "INCOMING_REPLICAT) VALUES (?, ?, ?, ?)",
        rows,
    )
    conn.commit()
    out = shell.run("DELETE HEARTBEATENTRY pmp2")  # a hop of a routing path
    assert "Successfully deleted [1] heartbeat entries of [PMP2]." in out
    shell.run("DELETE HEARTBEATENTRY rep*")  # wildcard: asks; "n"
    assert conn.execute("SELECT count(*) FROM gg_heartbeat").fetchone() == (2,)
    out = shell.run("DELETE HEARTBEATENTRY rep*")  # "y"
    assert "[2] heartbeat entries of [REP*]" in out
    assert conn.execute("SELECT count(*) FROM gg_heartbeat").fetchone() == (0,)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("ADD HEARTBEATTABLE, FREQUENCY 8000", "FREQUENCY must be from 0 to 7999 seconds (got 8000)."),
        ("ADD HEARTBEATTABLE RETENTION_TIME 0", "RETENTION_TIME must be from 1 to 2147483646 days (got 0)."),
        ("ADD HEARTBEATTABLE, PURGE_FREQUENCY 200", "PURGE_FREQUENCY must be from 1 to 199 days (got 200)."),
        ("ALTER HEARTBEATTABLE", "ALTER HEARTBEATTABLE needs FREQUENCY, RETENTION_TIME"),
        ("ALTER HEARTBEATTABLE, PARTITIONED", "PARTITIONED is not an option of ALTER HEARTBEATTABLE."),
        ("ADD HEARTBEATTABLE, FREQUENCY 5, FREQUENCY 6", "FREQUENCY is given twice."),
        ("ADD HEARTBEATTABLE, NOTARGETONLY", "NOTARGETONLY is not an option of ADD HEARTBEATTABLE."),
        ("INFO HEARTBEATTABLE", "ERROR: Not logged into database, use DBLOGIN."),
        ("LAG rep1, GLOBAL", "ERROR: Not logged into database, use DBLOGIN."),
    ],
)  # fmt: skip
def test_mistakes_are_one_line(shell: Shell, line: str, message: str) -> None:
    out = shell.run(line)
    assert not shell.ok
    assert message in out.splitlines()[0]
    assert "Traceback" not in out


def test_errors_golden(home: Home, shell: Shell) -> None:
    text = transcript(
        shell,
        "ADD HEARTBEATTABLE, FREQUENCY 8000",
        "ADD HEARTBEATTABLE, PURGE_FREQUENCY 0",
        "ALTER HEARTBEATTABLE",
        "DBLOGIN USERID gg@./tgt.db",
        "ALTER HEARTBEATTABLE, FREQUENCY 5",
        "DELETE HEARTBEATTABLE",
        "LAG rep1, GLOBAL",
    )
    check_golden("heartbeat_errors.txt", text, home)


def test_busy_embedded_database_is_one_line(home: Home, shell: Shell) -> None:
    shell.run("DBLOGIN SOURCEDB src")
    with Database(home.dirdb / "SRC"):
        out = shell.run("ADD HEARTBEATTABLE")
    assert out == (
        "ERROR: ADD HEARTBEATTABLE failed: GGS-SRC-0103: database SRC is in use by another "
        "process\n"
    )
    assert "OGG-14001" in shell.run("ADD HEARTBEATTABLE")


def test_globals_name_the_objects(home: Home, shell: Shell) -> None:
    home.globals_file.write_text("GGSCHEMA ggadmin\nHEARTBEATTABLE hbown.hb\n")
    shell.run("DBLOGIN SOURCEDB src")
    out = shell.run("ADD HEARTBEATTABLE")
    assert 'heartbeat seed table ["HB_SEED"]' in out
    assert shell.run("INFO HEARTBEATTABLE").splitlines()[0] == "HEARTBEAT table HBOWN.hb exists."
    home.globals_file.write_text("GGSCHEMA ggadmin\n")
    shell.run("DBLOGIN USERID gg@./tgt.db")
    shell.run("ADD HEARTBEATTABLE")
    with Database(home.dirdb / "SRC") as db:
        assert "HBOWN.HB_HISTORY" in db.dictionary.tables
    assert [e.owner for e in registry.load(home)] == ["HBOWN", None]
