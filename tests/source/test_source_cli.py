"""``ggsci db`` through typer's CliRunner: commands, one-line errors, dump round trip."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from engine.redo.ids import parse_scn
from ggsci.cli_db import app

HERE = Path(__file__).parent
runner = CliRunner()


def _db(home: Path, *args: str, input: str | None = None) -> tuple[int, str]:
    r = runner.invoke(app, [*args, "--home", str(home)], input=input)
    return r.exit_code, r.output


def test_create_sql_errors_and_lists(tmp_path: Path) -> None:
    assert _db(tmp_path, "create", "src", "--threads", "2")[0] == 0
    code, out = _db(tmp_path, "create", "SRC")
    assert code == 1 and out.strip() == "GGS-SRC-0101: database SRC already exists"
    assert "SRC" in _db(tmp_path, "list")[1]
    code, out = _db(tmp_path, "run", "SRC", str(HERE / "sql" / "seed_setup.sql"), "--user", "US03")
    assert code == 0 and out.count("1 row created.") == 20
    code, out = _db(
        tmp_path,
        "sql",
        "SRC",
        "--user",
        "US03",
        "--session",
        "A",
        input="UPDATE student SET tuition_fee = 1 WHERE student_key = 1001;",
    )
    assert code == 0 and "1 row updated." in out
    code, out = _db(
        tmp_path,
        "sql",
        "SRC",
        "DELETE FROM student WHERE student_key = 1001",
        "--user",
        "US03",
        "--session",
        "B",
    )
    assert code == 1
    assert out.strip().startswith("ORA-00054: resource busy: row ")
    assert "Traceback" not in out
    code, out = _db(tmp_path, "sql", "SRC", "select * from nowhere")
    assert code == 1 and out.strip() == "ORA-00942: table or view does not exist: GGUSER.NOWHERE"
    code, out = _db(tmp_path, "sql", "NOPE", "commit")
    assert code == 1 and out.strip() == "GGS-SRC-0102: database NOPE does not exist"
    assert _db(tmp_path, "sql", "SRC", "commit", "--session", "A")[0] == 0
    code, out = _db(tmp_path, "switch-log", "SRC", "--thread", "1")
    assert code == 0 and "2" in out
    code, out = _db(tmp_path, "logs", "SRC")
    assert code == 0 and "ARCHIVED" in out and "CURRENT" in out
    code, out = _db(tmp_path, "crash-instance", "SRC", "--thread", "2")
    assert code == 0 and "crashed" in out
    assert _db(tmp_path, "drop", "SRC")[0] == 0
    assert "No databases." in _db(tmp_path, "list")[1]


def test_import_dump_then_dump_round_trips(tmp_path: Path) -> None:
    vectors = sorted((HERE / "vectors").glob("*.dump"))
    assert _db(tmp_path, "create", "ORA")[0] == 0
    code, out = _db(
        tmp_path,
        "import-dump",
        "ORA",
        *map(str, vectors),
        "--dictionary",
        str(HERE / "vectors" / "seed_dictionary.json"),
    )
    assert code == 0 and "33 redo record(s) imported from 7 file(s)." in out
    code, first = _db(tmp_path, "dump", "ORA")
    # the records keep Oracle's sequences, SCNs and vectors; their RBAs are where our log
    # writer puts them (its first LWN at block 2), not where Oracle's did (block 5)
    assert code == 0 and "RBA: 0x000044.00000002.0010" in first
    # it ends as Oracle's trace does; the import stops there (Oracle's read statistics follow)
    assert first.rstrip().splitlines()[-1] == "END OF REDO DUMP: 33 record(s), 80 change(s)"
    assert first.count("\nCHANGE #") == 80
    stats = "----- Redo read statistics for thread 1 -----\nRead rate (SYNC): 12Kb in 0.01s\n"
    (tmp_path / "again.dump").write_text(first + stats)
    assert _db(tmp_path, "create", "ORA2")[0] == 0
    code, out = _db(
        tmp_path,
        "import-dump",
        "ORA2",
        str(tmp_path / "again.dump"),
        "--dictionary",
        str(HERE / "vectors" / "seed_dictionary.json"),
    )
    assert code == 0
    assert _db(tmp_path, "dump", "ORA2")[1] == first
    # two traces concatenated: the records of both (the second's after the first's statistics)
    one, two = (
        HERE / "vectors" / n for n in ("01_single_row_insert.dump", "02_single_row_update.dump")
    )
    both = tmp_path / "both.dump"
    both.write_text(one.read_text() + "END OF REDO DUMP\n" + stats + two.read_text())
    assert _db(tmp_path, "create", "ORA3")[0] == 0
    code, out = _db(
        tmp_path, "import-dump", "ORA3", str(both),
        "--dictionary", str(HERE / "vectors" / "seed_dictionary.json"),
    )  # fmt: skip
    n = sum(p.read_text().count("REDO RECORD - ") for p in (one, two))
    assert code == 0 and f"{n} redo record(s) imported from 1 file(s)." in out, out
    code, out = _db(tmp_path, "logs", "ORA")
    seqs = [int(line.split()[1]) for line in out.splitlines()]
    assert seqs == [0x44, 0x45, 0x46, 0x47, 0x49, 0x4B, 0x4D]


def test_import_dump_reports_bad_text(tmp_path: Path) -> None:
    bad = tmp_path / "bad.dump"
    text = (HERE / "vectors" / "02_single_row_update.dump").read_text()
    bad.write_text("some prose\n" + text)
    _db(tmp_path, "create", "X")
    code, out = _db(
        tmp_path,
        "import-dump",
        "X",
        str(bad),
        "--dictionary",
        str(HERE / "vectors" / "seed_dictionary.json"),
    )
    assert code == 1 and f"{bad}:1: not redo dump syntax" in out
    code, out = _db(
        tmp_path,
        "import-dump",
        "X",
        str(bad),
        "--lenient",
        "--dictionary",
        str(HERE / "vectors" / "seed_dictionary.json"),
    )
    assert code == 0 and "warning:" in out


def test_workload_command(tmp_path: Path) -> None:
    _db(tmp_path, "create", "W", "--threads", "2")
    code, out = _db(
        tmp_path,
        "workload",
        "W",
        "--transactions",
        "50",
        "--tables",
        "2",
        "--rows-per-txn",
        "4",
        "--mix",
        "insert=1,update=1,delete=1",
        "--long-txn",
        "1:10",
        "--clock-rate",
        "100",
    )
    assert code == 0, out
    m = re.search(
        r"(\d+) transactions \((\d+) committed, (\d+) rolled back\), (\d+) row changes", out
    )
    assert m is not None, out
    total, committed, rolled, rows = map(int, m.groups())
    assert total >= 51 and committed + rolled == total and rows >= 4 * 50


def test_dump_filters(tmp_path: Path) -> None:
    _db(tmp_path, "create", "F", "--threads", "2")
    _db(
        tmp_path,
        "sql",
        "F",
        "CREATE TABLE t (id NUMBER); INSERT INTO t VALUES (1); COMMIT;",
        "--thread",
        "1",
        "--session",
        "A",
    )
    _db(
        tmp_path, "sql", "F", "INSERT INTO t VALUES (2); COMMIT;", "--thread", "2", "--session", "B"
    )
    code, all_text = _db(tmp_path, "dump", "F")
    assert code == 0 and "Thread:1" in all_text and "Thread:2" in all_text
    code, t2 = _db(tmp_path, "dump", "F", "--thread", "2")
    assert "Thread:1 " not in t2 and t2.count("REDO RECORD") >= 2
    scns = [
        parse_scn(line.split()[1]) for line in all_text.splitlines() if line.startswith("SCN: ")
    ]
    code, late = _db(tmp_path, "dump", "F", "--from-scn", str(max(scns)))
    assert late.count("REDO RECORD") == 1


def test_anonymous_session_commits_at_exit_and_rolls_back_on_error(tmp_path: Path) -> None:
    _db(tmp_path, "create", "A")
    assert _db(tmp_path, "sql", "A", "CREATE TABLE t (id NUMBER PRIMARY KEY)")[0] == 0
    assert _db(tmp_path, "sql", "A", "INSERT INTO t VALUES (1)")[0] == 0  # no COMMIT
    code, out = _db(tmp_path, "sql", "A", "INSERT INTO t VALUES (2); INSERT INTO nosuch VALUES (3)")
    assert code == 1 and out.strip().splitlines()[-1].startswith("ORA-00942")
    code, out = _db(tmp_path, "sql", "A", "SELECT id FROM t", "--session", "OTHER")
    assert code == 0 and out.split()[2:3] == ["1"] and "1 row selected." in out
    # and nothing is left holding row 1: a named session can update it
    assert _db(tmp_path, "sql", "A", "UPDATE t SET id = 10", "--session", "OTHER")[0] == 0


def test_native_dump_import_dump_round_trips(tmp_path: Path) -> None:
    _db(tmp_path, "create", "N", "--threads", "2")
    script = (
        "CREATE TABLE t (id NUMBER PRIMARY KEY, d DATE, s CHAR(2), x NUMBER(6,2));"
        "INSERT INTO t VALUES (1, DATE '2020-01-02', 'a', 1.5);"
        "CREATE TABLE u AS SELECT * FROM t WHERE ROWNUM < 1;"
        "INSERT INTO u SELECT * FROM t; INSERT /*+ APPEND */ INTO u SELECT id + 10, d, s, x FROM t;"
        "COMMIT; SAVEPOINT a; UPDATE t SET x = 2; ROLLBACK TO a; DELETE FROM t; ROLLBACK;"
        "UPDATE t SET x = 3; COMMIT; SELECT * FROM t;"
    )
    assert _db(tmp_path, "sql", "N", script, "--user", "APP", "--thread", "2")[0] == 0
    code, out = _db(
        tmp_path,
        "workload",
        "N",
        "--transactions",
        "30",
        "--tables",
        "1",
        "--rollback-ratio",
        "0.3",
        "--array",
        "3",
    )
    assert code == 0, out
    code, first = _db(tmp_path, "dump", "N")
    assert code == 0
    for op in ("OP:24.1", "OP:19.1", "OP:11.11", "OP:5.6", "OP:4.1", "OP:11.5", "OP:11.3"):
        assert op in first, op
    # a 5.6 names the undone change's object, as its ktubu does, and it round-trips below
    assert re.search(r"undo applied: xid: .* uba: \S+ objn: [1-9]\d* objd: [1-9]\d*\n", first)
    (tmp_path / "n.dump").write_text(first)
    (tmp_path / "dict.json").write_text((tmp_path / "dirdb" / "N" / "dictionary.json").read_text())
    _db(tmp_path, "create", "M", "--threads", "2")
    code, out = _db(
        tmp_path,
        "import-dump",
        "M",
        str(tmp_path / "n.dump"),
        "--dictionary",
        str(tmp_path / "dict.json"),
    )
    assert code == 0, out
    assert _db(tmp_path, "dump", "M")[1] == first


def test_deeply_nested_sql_is_one_line(tmp_path: Path) -> None:
    """60 or more nested parentheses made sqlglot's parser recurse past Python's limit: a
    RecursionError traceback (issue 28). Now one line, and the session goes on."""
    assert _db(tmp_path, "create", "src")[0] == 0
    code, out = _db(tmp_path, "sql", "src", "CREATE TABLE hr.x (id NUMBER PRIMARY KEY)")
    assert code == 0, out
    for depth in (60, 200, 5000):
        p = "(" * depth + "1" + ")" * depth
        for stmt in (
            f"SELECT {p} FROM dual",
            f"INSERT INTO hr.x VALUES ({p})",
            f"UPDATE hr.x SET id = {p} WHERE id = {p}",
            f"DELETE FROM hr.x WHERE id IN (SELECT {p} FROM dual)",
        ):
            code, out = _db(tmp_path, "sql", "src", stmt)
            assert (code, out) == (
                1,
                "ORA-00900: statement nested too deeply (parentheses or subqueries) to be parsed\n",
            ), (depth, stmt[:30], out[-300:])
    code, out = _db(tmp_path, "sql", "src", "INSERT INTO hr.x VALUES ((((1))))")
    assert code == 0 and "1 row created." in out
