"""TABLE row options on transactions that span the tasks' redo ranges (fragments).

The rows of a table whose rule the task can apply (WHERE of integer comparisons,
COLS / COLSEXCEPT, TOKENS of the table and operation: ``tablerules.fragment_tables``) travel
in a :class:`~engine.changes.Fragment` selected and cut already, their user tokens
added by the driver at commit (``Fragment.marks``). Every path must give the trail the
change-by-change path gives (every row on the driver, ``TableRules`` at commit): the
fragments finished in one pass, a rollback to savepoint that reopens them, the cache
paging them out, FORCETRANS, and a transaction persisted by Bounded Recovery (the
fragment codec) and restored. ``golden/fragment_rules.txt`` shows the trail.
"""

from __future__ import annotations

import dataclasses
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from engine.changes import Fragment
from engine.embedded.database import Database, create_database
from engine.expr.functions import format_date
from engine.extract.cache import Txn
from engine.extract.capture import Capture, Stats
from engine.extract.lcrcodec import decode_lcrs, encode_lcrs
from engine.extract.run import ExtractRun
from engine.extract.start import initial_positions
from engine.extract.tasks import assemble, closing
from engine.extract.tasks.tablerules import TableRules
from engine.home.layout import Home
from engine.trail.codec import decode_record, user_tokens
from engine.trail.layout import IOType
from engine.trail.model import TrailRecord, micros_to_datetime
from engine.trail.reader import TrailReader
from engine.trail.writer import TrailWriter
from params.check import check_text
from tests.harness import golden

from .conftest import run_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

GOLDEN = Path(__file__).parent / "golden" / "fragment_rules.txt"
#: WHERE reads V, which COLSEXCEPT removes: the task selects before it cuts
PRM = (
    "EXTRACT f1\nSOURCEDB {db}\nEXTTRAIL ./dirdat/{trail}\n"
    "TABLE hr.acc, COLSEXCEPT (v, secret), WHERE (v > 10 AND id < 1000), "
    "TOKENS (TKN-OP = GGS_OP_TYPE, TKN-HOST = @GETENV ('GGENVIRONMENT', 'HOSTNAME'), "
    "TKN-COMMIT = @GETENV ('GGHEADERINFO', 'COMMITTIMESTAMP'), TKN-TABLE = GGS_TABLE_NAME);\n"
    "TABLE hr.*;\n"
)
NAMES = {"HR.ACC": ("ID", "NAME", "V", "SECRET"), "HR.PLAIN": ("ID", "NOTE")}


