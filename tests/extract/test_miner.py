"""The fast read path against the reference one.

- the Extract's window scan (``engine.redo.scan``) finds the records ``logfile.read_records``
  reads, on any split points and on torn tails;
- the miner gives the reference :class:`Decoder`'s LCRs record for record, and its record
  templates, finished, are the bytes ``encode_record`` gives from the columns;
- a capture with transactions closed in the tasks writes the same trail as one that takes
  every change through the cache, whatever the split size (transactions across splits);
- the fast NUMBER text equals the Decimal one.
"""

from __future__ import annotations

import itertools
import random
import shutil
import zlib
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine._native import enabled as native_enabled
from engine._native import load as load_native
from engine.changes import Kind, Lcr, Position
from engine.embedded.database import Database, create_database
from engine.embedded.dictionary import load_dictionary
from engine.embedded.dump_parse import parse_dump
from engine.embedded.errors import RedoCorruptError
from engine.embedded.logfile import read_records
from engine.embedded.logs import list_logs
from engine.embedded.workload import WorkloadSpec, run_workload
from engine.extract import capture as capture_module
from engine.extract.capture import Capture, Stats, selection_for
from engine.extract.redo_source import Split, _tasks, continues, read_whole
from engine.extract.start import initial_positions
from engine.extract.tasks.assemble import trans_ind
from engine.extract.tasks.decode import BEFORES_FULL, Decoder, Selection
from engine.extract.tasks.miner import Miner
from engine.extract.tasks.plan import mine_plan
from engine.extract.tasks.values import number_text, reference_text
from engine.home.layout import Home
from engine.redo import framing as F
from engine.redo import payloads as P
from engine.redo.codecs import encode_number
from engine.redo.errors import CodecError, RedoError
from engine.redo.layout import OPEN_SCN, VLD_LWN
from engine.redo.onlinelog import seal
from engine.redo.scan import Scan, record_scn
from engine.trail.codec import encode_record, finalize
from engine.trail.layout import BEFORE_IMAGE, IOType, wire_io_type
from engine.trail.model import TrailRecord
from engine.trail.reader import TrailReader
from engine.trail.writer import TrailWriter
from params.check import check_text
from tests.harness import kernels

from .conftest import run_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The C record walk (engine/_native/redomine.c), held to this module's Python below.
_C = load_native("redomine")
needs_c = kernels.loaded("redomine")
#: The kernel itself, whatever GGSCI_NATIVE says, for the CRC tests (not built: they skip).
_KERNEL = kernels.kernel_or_none("redomine")
VECTORS = Path(__file__).resolve().parents[1] / "source" / "vectors"
PRM = (
    "EXTRACT m1\nSOURCEDB {db}\nEXTTRAIL ./dirdat/{trail}\nTRANLOGOPTIONS EXCLUDEUSER GGREP\n"
    "GETTRUNCATES\nTABLE hr.*;\nTABLE wl.*;\nTABLE us03.*;\n"
)
SCRIPT = [
    ("s1", "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20), sal NUMBER)"),
    ("s1", "CREATE TABLE hr.other (id NUMBER PRIMARY KEY, d DATE)"),
    ("s1", "INSERT INTO hr.emp VALUES (1, 'ann', 100.5)"),
    ("s2", "INSERT INTO hr.emp VALUES (2, 'bob', -200)"),
    ("s2", "INSERT INTO hr.other VALUES (2, DATE '2024-02-29')"),
    ("s2", "COMMIT"),
    ("s1", "COMMIT"),
    ("s1", "UPDATE hr.emp SET sal = 0.003 WHERE id = 1"),
    ("s1", "ROLLBACK"),
    ("s3", "INSERT INTO hr.emp VALUES (3, NULL, 1e20)"),
    ("s1", "UPDATE hr.emp SET sal = 400 WHERE id = 1"),
    ("s1", "SAVEPOINT a"),
    ("s1", "DELETE FROM hr.emp WHERE id = 2"),
    ("s1", "ROLLBACK TO SAVEPOINT a"),
    ("s1", "UPDATE hr.emp SET id = 5 WHERE id = 1"),
    ("s1", "COMMIT"),
    ("s3", "COMMIT"),
    ("s4", "INSERT INTO hr.emp SELECT id + 10, name, sal FROM hr.emp"),
    ("s4", "COMMIT"),
    ("s5", "INSERT /*+ APPEND */ INTO hr.emp SELECT id + 100, name, sal FROM hr.emp"),
    ("s5", "COMMIT"),
    ("s6", "DELETE FROM hr.emp WHERE id > 100"),
    ("s6", "COMMIT"),
    ("s7", "UPDATE hr.emp SET name = 'x' WHERE id < 20"),
    ("s7", "COMMIT"),
]


