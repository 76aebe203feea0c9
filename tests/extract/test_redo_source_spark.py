"""What a Spark task of the Extract costs beyond its mining (engine.extract.redo_source)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from engine.extract import redo_source as rs
from engine.extract.miner import MinePlan
from engine.spark import _imported


@pytest.fixture
def unfrozen(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A process that has not frozen its objects yet; unfrozen again after the test."""
    gc.unfreeze()
    monkeypatch.setattr(rs, "_FROZEN", [])
    yield
    gc.unfreeze()


@dataclass
class _Broadcast:
    value: MinePlan


def test_a_task_freezes_its_worker_once(unfrozen: None) -> None:
    assert gc.get_freeze_count() == 0
    assert list(rs._task(_Broadcast(MinePlan({})), [])) == []
    frozen = gc.get_freeze_count()
    assert frozen > 1000  # the modules' objects: PySpark's collect after each task skips them
    garbage = [[] for _ in range(100)]
    for g in garbage:
        g.append(g)  # cycles made after the freeze are collected as ever
    del garbage, g
    assert list(rs._task(_Broadcast(MinePlan({})), [])) == []
    assert gc.get_freeze_count() == frozen  # once per worker: no new objects frozen
    assert gc.collect() >= 100


def test_warming_a_worker_freezes_what_it_imported(unfrozen: None) -> None:
    _imported(("json",))
    assert gc.get_freeze_count() > 1000