def _script() -> list[tuple[str, str]]:
    """s1: a long transaction of HR.ACC rows (WHERE keeps about half), with a rollback to
    savepoint inside and HR.PLAIN rows at its end; s4: one without a savepoint (finished
    from its fragments alone); s5: a value that is no plain number (-5: the task cannot
    say, its changes go one by one); s3: left open (FORCETRANS, Bounded Recovery). s2
    commits small transactions between them all along."""
    out: list[tuple[str, str]] = [
        ("s0", "CREATE TABLE hr.acc (id NUMBER PRIMARY KEY, name VARCHAR2(20), v NUMBER, "
               "secret VARCHAR2(20))"),
        ("s0", "CREATE TABLE hr.plain (id NUMBER PRIMARY KEY, note VARCHAR2(20))"),
    ]  # fmt: skip

    def plain(k: int) -> None:
        out.append(("s2", f"INSERT INTO hr.plain VALUES ({k}, 'p{k}')"))
        out.append(("s2", "COMMIT"))

    for i in range(1, 41):
        out.append(("s1", f"INSERT INTO hr.acc VALUES ({i}, 'n{i}', {i * 7 % 20}, 's{i}')"))
        out.append(("s4", f"INSERT INTO hr.acc VALUES ({i + 500}, 'm{i}', {i * 3 % 20}, 'z')"))
        if i % 5 == 0:
            plain(i)
    out += [
        ("s1", "SAVEPOINT a"),
        ("s1", "UPDATE hr.acc SET v = 15 WHERE id = 2"),
        ("s1", "DELETE FROM hr.acc WHERE id = 3"),
        ("s1", "INSERT INTO hr.acc VALUES (100, 'sp', 50, 'x')"),
        ("s1", "ROLLBACK TO SAVEPOINT a"),
        ("s1", "UPDATE hr.acc SET v = 99 WHERE id = 4"),
        ("s1", "UPDATE hr.acc SET name = 'q' WHERE id = 5"),  # V not in the redo: out
        ("s1", "INSERT INTO hr.plain VALUES (900, 'end')"),
        ("s4", "UPDATE hr.acc SET v = 12 WHERE id > 530"),
        ("s4", "DELETE FROM hr.acc WHERE id = 501"),
    ]
    plain(41)
    for i in range(1, 21):
        v = -5 if i == 9 else 20
        out.append(("s5", f"INSERT INTO hr.acc VALUES ({i + 300}, 'k{i}', {v}, 'y')"))
        out.append(("s3", f"INSERT INTO hr.acc VALUES ({i + 200}, 'o{i}', {i % 2 * 20}, 'w')"))
    plain(42)
    out += [("s1", "COMMIT"), ("s4", "COMMIT"), ("s5", "COMMIT")]
    plain(43)
    return out


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = Home(tmp_path_factory.mktemp("fragrules"))
    home.create_subdirs()
    db_root = create_database(home.dirdb, "fr")
    with Database(db_root) as db:
        run_sql(db, _script())
    return db_root


_OPEN: list[Capture] = []


@pytest.fixture(autouse=True)
def _closing() -> Iterator[None]:
    """The captures a test left open (to force s3) closed, with their writers."""
    yield
    while _OPEN:
        cap = _OPEN.pop()
        cap.close()
        cap.writer.close()


def _capture(
    home: Home, root: Path, trail: str, split: int, compact: bool, budget: int | None = None
) -> Capture:
    """A capture of the whole redo (mined in this process), left open (its trail flushed):
    its cache still holds s3."""
    checked = check_text(PRM.format(db=root.name, trail=trail))
    assert not [d for d in checked.diagnostics if d.is_error], checked.diagnostics
    writer = TrailWriter.open(home.root / "dirdat" / trail, durable=False, megabytes=1)
    start = initial_positions(root / "redo", (), 1)
    cap = Capture(
        checked.model, root, writer, home.dirtmp / trail, start=start, split_bytes=split,
        cache_budget=budget,
    )  # fmt: skip
    _OPEN.append(cap)
    cap.compact = compact
    cap.max_poll_splits = 4
    while cap.poll():
        pass
    cap.writer.flush()
    if budget is not None:
        assert cap.cache.spills > 0  # the budget was small enough to page out
    return cap


def _records(home: Home, trail: str) -> list[TrailRecord]:
    return [r for _, r in TrailReader(str(home.root / "dirdat" / trail)).records()]


def _forced(cap: Capture) -> list[TrailRecord]:
    """FORCETRANS of the transaction left open (s3)."""
    (txn,) = cap.cache.open_transactions()
    return [decode_record(b)[0] for b in cap.force(txn.xid)]


@dataclasses.dataclass
class Seen:
    selected: int = 0  # rows a task selected in fragments
    dropped: int = 0  # of which WHERE dropped
    undecided: int = 0  # fragments the task could not select (their changes one by one)
    marked: int = 0  # fragments with marks
    reopened: int = 0  # marked fragments opened into rows (a rollback to savepoint ...)
    op_tokens: int = 0  # token bytes made on the driver for the one-pass finish


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Seen:
    """What the new paths did (the tests prove they ran)."""
    s = Seen()
    select = closing.select_fragment

    def selecting(rows: list[Any], *args: Any) -> Any:
        got = select(rows, *args)
        if got is None:
            s.undecided += 1
        else:
            s.selected += len(rows)
            s.dropped += len(rows) - len(got[0])
            s.marked += bool(got[2])
        return got

    opened = assemble.fragment_rows

    def opening(f: Fragment, undone: Any = frozenset()) -> Iterator[Any]:
        s.reopened += bool(f.marks)
        return opened(f, undone)

    made = TableRules.op_token_bytes

    def making(self: TableRules, *args: Any) -> bytes:
        s.op_tokens += 1
        return made(self, *args)

    monkeypatch.setattr(closing, "select_fragment", selecting)
    monkeypatch.setattr(assemble, "fragment_rows", opening)
    monkeypatch.setattr(TableRules, "op_token_bytes", making)
    return s


