"""The soak's checks can fail: a short end-to-end soak (SIGKILL of the pump, the Replicat and
the Manager while the workload runs) passes every check, and then each check is shown to
catch a deliberate mutation of what that soak left behind: a record dropped from a trail
copy, a transaction written twice, two transactions swapped, a value altered, an update
applied twice on the target (same values: the final state stays equal), an apply
skipped. Kill accounting: a kill counts only when it landed mid-stream."""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from engine.home.layout import Home
from engine.trail.codec import encode_record
from engine.trail.model import TrailRecord
from engine.trail.reader import TrailReader
from engine.trail.writer import TrailWriter
from tests.harness import pipeline_home as ph
from tests.harness.soak.audit import AUDIT, check_audit, table_mismatches
from tests.harness.soak.expected import Change
from tests.harness.soak.kills import Kill, KillLog
from tests.harness.soak.pipeline import (
    MANAGER,
    PUMP,
    REPLICAT,
    SoakResult,
    SoakSpec,
    abends,
    run_soak,
)
from tests.harness.soak.sufficiency import (
    MIN_KILLS,
    MIN_TRANSACTIONS,
    Sufficiency,
    exit_status,
    unseen,
    verdict,
)
from tests.harness.soak.trailcheck import check_trail

SPEC = SoakSpec(
    tables=2,
    tps=20.0,
    schedule=(PUMP, REPLICAT, MANAGER, REPLICAT, PUMP),
    effective_kills=5,
    max_kills=5,
    arm_seconds=15.0,
    kill_seconds=150.0,
    drain_seconds=90.0,
    initial_rows=40,
)

Soaked = tuple[Home, ph.PipelineSpec, SoakResult]


@pytest.fixture(scope="module")
def soaked(tmp_path_factory: pytest.TempPathFactory) -> Soaked:
    home = Home(tmp_path_factory.mktemp("soak") / "home")
    result = run_soak(home, SPEC, lambda _: None)
    return home, SPEC.pipeline(), result


@pytest.mark.e2e
def test_soak_with_kills_of_pump_replicat_and_manager_is_exactly_once(soaked: Soaked) -> None:
    _, _, result = soaked
    report = "\n".join(result.lines())
    assert result.ok, report
    assert result.kills.requested == 5, report
    assert result.kills.effective >= 1, report
    assert result.restarts["MANAGER"] == 1 and result.manager_group_losses == 0, report
    assert result.abends == {}, report
    assert result.lost == result.dup == result.audit.mismatches == 0, report
    assert all(v.transactions == len(result.source.txns) for v in result.trails.values())
    # five kills and a few hundred transactions are too little to mean "nothing lost":
    # the soak says so instead of reporting success (issue 28)
    assert not result.enough.ok and not result.passed, report
    assert report.splitlines()[-1].endswith("verdict=insufficient"), report
    assert (
        "sufficient=no (" in report and f"effective kills {result.kills.effective} < 17" in report
    )
    assert exit_status(result.ok, result.enough) == 2
    assert result.audit.applied == result.source.changes > 0
    ops = {c.op for t in result.source.txns for c in t.changes}
    assert ops == {"INSERT", "UPDATE", "DELETE"}


# -- the trail check ---------------------------------------------------------------------


def copy_trail(
    home: Home, dst: Path, edit: Callable[[list[TrailRecord]], list[TrailRecord]]
) -> Path:
    """The remote trail rewritten record by record (its table definitions first) after
    ``edit``; returns the copy's trail name."""
    with TrailReader(home.root / ph.REMOTE_TRAIL) as reader:
        records = [r for _, r in reader.records()]
        tables = dict(reader.tables)
    trail = dst / "cp"
    with TrailWriter.open(trail, durable=False) as writer:
        for table in tables.values():
            writer.define_table(table)
        for record in edit(records):
            writer.append(encode_record(record))
    return trail


