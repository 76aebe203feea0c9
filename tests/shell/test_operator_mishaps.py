"""What an operator may name by mistake gets one clear line, never a traceback or a hang
(issue 29): file names longer than the system allows, special files (``/dev/zero``, a FIFO
nobody writes, a directory), and a ``--home`` that is missing or a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.home.layout import Home, HomeError, named_home
from params import textfile

from .conftest import Shell

ROOT = Path(__file__).resolve().parents[2]
LONG = "n" * 300  # one name component over NAME_MAX (255)


def _ggsci(
    cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str = ""
) -> tuple[int, str]:
    """A real ``ggsci`` process (the installed entry point's code): status and all it wrote."""
    result = subprocess.run(
        [sys.executable, "-c", "from ggsci.cli import main; main()", *args],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "GGHOME": "", "PYTHONPATH": str(ROOT), **(env or {})},
        input=stdin,
        timeout=60,
        check=False,
        text=True,
    )
    return result.returncode, result.stdout + result.stderr


def _one_clear_line(text: str) -> None:
    assert "Traceback" not in text and "OSError" not in text, text
    assert "Errno" not in text, text


@pytest.mark.parametrize(
    "args",
    [
        ("params", "check", LONG + ".prm"),
        ("params", "show", LONG + ".prm"),
        ("obey", LONG + ".oby"),
        ("obey", "--syntax-only", LONG + ".oby"),
        ("run", f"OBEY {LONG}.oby"),
        ("run", f"OBEY {'/'.join([LONG] * 13)}"),  # over PATH_MAX (4096) as well
        (  # the password on standard input (a command line may not hold one)
            "run",
            "ADD CREDENTIALSTORE",
            f"ALTER CREDENTIALSTORE ADD USER u@{LONG} ALIAS a",
            "DBLOGIN USERIDALIAS a",
        ),
        ("run", f"DBLOGIN USERID u@{LONG}"),
        ("run", f"DBLOGIN SOURCEDB {LONG}"),
        ("run", f"DBLOGIN SOURCEDB {LONG}.db"),
    ],
)
def test_a_name_longer_than_the_system_allows_is_one_line(
    home: Home, args: tuple[str, ...]
) -> None:
    rc, out = _ggsci(home.root, "--home", str(home.root), *args, stdin="p\n")
    _one_clear_line(out)
    assert rc != 0
    assert "File name too long" in out or "not found" in out or "does not exist" in out, out


@pytest.mark.parametrize("how", ["--home", "GGHOME"])
@pytest.mark.parametrize("what", ["missing", "file", "long"])
@pytest.mark.parametrize(
    "args", [("run", "INFO ALL"), ("params", "check", "x.prm"), ("db", "list"), ()]
)
def test_a_home_that_is_no_directory_is_refused(
    tmp_path: Path, how: str, what: str, args: tuple[str, ...]
) -> None:
    target = {"missing": tmp_path / "typo", "file": tmp_path / "f", "long": tmp_path / LONG}[what]
    (tmp_path / "f").write_text("not a home\n")
    if how == "--home":
        rc, out = _ggsci(tmp_path, "--home", str(target), *args)
    else:
        rc, out = _ggsci(tmp_path, *args, env={"GGHOME": str(target)})
    _one_clear_line(out)
    assert rc == 1
    assert out.startswith(f"ERROR: Home {target}"), out
    reason = {"missing": "does not exist", "file": "is not a directory", "long": "too long"}
    assert reason[what] in out
    assert not (tmp_path / "typo").exists()  # nothing was made in its name


def test_named_home_accepts_a_directory_only(tmp_path: Path) -> None:
    assert named_home(tmp_path).root == tmp_path.resolve()
    for bad in (tmp_path / "none", tmp_path / LONG):
        with pytest.raises(HomeError):
            named_home(bad)


@pytest.mark.parametrize(
    "args",
    [
        ("params", "check", "/dev/zero"),
        ("params", "show", "/dev/zero"),
        ("obey", "--syntax-only", "/dev/zero"),
        ("obey", "/dev/zero"),
        ("run", "OBEY /dev/zero"),
    ],
)
def test_an_endless_file_is_refused_after_a_bounded_read(home: Home, args: tuple[str, ...]) -> None:
    rc, out = _ggsci(home.root, "--home", str(home.root), *args)
    _one_clear_line(out)
    assert rc == 1
    assert f"larger than {textfile.MAX_TEXT_FILE_BYTES} bytes" in out


def test_a_parameter_file_that_obeys_a_huge_file_is_one_diagnostic(home: Home) -> None:
    big = home.dirprm / "big.inc"
    with big.open("wb") as f:
        f.truncate(textfile.MAX_TEXT_FILE_BYTES + 1)  # sparse: costs no disk
    prm = home.dirprm / "e.prm"
    prm.write_text(f"EXTRACT e\nOBEY {big}\nEXTTRAIL ./dirdat/aa\nTABLE hr.*;\n")
    rc, out = _ggsci(home.root, "--home", str(home.root), "params", "check", str(prm))
    _one_clear_line(out)
    assert rc == 1 and "larger than" in out and "e.prm:2:" in out


def test_a_fifo_nobody_writes_reads_as_empty_and_a_directory_is_refused(
    home: Home, tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for args in (("params", "check", str(fifo)), ("obey", "--syntax-only", str(fifo))):
        rc, out = _ggsci(home.root, *args)  # returns: the test's timeout is the proof
        _one_clear_line(out)
        assert rc == 0, out
    rc, out = _ggsci(home.root, "--home", str(home.root), "obey", str(tmp_path))
    _one_clear_line(out)
    assert rc == 1 and "Is a directory" in out


def test_read_text_caps_what_it_reads(tmp_path: Path) -> None:
    path = tmp_path / "big.prm"
    path.write_bytes(b"-- x\n" * 10)
    assert textfile.read_text(path, limit=50) == "-- x\n" * 10
    with pytest.raises(OSError, match="larger than 49 bytes"):
        textfile.read_text(path, limit=49)
    assert not textfile.is_file(tmp_path / LONG) and not textfile.exists(tmp_path / LONG)


def test_shell_obey_and_dblogin_of_a_long_name_in_one_session(home: Home) -> None:
    shell = Shell(home)
    for line in (f"OBEY {LONG}", f"DBLOGIN USERID u@{LONG} PASSWORD p", f"DBLOGIN SOURCEDB {LONG}"):
        out = shell.run(line)
        assert not shell.ok
        _one_clear_line(out)
        assert out.startswith("ERROR: ") and out.count("\n") == 1, out
