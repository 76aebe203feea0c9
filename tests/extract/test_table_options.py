"""Extract TABLE row options end to end: COLS / COLSEXCEPT, WHERE, FILTER, TOKENS and
TABLEEXCLUDE wildcards, on real Spark; the trail is compared with a golden rendering
(``--regen-golden`` rewrites it) and shown by Logdump."""

from __future__ import annotations

import io
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from engine.extract.run import ExtractRun
from engine.extract.start import ExtractError
from engine.home.layout import Home
from engine.logdump.session import LogdumpSession
from engine.trail.codec import user_tokens
from engine.trail.layout import IOType
from engine.trail.model import TrailRecord
from engine.trail.reader import TrailReader
from params.check import check_text
from tests.harness import golden

from .conftest import run_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

GOLDEN = Path(__file__).parent / "golden" / "table_options.txt"

PRM = """EXTRACT e1
SOURCEDB src
EXTTRAIL ./dirdat/aa
TABLEEXCLUDE hr.skip*;
TABLE hr.emp, COLSEXCEPT (secret), WHERE (id > 1 AND secret <> @NULL),
  TOKENS (TKN-OP = @GETENV ('GGHEADERINFO', 'OPTYPE'), TKN-GROUP = @GETENV ('GGENVIRONMENT', 'GROUPNAME'),
          TKN-HOST = @GETENV ('GGENVIRONMENT', 'HOSTNAME'), TKN-TABLE = GGS_TABLE_NAME,
          TKN-TRAN_IND = @GETENV ('GGHEADERINFO', 'TRANSACTIONINDICATOR'),
          TKN-NAME = @STRUP (@STRCAT (name, '/', @STRNUM (id, RIGHTZERO, 3))));
TABLE hr.flt, FILTER (ON UPDATE, sal > 100);
TABLE hr.few, COLS (name);
TABLE hr.kc, KEYCOLS (code);
TABLE hr.*;
"""
DDL = [
    ("s1", "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20), secret VARCHAR2(20))"),
    ("s1", "CREATE TABLE hr.flt (id NUMBER PRIMARY KEY, sal NUMBER)"),
    ("s1", "CREATE TABLE hr.few (id NUMBER PRIMARY KEY, name VARCHAR2(20), sal NUMBER)"),
    ("s1", "CREATE TABLE hr.other (id NUMBER PRIMARY KEY, note VARCHAR2(20))"),
    ("s1", "CREATE TABLE hr.skipme (id NUMBER PRIMARY KEY)"),
    ("s1", "CREATE TABLE hr.kc (id NUMBER PRIMARY KEY, code VARCHAR2(5), v NUMBER)"),
]
WORK = [
    ("s1", "INSERT INTO hr.emp VALUES (1, 'ann', 'pw1')"),  # WHERE id > 1: out
    ("s1", "INSERT INTO hr.emp VALUES (2, 'bob', 'pw2')"),
    ("s1", "INSERT INTO hr.emp VALUES (3, 'cy', NULL)"),  # secret NULL: out
    ("s1", "INSERT INTO hr.other VALUES (1, 'kept')"),
    ("s1", "INSERT INTO hr.skipme VALUES (1)"),  # TABLEEXCLUDE
    ("s1", "COMMIT"),
    ("s1", "INSERT INTO hr.flt VALUES (1, 50)"),  # FILTER ON UPDATE: inserts pass
    ("s1", "UPDATE hr.flt SET sal = 60 WHERE id = 1"),  # fails the filter
    ("s1", "UPDATE hr.flt SET sal = 500 WHERE id = 1"),
    ("s1", "INSERT INTO hr.few VALUES (7, 'dee', 9)"),  # COLS (name): id (key) and name
    ("s1", "COMMIT"),
    ("s2", "UPDATE hr.emp SET secret = 'new' WHERE id = 2"),  # key + secret: secret goes
    ("s2", "DELETE FROM hr.emp WHERE id = 1"),  # the delete carries no SECRET: unknown, out
    ("s2", "COMMIT"),
    ("s3", "INSERT INTO hr.kc VALUES (1, 'k1', 5)"),
    ("s3", "DELETE FROM hr.kc WHERE id = 1"),  # KEYCOLS (code): the delete carries CODE
    ("s3", "COMMIT"),
]


def extract(home: Home, spark: SparkSession, prm: str = PRM, *, compact: bool = True) -> ExtractRun:
    result = check_text(prm)
    assert not [d for d in result.diagnostics if d.is_error], result.diagnostics
    run = ExtractRun(home, result.model, None, lambda c, s, t: None, spark=spark, durable=False)
    # compact: transactions seen whole in a task are closed there (the rules run in the
    # task); not: every row reaches the driver, whose TableRules apply them at commit
    run.capture.compact = compact
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    return run


def records(home: Home) -> list[TrailRecord]:
    return [r for _, r in TrailReader(str(home.root / "dirdat" / "aa")).records()]


NAMES = {
    "HR.EMP": ("ID", "NAME", "SECRET"),
    "HR.FLT": ("ID", "SAL"),
    "HR.FEW": ("ID", "NAME", "SAL"),
    "HR.OTHER": ("ID", "NOTE"),
    "HR.KC": ("ID", "CODE", "V"),
}