def _sources(tmp: Path) -> dict[str, Path]:
    """Databases with redo of every kind capture knows: SQL (two threads), a workload with
    rollbacks and array inserts, the seed's Oracle dumps."""
    home = Home(tmp)
    home.create_subdirs()
    sql = create_database(home.dirdb, "sql", threads=2)
    with Database(sql) as db:
        run_sql(db, SCRIPT)
        rep = db.session("rep", username="GGREP")
        from engine.embedded.sql import execute

        execute(db, rep, "INSERT INTO hr.emp VALUES (99, 'loop', 9)")
        execute(db, rep, "COMMIT")
        other = db.session("t2", thread=2)
        execute(db, other, "INSERT INTO hr.emp VALUES (77, 'two', 2)")
        run_sql(db, [("s8", "INSERT INTO hr.emp VALUES (78, 'one', 1)")])
        execute(db, other, "COMMIT")
        run_sql(db, [("s8", "COMMIT"), ("s9", "INSERT INTO hr.emp VALUES (79, 'open', 1)")])
        # a TRUNCATE's 24.1 (the embedded SQL has no TRUNCATE: its DDL record, as Oracle logs it)
        db._ddl(db.session("s10"), db.dictionary.get("HR", "EMP"), "truncate table hr.emp")
    wl = create_database(home.dirdb, "wl")
    with Database(wl) as db:
        spec = WorkloadSpec(
            tables=2, rows_per_txn=7, transactions=60, rollback_ratio=0.2, sessions=4, seed=3
        )
        run_workload(db, spec)
        run_workload(db, WorkloadSpec(tables=1, transactions=10, array=5, seed=4, sessions=2))
    return {"sql": sql, "wl": wl, "seed": import_seed(home.dirdb)}


def import_seed(dirdb: Path) -> Path:
    """A database ``seed`` holding seed 002's seven Oracle dumps as its redo."""
    seed = create_database(dirdb, "seed")
    records = []
    for f in sorted(VECTORS.glob("0*.dump")):
        with open(f, encoding="utf-8") as fh:
            records.extend(parse_dump(fh, source=str(f)).records)
    with Database(seed) as db:
        db.append_foreign(records, load_dictionary(VECTORS / "seed_dictionary.json"))
    return seed


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _sources(tmp_path_factory.mktemp("miner"))


def _logs(root: Path) -> list[str]:
    return [str(i.path) for i in list_logs(root / "redo")]


def _befores(root: Path, fmt: str | None) -> Selection:
    """Every table captured, every table's updates with before images written as
    UPDATERECORDFORMAT ``fmt`` says (None: a before-image record ahead of each update)."""
    tables = load_dictionary(root / "dictionary.json").tables.values()
    names = frozenset((t.owner.upper(), t.name.upper()) for t in tables)
    return Selection(everything=True, befores=names, update_format=fmt)


def _lcrs(
    root: Path, hooked: bool, selection: Selection | None = None
) -> tuple[list[Lcr], list[Lcr]]:
    dictionary = load_dictionary(root / "dictionary.json")
    selection = selection or Selection(everything=True)
    reference = Decoder(dictionary, selection)
    names = frozenset(t.qualified for t in dictionary.tables.values()) if hooked else frozenset()
    miner = Miner(mine_plan(dictionary, selection, hooked=names, compact=False))
    want: list[Lcr] = []
    got: list[Lcr] = []
    for path in _logs(root):
        want.extend(reference.decode_all(read_records(path)))
        mined = miner.mine(path, 0, None)
        got.extend(
            Lcr(Kind(e[0]), e[1], Position(e[2], mined.sequence, e[3]), *e[4:]) for e in mined.items
        )
    return want, got


@pytest.mark.parametrize("name", ["sql", "wl", "seed"])
def test_miner_gives_the_reference_decoders_lcrs(sources: dict[str, Path], name: str) -> None:
    want, got = _lcrs(sources[name], hooked=True)
    assert {k.kind for k in want} >= {Kind.BEGIN, Kind.ROW, Kind.COMMIT}
    assert got == want


@pytest.mark.parametrize("fmt", [None, "FULL", "COMPACT"])
@pytest.mark.parametrize("name", ["sql", "wl", "seed"])
def test_miner_gives_the_reference_decoders_before_images(
    sources: dict[str, Path], name: str, fmt: str | None
) -> None:
    """GETUPDATEBEFORES (and UPDATERECORDFORMAT): the C walk, the miner's Python and the
    reference decoder give the same before images, as columns and as record parts."""
    selection = _befores(sources[name], fmt)
    want, got = _lcrs(sources[name], hooked=True, selection=selection)
    assert got == want
    kinds = {w.io_type for w in want if w.kind is Kind.ROW}
    made = IOType.FIELDCOMP | BEFORE_IMAGE if fmt is None else IOType.UNIFIED_UPDATE
    assert (made in kinds) == (name != "seed")  # the seed's updates are keyless: fetched
    images = [w for w in want if w.io_type == made]
    assert all(w.before_columns if fmt else w.columns for w in images)
    if fmt is None:  # each before image is followed by its update, same row, same ref
        for i, w in enumerate(want):
            if w.io_type == made:
                nxt = want[i + 1]
                assert (nxt.io_type, nxt.rowid, nxt.ref) == (IOType.FIELDCOMP, w.rowid, w.ref)
    _, templated = _lcrs(sources[name], hooked=False, selection=selection)
    # the updates whose key the redo lacks (seed 002's four) are fetched: no before image
    assert _finish_as_encoded(want, templated) == (4 if name == "seed" else 0)
    if _C is not None:  # the Python walk too (the C walk gave `got`)
        with patch.object(Miner, "_native_walker", lambda self: None):
            _, python = _lcrs(sources[name], hooked=True, selection=selection)
        assert python == want


