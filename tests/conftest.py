"""Fixtures shared by the whole suite: one SparkSession per test session."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

# The test harness (tests/harness: soaks, pipeline homes, reference decoders, the built-in
# group runner) is imported as ``tests.harness`` by this process and by the processes it
# starts (a Manager started by a test loads ``tests.harness.runners``), so the repository
# root is on their path too.
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p
    )

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


# Property tests run on shared, loaded machines (CI has 2 cores): time is not what they check.
# Per-test @settings keep their own example counts and inherit these.
settings.register_profile(
    "ggsci", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile("ggsci")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-golden",
        action="store_true",
        help="rewrite the golden files with what the tests get (tests/harness/golden.py)",
    )


def pytest_configure(config: pytest.Config) -> None:
    from tests.harness import golden

    golden.set_regenerating(bool(config.getoption("--regen-golden")))


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """The suite's only SparkSession (``local[2]``; Spark's log in a temporary directory)."""
    from engine.cluster.spark import SparkSettings, get_session, stop_session

    log = tmp_path_factory.mktemp("spark") / "spark.log"
    session = get_session(SparkSettings(master="local[2]", app_name="ggsci-tests", log_file=log))
    yield session
    stop_session()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """A local S3-protocol server (moto) on 127.0.0.1 for the whole session; yields the base
    URI of a fresh bucket, credentials and endpoint in it, for :mod:`engine.storage`."""
    import logging

    from moto.server import ThreadedMotoServer  # the dev extra moto[server]

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    base = (
        f"s3://test:test@ggsci/?endpoint_override={host}:{port}&scheme=http"
        "&region=us-east-1&allow_bucket_creation=true"
    )
    from pyarrow import fs as pafs

    fs, _ = pafs.FileSystem.from_uri(base)
    fs.create_dir("ggsci")
    yield base
    server.stop()


@pytest.fixture(autouse=True)
def _same_cwd_after() -> Iterator[None]:
    """A group process run in-process (``engine.runtime.process.run_group``) changes to its
    home; the tests after it keep the directory they started in (a later test resolving the
    home from the working directory found the earlier test's home)."""
    cwd = os.getcwd()
    yield
    with contextlib.suppress(OSError):
        os.chdir(cwd)


@pytest.fixture(autouse=True)
def _same_umask_after() -> Iterator[None]:
    """An entry point run in-process (``engine.process.main``) sets the home's private umask
    (engine.home.trust.private_umask); the tests after it keep the umask they started with."""
    old = os.umask(0o022)
    os.umask(old)
    yield
    os.umask(old)
