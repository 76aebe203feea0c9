"""An attached database's ranges mined alone (as Spark tasks mine them: the plan shipped by
pickle, :meth:`OracleMiner.mine_alone`, the result packed and unpacked) and settled on the
driver (``redo_source._settled``), against the same ranges mined in one process with each
thread's true redo-miner state (``decode_split`` on the driver, what mining without Spark
does): the items (events, closed transactions, fragments with their positions and counts)
must be equal, range by range, for logs cut at many offsets; and a savepoint rollback of a
change in an earlier range is resolved on the driver (``Carry.missed``,
``alone.resolved``), not mined again. No Spark session: only its transport is left
out (tests/extract/test_alo_spark.py runs the same through Spark)."""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from engine.extract import oracle_source
from engine.extract.alo import driver_dictionary
from engine.extract.alone import Carry
from engine.extract.oracle_source import MinerStates, OracleMiner, OraclePlan
from engine.extract.redo_source import (
    Split,
    SplitResult,
    _packed,
    _settled,
    _unpacked,
    decode_split,
)
from engine.extract.tasks.decode import Selection
from engine.extract.tasks.plan import mine_plan
from engine.home.layout import Home
from engine.redo import dictionary
from engine.redo.framing import read_header
from tests.extract.test_alo_pieces import _source as updated_in_pieces
from tests.extract.test_alo_rac import rac_source
from tests.extract.test_alo_spark import _pieces_source
from tests.harness.attached import archive_copies, oracle_dictionary


def _plan(dic: Path) -> OraclePlan:
    oracle = dictionary.load(dic)
    driver = driver_dictionary(oracle)
    sel = Selection(frozenset((t.owner, t.name) for t in oracle.tables if t.owner == "WL"))
    return OraclePlan(mine_plan(driver, sel), oracle, MinerStates())


def _splits(logs: Sequence[Path], step: int, first: int) -> list[Split]:
    """Each log cut every ``step`` bytes from ``first`` on (inside blocks and LWNs), the
    logs of a thread in sequence order, thread after thread interleaved by SCN order."""
    out: list[Split] = []
    for log in logs:
        h = read_header(log.read_bytes()[:8192])
        size = log.stat().st_size
        cuts = [0, *range(first, size, step)]
        for i, lo in enumerate(cuts):
            last = i == len(cuts) - 1
            hi = None if last else cuts[i + 1]
            out.append(Split(h.thread, h.sequence, str(log), lo, hi, True, last))
    return out


def _in_process(dic: Path, splits: Sequence[Split]) -> list[SplitResult]:
    miner = OracleMiner(_plan(dic))
    return [decode_split(miner, s) for s in splits]


def _alone_settled(dic: Path, splits: Sequence[Split]) -> tuple[list[SplitResult], MinerStates]:
    plan = _plan(dic)
    task = OracleMiner(pickle.loads(pickle.dumps(plan)))  # the plan as a task gets it
    done = [_unpacked(_packed(decode_split(task, s, in_task=True))) for s in splits]
    return _settled(OracleMiner(plan), splits, done), plan.states


def _settled_as_in_process(
    src: tuple[Path, list[Path]], step: int, first: int
) -> tuple[list[SplitResult], MinerStates, int]:
    """``src``'s logs cut every ``step`` bytes from ``first``: mined alone and settled, the
    same items as in one process; the results, the driver's states, the number of ranges."""
    dic, logs = src
    splits = _splits(logs, step, first)
    got, states = _alone_settled(dic, splits)
    _same(got, _in_process(dic, splits))
    return got, states, len(splits)