@pytest.mark.parametrize("name", ["sql", "wl", "seed"])
def test_nocompressdeletes_writes_the_whole_before_image_of_a_delete(
    sources: dict[str, Path], name: str
) -> None:
    """NOCOMPRESSDELETES (seed 003; issue 29: deletes were always key-only): a delete carries
    every column the undo holds (the row's supplemental data), in the C walk, the miner's
    Python and the reference decoder alike, as columns and as record parts; COMPRESSDELETES,
    the default, the key alone."""
    tables = load_dictionary(sources[name] / "dictionary.json").tables.values()
    names = frozenset((t.owner.upper(), t.name.upper()) for t in tables)
    full = Selection(everything=True, full_deletes=names)
    want, got = _lcrs(sources[name], hooked=True, selection=full)
    assert got == want
    key_only, _ = _lcrs(sources[name], hooked=True)
    deletes = [w for w in want if w.kind is Kind.ROW and w.io_type == IOType.DELETE]
    compressed = [w for w in key_only if w.kind is Kind.ROW and w.io_type == IOType.DELETE]
    assert len(deletes) == len(compressed) > 0
    by_table = {t.qualified: t for t in tables}
    for d, k in zip(deletes, compressed, strict=True):
        width = len(by_table[d.table].columns)
        assert [i for i, _ in d.columns] == list(range(width))  # every column, NULLs too
        assert set(k.columns) <= set(d.columns) and len(k.columns) < width
    _, templated = _lcrs(sources[name], hooked=False, selection=full)
    _finish_as_encoded(want, templated)
    if _C is not None:  # the Python walk too
        with patch.object(Miner, "_native_walker", lambda self: None):
            _, python = _lcrs(sources[name], hooked=True, selection=full)
        assert python == want


def test_nocompressdeletes_is_per_table_and_in_the_selection(sources: dict[str, Path]) -> None:
    dictionary = load_dictionary(sources["sql"] / "dictionary.json")
    both = "EXTRACT e\nSOURCEDB s\nEXTTRAIL ./dirdat/aa\nTABLE hr.other;\nNOCOMPRESSDELETES\nTABLE hr.emp;\n"
    assert selection_for(check_text(both).model, dictionary).full_deletes == {("HR", "EMP")}
    prm = (
        "EXTRACT e\nSOURCEDB s\nEXTTRAIL ./dirdat/aa\nTABLE hr.a;\nNOCOMPRESSDELETES\n"
        "TABLE hr.b;\nCOMPRESSDELETES\nTABLE hr.c;\n"
    )
    model = check_text(prm).model
    assert [t.full_deletes for t in model.tables] == [False, True, False]
    replicat = check_text("REPLICAT r\nTARGETDB x\nNOCOMPRESSDELETES\nMAP a.b, TARGET a.b;\n")
    assert any("not used in a Replicat" in d.message for d in replicat.diagnostics)


@pytest.mark.parametrize("name", ["sql", "wl", "seed"])
def test_templates_finish_as_the_columns_encode(sources: dict[str, Path], name: str) -> None:
    want, got = _lcrs(sources[name], hooked=False)
    assert _finish_as_encoded(want, got) == (4 if name == "seed" else 0)  # seed 002's 4 rows


def _finish_as_encoded(want: list[Lcr], got: list[Lcr]) -> int:
    """Each template of ``got`` finished is what ``want``'s columns encode; the number of
    rows (keyless updates) that came with columns instead."""
    rows = [(w, g) for w, g in zip(want, got, strict=True) if w.kind is Kind.ROW]
    assert rows
    keyless = 0
    for i, (w, g) in enumerate(rows):
        if not g.record:  # an update whose key the redo lacks: columns, for the driver's fetch
            assert (g.io_type, g.columns, g.rowid) == (IOType.FIELDCOMP, w.columns, w.rowid)
            keyless += 1
            continue
        assert g.record and not g.columns and g.rowid == w.rowid and g.ref == w.ref
        ind, first = trans_ind(i % 3, 3), i % 3 == 0
        record = TrailRecord(
            io_type=wire_io_type(w.io_type)[0],
            table=w.table,
            columns=w.columns,
            before_columns=w.before_columns,
            trans_ind=ind,
            before_after=wire_io_type(w.io_type)[1].decode(),
            io_time_us=1_000_000 + i,
            audit_rba=w.pos.sequence,
            audit_pos=w.pos.offset,
            rowid=w.rowid,
            logcsn=str(i) if first else None,
            tranid=w.xid if first else None,
        )
        done = finalize(g.record, ind, 1_000_000 + i, record.logcsn, record.tranid)
        assert done == encode_record(record)
    return keyless


def _capture(
    home: Home,
    root: Path,
    trail: str,
    split: int,
    compact: bool,
    spark: SparkSession | None = None,
    per_batch: int = 8,
    prm: str = PRM,
    budget: int | None = None,
) -> Stats:
    checked = check_text(prm.format(db=root.name, trail=trail))
    assert not checked.diagnostics
    model = checked.model
    writer = TrailWriter.open(home.root / "dirdat" / trail, durable=False, megabytes=1)
    start = initial_positions(root / "redo", (), 2)
    cap = Capture(
        model, root, writer, home.dirtmp / trail, start=start, split_bytes=split, spark=spark,
        cache_budget=budget,
    )  # fmt: skip
    cap.compact = compact
    cap.max_poll_splits = per_batch
    while cap.poll():
        pass
    cap.close()
    writer.close()
    cap.stats.lcrs = cap.stats.records_read = 0  # reads differ with the split size
    if budget is not None:
        assert cap.cache.spills > 0  # the budget was small enough to page out
    return cap.stats


