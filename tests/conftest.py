"""Fixtures shared by the whole suite: one SparkSession per test session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """The suite's only SparkSession (``local[2]``; Spark's log in a temporary directory)."""
    from engine.spark import SparkSettings, get_session, stop_session

    log = tmp_path_factory.mktemp("spark") / "spark.log"
    session = get_session(SparkSettings(master="local[2]", app_name="ggsci-tests", log_file=log))
    yield session
    stop_session()
