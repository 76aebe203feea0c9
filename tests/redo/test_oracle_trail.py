"""The 23ai archived logs through the miner of real Oracle redo (engine/extract/oracle_source.py):
byte ranges of each log to the events the Extract's driver takes. The one user transaction
OpenLogReplicator and LogMiner report (TRANID 10.12.572, commit SCN 2267707, one insert into
OLR_TEST.TEST_CDC) and nothing else of a captured table; the same events whatever the ranges
a log is cut into (a range starting inside an LWN, a transaction spanning ranges)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from engine.changes import Fragment, Kind
from engine.extract.alo import driver_dictionary
from engine.extract.oracle_source import MinerStates, OracleMiner, OraclePlan
from engine.extract.tasks.decode import Selection
from engine.extract.tasks.plan import Closed, mine_plan
from engine.redo import dictionary
from engine.redo.framing import read_header
from tests.redo.corpus import CHECKPOINT, LOG15, LOG16, need


def _miner(compact: bool = True) -> tuple[OracleMiner, list[str]]:
    oracle = dictionary.load(need(CHECKPOINT))
    driver = driver_dictionary(oracle)
    sel = Selection(frozenset({("OLR_TEST", "TEST_CDC")}))
    warns: list[str] = []
    plan = OraclePlan(mine_plan(driver, sel, compact=compact), oracle, MinerStates(), warns.append)
    return OracleMiner(plan), warns


def _rows_and_ends(miner: OracleMiner, log: Path, cuts: list[int]) -> list[tuple[object, ...]]:
    """The row, commit and rollback events of ``log`` mined in the ranges between ``cuts``
    (positions and times left out, transactions closed in a range opened up)."""
    out: list[tuple[object, ...]] = []
    bounds = [0, *cuts, None]
    for lo, hi in itertools.pairwise(bounds):
        assert lo is not None
        m = miner.mine(str(log), lo, hi)
        for item in m.items:
            if isinstance(item, Fragment):
                raise AssertionError("no fragment: rows carry columns")
            if isinstance(item, Closed):
                if item.count:
                    raise AssertionError("a transaction with rows is never closed in a range")
                continue  # the database's own transactions, whole in the range
            kind = Kind(item[0])
            if kind in (Kind.ROW, Kind.COMMIT, Kind.ROLLBACK):
                out.append((kind, item[1], item[5], item[8], item[9], item[10], item[11]))
    return out


def test_the_fixture_mines_to_the_one_transaction() -> None:
    miner, warns = _miner()
    events = _rows_and_ends(miner, need(LOG15), []) + _rows_and_ends(miner, need(LOG16), [])
    rows = [e for e in events if e[0] is Kind.ROW]
    assert rows == [
        (Kind.ROW, "10.12.572", rows[0][2], 5, "OLR_TEST.TEST_CDC", "AAARwWAAYAAAAAOAAA",
         ((0, "1"), (1, "hello world"))),
    ]  # fmt: skip
    commits = [e for e in events if e[0] is Kind.COMMIT and e[1] == "10.12.572"]
    assert [c[2] for c in commits] == [2267707]
    assert warns == []


@pytest.mark.parametrize("step", [7, 64, 333])
def test_the_same_events_whatever_the_ranges(step: int) -> None:
    """Cut log 15 every ``step`` blocks: the events are those of the whole log."""
    log = need(LOG15)
    bs = read_header(log.read_bytes()[:8192]).block_size
    size = log.stat().st_size
    whole, _ = _miner(compact=False)
    cut, _ = _miner(compact=False)
    cuts = list(range(step * bs + 100, size, step * bs))  # inside blocks, inside LWNs
    assert _rows_and_ends(cut, log, cuts) == _rows_and_ends(whole, log, [])