def _records(home: Home, trail: str) -> list[Any]:
    return [r for _, r in TrailReader(str(home.root / "dirdat" / trail)).records()]


@pytest.mark.parametrize("name", ["sql", "wl", "seed"])
def test_closed_transactions_write_the_same_trail_as_the_cache(
    sources: dict[str, Path], name: str, tmp_path: Path
) -> None:
    home = Home(tmp_path)
    home.create_subdirs()
    root = sources[name]
    reference = _capture(home, root, "rf", 1 << 30, compact=False)
    want = _records(home, "rf")
    assert want and reference.transactions
    for i, split in enumerate((1 << 30, 4096, 700)):
        trail = f"c{i}"
        stats = _capture(home, root, trail, split, compact=True)
        assert _records(home, trail) == want, split
        fragments, stats.fragments = stats.fragments, 0
        if split < 1 << 30 and name != "seed":  # transactions across splits: in fragments
            assert fragments > 0, split
        assert stats == reference


#: GETUPDATEBEFORES for hr.* only (a toggle acts on the TABLE lines after it), then off.
PRM_BEFORES = PRM.replace(
    "TABLE hr.*;\nTABLE wl.*;", "GETUPDATEBEFORES\nTABLE hr.*;\nIGNOREUPDATEBEFORES\nTABLE wl.*;"
)


@pytest.mark.parametrize(
    ("name", "fmt"), [("sql", None), ("sql", "COMPACT"), ("wl", "FULL")], ids=str
)
def test_closed_transactions_write_the_same_before_images_as_the_cache(
    sources: dict[str, Path], name: str, fmt: str | None, tmp_path: Path
) -> None:
    """With before images, the records the tasks assemble (C trailkit) are the driver's."""
    home = Home(tmp_path)
    home.create_subdirs()
    root = sources[name]
    prm = PRM_BEFORES + (f"UPDATERECORDFORMAT {fmt}\n" if fmt else "")
    if name == "wl":  # the workload's tables under GETUPDATEBEFORES
        prm = prm.replace("TABLE wl.*;", "GETUPDATEBEFORES\nTABLE wl.*;")
    reference = _capture(home, root, "rf", 1 << 30, compact=False, prm=prm)
    want = _records(home, "rf")
    befores = [r for r in want if r.before_after == "B" and r.io_type == IOType.FIELDCOMP]
    unified = [r for r in want if r.io_type == IOType.UNIFIED_UPDATE]
    assert (befores, unified)[fmt is not None] and not (befores, unified)[fmt is None]
    for i, split in enumerate((1 << 30, 700)):
        trail = f"c{i}"
        stats = _capture(home, root, trail, split, compact=True, prm=prm)
        assert _records(home, trail) == want, split
        fragments, stats.fragments = stats.fragments, 0
        if split < 1 << 30:  # transactions across splits: in fragments
            assert fragments > 0, split
        assert stats == reference


def test_getupdatebefores_is_per_table(sources: dict[str, Path]) -> None:
    root = sources["sql"]
    dictionary = load_dictionary(root / "dictionary.json")
    text = PRM_BEFORES.replace("TABLE wl.*;", "TABLE wl.*;\nUPDATERECORDFORMAT FULL")
    model = check_text(text.format(db="sql", trail="x")).model
    plan = mine_plan(dictionary, selection_for(model, dictionary))
    by_name = {t.qualified: t.befores for t in plan.tables.values() if t.captured}
    assert by_name == {"HR.EMP": BEFORES_FULL, "HR.OTHER": BEFORES_FULL}
    # a heartbeat table (captured without a TABLE line of its own) never has before images
    plan = mine_plan(dictionary, selection_for(model, dictionary, lambda o, n: n == "OTHER"))
    by_name = {t.qualified: t.befores for t in plan.tables.values() if t.captured}
    assert by_name == {"HR.EMP": BEFORES_FULL, "HR.OTHER": 0}
    model = check_text(PRM.format(db="sql", trail="x")).model
    plan = mine_plan(dictionary, selection_for(model, dictionary))
    assert not any(t.befores for t in plan.tables.values())


@pytest.mark.parametrize("name", ["sql", "wl"])
def test_fragments_paged_out_write_the_same_trail(
    sources: dict[str, Path], name: str, tmp_path: Path
) -> None:
    """Fragments of open transactions paged out of a small cache (and read back at
    commit) give the trail that the change-by-change path gives."""
    home = Home(tmp_path)
    home.create_subdirs()
    root = sources[name]
    reference = _capture(home, root, "rf", 1 << 30, compact=False)
    stats = _capture(home, root, "pg", 700, compact=True, budget=2_000)
    assert _records(home, "pg") == _records(home, "rf")
    assert stats.fragments > 0
    stats.fragments = 0
    assert stats == reference


def test_selection_for_is_what_the_plan_captures(sources: dict[str, Path]) -> None:
    root = sources["sql"]
    dictionary = load_dictionary(root / "dictionary.json")
    model = check_text(PRM.format(db="sql", trail="x")).model
    plan = mine_plan(dictionary, selection_for(model, dictionary))
    assert {t.qualified for t in plan.tables.values() if t.captured} == {"HR.EMP", "HR.OTHER"}
    assert all(t.truncates for t in plan.tables.values() if t.captured)


