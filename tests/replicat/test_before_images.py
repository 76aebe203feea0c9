"""Before images from the Extract to the target, on SQLite and on PostgreSQL: the trail an
Extract writes with GETUPDATEBEFORES (a before-image record ahead of each update, or with
UPDATERECORDFORMAT FULL / COMPACT one GGSUnifiedUpdate record) leaves the target as the
source is. A before-image record is not applied; a unified record's update finds its row
by the key of its before image (COMPACT: the after image has no key); with
GETUPDATEBEFORES and INSERTALLRECORDS the Replicat inserts the before images in the
history. A trail whose before image is swapped leaves the target wrong: the check can fail.
"""

from __future__ import annotations

import dataclasses
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from replicat_helpers import add_group, model
from test_map_options import Db
from test_map_options import db as db_fixture  # noqa: F401 (a fixture)

from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.extract.run import ExtractRun
from engine.home.groups import GroupKind, GroupStore, SourceType
from engine.home.layout import Home
from engine.pump.pump import Pump
from engine.replicat.engine import ReplicatRun
from engine.runtime.events import Severity
from engine.trail.codec import encode_record
from engine.trail.layout import IOType
from engine.trail.model import TableDef, TrailRecord
from engine.trail.reader import TrailReader
from engine.trail.writer import TrailWriter
from params.check import check_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FORMS = {
    "record": "",
    "full": "UPDATERECORDFORMAT FULL\n",
    "compact": "UPDATERECORDFORMAT COMPACT\n",
}
SOURCE = [
    "CREATE TABLE hr.acct (id NUMBER PRIMARY KEY, owner VARCHAR2(20), bal NUMBER)",
    "INSERT INTO hr.acct VALUES (1, 'ann', 100)",
    "INSERT INTO hr.acct VALUES (2, 'bob', 50)",
    "INSERT INTO hr.acct VALUES (4, 'dan', 7)",
    "COMMIT",
    "UPDATE hr.acct SET bal = 120 WHERE id = 1",
    "UPDATE hr.acct SET id = 3, bal = 55 WHERE id = 2",  # a key update
    "COMMIT",
    "UPDATE hr.acct SET owner = 'cy', bal = 130 WHERE id = 1",
    "UPDATE hr.acct SET bal = 8 WHERE id = 4",
    "COMMIT",
]
EXPECTED = [(1, "cy", 130), (3, "bob", 55), (4, "dan", 8)]
TARGET = (
    "CREATE TABLE hr.acct (id integer PRIMARY KEY, owner varchar(20), bal numeric)",
    "CREATE TABLE hr.acct_hist (id integer, owner varchar(20), bal numeric, ba varchar(10), "
    "op varchar(20))",
)


@pytest.fixture(scope="module")
def trails(tmp_path_factory: pytest.TempPathFactory, spark: SparkSession) -> dict[str, Path]:
    """The trail (its directory) the Extract writes in each form, from the same source."""
    out = {}
    for form, fmt in FORMS.items():
        home = Home(tmp_path_factory.mktemp(form) / "home")
        home.create_subdirs()
        with Database(create_database(home.dirdb, "src")) as src:
            session = src.session("s1")
            for sql in SOURCE:
                execute(src, session, sql)
        prm = f"EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\n{fmt}GETUPDATEBEFORES\nTABLE hr.acct;\n"
        checked = check_text(prm)
        assert not checked.diagnostics
        run = ExtractRun(home, checked.model, None, lambda c, s, t: None, spark=spark,
                         durable=False)  # fmt: skip
        run.run(threading.Event(), stop_at_eof=True)
        run.close()
        out[form] = home.root / "dirdat"
    return out


@pytest.fixture
def target(db_fixture: Db) -> Db:  # noqa: F811
    """A target database of test_map_options (SQLite in the home, or the throwaway
    PostgreSQL), with this module's tables too."""
    db_fixture.sql(*TARGET)
    return db_fixture


def replicate(target: Db, trail: Path, params: str) -> ReplicatRun:
    """Replicat REP from a copy of ``trail`` (a dirdat) into the target, to its end."""
    home = target.home
    for f in trail.glob("aa*"):
        shutil.copy(f, home.root / "dirdat" / f.name)
    group = add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, "./dirdat/aa")
    GroupStore(home).save(dataclasses.replace(group, checkpoint_table=None))
    seen: list[str] = []

    def emit(code: str, _sev: Severity, text: str) -> None:
        seen.append(f"{code} {text}")

    text = f"REPLICAT rep\nTARGETDB {target.targetdb}\n{params}"
    run = ReplicatRun(home, model(home, "rep", text), group, emit)
    try:
        run.run(lambda: False, stop_at_eof=True)
    finally:
        run.close()
    return run


def _records(trail: Path) -> list[TrailRecord]:
    prefix = "bb" if trail.name == "dirrmt" else "aa"
    recs = [r for _, r in TrailReader(str(trail / prefix)).records()]
    return [r for r in recs if r.io_type != IOType.METADATA]


@pytest.mark.parametrize("form", list(FORMS))
def test_the_target_is_the_source(target: Db, trails: dict[str, Path], form: str) -> None:
    recs = _records(trails[form])
    if form == "record":
        assert sum(r.before_after == "B" for r in recs) == 3  # the updates that keep the key
    else:
        assert sum(r.io_type == IOType.UNIFIED_UPDATE for r in recs) == 3
    run = replicate(target, trails[form], "MAP hr.acct, TARGET hr.acct;\n")
    assert target.rows("acct", "1") == EXPECTED
    assert run.applier.counts == {"inserts": 3, "updates": 4, "deletes": 0, "truncates": 0}
    assert run.stats_book.total("UPDATE") == 4  # STATS: a before image is no operation
    assert run.before_images == (3 if form == "record" else 0)