def render(recs: list[TrailRecord]) -> list[str]:
    """One line per data record: op, table, columns by name, user tokens (the host's
    name replaced: it is this machine's)."""
    host = socket.gethostname()
    out = []
    for r in recs:
        names = NAMES.get(r.table, ())
        cols = " ".join(f"{names[i] if i < len(names) else i}={v}" for i, v in r.columns)
        toks = " ".join(
            f"{k}={'<host>' if v == host else 'NULL' if v is None else v}"
            for k, v in user_tokens(r)
        )
        out.append(f"{r.op_name} {r.table} ind={r.trans_ind} [{cols}] {toks}".rstrip())
    return out


@pytest.mark.parametrize("compact", [True, False], ids=["in-task", "on-driver"])
def test_table_row_options_shape_the_trail(
    home: Home, source: Any, spark: SparkSession, compact: bool
) -> None:
    _, open_db = source
    with open_db() as db:
        run_sql(db, [*DDL, *WORK])
    run = extract(home, spark, compact=compact)
    recs = records(home)
    data = [r for r in recs if r.io_type != IOType.METADATA]
    got = render(data)
    if golden.regenerating():
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text("\n".join(got) + "\n")
    assert got == GOLDEN.read_text().splitlines()
    # what the golden file holds, said plainly
    emp = [r for r in data if r.table == "HR.EMP"]
    assert [dict(r.columns).get(0) for r in emp] == ["2", "2"]
    assert all(2 not in dict(r.columns) for r in emp)  # SECRET is gone
    assert not any(r.table == "HR.SKIPME" for r in data)
    flt = [(r.op_name, r.columns) for r in data if r.table == "HR.FLT"]
    assert flt == [("Insert", ((0, "1"), (1, "50"))), ("FieldComp", ((0, "1"), (1, "500")))]
    kc = [(r.op_name, r.columns) for r in data if r.table == "HR.KC"]
    assert kc == [("Insert", ((0, "1"), (1, "k1"), (2, "5"))), ("Delete", ((1, "k1"),))]
    few = [r.columns for r in data if r.table == "HR.FEW"]
    assert few == [((0, "7"), (1, "dee"))]
    tokens = dict(user_tokens(emp[0]))
    assert tokens["TKN-HOST"] == socket.gethostname()
    assert tokens["TKN-OP"] == "INSERT" and tokens["TKN-GROUP"] == "E1"
    assert tokens["TKN-NAME"] == "BOB/002" and tokens["TKN-TRAN_IND"] == "BEGIN"
    # ann, cy, the sal = 60 update, the delete: dropped on the driver or in the tasks
    assert run.capture.rules.filtered == (0 if compact else 4)

    # Logdump shows the user tokens of the record
    trail_file = home.root / "dirdat" / "aa000000000"
    out = io.StringIO()
    session = LogdumpSession(io.StringIO(), out)
    # header, DDR, TDR, the insert (12.2+ trails: the file's DDR before the first TDR)
    for line in (f"open {trail_file}", "next", "next", "next", "next"):
        session.execute(line)
    session.close()
    shown = out.getvalue()
    assert "User tokens:" in shown
    assert "TKN-OP              : INSERT" in shown
    assert "TKN-NAME            : BOB/002" in shown


def test_unknown_column_stops_the_start_with_one_ogg_line(
    home: Home, source: Any, spark: SparkSession
) -> None:
    _, open_db = source
    with open_db() as db:
        run_sql(db, DDL)
    prm = "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\nTABLE hr.emp, WHERE (salary > 5);\n"
    with pytest.raises(ExtractError) as err:
        extract(home, spark, prm)
    assert err.value.code == "OGG-00366"
    assert err.value.text == "Invalid column specified in WHERE of TABLE HR.EMP: SALARY."
    # the failed start closed its trail writer: the same trail can be opened again
    prm = prm.replace("WHERE (salary > 5)", "COLSEXCEPT (secrets)")
    with pytest.raises(ExtractError, match=r"COLSEXCEPT of TABLE HR\.EMP: secrets"):
        extract(home, spark, prm)


def test_a_catalog_on_an_embedded_source_is_said_not_used(home: Home, source: Any) -> None:
    """An embedded database has no containers: a TABLE's catalog (three-part name or
    SOURCECATALOG) is not compared, and the start says so once per statement."""
    prm = (
        "EXTRACT e1\nSOURCEDB src\nTRANLOGOPTIONS EXCLUDEUSER pdb1.app\nEXTTRAIL ./dirdat/aa\n"
        "SOURCECATALOG pdb1\nTABLE hr.*;\n"
    )
    events: list[tuple[str, str]] = []
    run = ExtractRun(
        home, check_text(prm).model, None, lambda c, _s, t: events.append((c, t)),
        spark=None, durable=False,
    )  # fmt: skip
    excluded = run.capture.exclude_users
    run.close()
    assert (
        "OGG-10144",
        "Catalog PDB1 of TABLE hr.* not used: embedded database SRC has no containers.",
    ) in events
    assert (
        "OGG-10144",
        "Catalog PDB1 of TRANLOGOPTIONS EXCLUDEUSER pdb1.app not used: APP is excluded in "
        "every container.",
    ) in events
    assert excluded == {"APP"}