# -- frames ---------------------------------------------------------------------------------
def _damaged(root: Path, tmp: pytest.TempPathFactory, cut: int, flip: int | None = None) -> Path:
    """A copy of ``root``'s first log cut at byte ``cut``, with byte ``flip`` changed."""
    path = Path(_logs(root)[0])
    copy = tmp.mktemp("damaged") / path.name
    shutil.copyfile(path, copy)
    with open(copy, "r+b") as fh:
        if cut is not None:
            fh.truncate(cut)
        if flip is not None and (cut is None or flip < cut):
            fh.seek(flip)
            byte = fh.read(1)
            fh.seek(flip)
            fh.write(bytes([byte[0] ^ 0x5A]))
    return copy


def _scan_both(path: str, start: int, end: int | None) -> tuple[list[Any], list[Any]]:
    """The records of a range as the database reads them (logfile.read_records, the model)
    and as the Extract's window scan finds them: (offset, end, SCN) each."""
    want = [(lr.offset, lr.end, lr.record.scn) for lr in read_records(path, start, end)]
    scan = Scan(path, start, end)
    got = [(o, e, record_scn(buf, lo)) for o, e, buf, lo, _n, _s, _t in scan]
    return want, got


@settings(max_examples=30, deadline=None)
@given(cuts=st.lists(st.integers(0, 40_000), min_size=1, max_size=4))
def test_the_scan_finds_what_read_records_reads_on_any_split(
    sources: dict[str, Path], cuts: list[int]
) -> None:
    path = _logs(sources["wl"])[0]
    points = [0, *sorted(cuts), None]
    every: list[Any] = []
    for a, b in itertools.pairwise(points):
        if b is not None and a is not None and b < a:
            continue
        want, got = _scan_both(path, a or 0, b)
        assert got == want
        every.extend(got)
    assert [f[0] for f in every] == sorted({f[0] for f in every})
    assert every == _scan_both(path, 0, None)[1]


@settings(max_examples=30, deadline=None)
@given(cut=st.integers(1024, 30_000), start=st.integers(0, 20_000))
def test_the_scan_stops_where_read_records_does_on_a_torn_tail(
    sources: dict[str, Path], tmp_path_factory: pytest.TempPathFactory, cut: int, start: int
) -> None:
    torn = _damaged(sources["wl"], tmp_path_factory, cut)
    want, got = _scan_both(str(torn), start, None)
    assert got == want


def test_a_torn_archived_log_is_corrupt_for_both(sources: dict[str, Path], tmp_path: Path) -> None:
    root = sources["sql"]
    with Database(root) as db:
        db.switch_log(1)
    archived = next(i for i in list_logs(root / "redo") if i.archived)
    torn = tmp_path / Path(archived.path).name
    shutil.copyfile(archived.path, torn)
    with open(torn, "r+b") as fh:
        fh.truncate(archived.size - 7)
    readers: list[Callable[[], object]] = [
        lambda: list(read_records(torn)),
        lambda: list(Scan(torn)),
    ]
    for read in readers:
        with pytest.raises((RedoCorruptError, RedoError)):
            read()


# -- values ---------------------------------------------------------------------------------
@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.integers(-(10**25), 10**25),
        st.decimals(allow_nan=False, allow_infinity=False, places=6).filter(
            lambda d: abs(d) < Decimal(10) ** 30
        ),
        st.decimals(allow_nan=False, allow_infinity=False).filter(
            lambda d: d == 0 or Decimal("1e-60") < abs(d) < Decimal(10) ** 60
        ),
    )
)
def test_number_text_is_the_decimal_text(value: Decimal | int) -> None:
    try:
        raw = encode_number(value)
    except CodecError:
        assume(False)  # beyond NUMBER's 40 digits
    assert number_text(raw) == reference_text("NUMBER", raw)
    if _C is not None and isinstance(value, int) and abs(value) < 10**20:
        assert _C.number_text(raw) == number_text(raw)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=1, max_size=22))
def test_number_text_of_any_bytes_is_the_decimal_text_or_the_same_error(raw: bytes) -> None:
    try:
        want = reference_text("NUMBER", raw)
    except (CodecError, ArithmeticError) as exc:  # not a NUMBER, or too large for its text
        with pytest.raises(type(exc)):
            number_text(raw)
        return
    assert number_text(raw) == want


@pytest.mark.parametrize(
    "text",
    [
        "1234567890123456789012345678901234567891",
        "1" + "0" * 100,
        "-98765432109876543210987654321.0987654321",
        "0.000000000012345678901234567890123456789",
    ],
)
def test_numbers_wider_than_decimals_default_context_keep_every_digit(text: str) -> None:
    raw = encode_number(Decimal(text))
    assert reference_text("NUMBER", raw) == number_text(raw) == text


