"""GETUPDATEBEFORES / IGNOREUPDATEBEFORES and UPDATERECORDFORMAT end to end, on real Spark:
the trail of each form is compared with a golden rendering (``--regen-golden``
rewrites it) and shown by Logdump (BeforeAfter B, the Before Image of a unified record).

- no UPDATERECORDFORMAT: an update of a table under GETUPDATEBEFORES is a FieldComp record
  with BeforeAfter B (the old values of the key and the changed columns) and then its
  FieldComp, BeforeAfter A;
- UPDATERECORDFORMAT FULL: one GGSUnifiedUpdate record, before image and after image (the
  key and the changed columns) in it; COMPACT: the same, its after image the changed
  columns only;
- a key update is one GGSKeyFieldComp record (IOType 115), its before image every column the
  redo holds (the key only without GETUPDATEBEFORES); under UPDATERECORDFORMAT one
  GGSUnifiedPKUpdate record (IOType 135, seed 003's "135-UNIFIED PKUPDATE") with the same images;
- IGNOREUPDATEBEFORES turns it off for the TABLE lines after it.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from engine.extract.run import ExtractRun
from engine.home.layout import Home
from engine.logdump.session import LogdumpSession
from engine.trail.layout import IOType
from engine.trail.model import TrailRecord
from engine.trail.reader import TrailReader
from params.check import check_text
from tests.harness import golden

from .conftest import run_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

GOLDEN = Path(__file__).parent / "golden" / "before_images.txt"

PRM = """EXTRACT e1
SOURCEDB src
EXTTRAIL ./dirdat/aa
{format}GETUPDATEBEFORES
TABLE hr.acct;
IGNOREUPDATEBEFORES
TABLE hr.plain;
"""
DDL = [
    ("s1", "CREATE TABLE hr.acct (id NUMBER PRIMARY KEY, owner VARCHAR2(20), bal NUMBER)"),
    ("s1", "CREATE TABLE hr.plain (id NUMBER PRIMARY KEY, v NUMBER)"),
]
WORK = [
    ("s1", "INSERT INTO hr.acct VALUES (1, 'ann', 100)"),
    ("s1", "INSERT INTO hr.acct VALUES (2, 'bob', 50)"),
    ("s1", "INSERT INTO hr.plain VALUES (1, 5)"),
    ("s1", "COMMIT"),
    ("s2", "UPDATE hr.acct SET bal = 120 WHERE id = 1"),  # before image: ID=1 BAL=100
    ("s2", "UPDATE hr.plain SET v = 6 WHERE id = 1"),  # IGNOREUPDATEBEFORES: none
    ("s2", "UPDATE hr.acct SET id = 3, bal = 55 WHERE id = 2"),  # a key update
    ("s2", "COMMIT"),
    ("s3", "UPDATE hr.acct SET owner = 'cy', bal = 130 WHERE id = 1"),
    ("s3", "DELETE FROM hr.acct WHERE id = 3"),
    ("s3", "COMMIT"),
]
NAMES = {"HR.ACCT": ("ID", "OWNER", "BAL"), "HR.PLAIN": ("ID", "V")}
FORMATS = {"record": "", "full": "UPDATERECORDFORMAT FULL\n", "compact": "UPDATERECORDFORMAT\n"}


def extract(home: Home, spark: SparkSession, prm: str, *, compact: bool = True) -> None:
    result = check_text(prm)
    assert not result.diagnostics, result.diagnostics
    run = ExtractRun(home, result.model, None, lambda c, s, t: None, spark=spark, durable=False)
    run.capture.compact = compact
    run.run(threading.Event(), stop_at_eof=True)
    run.close()


def records(home: Home) -> list[TrailRecord]:
    recs = [r for _, r in TrailReader(str(home.root / "dirdat" / "aa")).records()]
    return [r for r in recs if r.io_type != IOType.METADATA]


def render(recs: list[TrailRecord]) -> list[str]:
    """One line per record: op, BeforeAfter, table, before image (when it has one), the
    data area, by column name."""

    def cols(r: TrailRecord, c: Any) -> str:
        names = NAMES.get(r.table, ())
        return " ".join(f"{names[i]}={v}" for i, v in c)

    out = []
    for r in recs:
        before = f" before [{cols(r, r.before_columns)}]" if r.before_columns else ""
        out.append(f"{r.op_name} {r.before_after} {r.table}{before} [{cols(r, r.columns)}]")
    return out


def _golden() -> dict[str, list[str]]:
    """The golden file's sections: ``== form`` then its lines."""
    out: dict[str, list[str]] = {}
    name = ""
    for line in GOLDEN.read_text().splitlines():
        if line.startswith("== "):
            name = line[3:]
            out[name] = []
        elif line:
            out[name].append(line)
    return out


def _write_golden(form: str, lines: list[str]) -> None:
    sections = _golden() if GOLDEN.exists() else {}
    sections[form] = lines
    text = "".join(f"== {k}\n" + "".join(f"{ln}\n" for ln in v) + "\n" for k, v in
                   sorted(sections.items()))  # fmt: skip
    GOLDEN.write_text(text)


def logdump(home: Home, *commands: str) -> str:
    out = io.StringIO()
    session = LogdumpSession(io.StringIO(), out)
    for line in (f"open {home.root / 'dirdat' / 'aa000000000'}", *commands):
        session.execute(line)
    session.close()
    return out.getvalue()


