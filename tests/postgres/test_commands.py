"""GGSCI after a PostgreSQL DBLOGIN: REGISTER / UNREGISTER EXTRACT (the replication slot),
DELETE EXTRACT refused while registered, ADD / INFO / DELETE TRANDATA and ADD SCHEMATRANDATA
(REPLICA IDENTITY), against a real PostgreSQL 15."""

from __future__ import annotations

import psycopg
import pytest

from engine.home.layout import Home
from engine.postgres.slot import load_registration, slot_name
from tests.shell.conftest import Shell

pytestmark = pytest.mark.postgres


def _slots(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        return [
            (str(a), str(b))
            for a, b in conn.execute(
                "SELECT slot_name, plugin FROM pg_replication_slots WHERE database = current_database()"
            ).fetchall()
        ]


def test_register_unregister_and_delete_refused(shell: Shell, home: Home, pgdb: str) -> None:
    assert "Successfully logged into database" in shell.run(f"DBLOGIN SOURCEDB {pgdb}")
    shell.run("ADD EXTRACT epg, TRANLOG, BEGIN NOW")
    out = shell.run("REGISTER EXTRACT epg DATABASE")
    assert shell.ok, out
    reg = load_registration(home, "EPG")
    assert reg is not None
    assert reg.slot.startswith("epg_") and len(reg.slot) == 4 + 16
    assert reg.slot == slot_name("EPG", reg.system_id, reg.database, home.root)
    assert "INFO    OGG-25355  Successfully created replication slot " in out
    assert f"'{reg.slot}' for Extract group 'EPG' in database '{reg.database}'" in out
    assert _slots(pgdb) == [(reg.slot, "test_decoding")]
    assert "OGG-25355" in home.ggserr_log.read_text()
    # twice: refused, one line
    out = shell.run("REGISTER EXTRACT epg DATABASE")
    assert not shell.ok and "already registered" in out and out.count("\n") == 1
    # DELETE refused while registered
    out = shell.run("DELETE EXTRACT epg")
    assert not shell.ok and "UNREGISTER EXTRACT EPG DATABASE first" in out
    assert (home.dirchk / "EPG.grp").exists()
    out = shell.run("UNREGISTER EXTRACT epg DATABASE")
    assert shell.ok, out
    assert "Successfully dropped replication slot" in out
    assert _slots(pgdb) == []
    assert load_registration(home, "EPG") is None
    assert "Deleted EXTRACT EPG" in shell.run("DELETE EXTRACT epg")
    out = shell.run("UNREGISTER EXTRACT epg DATABASE")
    assert not shell.ok and "is not registered" in out


def test_register_mistakes_are_one_line(shell: Shell, pgdb: str) -> None:
    shell.run(f"DBLOGIN SOURCEDB {pgdb}")
    out = shell.run("REGISTER EXTRACT epg LOGRETENTION")
    assert not shell.ok and out.startswith("ERROR: REGISTER EXTRACT takes") and out.count("\n") == 1


def test_without_postgres_login_register_is_not_offered(shell: Shell) -> None:
    out = shell.run("REGISTER EXTRACT epg DATABASE")
    assert not shell.ok and "registration is for integrated capture" in out


def test_libpq_dsn_and_alias_login(shell: Shell, pgdb: str) -> None:
    from urllib.parse import urlsplit

    u = urlsplit(pgdb)
    dsn = f"host={u.hostname} port={u.port} dbname={u.path.lstrip('/')}"
    out = shell.run(f"DBLOGIN SOURCEDB '{dsn}', USERID postgres, PASSWORD secret")
    assert "Successfully logged into database" in out, out
    assert "secret" not in out
    shell.run("ADD CREDENTIALSTORE")
    shell.run(f"ALTER CREDENTIALSTORE ADD USER postgres@{pgdb} PASSWORD pw ALIAS src")
    out = shell.run("DBLOGIN USERIDALIAS src")
    assert "Successfully logged into database" in out, out
    assert "pw" not in out
    shell.run("REGISTER EXTRACT e2 DATABASE")
    assert shell.ok


def _identity(url: str, table: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT relreplident FROM pg_class WHERE oid = %s::regclass", (table,)
        ).fetchone()
        assert row is not None
        return str(row[0])


def test_trandata_rules(shell: Shell, pgdb: str) -> None:
    with psycopg.connect(pgdb, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA app")
        conn.execute("CREATE TABLE app.keyed (id int PRIMARY KEY, v text)")
        conn.execute("CREATE TABLE app.nokey (a int, b text)")
        conn.execute("CREATE TABLE app.byidx (a int NOT NULL, b text)")
        conn.execute("CREATE UNIQUE INDEX byidx_a ON app.byidx (a)")
        conn.execute("ALTER TABLE app.byidx REPLICA IDENTITY USING INDEX byidx_a")
    shell.run(f"DBLOGIN SOURCEDB {pgdb}")
    out = shell.run("ADD TRANDATA app.keyed")
    assert shell.ok and "REPLICA IDENTITY DEFAULT." in out
    assert _identity(pgdb, "app.keyed") == "d"
    out = shell.run("ADD TRANDATA app.nokey")
    assert "REPLICA IDENTITY FULL (the table has no primary key)." in out
    assert _identity(pgdb, "app.nokey") == "f"
    out = shell.run("INFO TRANDATA app.byidx")
    assert "USING INDEX is refused" in out
    out = shell.run("INFO TRANDATA app.keyed")
    assert "enabled" in out and "key columns id" in out
    out = shell.run("ADD TRANDATA app.keyed ALLCOLS")
    assert _identity(pgdb, "app.keyed") == "f"
    out = shell.run("DELETE TRANDATA app.keyed")
    assert _identity(pgdb, "app.keyed") == "n"
    assert "disabled" in shell.run("INFO TRANDATA app.keyed")
    out = shell.run("ADD SCHEMATRANDATA app")
    assert shell.ok and "3 table(s) of schema app" in out
    assert (
        _identity(pgdb, "app.keyed"),
        _identity(pgdb, "app.nokey"),
        _identity(pgdb, "app.byidx"),
    ) == ("d", "f", "f")
    out = shell.run("INFO TRANDATA app.*")
    assert out.count("is enabled") == 3
    out = shell.run("ADD TRANDATA app.missing")
    assert (
        not shell.ok
        and out == "ERROR: No tables found matching app.missing to add supplemental logging.\n"
    )
    out = shell.run("DELETE TRANDATA app.keyed ALLCOLS")
    assert not shell.ok and out.startswith("ERROR: DELETE TRANDATA takes")
