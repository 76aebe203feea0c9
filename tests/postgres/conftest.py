"""PostgreSQL-source fixtures: one logical-decoding cluster per test session (PostgreSQL 15,
``wal_level=logical``, a free loopback port), a fresh database per test (its slots dropped
at the end), and a GGSCI shell on a fresh home."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tests.postgres.cluster import Cluster, ClusterUnavailable, start_cluster
from tests.shell.conftest import home, shell  # noqa: F401  (the shell's fixtures)

_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    try:
        cluster = start_cluster()
    except ClusterUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield cluster
    finally:
        cluster.stop()


def admin(cluster: Cluster, db: str = "postgres") -> object:
    import psycopg

    return psycopg.connect(cluster.url(db), autocommit=True)


@pytest.fixture
def pgdb(pg_cluster: Cluster) -> Iterator[str]:
    """The URL of a new, empty database of the session's cluster."""
    import psycopg

    name = f"src{next(_numbers)}"
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield pg_cluster.url(name)
    finally:
        with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
            for (slot,) in conn.execute(
                "SELECT slot_name FROM pg_replication_slots WHERE database = %s", (name,)
            ).fetchall():
                conn.execute(
                    "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
                    "WHERE slot_name = %s AND active_pid IS NOT NULL",
                    (slot,),
                )
                conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
