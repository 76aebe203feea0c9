"""The operator's day (issue 15): the global --home, exit statuses, and the GGSCI commands
that used to answer 'Invalid command'."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.home import Home
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
            assert f"{verb} {{EXTRACT | REPLICAT | ER}}" in shell.run(f"HELP {verb} {kind}"), (
                verb,
                kind,
            )
