"""What a Spark task of the Extract costs beyond its mining (engine.extract.redo_source)."""

from __future__ import annotations

import dataclasses
import gc
import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from engine.changes import Fragment, Position
from engine.cluster import worker
from engine.cluster.spark import SparkSettings, session_conf
from engine.cluster.worker import warm_task
from engine.extract import redo_source as rs
from engine.extract.tasks.plan import Closed, MinePlan


@pytest.fixture
def unfrozen(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A process that has not frozen its objects yet; unfrozen again after the test."""
    gc.unfreeze()
    monkeypatch.setattr(worker, "_SETTLED", [])
    yield
    gc.unfreeze()


@dataclass
class _Broadcast:
    value: MinePlan


def test_a_task_freezes_its_worker_once(unfrozen: None) -> None:
    assert gc.get_freeze_count() == 0
    assert list(rs.mine_task(_Broadcast(MinePlan({})), [])) == []
    frozen = gc.get_freeze_count()
    assert frozen > 1000  # the modules' objects: PySpark's collect after each task skips them
    garbage = [[] for _ in range(100)]
    for g in garbage:
        g.append(g)  # cycles made after the freeze, alive during the next task
    assert list(rs.mine_task(_Broadcast(MinePlan({})), [])) == []
    # once per worker: nothing new frozen (frozen objects that died since are not counted)
    assert gc.get_freeze_count() <= frozen
    del garbage, g
    assert gc.collect() >= 100  # a second freeze would have kept these cycles


def test_warming_a_worker_freezes_what_it_imported(unfrozen: None) -> None:
    warm_task(("json",), iter([]))
    assert gc.get_freeze_count() > 1000


class _FakeBroadcast:
    def __init__(self, value: MinePlan) -> None:
        self.value = value
        self.destroyed = False

    def destroy(self, blocking: bool = False) -> None:
        self.destroyed = True


class _FakeContext:
    def __init__(self) -> None:
        self.made: list[_FakeBroadcast] = []

    def broadcast(self, value: MinePlan) -> _FakeBroadcast:
        self.made.append(_FakeBroadcast(value))
        return self.made[-1]


def test_the_plan_is_broadcast_again_only_when_it_changes() -> None:
    plans, sc = rs.SharedPlans(), _FakeContext()
    with plans.shared(sc, MinePlan({})) as first:
        pass
    with plans.shared(sc, MinePlan({})) as again:  # an equal plan of a later batch
        assert again is first
    assert len(sc.made) == 1 and not first.destroyed
    with plans.shared(sc, MinePlan({}, horizon=7)) as other:
        assert other is not first
    assert first.destroyed and not other.destroyed  # the old one, unused, is dropped
    other_sc = _FakeContext()  # a new session: its own broadcast
    with plans.shared(other_sc, MinePlan({}, horizon=7)) as third:
        assert third is not other and len(other_sc.made) == 1


def test_a_plan_replaced_while_a_batch_uses_it_lives_until_that_batch_ends() -> None:
    plans, sc = rs.SharedPlans(), _FakeContext()
    with plans.shared(sc, MinePlan({})) as old:
        with plans.shared(sc, MinePlan({}, horizon=1)) as new:  # the batch mined ahead
            assert not old.destroyed
        assert not new.destroyed
        assert not old.destroyed  # still mined with
    assert old.destroyed and not new.destroyed


def test_a_result_crosses_the_jvm_compressed_and_comes_back_whole() -> None:
    closed = Closed(
        "1.2.3", 1, 5, 4096, 4200, 77, 0, 1_700_000_000, False, (("US03", ""),),
        b"trail record " * 5000, 5000, (("I", 5000),), ("US03.T",), 5000, 1, 77,
    )  # fmt: skip
    split = rs.Split(1, 5, "/redo/t1/000000005.log", 0, None, True, True)
    result = rs.SplitResult(split, [closed, ("ev", 1)], 4200, 9, 5, 1, 2)
    packed = rs._packed(result)
    assert rs._unpacked(packed) == result
    assert len(packed) < len(pickle.dumps(result)) // 10


def test_a_result_unpickles_without_dataclasses_generic_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Frozen dataclasses with slots load through ``dataclasses.fields`` object by object
    (most of the driver's CPU for the results); a result's are built by their class."""
    fragment = Fragment(
        "1.2.4", Position(1, 5, 100), 180, 70, 0, 9, 60, 8, (("US03", ""),), b"rec", 1,
        ("r1",), (), (("US03.T", 5, 1),), 1,
    )  # fmt: skip
    split = rs.Split(1, 5, "/redo/t1/000000005.log", 0, 4096, False, False)
    result = rs.SplitResult(split, [fragment, fragment], 180, 3, 5, 9, 9)
    packed = rs._packed(result)
    looked_up: list[object] = []
    real = dataclasses.fields

    def counted(obj: Any) -> Any:
        looked_up.append(obj)
        return real(obj)

    monkeypatch.setattr(dataclasses, "fields", counted)
    assert rs._unpacked(packed) == result
    assert rs._unpacked(rs._packed(result)) == result
    assert looked_up == []


def test_results_come_back_in_the_task_status_not_the_block_manager() -> None:
    conf = session_conf(SparkSettings(master="local[2]"), "local[2]")
    assert conf["spark.task.maxDirectResultSize"] == "64m"  # Spark's default is 1 MB
