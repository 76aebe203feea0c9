"""A throwaway PostgreSQL 15 cluster for logical decoding: ``initdb`` with ``wal_level=logical``,
listening on a free loopback TCP port (and a Unix socket in its own directory). Used by the
PostgreSQL-source tests (one cluster per test session) and by ``benchmarks/pg_source.py``.

``initdb`` refuses to run as root: as root the cluster belongs to the ``postgres`` OS user
(commands run through ``runuser``), as the Replicat tests' cluster does."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

PG_BIN = Path(os.environ.get("GGSCI_PG_BIN", "/usr/lib/postgresql/15/bin"))


class ClusterUnavailable(RuntimeError):
    """No server binaries, or no OS user to own a cluster: the caller skips."""


def _as_owner(owner: str | None, *argv: str) -> list[str]:
    return ["runuser", "-u", owner, "--", *argv] if owner else list(argv)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    base: Path
    port: int
    owner: str | None

    @property
    def data(self) -> Path:
        return self.base / "data"

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def pg_ctl(self, *args: str) -> None:
        subprocess.run(
            _as_owner(self.owner, str(PG_BIN / "pg_ctl"), "-D", str(self.data), *args),
            check=True,
            capture_output=True,
            timeout=120,
        )

    def stop(self) -> None:
        subprocess.run(
            _as_owner(
                self.owner, str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"
            ),
            check=False,
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(self.base, ignore_errors=True)


def start_cluster(settings: dict[str, str] | None = None, *, wal_segsize_mb: int = 16) -> Cluster:
    """initdb + start; ``settings`` are extra ``-c name=value`` server settings."""
    if not (PG_BIN / "initdb").exists() or not (PG_BIN / "pg_ctl").exists():
        raise ClusterUnavailable(f"PostgreSQL server binaries not found in {PG_BIN}")
    owner: str | None = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            raise ClusterUnavailable("running as root and no 'postgres' OS user") from None
        owner = "postgres"
    base = Path(tempfile.mkdtemp(prefix="ggsci-pgsrc-"))
    if owner:
        entry = pwd.getpwnam(owner)
        os.chown(base, entry.pw_uid, entry.pw_gid)
    data, log = base / "data", base / "log"
    subprocess.run(
        _as_owner(
            owner,
            str(PG_BIN / "initdb"),
            "-D",
            str(data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
            f"--wal-segsize={wal_segsize_mb}",
        ),
        check=True,
        capture_output=True,
        timeout=300,
    )
    opts = {
        "wal_level": "logical",
        "max_replication_slots": "20",
        "max_wal_senders": "20",
        "fsync": "off",
        "listen_addresses": "'127.0.0.1'",
        "unix_socket_directories": f"'{base}'",
        "shared_buffers": "64MB",
        **(settings or {}),
    }
    last: subprocess.CalledProcessError | None = None
    for _ in range(5):  # the free port may be taken between the probe and the start
        port = free_port()
        flags = " ".join(f"-c {k}={v}" for k, v in opts.items())
        try:
            subprocess.run(
                _as_owner(
                    owner,
                    str(PG_BIN / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(log),
                    "-w",
                    "-o",
                    f"-p {port} {flags}",
                    "start",
                ),
                check=True,
                capture_output=True,
                timeout=120,
            )
        except subprocess.CalledProcessError as exc:
            last = exc
            continue
        return Cluster(base, port, owner)
    shutil.rmtree(base, ignore_errors=True)
    raise ClusterUnavailable(f"PostgreSQL did not start: {last}")
