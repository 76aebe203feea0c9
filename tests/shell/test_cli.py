"""The ``ggsci`` command: shell without a terminal, ``run``, ``obey`` and ``--syntax-only``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.home.layout import Home
from ggsci.cli import build_app
from ggsci.commands import models as M
from ggsci.dispatch import table

runner = CliRunner()


def test_stdin_script_runs_and_echoes_prompts(home: Home) -> None:
    script = "ADD EXTRACT ext1, TRANLOG, BEGIN NOW\nINFO ALL\nEXIT\nINFO ALL\n"
    result = runner.invoke(build_app(), ["--home", str(home.root)], input=script)
    assert result.exit_code == 0, result.output
    assert "1> ADD EXTRACT ext1, TRANLOG, BEGIN NOW\nEXTRACT added." in result.output
    assert result.output.count("Program     Status") == 1  # nothing after EXIT


def test_failed_command_counts_in_the_exit_status_with_count_failures(home: Home) -> None:
    script = "INFO EXTRACT x\nINFO ALL\nINFO REPLICAT y\n"
    plain = runner.invoke(build_app(), ["--home", str(home.root)], input=script)
    assert plain.exit_code == 0  # GGSCI exits 0 at end of input whatever failed
    result = runner.invoke(
        build_app(), ["--home", str(home.root), "--count-failures"], input=script
    )
    assert result.exit_code == 2
    assert "ERROR: EXTRACT X does not exist." in result.output
    assert "MANAGER     STOPPED" in result.output  # the session went on


def test_run_commands_from_arguments(home: Home) -> None:
    app = build_app()
    result = runner.invoke(
        app,
        [
            "--home",
            str(home.root),
            "run",
            "ADD EXTRACT e1, TRANLOG, BEGIN NOW",
            "STATUS EXTRACT e1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output == "EXTRACT added.\n\nEXTRACT E1: STOPPED\n\n"
    result = runner.invoke(app, ["run", "--home", str(home.root), "INFO ALL"])
    assert "EXTRACT     STOPPED     E1" in result.output


def test_obey_file(home: Home, tmp_path: Path) -> None:
    script = tmp_path / "setup.oby"
    script.write_text(
        "-- set up\nADD EXTRACT e1, TRANLOG, BEGIN NOW\nADD EXTTRAIL ./dirdat/lt, EXTRACT e1\n"
    )
    result = runner.invoke(build_app(), ["--home", str(home.root), "obey", str(script)])
    assert result.exit_code == 0, result.output
    assert "EXTTRAIL added." in result.output and "End of obey file" in result.output


def test_obey_syntax_only_reports_file_line_col(tmp_path: Path) -> None:
    script = tmp_path / "bad.oby"
    script.write_text("INFO ALL\n\n  ADD EXTRAKT e1\nSTART EXTRACT e1 ATCSN x\n")
    result = runner.invoke(build_app(), ["obey", "--syntax-only", str(script)])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"{script}:3:7: Expected EXTRACT | REPLICAT | EXTTRAIL | RMTTRAIL | CHECKPOINTTABLE | "
        "HEARTBEATTABLE | CREDENTIALSTORE, found 'EXTRAKT'.",
        f"{script}:4:24: Expected number, found 'x'.",
    ]
    good = tmp_path / "good.oby"
    good.write_text("INFO ALL\n")
    assert runner.invoke(build_app(), ["obey", "--syntax-only", str(good)]).exit_code == 0


def test_no_traceback_for_unexpected_failures(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(session: object, command: object) -> None:
        raise KeyError("surprise")  # a failure no handler foresaw

    monkeypatch.setitem(table.HANDLERS, M.InfoAll, broken)
    result = runner.invoke(build_app(), ["--home", str(home.root), "run", "INFO ALL"])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert result.output.startswith("ERROR: KeyError: 'surprise'")


def test_shell_modules_do_not_import_pyspark() -> None:
    code = (
        "import sys, ggsci.cli, ggsci.cli_shell, ggsci.launch, ggsci.runner, ggsci.shell.session, "
        "ggsci.shell.completion, ggsci.dispatch.table, engine.runtime.control\n"
        "assert 'pyspark' not in sys.modules, 'pyspark imported'\n"
        "assert 'py4j' not in sys.modules, 'py4j imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_installed_entry_point_fast_path(home: Home, tmp_path: Path) -> None:
    """``python -m ggsci`` without typer for the plain forms: run, obey --syntax-only, stdin."""
    base = [sys.executable, "-m", "ggsci", "--home", str(home.root)]
    done = subprocess.run(
        [*base, "run", "ADD EXTRACT e1, TRANLOG, BEGIN NOW"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "EXTRACT added.\n\n")
    bad = tmp_path / "bad.oby"
    bad.write_text("INFO EXTRACT\n")
    done = subprocess.run(
        [*base, "obey", "--syntax-only", str(bad)], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (
        1,
        f"{bad}:1:13: Expected group name, the command ends.\n",
    )
    done = subprocess.run(
        base, input="STATUS EXTRACT e1\n", capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "EXTRACT E1: STOPPED" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "ggsci", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and "params" in done.stdout and "obey" in done.stdout


def test_fast_path_leaves_everything_else_to_typer() -> None:
    from ggsci.launch import fast_main, is_shell_invocation

    assert fast_main(["--help"]) is None
    assert fast_main(["params", "check", "x.prm"]) is None
    assert fast_main(["run", "--home", "x", "INFO ALL"]) is None
    assert is_shell_invocation(["--home", "x", "run", "INFO ALL"])
    assert not is_shell_invocation(["logdump", "x"])


def test_a_reader_that_goes_away_gets_no_traceback(home: Home) -> None:
    """``ggsci run ... | head``: when the reader closes the pipe, ggsci stops quietly."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ggsci", "--home", str(home.root), "run", *["HELP"] * 200],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == b"GGSCI commands:\n"
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 1
    assert err == "", err
