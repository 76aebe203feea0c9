"""No secret on a command line (``/proc/PID/cmdline`` is readable by every local user).

``ggsci run`` with a password in a command, ``ggsci db attach --archive``, ``db logs``,
``db dump``, ``db create --archive-dest`` and ``db archive-dest`` with a location holding its
secret are refused in one line that says what to do instead, before anything is done; the
secret comes from the credential store (the key alone, ``s3://KEY@...``), standard input
(``--password-stdin``; ``ggsci run``'s Password: question), or a prompt that does not echo
on a terminal (ggsci.secretin)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import secrets
import select
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import storage
from engine.home.credstore import CredentialStore
from engine.home.layout import Home
from ggsci.cli_db import app
from tests.harness.secretargs import key_alone
from tests.redo.corpus import LOG15, LOG16, need

ROOT = Path(__file__).resolve().parents[2]
FMT = "arch%t_%s_%r.dbf"
runner = CliRunner()


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    h = Home(tmp_path / "gghome")
    h.create_subdirs()
    yield h


@pytest.fixture
def secret() -> str:
    return "Sk" + secrets.token_hex(12)


def _ggsci(home: Home, *args: str, stdin: str = "") -> tuple[int, str]:
    """A real ``ggsci`` process: status and all it wrote."""
    r = subprocess.run(
        [sys.executable, "-c", "from ggsci.cli import main; main()", "--home", str(home.root),
         *args],
        capture_output=True, input=stdin, text=True, timeout=60, check=False, cwd=home.root,
        env={**os.environ, "GGHOME": "", "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    return r.returncode, r.stdout + r.stderr


def _one_line(out: str) -> str:
    lines = out.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out, out
    return lines[0]


def _db(home: Home, *args: str, stdin: str | None = None) -> tuple[int, str]:
    r = runner.invoke(app, [*args, "--home", str(home.root)], input=stdin)
    return r.exit_code, r.output


@pytest.mark.parametrize(
    "command",
    [
        "ALTER CREDENTIALSTORE ADD USER gg PASSWORD {s} ALIAS a1",
        "DBLOGIN USERID gg, PASSWORD {s}",
        "DBLOGIN USERID gg/{s}@src",
        "DBLOGIN SOURCEDB postgresql://gg:{s}@127.0.0.1:1/t",
        "DBLOGIN SOURCEDB host=127.0.0.1 password={s} dbname=t",
        "ENCRYPT PASSWORD {s} AES128 ENCRYPTKEY DEFAULT",
    ],
)
def test_ggsci_run_refuses_a_password_in_its_arguments(
    home: Home, secret: str, command: str
) -> None:
    code, out = _ggsci(home, "run", "ADD CREDENTIALSTORE", command.format(s=secret))
    line = _one_line(out)
    assert code == 1 and secret not in out, out
    assert line.startswith("ERROR: ggsci run: command 2 (") and "Nothing was run." in line, line
    assert "Password: prompt" in line and "USERIDALIAS" in line
    assert not CredentialStore(home).exists()  # command 1 did not run either
    assert not home.ggserr_log.exists() or secret not in home.ggserr_log.read_text()


def test_ggsci_run_reads_the_password_from_standard_input(home: Home, secret: str) -> None:
    code, out = _ggsci(
        home, "run", "ADD CREDENTIALSTORE", "ALTER CREDENTIALSTORE ADD USER gg ALIAS a1",
        stdin=secret + "\n",
    )  # fmt: skip
    assert code == 0 and "altered" in out and secret not in out, out
    assert CredentialStore(home).lookup("a1").password == secret


def _read_until(fd: int, want: bytes, deadline: float) -> bytes:
    got = b""
    while want not in got and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            got += chunk
    return got


def test_on_a_terminal_the_password_is_asked_without_echo(home: Home, secret: str) -> None:
    """``ggsci run "ALTER CREDENTIALSTORE ADD USER gg ALIAS a1"`` on a terminal (a pty that
    is the child's controlling terminal): the prompt does not echo what is typed."""
    CredentialStore(home).create()
    master, slave = pty.openpty()

    def controlling_tty() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        [sys.executable, "-c", "from ggsci.cli import main; main()", "--home", str(home.root),
         "run", "ALTER CREDENTIALSTORE ADD USER gg ALIAS a1"],
        stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
        preexec_fn=controlling_tty, cwd=home.root,
        env={**os.environ, "GGHOME": "", "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    os.close(slave)
    try:
        deadline = time.monotonic() + 60
        seen = _read_until(master, b"Password:", deadline)
        assert b"Password:" in seen, seen
        os.write(master, secret.encode() + b"\n")
        seen += _read_until(master, b"altered", deadline)
        assert proc.wait(timeout=30) == 0, seen
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert b"altered" in seen and secret.encode() not in seen, seen
    assert CredentialStore(home).lookup("a1").password == secret


def _location(s3_server: str, secret: str, name: str) -> str:
    base = storage.join(s3_server, name)
    return base.replace("s3://test:test@", f"s3://AKIAGGTEST:{secret}@")


@pytest.mark.parametrize("slash", [False, True])
def test_db_commands_refuse_a_location_holding_its_secret(
    home: Home, secret: str, slash: bool
) -> None:
    """Before anything is done: no database, no store, nothing written."""
    given = f"{secret[:6]}/{secret[6:]}" if slash else secret
    location = f"s3://AKIAGGTEST:{given}@bucket/arch?region=us-east-1"
    dic = str(Path(__file__))  # never read: refused before
    for args, option in (
        (("attach", "ora", "--archive", location, "--dictionary", dic), "--archive"),
        (("logs", location, "--format", FMT), "LOCATION"),
        (("dump", storage.join(location, LOG15.name)), "LOG"),
        (("create", "src", "--archive-dest", location), "--archive-dest"),
        (("logs", location + "&secret_key=" + secret), "LOCATION"),
    ):
        code, out = _db(home, *args)
        line = _one_line(out)
        assert code == 1 and secret[6:] not in out, out
        assert line.startswith(f"ERROR: {option} s3://AKIAGGTEST:********@bucket/"), line
        assert "/proc/PID/cmdline" in line and "--password-stdin" in line, line
        assert "ALTER CREDENTIALSTORE ADD USER KEY ALIAS" in line, line
    assert not CredentialStore(home).exists()
    assert not home.dirdb.exists() or list(home.dirdb.iterdir()) == []
    code, out = _db(home, "create", "src")
    assert code == 0, out
    code, out = _db(home, "archive-dest", "src", location)
    assert code == 1 and _one_line(out).startswith("ERROR: DEST s3://AKIAGGTEST:********@")
    assert (
        not (home.dirdb / "SRC" / "archive.json").exists()
        or secret not in (home.dirdb / "SRC" / "archive.json").read_text()
    )


def test_a_key_alone_takes_its_secret_from_standard_input_or_the_store(
    home: Home, s3_server: str, secret: str
) -> None:
    base = _location(s3_server, secret, "cmdline-stdin")
    for p in (LOG15, LOG16):
        storage.put_file(need(p), storage.join(base, p.name))
    bare, _ = key_alone(base)
    # standard input
    code, out = _db(home, "logs", bare, "--format", FMT, "--password-stdin", stdin=secret + "\n")
    assert code == 0 and out.count("arch1_1") == 2 and secret not in out, out
    code, out = _db(home, "dump", storage.join(bare, LOG16.name), "--password-stdin",
                    stdin=secret + "\n")  # fmt: skip
    assert code == 0 and "END OF REDO DUMP: 7 record(s)" in out, out
    code, out = _db(home, "logs", bare, "--password-stdin", stdin="")
    assert (
        code == 1 and _one_line(out) == "ERROR: --password-stdin: standard input holds no secret."
    )
    # an embedded database's destination given so: the store keeps it, archive.json not
    code, out = _db(home, "create", "src", "--archive-dest", storage.join(bare, "dest"),
                    "--password-stdin", stdin=secret + "\n")  # fmt: skip
    assert code == 0, out
    store = CredentialStore(home)
    assert store.lookup("ARCHIVEDEST_SRC", "GGSTORAGE").password == secret
    assert secret not in (home.dirdb / "SRC" / "archive.json").read_text()
    # the store keeps a secret of that key: a key alone takes it (no stdin, no terminal)
    code, out = _db(home, "logs", bare, "--format", FMT)
    assert code == 0 and out.count("arch1_1") == 2, out
    code, out = _db(home, "archive-dest", "src", storage.join(bare, "dest2"))
    assert code == 0 and store.lookup("ARCHIVEDEST_SRC", "GGSTORAGE").password == secret, out
    dest = json.loads((home.dirdb / "SRC" / "archive.json").read_text())
    assert secret not in json.dumps(dest)


def test_password_stdin_needs_a_key(home: Home) -> None:
    code, out = _db(home, "logs", "s3://bucket/arch", "--password-stdin", stdin="x\n")
    assert code == 1 and "names no key (s3://KEY@...)" in _one_line(out)


def test_spark_settings_naming_a_secret_stay_off_the_jvm_command_line() -> None:
    """PySpark launches the driver's JVM with every setting as ``--conf k=v`` on
    spark-submit's command line (pyspark/java_gateway.py): a SPARKCONF secret was in the JVM's
    /proc/PID/cmdline for its whole life. Those settings are now left to the builder, which
    sets them over the gateway (engine/cluster/spark.py, launch_conf)."""
    from engine.cluster.spark import launch_conf

    conf = {
        "spark.authenticate": "true",
        "spark.authenticate.secret": "s3cret1",
        "spark.hadoop.fs.s3a.secret.key": "s3cret2",
        "spark.hadoop.fs.s3a.access.key": "AKIA",
        "spark.executorEnv.AWS_SECRET_ACCESS_KEY": "s3cret3",
        "spark.driver.memory": "1g",
    }
    assert launch_conf("local[2]", conf) == {
        "spark.master": "local[2]",
        "spark.authenticate": "true",
        "spark.driver.memory": "1g",
    }
