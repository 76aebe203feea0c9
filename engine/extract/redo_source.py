"""Where the Extract reads: the source's redo logs, cut into byte ranges for Spark tasks.

:func:`plan` turns the current read position of each thread into :class:`Split` ranges over
the logs that exist now (a current log up to its size at planning time; a record being
written past that is read next time). :func:`decode_splits` runs the miner
(:mod:`engine.extract.tasks.miner`) over the splits, in Spark tasks when a session is given, and
returns each split's events and closed transactions in log order together with where
reading resumes. The driver merges threads by SCN.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import io
import pickle
import re
import struct
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from engine.changes import Fragment, Position
from engine.cluster.jobturn import Turn, in_turn
from engine.cluster.worker import CANNOT_RUN, run_task, settle_worker
from engine.embedded.catalog import RedoGapError
from engine.embedded.errors import RedoFormatError
from engine.embedded.logs import LogInfo, list_logs
from engine.extract.alone import Carry
from engine.extract.oracle_source import OracleMiner, OraclePlan
from engine.extract.tasks.miner import Miner
from engine.extract.tasks.plan import Closed, Event, Mined, MinePlan
from engine.storage import StorageError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_SPLIT_BYTES = 16 << 20
#: How a task's result is compressed: zstd at level -3 (about 4 ms to pack a 16 MB split's
#: 4.3 MB of pickled results into 0.58 MB, 1.7 ms to unpack) costs the least CPU of
#: zstd 1 (6 ms, 0.49 MB, 2.4 ms), lz4 (4 ms, 0.89 MB, 0.9 ms) and none, once the bytes'
#: trip through the JVM is counted (about 6 ms of CPU a MB in all: docs/cluster.md).
_CODEC: Final = ("zstd", -3)
#: What a Spark task imports to mine (engine.cluster.spark.warm_workers, at the Extract's start).
MINER_MODULES: Final = ("engine.extract.redo_source", "pyarrow")


@dataclass(frozen=True, slots=True)
class Split:
    """Records of log ``path`` whose first byte lies in ``[start, end)`` (end None = EOF)."""

    thread: int
    sequence: int
    path: str
    start: int
    end: int | None
    archived: bool
    last_of_log: bool
    local: bool = False  # an online log the driver reads (tasks may not see it: catalog.py)
    task_path: str = ""  # where a Spark task opens the log (TRANLOGOPTIONS PATHMAP), if not path


@dataclass(frozen=True, slots=True)
class SplitResult:
    split: Split
    items: list[Event | Closed | Fragment]  # miner events, closed transactions, fragments
    resume: int | None  # byte offset after the last record read (None: no record)
    records: int
    sequence: int
    first_time_us: int  # redo time of the first change (0: none)
    max_time_us: int
    error: str = ""  # the redo could not be read (a gap, corruption): one line, for the driver
    carry: Carry | None = None  # an attached database's range mined alone in a task (settled)


def plan(
    redo_dir: Path,
    positions: dict[int, Position],
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    max_splits: int | None = None,
) -> list[Split]:
    """Splits to read from ``positions`` (thread → next record) to the end of the logs.

    ``max_splits`` bounds one batch (so that checkpoints follow a long catch-up closely);
    it applies to a single redo thread only: several threads are planned together, to a
    common SCN, by :func:`engine.extract.merge.plan_batch`."""
    by_thread = logs_by_thread(list_logs(redo_dir))
    out: list[Split] = []
    for thread, logs in sorted(by_thread.items()):
        out.extend(thread_splits(thread, logs, positions.get(thread), split_bytes))
    if max_splits is not None and len(by_thread) == 1 and len(out) > max_splits:
        out = out[:max_splits]
    return out


def logs_by_thread(infos: Iterable[LogInfo]) -> dict[int, list[LogInfo]]:
    by_thread: dict[int, list[LogInfo]] = {}
    for info in infos:
        by_thread.setdefault(info.thread, []).append(info)
    return by_thread


def thread_splits(
    thread: int, logs: Sequence[LogInfo], pos: Position | None, split_bytes: int
) -> list[Split]:
    """The splits of one thread's ``logs`` (in sequence order) from ``pos`` on: a current
    log up to its size now, an archived one to its end."""
    out: list[Split] = []
    for info in logs:
        if pos is not None and info.sequence < pos.sequence:
            continue
        start = pos.offset if pos is not None and info.sequence == pos.sequence else 0
        size = info.size
        if start >= size and not info.archived:
            continue
        cut = start
        while True:
            end: int | None = cut + split_bytes
            last = end is None or end >= size
            if last:
                end = None if info.archived else size
            out.append(
                Split(thread, info.sequence, info.location or str(info.path), cut, end,
                      info.archived, last, info.local, info.task_location)
            )  # fmt: skip
            if last:
                break
            assert end is not None
            cut = end
    return out


#: What a batch is mined with: the embedded database's plan, or an attached database's.
Plan = MinePlan | OraclePlan


def miner_of(plan: Plan) -> Miner | OracleMiner:
    """The miner of ``plan``: the task miner, or real Oracle redo's (oracle_source.py)."""
    return OracleMiner(plan) if isinstance(plan, OraclePlan) else Miner(plan)