def _same_stats(got: Stats, want: Stats) -> None:
    got.fragments = want.fragments = 0
    got.lcrs = want.lcrs = got.records_read = want.records_read = 0
    assert got == want


def test_fragments_of_rule_tables_write_the_change_by_change_trail(
    root: Path, tmp_path: Path, seen: Seen
) -> None:
    home = Home(tmp_path)
    home.create_subdirs()
    reference = _capture(home, root, "rf", 1 << 30, compact=False)
    want = _records(home, "rf")
    want_forced = _forced(reference)
    assert [r for r in want if r.table == "HR.ACC"] and want_forced
    for i, (split, budget) in enumerate(((4096, None), (700, None), (700, 3_000))):
        trail = f"c{i}"
        cap = _capture(home, root, trail, split, compact=True, budget=budget)
        assert _records(home, trail) == want, (split, budget)
        assert _forced(cap) == want_forced, (split, budget)
        _same_stats(cap.stats, reference.stats)
    # the new paths ran: rows selected in the tasks, WHERE dropping some, tokens marked,
    # fragments finished in one pass with tokens made once per table and operation,
    # fragments reopened by the rollback to savepoint and by FORCETRANS, a fragment the
    # task could not select (-5) going one by one
    assert seen.selected > 0 and 0 < seen.dropped < seen.selected
    assert seen.marked > 0 and seen.op_tokens > 0 and seen.reopened > 0
    assert seen.undecided > 0
    shown = _render(want + want_forced)
    if golden.regenerating():
        GOLDEN.write_text("\n".join(shown) + "\n")
    assert shown == GOLDEN.read_text().splitlines()


def _render(recs: list[TrailRecord]) -> list[str]:
    """One line per data record: op, table, TransInd, columns by name, user tokens (the
    host's name and the commit timestamp checked, then shown as <host> / <commit>)."""
    host = socket.gethostname()
    out = []
    for r in recs:
        if r.io_type == IOType.METADATA:
            continue
        names = NAMES.get(r.table, ())
        cols = " ".join(f"{names[i]}={v}" for i, v in r.columns)
        toks = dict(user_tokens(r))
        if "TKN-COMMIT" in toks:
            stamp = format_date(micros_to_datetime(r.io_time_us), "YYYY-MM-DD HH:MI:SS.FFFFFF")
            assert toks["TKN-COMMIT"] == stamp
            assert toks["TKN-HOST"] == host
            toks["TKN-COMMIT"], toks["TKN-HOST"] = "<commit>", "<host>"
        shown = " ".join(f"{k}={v}" for k, v in toks.items())
        out.append(f"{r.op_name} {r.table} ind={r.trans_ind} [{cols}] {shown}".rstrip())
    return out


def test_a_persisted_marked_fragment_restores_to_the_same_records(
    root: Path, tmp_path: Path, seen: Seen
) -> None:
    """Bounded Recovery's persisted object (and a cache page file) hold a fragment through
    lcrcodec: its marks come back, and the transaction restored in a new capture writes
    what the change-by-change path writes for it."""
    home = Home(tmp_path)
    home.create_subdirs()
    reference = _capture(home, root, "rf", 1 << 30, compact=False)
    cap = _capture(home, root, "fr", 700, compact=True)
    (txn,) = cap.cache.open_transactions()
    entries = cap.cache.all_rows(txn)
    marked = [e for e in entries if isinstance(e, Fragment) and e.marks]
    assert marked and all(len(f.marks) == f.count for f in marked)
    back = decode_lcrs(encode_lcrs(entries))
    assert back == entries
    restored = _capture(home, root, "rs", 1 << 30, compact=True)
    restored.cache.rollback(txn.xid)  # the restart: s3 from its file, not from the redo
    restored.restore([(Txn(txn.xid, txn.start, txn.start_scn, txn.start_time_us), back)], {})
    assert _forced(restored) == _forced(reference)
    assert seen.reopened > 0