def test_batches_mined_ahead_on_spark_write_the_same_trail(
    sources: dict[str, Path], tmp_path: Path, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Home(tmp_path)
    home.create_subdirs()
    root = sources["wl"]
    reference = _capture(home, root, "rf", 1 << 30, compact=False)
    # 3: no batch is mined ahead of; 8 splits a batch: a task mines several in a row
    for trail, heavy, per_batch in (("s1", 50_000, 2), ("s2", 3, 2), ("s3", 50_000, 8)):
        monkeypatch.setattr(capture_module, "AHEAD_MAX_ITEMS", heavy)
        stats = _capture(home, root, trail, 4096, compact=True, spark=spark, per_batch=per_batch)
        assert _records(home, trail) == _records(home, "rf")
        assert stats.fragments > 0  # assembled in the tasks
        stats.fragments = 0
        assert stats == reference


def test_a_batch_takes_at_most_two_tasks_per_slot() -> None:
    assert [_tasks(n, 2) for n in (0, 1, 3, 4, 9)] == [1, 1, 3, 4, 4]
    assert _tasks(9, 0) == 2 and _tasks(100, 32) == 64


def test_a_batch_mined_ahead_is_used_only_where_reading_really_goes_on() -> None:
    p = {1: Position(1, 3, 1000), 2: Position(2, 5, 0)}
    assert continues(p, dict(p))
    assert continues(p, {1: Position(1, 3, 1200), 2: Position(2, 5, 0)})  # record crossed
    assert not continues(p, {1: Position(1, 3, 900), 2: Position(2, 5, 0)})  # torn tail
    assert not continues(p, {1: Position(1, 4, 0), 2: Position(2, 5, 0)})
    assert not continues(p, {1: Position(1, 3, 1000)})
    # thread 1's last range was of an archived log, read whole: nothing starts in between
    assert continues(p, {1: Position(1, 3, 900), 2: Position(2, 5, 0)}, frozenset({1}))
    assert not continues(p, {1: Position(1, 3, 900), 2: Position(2, 5, 0)}, frozenset({2}))
    assert not continues(p, {1: Position(1, 2, 900), 2: Position(2, 5, 0)}, frozenset({1}))
    online = Split(1, 3, "t1.log", 0, 1000, False, True)
    archived = Split(2, 5, "t2.arc", 0, None, True, True)
    assert read_whole([archived, online]) == {2}
    assert read_whole([online, Split(1, 4, "a", 0, None, True, True)]) == {1}


# -- the C record walk (engine/_native/redomine.c) against this module's Python -------------


def test_the_c_miner_is_built_wherever_there_is_a_compiler() -> None:
    if native_enabled() and (shutil.which("cc") or shutil.which("gcc")):
        assert _C is not None, "engine/_native/redomine.c did not build: see `pip install -e .`"
        assert load_native("trailkit") is not None, "engine/_native/trailkit.c did not build"


def _both(
    root: Path,
    compact: bool,
    path: str | None = None,
    selection: Selection | None = None,
    ops: set[str] | None = None,
) -> tuple[Any, Any, int]:
    """What the C walk and the Python walk mine from ``root``'s logs (or ``path``), and how
    many records the C walk left to Python (their opcodes into ``ops``)."""
    dictionary = load_dictionary(root / "dictionary.json")
    plan = mine_plan(dictionary, selection or Selection(everything=True), compact=compact)
    native, python = Miner(plan), Miner(plan)
    python._walker = None
    left = 0
    record = native.record

    def counted(*args: Any) -> None:
        nonlocal left
        left += 1
        if ops is not None:
            buf, lo, size, scan = args[:4]
            h = scan.header
            rec = F.parse_record(bytes(buf[lo : lo + size]), h.order, h.layout)
            ops.update(v.op for v in rec.vectors)
        record(*args)

    native.record = counted  # type: ignore[method-assign]
    got, want = [], []
    for log in [path] if path else _logs(root):
        for miner, into in ((native, got), (python, want)):
            try:
                into.append(miner.mine(log, 0, None))
            except RedoCorruptError as exc:
                into.append(type(exc))
    return got, want, left


@needs_c
@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("name", ["sql", "wl", "seed"])
def test_the_c_walk_mines_what_the_python_walk_mines(
    sources: dict[str, Path], name: str, compact: bool
) -> None:
    got, want, left = _both(sources[name], compact)
    assert got == want
    records = sum(m.records for m in want)
    if name != "seed":  # the C walk takes ordinary DML; Python DDL, direct loads and such
        assert left < records / 2


def _big_endian(log: Path, into: Path) -> Path:
    """``log`` written again big-endian, as a big-endian platform's Oracle writes it: every
    record's vectors read into the redo model and encoded in the other byte order, in the
    same LWNs, through the same framing writer (a current log becomes an archived one)."""
    return _rewritten(log, into, ">")


def _rewritten(log: Path, into: Path, order: str, extra: bytes | None = None) -> Path:
    """``log`` written again in byte order ``order`` (see :func:`_big_endian`), with the
    change vector ``extra`` (in that order) in a record of its own at the end."""
    o: Any = order
    scan = Scan(log)
    records = [
        F.parse_record(bytes(buf[lo : lo + n]), "<", "12c") for _o, _e, buf, lo, n, _s, _t in scan
    ]
    h = scan.header
    assert h is not None and h.order == "<" and h.layout == "12c"
    lwns: list[list[bytes]] = []
    last, time = h.first_scn, 0
    for r in records:
        vectors = [P.encode_vector(P.decode_vector(v), o, h.layout, v.con_id) for v in r.vectors]
        if r.lwn is not None or not lwns:
            lwns.append([])
            time = r.lwn.time if r.lwn is not None else time
        lwns[-1].append(F.build_record(o, r.scn, r.subscn, vectors, r.lwn, r.vld & ~VLD_LWN))
        last = max(last, r.scn)
    if extra is not None:
        last += 1
        lwns.append([F.build_record(o, last, 1, [extra], F.Lwn(0, 1, 0, last, time))])
    nxt = h.next_scn if h.next_scn != OPEN_SCN and extra is None else last + 1
    out = into / f"{'be' if order == '>' else 'le'}_{log.name}"
    out.write_bytes(F.build_log(replace(h, order=o, next_scn=nxt), lwns))
    return out


@needs_c
@pytest.mark.parametrize("name", ["sql", "wl", "seed"])
def test_the_c_walk_mines_big_endian_logs_as_the_python_walk_does(
    sources: dict[str, Path], tmp_path: Path, name: str
) -> None:
    """A big-endian copy of every log: the C walk reads it (it leaves Python no more
    records than on the little-endian log) and mines what the Python walk mines, which is
    what both mine from the little-endian log, offsets aside where the sizes differ."""
    for log in _logs(sources[name]):
        be = _big_endian(Path(log), tmp_path)
        got, want, left = _both(sources[name], True, str(be))
        assert got == want
        little, _, left_le = _both(sources[name], True, log)
        assert left <= left_le
        if Path(log).stat().st_size == be.stat().st_size:
            assert got == little


@needs_c
def test_the_c_walk_reads_direct_loads_and_ddl(sources: dict[str, Path]) -> None:
    """19.1 (INSERT /*+ APPEND */) and 24.1 (CREATE TABLE, a TRUNCATE with GETTRUNCATES as a
    purge of the table's rows, without it as DDL) are read by the C walk, not left to Python,
    and mine what Python mines."""
    emp = frozenset({("HR", "EMP")})
    for selection in (Selection(everything=True), Selection(everything=True, truncates=emp)):
        ops: set[str] = set()
        got, want, _ = _both(sources["sql"], True, selection=selection, ops=ops)
        assert got == want
        assert not ops & {"19.1", "24.1"}, ops
    root = sources["sql"]
    plan = mine_plan(load_dictionary(root / "dictionary.json"), selection)
    events = [e for log in _logs(root) for e in Miner(plan).walk(log, 0, None)[0]]
    assert any(e[0] == int(Kind.ROW) and e[8] == int(IOType.PURGEDATA) for e in events)
    assert any(e[0] == int(Kind.ROW) and e[13].startswith("dl:") for e in events)
    assert any(e[0] == int(Kind.DDL) and e[16].startswith("CREATE TABLE") for e in events)


@needs_c
@settings(max_examples=25, deadline=None)
@given(cut=st.integers(600, 60_000), flip=st.one_of(st.none(), st.integers(600, 60_000)))
def test_the_c_walk_stops_and_fails_where_the_python_walk_does(
    sources: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
    cut: int,
    flip: int | None,
) -> None:
    bad = _damaged(sources["wl"], tmp_path_factory, cut, flip)
    got, want, _ = _both(sources["wl"], True, str(bad))
    assert got == want


@needs_c
@settings(max_examples=500, deadline=None)
@given(st.binary(min_size=1, max_size=24))
def test_the_c_number_text_is_the_python_one_where_it_has_one(raw: bytes) -> None:
    assert _C is not None
    text = _C.number_text(raw)
    if text is not None:
        assert text == number_text(raw)


@kernels.needs("redomine")
@given(
    st.integers(0, 3000).flatmap(lambda n: st.binary(min_size=n, max_size=n)),
    st.integers(0, 15),
)
def test_the_c_crc32_is_zlibs(data: bytes, skip: int) -> None:
    """Short buffers go through the tables, from 64 bytes on the carry-less folding (on a
    CPU with PCLMULQDQ): both, at any alignment, give zlib's CRC. (The length is drawn
    first: binary() alone keeps to short buffers and never reached the folding.)"""
    view = memoryview(data)[skip:]
    assert _KERNEL is not None
    assert _KERNEL.crc32(view) == zlib.crc32(view)


@kernels.needs("redomine")
def test_the_c_crc32_is_zlibs_at_every_length_around_the_folding() -> None:
    """Every length to 300 bytes (the tables, the folding's 64-byte start, its 16-byte
    steps and the tails) and some large ones, at every alignment of a 16-byte load."""
    rnd = random.Random(13)
    for n in [*range(301), 1000, 4095, 4096, 65_537]:
        data = rnd.randbytes(n + 15)
        for skip in range(16):
            view = memoryview(data)[skip : skip + n]
            assert _KERNEL is not None
            assert _KERNEL.crc32(view) == zlib.crc32(view), (n, skip)


_parts = st.tuples(
    st.binary(min_size=1, max_size=40),  # table name
    st.binary(max_size=300),  # data entries
    st.binary(max_size=40),  # key before image
    st.one_of(st.none(), st.binary(min_size=18, max_size=18)),  # ORAROWID
)


@needs_c
@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from([2, 3, 5, 15, 115, 134, 15 | BEFORE_IMAGE]),
            st.integers(0, 2**40),
            _parts,
        ),
        max_size=6,
    ),
    scn=st.integers(0, 2**48),
    xid=st.from_regex(r"[0-9]{1,5}\.[0-9]{1,3}\.[0-9]{1,9}", fullmatch=True),
    sequence=st.integers(0, 2**32 - 1),
    time_us=st.integers(-(2**62), 2**62),
)
def test_the_c_assembly_of_a_transaction_is_row_records(
    rows: list[tuple[int, int, tuple[bytes, bytes, bytes, bytes | None]]],
    scn: int,
    xid: str,
    sequence: int,
    time_us: int,
) -> None:
    from engine.extract.tasks import closing

    events = [(0, xid, 1, pos, 0, 0, 0, 0, io, "T", "", (), (), "", "", "", "", p)
              for io, pos, p in rows]  # fmt: skip
    got = closing._records(events, scn, xid, sequence, time_us)
    with patch.object(closing, "_KIT", None):  # the Python assembly
        assert got == closing._records(events, scn, xid, sequence, time_us)


