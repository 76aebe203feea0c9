"""A throwaway PostgreSQL cluster from the system binaries, on a Unix socket in a temporary
directory, for the tests marked ``postgres``. ``initdb`` refuses to run as root: as root the
cluster belongs to the ``postgres`` OS user (commands run through ``runuser``)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_BIN = Path(os.environ.get("GGSCI_PG_BIN", "/usr/lib/postgresql/15/bin"))


def _as_owner(owner: str | None, *argv: str) -> list[str]:
    return ["runuser", "-u", owner, "--", *argv] if owner else list(argv)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """``postgresql://`` URL of a fresh cluster (database ``postgres``, trust auth)."""
    if not (PG_BIN / "initdb").exists() or not (PG_BIN / "pg_ctl").exists():
        pytest.skip(f"PostgreSQL server binaries not found in {PG_BIN} (.ci/run installs them)")
    owner: str | None = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' OS user to own the cluster")
        owner = "postgres"
    base = Path(tempfile.mkdtemp(prefix="ggsci-pg-"))
    if owner:
        entry = pwd.getpwnam(owner)
        os.chown(base, entry.pw_uid, entry.pw_gid)
    data, log = base / "data", base / "log"
    port = str(40000 + os.getpid() % 20000)
    subprocess.run(
        _as_owner(owner, str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U",
                  "postgres", "--no-sync", "-E", "UTF8"),
        check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run(
        _as_owner(owner, str(PG_BIN / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-o",
                  f"-k {base} -p {port} -c listen_addresses='' -c fsync=off", "start"),
        check=True, capture_output=True,
    )  # fmt: skip
    try:
        yield f"postgresql:///postgres?host={base}&port={port}&user=postgres"
    finally:
        subprocess.run(
            _as_owner(owner, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"),
            check=False, capture_output=True,
        )  # fmt: skip
        shutil.rmtree(base, ignore_errors=True)