def decode_split(miner: Miner | OracleMiner, split: Split, *, in_task: bool = False) -> SplitResult:
    """Runs in a Spark task (or on the driver): mine one split. Redo that cannot be read
    comes back as ``error`` (the driver abends with it: :func:`decode_splits`)."""
    path = (split.task_path or split.path) if in_task else split.path
    carry: Carry | None = None
    try:
        if in_task and isinstance(miner, OracleMiner):  # alone: the driver settles it
            m, carry = miner.mine_alone(path, split.start, split.end)
        else:
            m = miner.mine(path, split.start, split.end)
    except (RedoFormatError, StorageError) as exc:
        return SplitResult(split, [], None, 0, split.sequence, 0, 0, str(exc))
    return SplitResult(
        split, m.items, m.resume, m.records, m.sequence, m.first_time_us, m.max_time_us,
        carry=carry,
    )  # fmt: skip


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Mining makes hundreds of thousands of tuples and no reference cycle: the cyclic
    garbage collector, triggered by the allocations, would walk the growing event list
    again and again (about a seventh of a task's CPU, measured with perf). It is off
    while a split is mined and back on after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


#: The mining task's function, run by :func:`engine.cluster.worker.run_task` in each task.
MINE_TASK: Final = "engine.extract.redo_source:mine_task"


def mine_task(plan_bc: Any, splits: Iterable[Split]) -> Iterator[bytes]:
    """A Spark task: each split's result, pickled and compressed (:func:`_packed`)."""
    settle_worker()
    miner = miner_of(plan_bc.value)
    for s in splits:
        with _no_cycle_collection():
            packed = _packed(decode_split(miner, s, in_task=True))
        yield packed


class CannotRun(RuntimeError):
    """A task's Python cannot run the miner (its one line starts with the kernel marker the
    runners turn into an abend: :func:`engine.cluster.spark.task_failure`)."""


@functools.cache
def _codec() -> Any:
    import pyarrow as pa

    name, level = _CODEC
    return pa.Codec(name, compression_level=level)


def _by_fields(obj: Any) -> tuple[type, tuple[Any, ...]]:
    """Pickle a result's dataclass as its class called with its fields. Frozen dataclasses
    with slots pickle through ``dataclasses``' generic state functions, which look the
    fields up for every object: about 60 µs an object to load, most of the driver's CPU
    for a batch's results (11,000 transactions, fragments and positions per catch-up of
    the benchmark's million changes), against a few µs for the constructor."""
    cls = type(obj)
    return cls, tuple([getattr(obj, name) for name in _FIELDS[cls]])


#: The dataclasses of a result, with their fields in constructor order.
_FIELDS: Final[dict[type, tuple[str, ...]]] = {
    cls: tuple(f.name for f in dataclasses.fields(cls))
    for cls in (SplitResult, Split, Closed, Fragment, Position)
}
_REDUCERS: Final = dict.fromkeys(_FIELDS, _by_fields)


def _pickled(result: SplitResult) -> memoryview:
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _REDUCERS
    pickler.dump(result)
    return out.getbuffer()


def _packed(result: SplitResult) -> bytes:
    """A result as it crosses the JVM: the trail bytes in it compress about sevenfold,
    for less than the JVM's copies of the difference cost (:data:`_CODEC`)."""
    raw = _pickled(result)
    packed: bytes = _codec().compress(raw, asbytes=True)
    return struct.pack("<Q", len(raw)) + packed


def _unpacked(data: bytes) -> SplitResult:
    (size,) = struct.unpack_from("<Q", data)
    raw = _codec().decompress(memoryview(data)[8:], decompressed_size=size, asbytes=True)
    result = pickle.loads(raw)
    assert isinstance(result, SplitResult)
    return result


#: Tasks per slot in a batch: a task mines several splits in a row when there are more (each
#: task has a fixed cost in the JVM and the worker; it was about 25 ms of CPU before the
#: workers froze their modules, :func:`settle_worker`; docs/cluster.md).
TASKS_PER_SLOT: Final = 2


def _tasks(splits: int, slots: int) -> int:
    return max(1, min(splits, TASKS_PER_SLOT * max(1, slots)))


@dataclass
class _Shared:
    plan: Plan
    broadcast: Any
    context: Any  # the SparkContext it belongs to
    users: int = 0


class SharedPlans:
    """The plan's broadcast, kept for the batches that follow while the plan stays the same
    (one table dictionary and rules: every batch of a single-thread catch-up): a batch's
    job then neither broadcasts it again nor has each Python worker load it again. A new
    plan gets a new broadcast; the old one is destroyed when no batch mining uses it (two
    batches may be mined at once: capture.py's mining ahead)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: _Shared | None = None

    @contextlib.contextmanager
    def shared(self, sc: Any, plan: Plan) -> Iterator[Any]:
        with self._lock:
            cur = self._current
            if cur is not None and cur.context is sc and cur.plan == plan:
                entry = cur
            else:
                entry = self._current = _Shared(plan, sc.broadcast(plan), sc)
                if cur is not None and not cur.users:
                    _destroy(cur)
            entry.users += 1
        try:
            yield entry.broadcast
        finally:
            with self._lock:
                entry.users -= 1
                if entry is not self._current and not entry.users:
                    _destroy(entry)


def _destroy(entry: _Shared) -> None:
    with contextlib.suppress(Exception):  # its SparkContext may have stopped since
        entry.broadcast.destroy(blocking=False)


#: The process's shared plan broadcasts (one SparkSession a process: engine/cluster/spark.py).
PLANS: Final = SharedPlans()


def decode_splits(
    plan: Plan,
    splits: Sequence[Split],
    spark: SparkSession | None,
    turn: Turn | None = None,
) -> list[SplitResult]:
    """Mine every split; in order of ``splits``. With Spark, one task per split, but for
    the splits of online logs the driver reads itself (``Split.local``); the job waits for
    ``turn`` (:mod:`engine.cluster.jobturn`: a batch asked for earlier runs first). Redo that
    cannot be read raises :class:`~engine.embedded.catalog.RedoGapError` naming where."""
    try:
        return _decoded(plan, splits, spark, turn)
    finally:  # (a batch with no job, or failing before it, lets the next one call in)
        if turn is not None:
            turn.ended.set()


def _decoded(
    plan: Plan, splits: Sequence[Split], spark: SparkSession | None, turn: Turn | None
) -> list[SplitResult]:
    if not splits:
        return []
    done = _in_tasks(plan, splits, spark, turn)
    if isinstance(plan, OraclePlan) and spark is not None:
        with plan.states.settling():
            done = _settled(OracleMiner(plan), splits, done)
        return _checked(done)
    if len(done) < len(splits):
        miner = miner_of(plan)
        mined = iter(done)
        with _no_cycle_collection():
            done = [
                next(mined) if spark is not None and not s.local else decode_split(miner, s)
                for s in splits
            ]
    return _checked(done)


def _in_tasks(
    plan: Plan, splits: Sequence[Split], spark: SparkSession | None, turn: Turn | None
) -> list[SplitResult]:
    """The results of the splits Spark tasks mine (not ``Split.local``), in their order
    (none without a session); the job waits for ``turn``."""
    remote = [s for s in splits if not s.local] if spark is not None else []
    if not remote:
        return []
    assert spark is not None
    sc = spark.sparkContext
    with PLANS.shared(sc, plan) as bc:
        rdd = sc.parallelize(remote, _tasks(len(remote), sc.defaultParallelism))
        job = rdd.mapPartitions(functools.partial(run_task, MINE_TASK, bc))
        with in_turn(sc, turn):
            packed = job.collect()
    for raw in packed:  # an executor that cannot run the miner: loud, not retried
        if raw.startswith(CANNOT_RUN):
            raise CannotRun(raw[len(CANNOT_RUN) :].decode(errors="replace"))
    return [_unpacked(r) for r in packed]


class Mining:
    """A batch being mined (:func:`mine_batch`): :meth:`result` gives its results, as
    :func:`decode_splits` does; :meth:`wait` waits for it without taking them (a batch mined
    ahead and not used)."""

    def __init__(
        self,
        future: Future[list[SplitResult]],
        settle: Callable[[list[SplitResult]], list[SplitResult]] | None = None,
    ) -> None:
        self._future = future
        self._settle = settle

    def result(self) -> list[SplitResult]:
        """The results, taken once (an attached database's are settled here)."""
        got = self._future.result()
        if self._settle is not None:
            settle, self._settle = self._settle, None
            got = settle(got)
        return got

    def wait(self) -> None:
        with contextlib.suppress(Exception):
            self._future.result()


def mine_batch(
    pool: ThreadPoolExecutor, plan: Plan, splits: Sequence[Split], spark: SparkSession,
    turn: Turn,
) -> Mining:  # fmt: skip
    """Mine ``splits`` in the background (``pool``), in Spark's tasks, so that the batch
    after can be queued behind it (capture.py's mining ahead). An attached database's task
    results are settled (:func:`_settled`) only when :meth:`Mining.result` takes them, in the
    caller's thread: its miners' states go on batch after batch in the order the batches
    are applied, and a stop the batch ahead meets is not seen (``AttachedOrigin.bound`` /
    ``check``) before that batch is taken."""
    if not isinstance(plan, OraclePlan):
        return Mining(pool.submit(decode_splits, plan, splits, spark, turn))

    def tasks() -> list[SplitResult]:
        try:
            return _in_tasks(plan, splits, spark, turn)
        finally:
            turn.ended.set()

    def settle(done: list[SplitResult]) -> list[SplitResult]:
        with plan.states.settling():
            return _checked(_settled(OracleMiner(plan), splits, done))

    return Mining(pool.submit(tasks), settle)


def _checked(done: list[SplitResult]) -> list[SplitResult]:
    """``done``, unless a split's redo could not be read: the first such one raised."""
    for r in done:
        if r.error:
            s = r.split
            code, text = coded(r.error)
            raise RedoGapError(
                f"Redo thread {s.thread} sequence {s.sequence}, RBA {s.start} to "
                f"{'its end' if s.end is None else s.end}: {text}",
                code,
            )
    return done


_CODES: Final = re.compile(r"(?:(?:OGG|GGS-[A-Z]+)-\d{4,5}: )+")


def coded(error: str) -> tuple[str | None, str]:
    """A split's error line as (code, text): redo that is there but cannot be read (corrupt,
    cut short: GGS-SRC-03xx) under its own code, the first one, the codes stacked after it
    dropped; anything else (a log gone) under the gap's, OGG-00446 (None), as it was."""
    m = _CODES.match(error)
    if m is None:
        return None, error
    first = m.group(0).split(": ", 1)[0]
    return (first, error[m.end() :]) if first.startswith("GGS-SRC-03") else (None, error)


def _settled(
    miner: OracleMiner, splits: Sequence[Split], done: Sequence[SplitResult]
) -> list[SplitResult]:
    """An attached database's batch: the ranges Spark tasks mined alone (``done``, in order
    of the remote ``splits``) settled on the driver, in the order an in-process batch mines
    them (:meth:`~engine.extract.oracle_source.OracleMiner.settle`): a result stands, or the
    range is mined again here with the thread's true miner state; an online log's range the
    driver reads is mined here. After a range that could not be read, the rest are left as
    they are (the driver abends with the first one's error)."""
    mined = iter(done)
    out: list[SplitResult] = []
    failed = False
    with _no_cycle_collection():
        for s in splits:
            r = None if s.local else next(mined)
            if r is not None and (failed or r.error):
                failed = True
                out.append(r)
            elif (
                r is not None
                and r.carry is not None
                and (
                    (got := miner.settle(s.thread, s.sequence, s.start, r.carry, _mined(r)))
                    is not None
                )
            ):
                out.append(
                    dataclasses.replace(
                        r,
                        items=got.items,
                        first_time_us=got.first_time_us,
                        max_time_us=got.max_time_us,
                    )
                )
            else:
                miner.states.remined += r is not None
                again = decode_split(miner, s)
                failed = failed or bool(again.error)
                out.append(again)
    return out


def _mined(r: SplitResult) -> Mined:
    return Mined(r.items, r.resume, r.records, r.sequence, r.first_time_us, r.max_time_us)


def positions_after(splits: Sequence[Split], positions: dict[int, Position]) -> dict[int, Position]:
    """Where reading goes on after ``splits`` have been read whole, judged from the splits
    alone: the end of each thread's last range (the next log after an archived one read to
    its end). A plan from there is the next batch, whatever the records turn out to be
    (a range yields the records that start in it)."""
    new = dict(positions)
    for s in splits:
        if s.archived and s.last_of_log:
            new[s.thread] = Position(s.thread, s.sequence + 1, 0)
        elif s.end is not None:
            new[s.thread] = Position(s.thread, s.sequence, s.end)
    return new


def continues(
    predicted: dict[int, Position], actual: dict[int, Position], whole: frozenset[int] = frozenset()
) -> bool:
    """Whether reading from ``actual`` (where the records read really ended) reads what a
    plan from ``predicted`` (:func:`positions_after`) reads: the same place, or a little
    past it in the same log, where the last record read crossed the range's end; or, for a
    thread of ``whole`` (:func:`read_whole`), a little before it in the same log: no record
    starts between where its last record read ended and its last range's end (the space
    left at the end of a redo write, a range holding the log's header alone), so reading
    from either finds the same next record. (With two threads of small logs, the merge's
    cut ends most batches so; such a batch mined ahead was dropped, and mined again.)"""
    if predicted.keys() != actual.keys():
        return False
    for t, p in predicted.items():
        a = actual[t]
        if a == p or (a.sequence == p.sequence and (a.offset >= p.offset or t in whole)):
            continue
        return False
    return True


def read_whole(splits: Sequence[Split]) -> frozenset[int]:
    """The threads whose last range in ``splits`` is of an archived log: every record that
    starts before its end is read (the log is complete; a record that cannot be read, or a
    stop, ends the Extract), so reading goes on at the first record at or after that end,
    whatever offset the last record read ended at. (A range of an online log may end where
    a record is still being written: that one is read next time, from where the last
    whole record ended.)"""
    last = {s.thread: s for s in splits}
    return frozenset(t for t, s in last.items() if s.archived)


def thread_positions_after(
    results: Sequence[SplitResult], positions: dict[int, Position]
) -> dict[int, Position]:
    """Where each thread resumes after ``results``: after its last record read; past the
    end of an archived log that was read to its end (the next sequence, offset 0)."""
    new = dict(positions)
    for r in results:
        s = r.split
        if r.resume is not None:
            new[s.thread] = Position(s.thread, s.sequence, r.resume)
        elif s.thread not in new:
            new[s.thread] = Position(s.thread, s.sequence, s.start)
        if s.archived and s.last_of_log:
            cur = new[s.thread]
            if cur.sequence == s.sequence:
                new[s.thread] = Position(s.thread, s.sequence + 1, 0)
    return new