def _rewrite_record(path: Path, index: int, at: int, xor: int, order: str = "<") -> bool:
    """Change byte ``at`` of record ``index`` and reseal the block it lies in, so that the
    record itself is what is damaged, not its block; False: no such record."""
    recs = [(o, n) for o, _e, _b, _lo, n, _s, _t in Scan(path)]
    if index >= len(recs):
        return False
    offset, size = recs[index]
    bs = 512
    payload = bs - 16
    blk, within = divmod(offset, bs)
    k = within - 16 + at % size
    blk, within = blk + k // payload, 16 + k % payload
    data = bytearray(path.read_bytes())
    data[blk * bs + within] ^= xor
    seal(data, blk * bs, bs, order)  # type: ignore[arg-type]
    path.write_bytes(bytes(data))
    return True


@needs_c
@settings(max_examples=50, deadline=None)
@given(frame=st.integers(0, 120), at=st.integers(0, 4000), xor=st.integers(1, 255))
def test_the_c_walk_decodes_a_damaged_record_as_the_python_walk_does(
    sources: dict[str, Path], tmp_path_factory: pytest.TempPathFactory, frame: int, at: int,
    xor: int,
) -> None:  # fmt: skip
    copy = _damaged(sources["wl"], tmp_path_factory, None)
    assume(_rewrite_record(copy, frame, at, xor))
    got, want, _ = _both(sources["wl"], False, str(copy))
    assert got == want