@pytest.mark.parametrize("get", [True, False], ids=["GETUPDATEBEFORES", "IGNOREUPDATEBEFORES"])
def test_insertallrecords_keeps_the_before_images_with_getupdatebefores(
    target: Db, trails: dict[str, Path], get: bool
) -> None:
    toggle = "GETUPDATEBEFORES\n" if get else ""
    replicate(
        target,
        trails["record"],
        f"{toggle}MAP hr.acct, TARGET hr.acct_hist, INSERTALLRECORDS, COLMAP (USEDEFAULTS, "
        "ba = @GETENV ('GGHEADERINFO', 'BEFOREAFTERINDICATOR'), op = GGS_OP_TYPE);\n",
    )
    befores = [(1, None, 100, "BEFORE"), (1, "ann", 120, "BEFORE"), (4, None, 7, "BEFORE")]
    hist = sorted((h[:4] for h in target.rows("acct_hist", "1")), key=lambda h: (h[0], h[2]))
    assert [h for h in hist if h[3] == "BEFORE"] == (befores if get else [])
    assert [h for h in hist if h[3] == "AFTER"] == [
        (1, "ann", 100, "AFTER"), (1, None, 120, "AFTER"), (1, "cy", 130, "AFTER"),
        (2, "bob", 50, "AFTER"), (3, None, 55, "AFTER"), (4, "dan", 7, "AFTER"),
        (4, None, 8, "AFTER"),
    ]  # fmt: skip


def _swapped(trail: Path, out: Path) -> Path:
    """``trail``'s records with the key of the last update's before image made another
    row's (ID 4 -> 1): what a miner that mixed up rows would write."""
    recs = [r for _, r in TrailReader(str(trail / "aa")).records()]
    last = max(i for i, r in enumerate(recs) if r.io_type == IOType.UNIFIED_UPDATE)
    assert recs[last].before_columns == ((0, "4"), (2, "7"))
    bad = dataclasses.replace(recs[last], before_columns=((0, "1"), (2, "7")))
    writer = TrailWriter.open(out / "aa", durable=False)
    writer.define_table(TableDef("HR.ACCT", ("ID", "OWNER", "BAL")))
    writer.append_many(encode_record(r) for r in [*recs[:last], bad, *recs[last + 1 :]]
                       if r.io_type != IOType.METADATA)  # fmt: skip
    writer.close()
    return out


def test_a_swapped_before_image_leaves_the_target_wrong(
    target: Db, trails: dict[str, Path], tmp_path: Path
) -> None:
    """COMPACT: the update finds its row by the key of the before image only, so the
    check above fails on a trail whose before image names another row."""
    (tmp_path / "bad").mkdir()
    bad = _swapped(trails["compact"], tmp_path / "bad")
    replicate(target, bad, "MAP hr.acct, TARGET hr.acct;\n")
    rows = target.rows("acct", "1")
    assert rows != EXPECTED
    assert (1, "cy", 8) in rows and (4, "dan", 7) in rows  # row 1 got row 4's update


def pump(tmp_path: Path, trail: Path, prm: str) -> Path:
    """Pump PMP from a copy of ``trail`` (a dirdat) to ./dirrmt/bb; the dirrmt."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    for f in trail.glob("aa*"):
        shutil.copy(f, home.root / "dirdat" / f.name)
    group = add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    prm = f"EXTRACT pmp\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/bb\n{prm}"
    run = Pump(home, model(home, "pmp", prm), group, lambda c, s, t: None, durable=False)
    run.run(lambda: False, stop_at_eof=True)
    run.close()
    return home.root / "dirrmt"


@pytest.mark.parametrize("form", ["record", "compact"])
@pytest.mark.parametrize("passthru", ["PASSTHRU", "NOPASSTHRU"])
def test_the_pump_passes_before_images_through(
    tmp_path: Path, trails: dict[str, Path], form: str, passthru: str
) -> None:
    shipped_to = pump(tmp_path, trails[form], f"{passthru}\nTABLE hr.acct;\n")

    def images(trail: Path) -> list[tuple[Any, ...]]:
        return [(r.op_name, r.before_after, r.columns, r.before_columns) for r in _records(trail)]

    shipped = images(shipped_to)
    assert shipped == images(trails[form]) and shipped
    assert any(b == "B" and op != "Delete" for op, b, _, _ in shipped) == (form == "record")


@pytest.mark.parametrize("form", ["record", "compact"])
def test_the_pumps_colsexcept_removes_the_column_from_before_images(
    tmp_path: Path, trails: dict[str, Path], form: str
) -> None:
    recs = _records(pump(tmp_path, trails[form], "TABLE hr.acct, COLSEXCEPT (owner);\n"))
    assert len(recs) == len(_records(trails[form]))
    assert all(1 not in dict(r.columns) and 1 not in dict(r.before_columns) for r in recs)
    befores = [r for r in recs if r.before_columns or r.before_after == "B"]
    assert any(dict(r.before_columns or r.columns).get(2) == "120" for r in befores)
