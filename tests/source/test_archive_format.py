"""Archived log names from LOG_ARCHIVE_FORMAT (issue 24 §3): the names Oracle's variables
give, the formats a database may write with (ORA-19905), the embedded database's archiver
naming its copies so, ``ggsci db create --archive-format`` / ``db show`` / ``db logs``, and
the Extract's log catalog finding archives by the format (and by ALTARCHIVEDLOGFORMAT), never
by a file that only sits in the destination."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from engine import storage
from engine.embedded.archiver import ArchiveParams, archive_params, archived_copy
from engine.embedded.catalog import RedoCatalog
from engine.embedded.database import Database, create_database
from engine.embedded.errors import DatabaseError
from engine.embedded.logs import database_identity
from engine.embedded.sql import execute
from engine.redo import catalog as oracle_catalog
from engine.redo.archnames import DEFAULT_FORMAT, archive_name, format_problem, format_regex
from engine.redo.dictionary import load as load_oracle_dictionary
from ggsci.cli_db import app
from params.models import TranlogOptions

FMT = "arch_%t_%S_%r.arc"


# -- the names -------------------------------------------------------------------------------
def test_names_as_oracle_documents_them() -> None:
    ids = {"thread": 1, "sequence": 251, "resetlogs_id": 23452345}
    assert archive_name(DEFAULT_FORMAT, **ids) == "1_251_23452345.dbf"
    # Data Guard's table: %T log_0001, %S log_0000000251, %R log_1_62_0023452345
    assert archive_name("log_%T", **ids) == "log_0001"
    assert archive_name("log_%S", **ids) == "log_0000000251"
    assert archive_name("log_%t_%s_%R", **{**ids, "sequence": 62}) == "log_1_62_0023452345"
    assert archive_name("%d_%D_%a_%A", **ids, dbid=0xBEEF, activation=7) == (
        "beef_0000BEEF_7_0000000007"
    )
    assert archive_name("%t_%s_%r.dbf", thread=12, sequence=10**11, resetlogs_id=1) == (
        "12_100000000000_1.dbf"  # wider than the padding: never cut
    )


@given(
    st.sampled_from([DEFAULT_FORMAT, FMT, "log%T_%S_%R.ARC", "%d-%t-%s-%r-%a", "%S%T%R"]),
    st.integers(1, 65535),
    st.integers(1, 2**40),
    st.integers(0, 2**32 - 1),
    st.integers(0, 2**32 - 1),
)
def test_every_name_matches_its_format(fmt: str, t: int, s: int, r: int, d: int) -> None:
    name = archive_name(fmt, thread=t, sequence=s, resetlogs_id=r, dbid=d)
    assert format_regex(fmt).match(name)
    assert not format_regex(fmt).match(name + ".part")  # a copy under way is not one
    assert not format_regex(fmt).match(f".{name}.123.part")


@pytest.mark.parametrize(
    ("fmt", "problem"),
    [
        ("%t_%s.dbf", "must contain %s, %t and %r (ORA-19905)"),
        ("arch/%t_%s_%r.dbf", "names a directory"),
        ("%t_%s_%r_%h.dbf", "%h is not a variable Oracle writes"),
        ("%t_%s_%r_%x.dbf", "%x is not one of its variables"),
        ("%t_%s_%r%", "% is not one of its variables"),
        ("  ", "is empty"),
    ],
)
def test_formats_a_database_cannot_write_with(fmt: str, problem: str) -> None:
    found = format_problem(fmt)
    assert found is not None and problem in found


def test_a_reader_needs_only_the_sequence() -> None:
    assert format_problem("arch%s_%h.log", writing=False) is None
    assert format_problem("arch%t.log", writing=False) == (
        "LOG_ARCHIVE_FORMAT 'arch%t.log' has no %s (the log sequence number)"
    )
    assert format_problem(FMT) is None and format_problem(DEFAULT_FORMAT) is None


# -- the embedded database's archives ---------------------------------------------------------
def _db(tmp_path: Path, fmt: str = FMT, threads: int = 2) -> tuple[Path, Path]:
    """Database ARC archiving to ``dest`` named by ``fmt``: two switches of every thread,
    rows on each; then returns (root, dest)."""
    dest = tmp_path / "arch"
    root = create_database(
        tmp_path / "dirdb", "arc", threads, archive=ArchiveParams(str(dest), fmt)
    )
    with Database(root) as db:
        s = {t: db.session(f"S{t}", thread=t) for t in range(1, threads + 1)}
        execute(db, s[1], "CREATE TABLE hr.t (id NUMBER PRIMARY KEY, pad VARCHAR2(100))")
        n = 0
        for _ in range(2):
            for t in s:
                n += 1
                execute(db, s[t], f"INSERT INTO hr.t VALUES ({n}, 'row {n}')")
                execute(db, s[t], "COMMIT")
            db.switch_log()
        assert not db.archiver or not db.archiver.errors
    return root, dest


def test_the_archiver_names_copies_by_the_format(tmp_path: Path) -> None:
    root, dest = _db(tmp_path)
    assert archive_params(root) == ArchiveParams(str(dest), FMT)
    names = sorted(p.name for p in dest.iterdir())
    assert names == [f"arch_{t}_{s:010d}_1.arc" for t in (1, 2) for s in (1, 2)]
    for t in (1, 2):
        for s in (1, 2):
            copy = Path(str(archived_copy(root, t, s)))
            assert copy.read_bytes() == (root / "redo" / f"t{t}" / f"{s:09d}.log").read_bytes()
    # the headers say the same: Oracle's reader lists them by thread and sequence
    found = oracle_catalog.list_logs(str(dest), FMT)
    assert [(f.thread, f.sequence, f.header.resetlogs_id) for f in found] == [
        (1, 1, 1), (1, 2, 1), (2, 1, 1), (2, 2, 1)
    ]  # fmt: skip
    assert {f.header.dbid for f in found} == {database_identity(root / "redo").dbid}


def test_the_dbid_and_padded_parts_come_from_the_log_header(tmp_path: Path) -> None:
    root, dest = _db(tmp_path, "%D-%d-%T-%S-%R-%a.log", threads=1)
    dbid = database_identity(root / "redo").dbid
    assert sorted(p.name for p in dest.iterdir()) == [
        f"{dbid:08X}-{dbid:x}-0001-{s:010d}-0000000001-0.log" for s in (1, 2)
    ]
    assert Path(str(archived_copy(root, 1, 2))).name == sorted(p.name for p in dest.iterdir())[1]


def test_a_database_made_with_a_bad_format_is_not_made(tmp_path: Path) -> None:
    with pytest.raises(DatabaseError) as err:
        create_database(tmp_path, "bad", archive=ArchiveParams(None, "arch_%s.arc"))
    assert err.value.code == "GGS-SRC-0110"
    assert not (tmp_path / "BAD").exists()


def _tranlog(**kw: object) -> TranlogOptions:
    return TranlogOptions(archived_log_only=True, **kw)  # type: ignore[arg-type]


def test_the_catalog_finds_archives_by_their_format(tmp_path: Path) -> None:
    root, dest = _db(tmp_path)
    (dest / "README").write_text("not a log")
    (dest / "arch_1_0000000009_1.arc.123.part").write_bytes(b"a copy under way")
    (dest / "old").mkdir()  # a directory below: not the destination's
    shutil.copy(dest / "arch_1_0000000001_1.arc", dest / "old" / "arch_1_0000000003_1.arc")
    logs = RedoCatalog.for_extract(root, _tranlog()).logs()
    assert [(i.thread, i.sequence, Path(i.location).name) for i in logs] == [
        (1, 1, "arch_1_0000000001_1.arc"),
        (1, 2, "arch_1_0000000002_1.arc"),
        (2, 1, "arch_2_0000000001_1.arc"),
        (2, 2, "arch_2_0000000002_1.arc"),
    ]
    assert [i.sequence for i in RedoCatalog.for_extract(root, _tranlog()).logs(2)] == [1, 2]
    # another location whose names follow another format: ALTARCHIVEDLOGFORMAT
    alt = tmp_path / "alt"
    alt.mkdir()
    for p in dest.glob("*.arc"):
        _, t, s, r = p.stem.split("_")
        shutil.copy(p, alt / f"{int(s)}-{t}-{r}.log")
    both = _tranlog(alt_archive_log_dests=(str(alt),), alt_archived_log_format="%s-%t-%r.log")
    assert [(i.thread, i.sequence) for i in RedoCatalog.for_extract(root, both).logs()] == [
        (1, 1), (1, 2), (2, 1), (2, 2)
    ]  # fmt: skip
    # the mutation: the database's own format over that location finds nothing there
    wrong = _tranlog(alt_archive_log_dests=(str(alt),))
    assert RedoCatalog.for_extract(root, wrong).logs() == []


def test_a_renamed_archive_is_what_its_header_says(tmp_path: Path) -> None:
    """Names are a filter; thread and sequence come from the header: a copy named as
    another sequence is still read as the one it is (a gap is then named by the header)."""
    root, dest = _db(tmp_path, threads=1)
    (dest / "arch_1_0000000001_1.arc").rename(dest / "arch_1_0000000007_1.arc")
    logs = RedoCatalog.for_extract(root, _tranlog()).logs()
    assert [(i.sequence, Path(i.location).name) for i in logs] == [
        (1, "arch_1_0000000007_1.arc"),
        (2, "arch_1_0000000002_1.arc"),
    ]


def test_dictionary_types_as_dba_tab_cols_names_them() -> None:
    """A dictionary given to the database (``import-dump --dictionary``) may name any type
    its codecs know: each exported as Oracle's dictionary shows it, and a national-character
    value (UTF-8 here: national character set UTF8) decodes through the redo reader."""
    from engine.embedded.dictionary import ColumnDef, Dictionary, TableDef
    from engine.embedded.oradict import oracle_dictionary
    from engine.redo.values import decode_value

    cols = tuple(
        ColumnDef(n, t, length=ln)
        for n, t, ln in [
            ("I", "INTEGER", 0),
            ("F", "FLOAT", 0),
            ("V", "VARCHAR", 5),
            ("N", "NVARCHAR2", 7),
            ("C", "NCHAR", 2),
        ]
    )
    dic = Dictionary({"A.T": TableDef("A", "T", 9, 10, cols, key=("I",))})
    (t,) = oracle_dictionary(dic, 77).tables
    assert [(c.type, c.length, c.precision, c.scale, c.charset_form) for c in t.columns] == [
        ("NUMBER", 22, None, 0, 0),
        ("FLOAT", 22, 126, None, 0),
        ("VARCHAR2", 5, None, None, 1),
        ("NVARCHAR2", 7, None, None, 2),
        ("NCHAR", 2, None, None, 2),
    ]
    assert (t.obj, t.data_objs, t.key) == (9, (10,), ("I",))
    exported = oracle_dictionary(dic, 77)
    n = t.columns[3]
    assert decode_value(n.type, "ñé€".encode(), exported.charset(n)) == "ñé€"
    # without a national character set of UTF8, AL16UTF16 (Oracle's default) as before
    assert decode_value("NVARCHAR2", "ñé".encode("utf-16-be")) == "ñé"


# -- ggsci db ---------------------------------------------------------------------------------
def _ggsci(tmp_path: Path, *args: str) -> tuple[int, str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    r = CliRunner().invoke(app, [*args, "--home", str(tmp_path / "home")])
    return r.exit_code, r.output


def test_db_create_show_logs_and_a_bad_format(tmp_path: Path) -> None:
    dest = tmp_path / "arch"
    code, out = _ggsci(tmp_path, "create", "src", "--archive-format", "arch_%s.arc")
    assert (code, out) == (
        1,
        "GGS-SRC-0110: LOG_ARCHIVE_FORMAT 'arch_%s.arc' must contain %s, %t and %r (ORA-19905)\n",
    )
    assert _ggsci(tmp_path, "list")[1] == "No databases.\n"  # nothing made
    args = ("create", "src", "--threads", "2", "--archive-dest", str(dest))
    assert _ggsci(tmp_path, *args, "--archive-format", FMT)[0] == 0
    code, out = _ggsci(tmp_path, "show", "SRC")
    assert code == 0
    shown = dict(line.split(":", 1) for line in out.splitlines())
    assert shown["LOG_ARCHIVE_FORMAT"].strip() == FMT
    assert shown["LOG_ARCHIVE_DEST"].strip() == str(dest)
    assert shown["THREADS"].strip() == "2" and shown["RESETLOGS_ID"].strip() == "1"
    assert _ggsci(tmp_path, "archive-dest", "SRC")[1] == (
        f"LOG_ARCHIVE_DEST: {dest}\nLOG_ARCHIVE_FORMAT: {FMT}\n"
    )
    assert _ggsci(tmp_path, "sql", "SRC", "CREATE TABLE t (id NUMBER PRIMARY KEY)")[0] == 0
    assert _ggsci(tmp_path, "switch-log", "SRC", "--thread", "1")[0] == 0
    code, out = _ggsci(tmp_path, "logs", "SRC")
    lines = out.splitlines()
    assert code == 0 and [ln.split()[:3] for ln in lines] == [
        ["1", "1", "ARCHIVED"], ["1", "2", "CURRENT"]
    ]  # fmt: skip
    assert lines[0].endswith(f"  archived as {dest}/arch_1_0000000001_1.arc")
    assert "archived as" not in lines[1]
    # a new destination keeps the format
    assert _ggsci(tmp_path, "archive-dest", "SRC", str(tmp_path / "two"))[0] == 0
    assert archive_params(tmp_path / "home" / "dirdb" / "SRC").format == FMT


def test_db_dictionary_is_what_attach_reads(tmp_path: Path) -> None:
    """``db dictionary`` writes ggsci's Oracle dictionary JSON; ``db attach`` of the
    database's archive destination with its format and that dictionary lists the logs."""
    dest = tmp_path / "arch"
    made = _ggsci(tmp_path, "create", "src", "--archive-dest", str(dest), "--archive-format", FMT)
    assert made[0] == 0
    ddl = (
        "CREATE TABLE hr.emp (id INTEGER PRIMARY KEY, name VARCHAR(40) NOT NULL, nick NVARCHAR2(9),"
        " salary NUMBER(9,2), rate FLOAT, born DATE, seen TIMESTAMP, code CHAR(3))"
    )
    assert _ggsci(tmp_path, "sql", "SRC", ddl)[0] == 0
    assert _ggsci(tmp_path, "sql", "SRC", "CREATE TABLE hr.nokey (v VARCHAR2(5))")[0] == 0
    assert _ggsci(tmp_path, "switch-log", "SRC")[0] == 0
    out_file = tmp_path / "dict.json"
    code, out = _ggsci(tmp_path, "dictionary", "SRC", "--out", str(out_file))
    assert code == 0 and out.startswith("Dictionary of 2 table(s) at SCN ")
    dic = load_oracle_dictionary(out_file)
    assert (dic.db_charset, dic.nchar_charset) == ("AL32UTF8", "UTF8")
    emp = next(t for t in dic.tables if t.name == "EMP")
    assert (emp.con_id, emp.owner, emp.key) == (0, "HR", ("ID",))
    cols = [(c.name, c.seg_col, c.type, c.length, c.charset_form, c.nullable) for c in emp.columns]
    # the embedded SQL keeps INTEGER and FLOAT as NUMBER, NVARCHAR2 as VARCHAR2 (UTF-8)
    assert cols == [
        ("ID", 1, "NUMBER", 22, 0, False),
        ("NAME", 2, "VARCHAR2", 40, 1, False),
        ("NICK", 3, "VARCHAR2", 9, 1, True),
        ("SALARY", 4, "NUMBER", 22, 0, True),
        ("RATE", 5, "NUMBER", 22, 0, True),
        ("BORN", 6, "DATE", 7, 0, True),
        ("SEEN", 7, "TIMESTAMP", 11, 0, True),
        ("CODE", 8, "CHAR", 3, 1, True),
    ]
    assert (emp.columns[3].precision, emp.columns[3].scale) == (9, 2)
    with Database(tmp_path / "home" / "dirdb" / "SRC") as db:
        t = db.dictionary.get("HR", "EMP")
        assert emp.data_objs == (t.dataobj,) and emp.obj == t.obj
    assert next(t for t in dic.tables if t.name == "NOKEY").key == ()
    code, stdout = _ggsci(tmp_path, "dictionary", "SRC")
    assert code == 0 and json.loads(stdout) == json.loads(out_file.read_text())
    args = ("attach", "ora", "--archive", str(dest), "--format", FMT, "--dictionary")
    code, out = _ggsci(tmp_path, *args, str(out_file))
    assert code == 0, out
    assert out.startswith(f"Database ORA attached: archived logs {FMT} under {dest} (1 now)")
    code, out = _ggsci(tmp_path, "logs", "ORA")
    assert code == 0 and [ln.split()[:2] for ln in out.splitlines()[1:]] == [["1", "1"]]
    assert out.splitlines()[1].endswith(f"{dest}/arch_1_0000000001_1.arc")
    assert storage.exists(f"{dest}/arch_1_0000000001_1.arc")