@pytest.fixture(scope="module")
def big_endian_wl(sources: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _big_endian(Path(_logs(sources["wl"])[0]), tmp_path_factory.mktemp("be"))


@needs_c
@settings(max_examples=30, deadline=None)
@given(frame=st.integers(0, 120), at=st.integers(0, 4000), xor=st.integers(1, 255))
def test_the_c_walk_decodes_a_damaged_big_endian_record_as_the_python_walk_does(
    sources: dict[str, Path], big_endian_wl: Path, tmp_path_factory: pytest.TempPathFactory,
    frame: int, at: int, xor: int,
) -> None:  # fmt: skip
    copy = tmp_path_factory.mktemp("damaged") / big_endian_wl.name
    shutil.copyfile(big_endian_wl, copy)
    assume(_rewrite_record(copy, frame, at, xor, ">"))
    got, want, _ = _both(sources["wl"], False, str(copy))
    assert got == want


def _records_with(path: Path, ops: set[str]) -> list[int]:
    """The indices of the records of ``path`` that hold a vector of one of ``ops``."""
    out = []
    for i, (_o, _e, buf, lo, n, _s, _t) in enumerate(Scan(path)):
        rec = F.parse_record(bytes(buf[lo : lo + n]), "<", "12c")
        if any(v.op in ops for v in rec.vectors):
            out.append(i)
    return out


@needs_c
@settings(max_examples=150, deadline=None)
@given(pick=st.integers(0, 1000), at=st.integers(0, 4000), xor=st.integers(1, 255))
def test_the_c_walk_decodes_a_damaged_direct_load_or_ddl_as_the_python_walk_does(
    sources: dict[str, Path], tmp_path_factory: pytest.TempPathFactory, pick: int, at: int,
    xor: int,
) -> None:  # fmt: skip
    """Any byte of a 19.1 or 24.1 record (the C walk's block-image and DDL readers) damaged
    and its block resealed: C and Python mine the same, or fail the same way."""
    copy = _damaged(sources["sql"], tmp_path_factory, None)
    targets = _records_with(copy, {"19.1", "24.1"})
    assert targets
    assert _rewrite_record(copy, targets[pick % len(targets)], at, xor)
    got, want, _ = _both(sources["sql"], False, str(copy))
    assert got == want


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("captured", [True, False])
def test_an_array_update_of_a_captured_table_stops_both_walks(
    sources: dict[str, Path], tmp_path: Path, order: str, captured: bool
) -> None:
    """11.19 (Oracle's multi-row update, not decoded: docs/redo_format.md) of a captured
    table: the C walk and the Python walk both stop, naming the table and the opcode, rather
    than lose its rows; of another object it is stepped over like any other vector."""
    root = sources["sql"]
    emp = load_dictionary(root / "dictionary.json").get("HR", "EMP")
    o: Any = order
    vec = F.build_vector("12c", o, [bytes(24), bytes(24)], layer=11, code=19, cls=1,
                         dba=0x01800010, obj=emp.dataobj if captured else 999_999)  # fmt: skip
    log = _rewritten(Path(_logs(root)[0]), tmp_path, order, vec)
    got, want, _ = _both(root, True, str(log))
    assert got == want
    if captured:
        assert want == [RedoCorruptError]
        plan = mine_plan(load_dictionary(root / "dictionary.json"), Selection(everything=True))
        with pytest.raises(RedoCorruptError, match=r"HR\.EMP: an array update .*\(11\.19\)"):
            Miner(plan).mine(str(log), 0, None)
    else:
        assert want[0].records == len(list(Scan(log)))
