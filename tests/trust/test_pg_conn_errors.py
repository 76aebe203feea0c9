"""No PostgreSQL connection error carries a password (engine/targets/pgconnect.py,
params.masking.mask_conn_error), against a real throwaway cluster (tests/postgres/cluster.py).

libpq quotes what it cannot parse: a password with a space made ``missing "=" after
"s3cretword" in connection info string`` (the connection string's password, in pieces), a URL
with one ``unexpected spaces found in "my s3cretword"`` (whole). Those reached the GGSCI
screen, the Replicat's and Extract's abend lines, the report and ggserr.log, where the
``password=`` mask hides only the first word. Each password is fresh, so finding any piece
of it anywhere is a leak."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

from engine.home.layout import Home
from engine.postgres.connect import PgSource, connect
from engine.targets import TargetConnectError
from engine.targets.pgconnect import pg_connect
from engine.targets.postgres import PostgresTarget
from params.masking import MASK, mask_conn_error
from tests.postgres.cluster import Cluster
from tests.postgres.conftest import pg_cluster  # noqa: F401  (the session's cluster)
from tests.shell.conftest import Shell

ROLE = "gg_pw_test"


@pytest.fixture
def word() -> str:
    return "Pw" + secrets.token_hex(6)


@pytest.fixture
def scram_role(pg_cluster: Cluster) -> Iterator[str]:  # noqa: F811
    """A role that must log in with its password (SCRAM) on the session's trust cluster;
    its password is set per test (ALTER ROLE)."""
    hba = pg_cluster.data / "pg_hba.conf"
    before = hba.read_text()
    hba.write_text(f"host all {ROLE} 127.0.0.1/32 scram-sha-256\n" + before)
    with psycopg.connect(pg_cluster.url(), autocommit=True) as c:
        c.execute(f"DROP ROLE IF EXISTS {ROLE}")
        c.execute(f"CREATE ROLE {ROLE} LOGIN")
    pg_cluster.pg_ctl("reload")
    try:
        yield ROLE
    finally:
        hba.write_text(before)
        pg_cluster.pg_ctl("reload")
        with psycopg.connect(pg_cluster.url(), autocommit=True) as c:
            c.execute(f"DROP ROLE IF EXISTS {ROLE}")


def _set_password(cluster: Cluster, password: str) -> None:
    with psycopg.connect(cluster.url(), autocommit=True) as c:
        from psycopg import sql

        c.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(ROLE), password))


def _pieces(password: str) -> list[str]:
    return [p for p in password.split() if len(p) >= 4]


def _clean(text: str, password: str) -> None:
    for piece in (password, *_pieces(password)):
        assert piece not in text, text


def _targets(cluster: Cluster, password: str) -> list[str]:
    """Connection strings holding ``password`` that libpq cannot parse or the server refuses."""
    host = f"host=127.0.0.1 port={cluster.port} dbname=postgres user={ROLE}"
    return [
        f"{host} password={password}",  # a space: libpq quotes a piece
        f'{host} password="{password}"',  # double quotes are no libpq quoting
        f"{host} password='{password}",  # unterminated
        f"{host} password='{password}' sslmode=bogus",
        f"{host} password='{password}' hots=x",
        f"postgresql://{ROLE}:{password}@127.0.0.1:{cluster.port}/postgres",  # unencoded
        f"postgresql://{ROLE}:{quote(password)}@127.0.0.1:notaport/postgres",
        f"postgresql://{ROLE}@127.0.0.1:{cluster.port}/postgres?password={quote(password)}&x=1",
        f"postgresql://{ROLE}:{quote(password + 'x')}@127.0.0.1:{cluster.port}/postgres",
    ]


def test_no_connection_error_carries_the_password(
    pg_cluster: Cluster,  # noqa: F811
    scram_role: str,
    word: str,
) -> None:
    password = f"my {word}word"
    _set_password(pg_cluster, password)
    for target in _targets(pg_cluster, password):
        with pytest.raises(psycopg.Error) as e:
            pg_connect(target, connect_timeout=5)
        _clean(str(e.value), password)
        with pytest.raises(psycopg.Error) as e2:
            connect(PgSource(target))  # the PostgreSQL Extract's
        _clean(str(e2.value), password)
        with pytest.raises(TargetConnectError) as e3:
            PostgresTarget(target)  # the Replicat's
        _clean(str(e3.value), password)
        assert "Cannot connect to" in str(e3.value)
    # the right password still works, given apart or in the string
    good = f"host=127.0.0.1 port={pg_cluster.port} dbname=postgres user={ROLE}"
    pg_connect(good, password=password, connect_timeout=5).close()
    pg_connect(f"{good} password='{password}'", connect_timeout=5).close()


def test_a_wrong_password_apart_is_not_shown(
    pg_cluster: Cluster,  # noqa: F811
    scram_role: str,
    word: str,
) -> None:
    _set_password(pg_cluster, word)
    url = f"postgresql://{ROLE}@127.0.0.1:{pg_cluster.port}/postgres"
    with pytest.raises(TargetConnectError) as e:
        PostgresTarget(url, password=word + "x")
    assert 'password authentication failed for user "gg_pw_test"' in str(e.value)  # libpq's
    _clean(str(e.value), word + "x")


def test_dblogin_shows_and_logs_no_piece_of_it(
    tmp_path: Path,
    pg_cluster: Cluster,  # noqa: F811
    scram_role: str,
    word: str,
) -> None:
    """DBLOGIN SOURCEDB with a malformed string, typed in the shell (a command line refuses
    it): the screen line, the command log and the whole home hold no piece of it."""
    password = f"my {word}word"
    _set_password(pg_cluster, password)
    home = Home(tmp_path / "gg")
    home.create_subdirs()
    shell = Shell(home)
    host = f"host=127.0.0.1 port={pg_cluster.port} dbname=postgres user={ROLE}"
    for command in (
        f"DBLOGIN SOURCEDB '{host} password={password}'",
        f"DBLOGIN SOURCEDB 'postgresql://{ROLE}:{password}@127.0.0.1:{pg_cluster.port}/postgres'",
    ):
        out = shell.run(command)
        assert out.startswith("ERROR: Unable to log in: Cannot log in to "), out
        assert out.count("\n") == 1, out
        _clean(out, password)
    shell.answers.append(password)  # asked for, never typed on a line
    out = shell.run(f"DBLOGIN USERID {ROLE}, SOURCEDB '{host}'")
    assert out.startswith("Successfully logged into database"), out
    every = "".join(p.read_text(errors="replace") for p in home.root.rglob("*") if p.is_file())
    _clean(every, password)


def test_dblogin_of_a_url_without_a_password_asks_for_it(
    tmp_path: Path,
    pg_cluster: Cluster,  # noqa: F811
    scram_role: str,
    word: str,
) -> None:
    """DBLOGIN SOURCEDB postgresql://user@host/db, the server asking for a password: GGSCI
    asks for it (Password:, not echoed), as psql does; none given, the line is libpq's own
    and nothing else; a trusting server (the session's cluster's own role) asks nothing."""
    _set_password(pg_cluster, word)
    home = Home(tmp_path / "gg")
    home.create_subdirs()
    shell = Shell(home)
    url = f"postgresql://{ROLE}@127.0.0.1:{pg_cluster.port}/postgres"
    out = shell.run(f"DBLOGIN SOURCEDB {url}")  # no answer
    assert shell.prompts == ["Password: "], (shell.prompts, out)
    assert out.startswith("ERROR: Unable to log in: ") and "no password supplied" in out, out
    shell.answers.append(word + "x")
    out = shell.run(f"DBLOGIN SOURCEDB {url}")
    assert out.startswith("ERROR: Unable to log in: ") and "password authentication" in out
    _clean(out, word)
    shell.answers.append(word)
    out = shell.run(f"DBLOGIN SOURCEDB {url}")
    assert out.startswith("Successfully logged into database"), out
    assert shell.session.login is not None and shell.session.login.password == word
    asked = len(shell.prompts)
    out = shell.run(f"DBLOGIN SOURCEDB {pg_cluster.url()}")  # trust: no question
    assert out.startswith("Successfully logged into database") and len(shell.prompts) == asked
    every = "".join(p.read_text(errors="replace") for p in home.root.rglob("*") if p.is_file())
    _clean(every, word)


def test_mask_conn_error_masks_short_pieces_only_where_quoted() -> None:
    text = 'missing "=" after "ab" in connection info string; ab is here'
    got = mask_conn_error(text, "host=h password=xyz ab")
    assert got == f'missing "=" after "{MASK}" in connection info string; ab is here'