def _first_of(records: list[TrailRecord], size: int) -> int:
    """Index of the first record of a transaction of at least ``size`` records."""
    for i, r in enumerate(records):
        if r.begins_transaction and not r.ends_transaction:
            n = next(j for j in range(i, len(records)) if records[j].ends_transaction) - i + 1
            if n >= size:
                return i
    raise AssertionError("no transaction that long")


@pytest.mark.e2e
def test_an_unchanged_copy_of_the_trail_passes(soaked: Soaked, tmp_path: Path) -> None:
    home, _, result = soaked
    verdict = check_trail(copy_trail(home, tmp_path, lambda rs: rs), result.source)
    assert verdict.ok and verdict.transactions == len(result.source.txns), verdict


@pytest.mark.e2e
def test_a_record_dropped_from_the_trail_is_one_lost_change(soaked: Soaked, tmp_path: Path) -> None:
    home, _, result = soaked

    def drop(records: list[TrailRecord]) -> list[TrailRecord]:
        i = _first_of(records, 3) + 1  # a middle record
        return records[:i] + records[i + 1 :]

    verdict = check_trail(copy_trail(home, tmp_path, drop), result.source)
    assert (verdict.lost, verdict.dup, verdict.torn, verdict.txns_lost) == (1, 0, 1, 0), verdict
    assert not verdict.ok


@pytest.mark.e2e
def test_a_transaction_written_twice_is_reported(soaked: Soaked, tmp_path: Path) -> None:
    home, _, result = soaked
    size = 0

    def twice(records: list[TrailRecord]) -> list[TrailRecord]:
        nonlocal size
        i = _first_of(records, 2)
        j = next(k for k in range(i, len(records)) if records[k].ends_transaction) + 1
        size = j - i
        return records[:j] + records[i:j] + records[j:]

    verdict = check_trail(copy_trail(home, tmp_path, twice), result.source)
    assert (verdict.txns_dup, verdict.dup, verdict.lost, verdict.torn) == (1, size, 0, 0)
    assert not verdict.ok


@pytest.mark.e2e
def test_transactions_out_of_commit_order_are_reported(soaked: Soaked, tmp_path: Path) -> None:
    home, _, result = soaked

    def swap(records: list[TrailRecord]) -> list[TrailRecord]:
        ends = [k for k, r in enumerate(records) if r.ends_transaction]
        a, b, c = ends[10] + 1, ends[11] + 1, ends[12] + 1  # transactions 12 and 13
        return records[:a] + records[b:c] + records[a:b] + records[c:]

    verdict = check_trail(copy_trail(home, tmp_path, swap), result.source)
    assert (verdict.out_of_order, verdict.lost, verdict.dup) == (1, 0, 0), verdict


@pytest.mark.e2e
def test_an_altered_column_of_an_update_is_reported(soaked: Soaked, tmp_path: Path) -> None:
    home, _, result = soaked

    def alter(records: list[TrailRecord]) -> list[TrailRecord]:
        i = next(k for k, r in enumerate(records) if r.op_name == "FieldComp")
        cols = tuple((n, "0.01" if n == 2 else v) for n, v in records[i].columns)  # AMOUNT
        return [*records[:i], replace(records[i], columns=cols), *records[i + 1 :]]

    verdict = check_trail(copy_trail(home, tmp_path, alter), result.source)
    assert (verdict.torn, verdict.lost, verdict.dup) == (1, 1, 1), verdict


# -- the apply audit and the tables --------------------------------------------------------


def target_copy(home: Home, spec: ph.PipelineSpec, name: str) -> ph.PipelineSpec:
    """A copy of the SQLite target (triggers and audit included) to tamper with."""
    shutil.copyfile(home.root / spec.target, home.root / name)
    return replace(spec, target=name)


