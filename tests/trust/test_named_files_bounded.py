"""A file a user names to ``ggsci db`` (a log to dump, hex records, dump text, a dictionary,
a SQL script) may be a FIFO, a device, a directory or a sparse file of gigabytes: each is one
line naming it, never a wait or a process out of memory (engine/home/userfile.py). A FIFO in
an archive location is not a log (it is never opened). Before: ``open()`` of a FIFO waited
for a writer forever, ``read_bytes()`` of ``/dev/zero`` or a 10 GB sparse file filled memory.

The commands run in a child process with a deadline, so a hang fails the test instead of
stopping the run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.redo.corpus import LOG15, need

#: Runs each command line of argv[1] (JSON) through ggsci db's app; prints [[code, output]].
_RUNNER = """
import json, sys
from typer.testing import CliRunner
from ggsci.cli_db import app
out = []
for args in json.loads(sys.argv[1]):
    r = CliRunner().invoke(app, args)
    out.append([r.exit_code, r.output])
print(json.dumps(out))
"""


def _run(*commands: list[str]) -> list[tuple[int, str]]:
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, json.dumps(commands)],
        capture_output=True,
        text=True,
        timeout=120,  # a FIFO waited on: TimeoutExpired, the test fails
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    return [(c, o) for c, o in json.loads(done.stdout)]


def _one_line(code: int, out: str, *said: str) -> None:
    lines = out.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "Traceback" not in out, out
    assert all(s in lines[0] for s in said), out


def test_named_files_that_are_not_regular_files_are_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sparse = tmp_path / "sparse.dbf"
    with sparse.open("wb") as f:
        f.truncate(5 << 30)  # over db dump's 4 GiB: no disk used
    home = tmp_path / "home"
    home.mkdir()
    h = ["--home", str(home)]
    sql = "CREATE TABLE hr.t (id NUMBER PRIMARY KEY)"
    results = _run(
        ["dump", str(fifo), *h],
        ["dump", "/dev/zero", *h],
        ["dump", str(tmp_path) + "/", *h],
        ["dump", str(sparse), *h],
        ["dump", "--hex", str(fifo), *h],
        ["dump", str(need(LOG15)), "--json", "--dictionary", str(fifo), *h],
        ["attach", "A", "--archive", str(tmp_path), "--dictionary", str(fifo), *h],
        ["attach", "A", "--archive", str(tmp_path), "--dictionary", "/dev/zero", *h],
        ["create", "SRC", *h],
        ["sql", "SRC", sql, *h],
        ["run", "SRC", str(fifo), *h],
        [
            "import-dump",
            "SRC",
            str(fifo),
            "--dictionary",
            str(home / "dirdb/SRC/dictionary.json"),
            *h,
        ],
        ["import-dump", "SRC", "/dev/null", "--dictionary", str(fifo), *h],
    )
    assert [c for c, _ in results[8:10]] == [0, 0], results[8:10]
    checks = [
        (results[0], "GGS-SRC-0100", f"{fifo}: is a FIFO, not a regular file"),
        (results[1], "GGS-SRC-0100", "/dev/zero: is a character device, not a regular file"),
        (results[2], "GGS-SRC-0100", "is a directory, not a regular file"),
        (results[3], "GGS-SRC-0100", f"{sparse}: is larger than 4294967296 bytes"),
        (results[4], "GGS-SRC-0100", f"{fifo}: is a FIFO"),
        (results[5], "GGS-REDO-0010", f"{fifo}: is a FIFO"),
        (results[6], "GGS-REDO-0010", f"dictionary {fifo}: is a FIFO"),
        (results[7], "GGS-REDO-0010", "dictionary /dev/zero: is a character device"),
        (results[10], "GGS-SRC-0107", f"cannot read {fifo}: is a FIFO"),
        (results[11], "GGS-SRC-0107", f"cannot read {fifo}: is a FIFO"),
        (results[12], "GGS-SRC-0500", f"{fifo}: cannot read: is a FIFO"),
    ]
    for (code, out), prefix, said in checks:
        _one_line(code, out, said)
        assert out.startswith(prefix), out


def test_a_fifo_in_an_archive_location_is_not_a_log(tmp_path: Path) -> None:
    """``db logs`` of a location, an attached database's listing and the Extract's catalog
    (engine.storage.list_files) open every file the format names: a FIFO named like a log
    (another user's, in a shared archive directory) made them wait forever."""
    arch = tmp_path / "arch"
    arch.mkdir()
    shutil.copy(need(LOG15), arch / LOG15.name)
    os.mkfifo(arch / "arch1_16_1224959854.dbf")
    (code, out), (code2, out2) = _run(
        ["logs", str(arch), "--format", "arch%t_%s_%r.dbf"], ["logs", str(arch)]
    )
    for c, o in ((code, out), (code2, out2)):
        assert c == 0, o
        rows = o.strip().splitlines()[1:]
        assert len(rows) == 1 and rows[0].endswith(LOG15.name), o


def test_import_dump_of_a_file_without_newlines_is_one_line(tmp_path: Path) -> None:
    """A dump text file is read a line at a time; a 3 GB sparse file has no newline: its
    first "line" was read whole into memory. Now it is refused at line 1."""
    big = tmp_path / "big.txt"
    with big.open("wb") as f:
        f.truncate(3 << 30)
    home = tmp_path / "home"
    home.mkdir()
    h = ["--home", str(home)]
    dic = str(home / "dirdb/SRC/dictionary.json")
    created, (code, out) = _run(
        ["create", "SRC", *h], ["import-dump", "SRC", str(big), "--dictionary", dic, *h]
    )
    assert created[0] == 0, created
    _one_line(code, out, f"{big}:1: a line longer than 1048576 characters")
    assert out.startswith("GGS-SRC-0107"), out
