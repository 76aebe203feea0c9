"""A database made before the embedded database wrote Oracle's format: one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.embedded.database import Database
from engine.embedded.errors import DatabaseError
from ggsci.cli_db import app

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