def last_update(result: SoakResult) -> tuple[Change, Change]:
    """A row whose last change was an update that is still on the target: that update and
    the change before it (the row as it was)."""
    last: dict[tuple[str, str | None], list[Change]] = {}
    for t in result.source.txns:
        for c in t.changes:
            last.setdefault((c.table, c.row[0][1]), []).append(c)
    for changes in last.values():
        if len(changes) >= 2 and changes[-1].op == "UPDATE":
            return changes[-1], changes[-2]
    raise AssertionError("no row ends with an update")


def _set(conn: sqlite3.Connection, change: Change, row: dict[str, str | None]) -> None:
    table = change.table.split(".")[1]
    conn.execute(
        f"UPDATE {table} SET AMOUNT = ?, STATUS = ? WHERE ID = ?",
        (row["AMOUNT"], row["STATUS"], int(row["ID"] or 0)),
    )


@pytest.mark.e2e
def test_an_update_applied_twice_is_caught_by_the_audit_alone(soaked: Soaked) -> None:
    """The issue's case: the final state stays equal, only the audit sees the second apply."""
    home, spec, result = soaked
    copy = target_copy(home, spec, "twice.db")
    assert check_audit(home, copy, result.source).mismatches == 0
    update, _ = last_update(result)
    conn = sqlite3.connect(home.root / copy.target, isolation_level=None)
    _set(conn, update, dict(update.row))  # the same statement, the same values, again
    conn.close()
    verdict = check_audit(home, copy, result.source)
    assert (verdict.dup, verdict.lost) == (1, 0), verdict
    assert table_mismatches(home, copy) == 0


@pytest.mark.e2e
def test_a_skipped_apply_is_caught_by_the_audit_and_the_rows(soaked: Soaked) -> None:
    """The target as a Replicat that skipped one update would leave it: the row as it was
    before the update and no audit row for it."""
    home, spec, result = soaked
    copy = target_copy(home, spec, "skipped.db")
    update, before = last_update(result)
    table, key = update.table.split(".")[1], int(update.row[0][1] or 0)
    conn = sqlite3.connect(home.root / copy.target, isolation_level=None)
    conn.execute(f'DROP TRIGGER "{AUDIT}_{table}_U"')
    _set(conn, update, dict(before.row))
    conn.execute(
        f"DELETE FROM {AUDIT} WHERE seq = (SELECT max(seq) FROM {AUDIT} WHERE tbl = ? "
        "AND op = 'UPDATE' AND json_extract(image, '$.ID') = ?)",
        (update.table, key),
    )
    conn.close()
    verdict = check_audit(home, copy, result.source)
    assert (verdict.lost, verdict.dup) == (1, 0), verdict
    assert table_mismatches(home, copy) == 1


# -- kill accounting ---------------------------------------------------------------------


def test_a_kill_counts_only_when_the_process_had_written_and_had_work_left() -> None:
    log = KillLog()
    log.add(Kill("EXT1", 0, 0, 40))  # killed before it wrote anything
    log.add(Kill("EXT1", 0, 12, 0))  # it wrote, but had caught up: nothing in flight
    log.add(Kill("EXT1", 12, 30, 5))  # mid-capture
    log.add(Kill("EXT1", 30, 30, 9))  # restarted and killed again before writing
    log.add(Kill("REP1", 0, 100, 7))
    assert [k.effective for k in log.kills] == [False, False, True, False, True]
    assert log.last_output("EXT1") == 30 and log.last_output("PMP1") == 0
    assert log.lines() == [
        "kills_requested=5",
        "kills_effective=2",
        "kills_by_process=EXT1:1/4,REP1:1/1",
        "kills_skipped=0",
    ]