@pytest.mark.parametrize(
    ("form", "compact"),
    [("record", True), ("record", False), ("full", True), ("compact", True)],
    ids=["record-in-task", "record-on-driver", "full", "compact"],
)
def test_before_images_as_goldengate_writes_them(
    home: Home, source: Any, spark: SparkSession, form: str, compact: bool
) -> None:
    _, open_db = source
    with open_db() as db:
        run_sql(db, [*DDL, *WORK])
    extract(home, spark, PRM.format(format=FORMATS[form]), compact=compact)
    got = render(records(home))
    if golden.regenerating():
        _write_golden(form, got)
    assert got == _golden()[form]


def test_the_golden_forms_say_what_the_reference_says() -> None:
    """The golden trails, read plainly (what a mutation of the images would break)."""
    g = _golden()
    # a before-image record ahead of its update: the old values, BeforeAfter B
    assert g["record"][3:5] == [
        "FieldComp B HR.ACCT [ID=1 BAL=100]",
        "FieldComp A HR.ACCT [ID=1 BAL=120]",
    ]
    # IGNOREUPDATEBEFORES for hr.plain; a key update carries every old value it has
    assert g["record"][5:7] == [
        "FieldComp A HR.PLAIN [ID=1 V=6]",
        "GGSKeyFieldComp A HR.ACCT before [ID=2 BAL=50] [ID=3 BAL=55]",
    ]
    assert g["full"][3] == "GGSUnifiedUpdate A HR.ACCT before [ID=1 BAL=100] [ID=1 BAL=120]"
    assert g["compact"][3] == "GGSUnifiedUpdate A HR.ACCT before [ID=1 BAL=100] [BAL=120]"
    assert g["compact"][6] == (
        "GGSUnifiedUpdate A HR.ACCT before [ID=1 OWNER=ann BAL=120] [OWNER=cy BAL=130]"
    )
    for form in ("full", "compact"):  # no record of its own; a key update: IOType 135
        assert not [ln for ln in g[form] if " B HR.ACCT" in ln and "Delete" not in ln]
        assert g[form][5] == g["record"][6].replace("GGSKeyFieldComp", "GGSUnifiedPKUpdate")


@pytest.mark.parametrize("form", ["record", "full"])
def test_logdump_shows_the_before_images(
    home: Home, source: Any, spark: SparkSession, form: str
) -> None:
    _, open_db = source
    with open_db() as db:
        run_sql(db, [*DDL, *WORK])
    extract(home, spark, PRM.format(format=FORMATS[form]))
    # the records Logdump shows, one block each; the first update of HR.ACCT
    blocks = logdump(home, "ghdr on", *["next"] * 14).split("Hdr-Ind")
    op = "FieldComp" if form == "record" else "GGSUnifiedUpdate"
    tail = next(b for b in blocks if op in b and "HR.ACCT" in b)
    if form == "record":
        assert "BeforeAfter:     B  (x42)" in tail
        assert "FieldComp" in tail and "Before Image:" in tail
        assert "After  Image:" not in tail
    else:
        assert "BeforeAfter:     A  (x41)" in tail and "GGSUnifiedUpdate" in tail
        assert "IOType     :   134  (x86)" in tail
        assert tail.index("Before Image:") < tail.index("After  Image:")


@pytest.mark.parametrize("compact", [True, False], ids=["in-task", "on-driver"])
@pytest.mark.parametrize("form", ["record", "full"])
def test_colsexcept_removes_the_column_from_before_images(
    home: Home, source: Any, spark: SparkSession, form: str, compact: bool
) -> None:
    """A column a user excludes is gone from the before images too (the unified record's
    B section, the key update's, the before-image record's data area)."""
    _, open_db = source
    with open_db() as db:
        run_sql(db, [
            ("s1", "CREATE TABLE hr.sec (id NUMBER PRIMARY KEY, secret VARCHAR2(9), v NUMBER)"),
            ("s1", "INSERT INTO hr.sec VALUES (1, 'pw-old', 5)"),
            ("s1", "COMMIT"),
            ("s1", "UPDATE hr.sec SET secret = 'pw-mid', v = 6 WHERE id = 1"),
            ("s1", "UPDATE hr.sec SET id = 2, secret = 'pw-new' WHERE id = 1"),
            ("s1", "COMMIT"),
        ])  # fmt: skip
    prm = (f"EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\n{FORMATS[form]}GETUPDATEBEFORES\n"
           "TABLE hr.sec, COLSEXCEPT (secret);\n")  # fmt: skip
    extract(home, spark, prm, compact=compact)
    recs = records(home)
    assert [r.op_name for r in recs] == {
        "record": ["Insert", "FieldComp", "FieldComp", "GGSKeyFieldComp"],
        "full": ["Insert", "GGSUnifiedUpdate", "GGSUnifiedPKUpdate"],
    }[form]
    assert all(1 not in dict(r.columns) and 1 not in dict(r.before_columns) for r in recs)
    updates = [(r.before_columns, r.columns) for r in recs[1:]]
    assert updates[-1] == (((0, "1"),), ((0, "2"),))
    if form == "record":
        assert updates[0] == ((), ((0, "1"), (2, "5")))
    else:
        assert updates[0] == (((0, "1"), (2, "5")), ((0, "1"), (2, "6")))
