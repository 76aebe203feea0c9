"""Batches asked for from two threads run in the order asked (engine.cluster.jobturn), on the
suite's real SparkSession."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from engine.cluster.jobturn import JobOrder, Turn, in_turn, job_ids

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _job(spark: SparkSession, turn: Turn, go: threading.Event | None = None) -> None:
    """Submit a one-task job in ``turn`` (after ``go``, when given)."""
    if go is not None:
        assert go.wait(30)
    sc = spark.sparkContext
    with in_turn(sc, turn):
        assert sc.parallelize([1], 1).map(lambda x: x + 1).collect() == [2]


def test_the_batch_asked_for_first_is_numbered_first(spark: SparkSession) -> None:
    order = JobOrder("test-order")
    first, ahead = order.next(), order.next()
    go = threading.Event()
    # the first batch's thread is held back; the one ahead calls in at once and must wait
    a = threading.Thread(target=_job, args=(spark, first, go))
    b = threading.Thread(target=_job, args=(spark, ahead))
    a.start()
    b.start()
    assert ahead.waiting.wait(30)  # (without the order it would have run by now)
    assert not job_ids(spark.sparkContext, ahead)
    go.set()
    a.join(60)
    b.join(60)
    assert job_ids(spark.sparkContext, first) < job_ids(spark.sparkContext, ahead)
    assert first.ended.is_set() and ahead.ended.is_set()


def test_a_turn_that_submits_nothing_lets_the_next_call_in(spark: SparkSession) -> None:
    order = JobOrder("test-empty")
    empty, after = order.next(), order.next()
    with in_turn(spark.sparkContext, empty):
        pass  # (a batch whose splits the driver read itself: no job)
    _job(spark, after)
    assert len(job_ids(spark.sparkContext, after)) == 1
    assert not job_ids(spark.sparkContext, empty)


def test_a_turn_that_fails_ends(spark: SparkSession) -> None:
    order = JobOrder("test-fail")
    failing, after = order.next(), order.next()
    try:
        with in_turn(spark.sparkContext, failing):
            raise RuntimeError("before its job")
    except RuntimeError:
        pass
    assert failing.ended.is_set()
    _job(spark, after)
    assert len(job_ids(spark.sparkContext, after)) == 1


def test_jobs_after_a_turn_are_not_of_its_group(spark: SparkSession) -> None:
    order = JobOrder("test-clear")
    turn = order.next()
    _job(spark, turn)
    sc = spark.sparkContext
    assert sc.parallelize([1], 1).count() == 1
    assert len(job_ids(sc, turn)) == 1


def test_a_batch_never_queued_does_not_hold_the_next(spark: SparkSession, tmp_path: Path) -> None:
    """The capture's pool refuses the batch (shut down): its turn ends at once, so the
    batch asked for after it does not wait for a job that will never come."""
    from concurrent.futures import ThreadPoolExecutor

    import pytest

    from engine.extract.merge import Batch
    from tests.harness.livecheck import capture_for

    from .test_rac_live import two_threads

    home, root, db, _, _ = two_threads(tmp_path)
    db.close()
    cap, writer = capture_for(home, root, "nq", spark)
    cap._pool = ThreadPoolExecutor(1)
    cap._pool.shutdown()
    with pytest.raises(RuntimeError):
        cap._submit(Batch([], None))
    after = cap._order.next()
    assert after.before_ended is not None and after.before_ended.is_set()
    cap._pool = None
    cap.close()
    writer.close()