def test_abends_are_read_from_ggserr_log_with_their_error(tmp_path: Path) -> None:
    home = Home(tmp_path)
    home.ggserr_log.write_text(
        "2026-11-24 17:04:03  ERROR   OGG-01184  Oracle GoldenGate Delivery for Oracle, "
        "rep1.prm:  Checksum mismatch in trail file rt000000004, RBA 253\n"
        "2026-11-24 17:04:03  ERROR   OGG-01668  Oracle GoldenGate Delivery for Oracle, "
        "rep1.prm:  PROCESS ABENDING.\n"
        "2026-11-24 17:04:04  INFO    OGG-00983  Oracle GoldenGate Manager for Oracle, "
        "mgr.prm:  Manager started (port 39141).\n"
        "2026-11-24 17:31:54  ERROR   OGG-01668  Oracle GoldenGate Delivery for Oracle, "
        "rep1.prm:  TypeError: bad call\n"
    )
    assert abends(home) == {
        "REP1": [
            "OGG-01184 Checksum mismatch in trail file rt000000004, RBA 253",
            "TypeError: bad call",
        ]
    }


@pytest.mark.e2e
def test_a_damaged_trail_file_fails_the_check(soaked: Soaked, tmp_path: Path) -> None:
    home, _, result = soaked
    trail = copy_trail(home, tmp_path, lambda rs: rs)
    path = max(
        (p for p in tmp_path.glob("cp*") if p.name[2:].isdigit()), key=lambda p: p.stat().st_size
    )
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # a byte in the middle of some record
    path.write_bytes(bytes(data))
    verdict = check_trail(trail, result.source)
    assert not verdict.ok and (verdict.unreadable or verdict.lost), verdict


# -- enough to mean it ---------------------------------------------------------------------


def test_the_minimums_make_a_one_percent_loss_visible_with_probability_099() -> None:
    assert MIN_TRANSACTIONS == 459 and unseen(0.01, 459) <= 0.01 < unseen(0.01, 458)
    assert MIN_KILLS == 17 and unseen(0.25, 17) <= 0.01 < unseen(0.25, 16)
    short = Sufficiency(65, 4, 30)  # what passed with the 2% mutation (issue 28)
    assert short.lines() == [
        "sufficiency_transactions=65/459 (a loss of 1% of transactions goes unseen with "
        "probability 0.99^65 = 0.5203; the minimum makes it <= 0.01)",
        "sufficiency_kills=4/17 (a restart defect striking at 1 effective kill in 4 goes "
        "unseen with probability 0.75^4 = 0.3164)",
        "sufficiency_exposed=30/459 (in flight at the effective kills: a restart losing 1% of "
        "it goes unseen with probability 0.99^30 = 0.7397)",
        "sufficient=no (transactions 65 < 459; effective kills 4 < 17; exposed 30 < 459)",
    ]
    assert (verdict(True, short), exit_status(True, short)) == ("insufficient", 2)
    assert (verdict(False, short), exit_status(False, short)) == ("fail", 1)
    enough = Sufficiency(459, 17, 459)
    assert enough.ok and enough.lines()[-1] == "sufficient=yes"
    assert (verdict(True, enough), exit_status(True, enough)) == ("pass", 0)
    assert Sufficiency(500).lines()[-1] == "sufficient=yes"  # a soak without kills


def test_a_two_percent_drop_is_never_reported_as_a_pass() -> None:
    """The mutation of the issue, as the checks meet it: each transaction dropped with
    probability 0.02. At the issue's 65 transactions and 4 kills it goes unseen in about a
    quarter of the runs, but those are insufficient, never a pass; at the minimum it is seen
    (0.98^459 = 0.0001 of runs miss it)."""
    rnd = random.Random(28)
    verdicts: Counter[str] = Counter()
    for transactions, kills in [(65, 4)] * 1000 + [(MIN_TRANSACTIONS, MIN_KILLS)] * 1000:
        lost = sum(rnd.random() < 0.02 for _ in range(transactions))
        enough = Sufficiency(transactions, kills, MIN_TRANSACTIONS)
        verdicts[f"{transactions}:{verdict(lost == 0, enough)}"] += 1
    assert verdicts["65:pass"] == 0 and 200 < verdicts["65:insufficient"] < 340, verdicts
    assert verdicts["459:pass"] <= 2 and verdicts["459:fail"] >= 998, verdicts