def test_a_fragment_with_bad_marks_is_refused_as_data() -> None:
    """A page or BR file whose marks do not fit its fragment is a DataError, not a wrong
    token on a record."""
    from engine.changes import Position
    from engine.home.datafile import DataError

    f = Fragment("1.2.3", Position(1, 1, 0), 10, 5, 0, 0, 5, 0, (), b"", 0, (), (),
                 (("HR.ACC", 5, 0),), 1, b"")  # fmt: skip
    good = dataclasses.replace(f, refs=("r1",), count=1, marks=b"\x01")
    assert decode_lcrs(encode_lcrs([good])) == [good]
    for bad in (b"\x02", b"\x01\x01"):
        raw = encode_lcrs([dataclasses.replace(good, marks=bad)])
        with pytest.raises(DataError, match="mark"):
            decode_lcrs(raw)


PRM_BR = (
    "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\nBR BRINTERVAL 20M, BRDIR ./BR\n"
    "TABLE hr.emp, COLSEXCEPT (t), WHERE (id > 1), TOKENS (TKN-OP = GGS_OP_TYPE, "
    "TKN-COMMIT = @GETENV ('GGHEADERINFO', 'COMMITTIMESTAMP'));\n"
)


def test_bounded_recovery_restarts_with_marked_fragments(
    home: Home, source: Any, spark: SparkSession, seen: Seen
) -> None:
    """A transaction whose rule rows came in fragments is persisted by a BR checkpoint,
    restored at the restart and committed after it: its records are selected once (id 1
    out), cut (T gone) and carry the tokens of its commit."""
    from .test_br import Log, Source

    src = Source(source[0])
    model = check_text(PRM_BR).model
    try:
        ext = ExtractRun(home, model, None, Log(), spark=spark, durable=False,
                         clock=src.clock.now)  # fmt: skip
        ext.run(threading.Event(), stop_at_eof=True)  # from minute 0 (test_br's Running)
        for minute, change, commit in ((1, "T27", ""), (2, "T27", ""), (20, "", ""),
                                       (41, "C1", "C1")):  # fmt: skip
            src.at(minute)
            if change:
                src.change(change)
            if commit:
                src.commit(commit)
            ext.run(threading.Event(), stop_at_eof=True)
        ext.close()  # the checkpoint of 40 minutes persisted T27
        src.at(42)
        log = Log()
        restarted = ExtractRun(home, model, None, log, spark=spark, durable=False,
                               clock=src.clock.now)  # fmt: skip
        assert "OGG-01641" in log.codes()  # a bounded recovery
        (txn,) = restarted.capture.cache.open_transactions()
        assert any(isinstance(e, Fragment) and e.marks for e in txn.rows)  # from its file
        src.commit("T27")
        restarted.run(threading.Event(), stop_at_eof=True)
        restarted.close()
    finally:
        src.db.close()
    recs = [r for _, r in TrailReader(str(home.root / "dirdat" / "aa")).records()]
    data = [r for r in recs if r.io_type != IOType.METADATA]
    assert [r.columns for r in data] == [((0, "3"),), ((0, "2"),)]  # C1, then T27's id 2
    for r in data:
        toks = dict(user_tokens(r))
        stamp = format_date(micros_to_datetime(r.io_time_us), "YYYY-MM-DD HH:MI:SS.FFFFFF")
        assert toks == {"TKN-OP": "INSERT", "TKN-COMMIT": stamp}
    assert seen.op_tokens > 0  # (mined in Spark workers:) finished in one pass, with tokens
