"""A database made before the embedded database wrote Oracle's format: one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.embedded.database import Database
from engine.embedded.errors import DatabaseError
from engine.home.layout import Home
from ggsci.cli import build_app
from ggsci.cli_db import app
from tests.shell.conftest import Shell

OLD_HEADER = b"GGREDO01" + bytes(504)


def _db(home: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, [*args, "--home", str(home)])
    return r.exit_code, r.output  # block 0 of a log of the format before Oracle's


def _made_before(home: Path) -> Path:
    assert _db(home, "create", "OLD")[0] == 0
    assert _db(home, "sql", "OLD", "CREATE TABLE t (id NUMBER PRIMARY KEY)")[0] == 0
    root = home / "dirdb" / "OLD"
    for log in (root / "redo").rglob("*.log"):
        log.write_bytes(OLD_HEADER)
        log.with_suffix(".side").unlink()
    return root


def test_opening_it_says_to_recreate_it(tmp_path: Path) -> None:
    root = _made_before(tmp_path)
    with pytest.raises(DatabaseError) as caught:
        Database(root)
    assert caught.value.code == "GGS-SRC-0120"
    assert "recreate the database (ggsci db drop NAME, then ggsci db create NAME)" in str(
        caught.value
    )
    with pytest.raises(DatabaseError):  # the lock was released: refused again, not stuck
        Database(root, lock_wait=0.0)


@pytest.mark.parametrize(
    "command", [["sql", "OLD", "SELECT * FROM t"], ["dump", "OLD"], ["logs", "OLD"]]
)
def test_every_command_says_it_in_one_line(tmp_path: Path, command: list[str]) -> None:
    _made_before(tmp_path)
    code, out = _db(tmp_path, *command)
    assert code == 1
    assert out.count("\n") == 1 and out.startswith("GGS-SRC-0120: ")
    assert "made before the embedded database wrote Oracle's redo format" in out
    assert "Traceback" not in out


def test_an_extract_of_it_says_it_in_one_line(tmp_path: Path) -> None:
    """Before: the Extract's start (``extract paramfile`` in the foreground, and START
    EXTRACT's report) ended in a RedoFormatError traceback from reading the logs' headers."""
    _made_before(tmp_path)
    prm = tmp_path / "dirprm" / "e1.prm"
    prm.parent.mkdir()
    prm.write_text("EXTRACT e1\nSOURCEDB OLD\nEXTTRAIL ./dirdat/aa\nTABLE GGUSER.*;\n")
    shell = Shell(Home(tmp_path))
    shell.run("ADD EXTRACT e1, TRANLOG, BEGIN NOW")
    shell.run("ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")
    args = ["extract", "paramfile", str(prm), "--stop-at-eof", "--home", str(tmp_path)]
    r = CliRunner().invoke(build_app(), args)
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    (line,) = r.output.strip().splitlines()
    assert "ERROR   GGS-SRC-0120" in line and "recreate the database" in line


def test_a_dump_of_one_of_its_logs_by_path_says_it(tmp_path: Path) -> None:
    """Before: ``GGS-REDO-0002: not an Oracle redo log: no 0x7A7B7C7D magic ...``."""
    root = _made_before(tmp_path)
    log = next((root / "redo").rglob("*.log"))
    code, out = _db(tmp_path, "dump", str(log))
    assert code == 1 and out.count("\n") == 1 and out.startswith(f"GGS-SRC-0120: {log}: ")
    assert "recreate the database" in out
