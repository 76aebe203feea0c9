"""Several processes opening one new Iceberg SQL catalog at once (a Replicat starting while a
reader or another Replicat opens it): pyiceberg checks for its tables, then creates them, so
all but one lose the race with ``table iceberg_tables already exists``. ``open_catalog`` tries
again; pyiceberg's own ``load_catalog`` fails nearly every round (the mutation the CI run of
2026-11-29 met as a failing lake end-to-end test)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyiceberg.catalog import load_catalog

from engine.targets.lake.iceberg import open_catalog


def _rounds_with_an_error(tmp_path: Path, opener: Callable[..., Any], rounds: int = 10) -> int:
    failed = 0
    for i in range(rounds):
        where = tmp_path / f"r{i}"
        where.mkdir(parents=True)
        errors: list[Exception] = []

        def go(where: Path = where, errors: list[Exception] = errors) -> None:
            try:
                opener("ggsci", type="sql", uri=f"sqlite:///{where / 'c.db'}", warehouse=str(where))
            except Exception as exc:  # what the race raises: sqlalchemy's OperationalError
                errors.append(exc)

        threads = [threading.Thread(target=go) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        failed += bool(errors)
    return failed


def test_a_new_catalog_opened_at_once_by_several_opens_for_each(tmp_path: Path) -> None:
    assert _rounds_with_an_error(tmp_path / "ours", open_catalog) == 0
    # the race is real here: pyiceberg's loader alone loses it
    assert _rounds_with_an_error(tmp_path / "theirs", load_catalog) > 0