def _same(got: Sequence[SplitResult], want: Sequence[SplitResult]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert (g.split, g.resume, g.records, g.error) == (w.split, w.resume, w.records, w.error)
        assert (g.first_time_us, g.max_time_us) == (w.first_time_us, w.max_time_us)
        assert g.items == w.items, g.split


def _source(tmp: Path, make: Callable[[Home], tuple[Path, int]]) -> tuple[Path, list[Path]]:
    """A database ``make`` writes, its dictionary and its archived logs."""
    home = Home(tmp / "home")
    home.create_subdirs()
    root, made = make(home)
    return oracle_dictionary(root, tmp / "dictionary.json", made), archive_copies(
        root, tmp / "arch"
    )


@pytest.fixture(scope="module")
def savepoints(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """Two threads; a long transaction of thread 1 rolled back to a savepoint taken at its
    start (its undone changes lie many ranges before the rollback), full rollbacks."""
    return _source(
        tmp_path_factory.mktemp("savepoints"),
        lambda home: rac_source(home, long_open=True, threads=2, savepoint=True),
    )


@pytest.mark.parametrize(("step", "first"), [(512, 512), (1024, 700), (1536, 100), (4096, 333)])
def test_savepoint_rollbacks_of_earlier_ranges_settle_without_mining_again(
    savepoints: tuple[Path, list[Path]], step: int, first: int
) -> None:
    got, states, ranges = _settled_as_in_process(savepoints, step, first)
    assert states.remined == 0 and states.tasks == ranges
    assert any(r.carry is not None and r.carry.missed for r in got)  # (the case is there)


@pytest.fixture(scope="module", params=["inserts", "updates"])
def pieces(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[Path]]:
    """One thread; rows in two pieces, two records: WL.P's inserts written as Oracle writes
    a chained row (its last piece, then its head), or WL.C's updates (the head piece's URP,
    then the last piece's)."""
    make = _pieces_source if request.param == "inserts" else updated_in_pieces
    return _source(tmp_path_factory.mktemp(request.param), make)


@pytest.mark.parametrize(("step", "first"), [(512, 512), (700, 300), (1024, 200), (1536, 1000)])
def test_a_row_in_pieces_over_a_range_boundary_settles_without_mining_again(
    pieces: tuple[Path, list[Path]], step: int, first: int
) -> None:
    """Ranges of a block or a few: a row's first piece ends a range and the rest begins the
    next (leading pieces with no head; a head left open): the pieces of a transaction begun
    in an earlier range are deferred in the task and bound on the driver with the true open
    pieces; nothing is mined again, the items are those of one process."""
    got, states, ranges = _settled_as_in_process(pieces, step, first)
    assert states.remined == 0 and states.tasks == ranges
    assert any(r.carry is not None and r.carry.raw for r in got)  # (the case is there)


@pytest.fixture(scope="module")
def clob(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """Two threads; the dictionary says WL.U's column V is a CLOB (not captured)."""
    dic, logs = _source(tmp_path_factory.mktemp("clob"), lambda home: rac_source(home))
    doc = json.loads(dic.read_text())
    for t in doc["tables"]:
        for c in t["columns"]:
            if (t["owner"], t["name"], c["name"]) == ("WL", "U", "V"):
                c["type"] = "CLOB"
    dic.write_text(json.dumps(doc))
    return dic, logs


CLOB_WARNING = "OGG-01431: column V of WL.U has type CLOB, not captured"


def test_a_tasks_warnings_reach_the_driver_once(clob: tuple[Path, list[Path]]) -> None:
    """Each range's task gives the column's warning (it has no report: it is carried,
    ``Carry.warnings``); the driver gives it once for the Extract, whatever the ranges and
    threads (its own redo miners, one a thread, give the same one: not again)."""
    dic, logs = clob
    splits = _splits(logs, 4096, 333)
    plan = _plan(dic)
    warns: list[str] = []
    plan = OraclePlan(plan.plan, plan.dictionary, MinerStates(), warns.append)
    task = OracleMiner(pickle.loads(pickle.dumps(plan)))
    done = [_unpacked(_packed(decode_split(task, s, in_task=True))) for s in splits]
    assert all(r.carry is not None and r.carry.warnings == (CLOB_WARNING,) for r in done)
    got = _settled(OracleMiner(plan), splits, done)
    assert warns == [CLOB_WARNING]
    assert len({r.split.thread for r in got}) == 2 and plan.states.remined == 0


def _redo_miner_alone(src: tuple[Path, list[Path]], monkeypatch: pytest.MonkeyPatch) -> list[Carry]:
    """No fast path (every record read by the redo miner, as for tables the task miner does
    not decode): the row changes in one record of a transaction begun in an earlier range
    are read in the task (with no open pieces, checked on the driver), only the pieces are
    deferred; the same items, nothing mined again."""
    monkeypatch.setattr(oracle_source, "fast_miner", lambda *_a: None)
    got, states, ranges = _settled_as_in_process(src, 700, 300)
    assert states.remined == 0 and states.tasks == ranges and states.fast_ranges == 0
    return [r.carry for r in got if r.carry is not None]


def test_savepoints_with_the_redo_miner_alone(
    savepoints: tuple[Path, list[Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    carries = _redo_miner_alone(savepoints, monkeypatch)
    assert any(c.assumed for c in carries) and not any(c.raw for c in carries)


def test_pieces_with_the_redo_miner_alone(
    pieces: tuple[Path, list[Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert any(c.raw for c in _redo_miner_alone(pieces, monkeypatch))
