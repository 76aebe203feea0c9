"""Issue 24 walked as a DBA runs it (docs/extract.md, "Capture from a real database's
archived logs"): the mistakes a user makes with ``ggsci db logs / attach / show / dump`` and
an attached database's TABLE catalogs, each one clear line (a code, the thing named), never a
traceback, and no option accepted without acting."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from ggsci.cli_db import app
from tests.harness.secretargs import stdin_args
from tests.redo.corpus import CHECKPOINT, LOG15, LOG16, need

runner = CliRunner()
FMT = "arch%t_%s_%r.dbf"


def _one_line(output: str, code: str) -> str:
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(code) and "Traceback" not in output, output
    return lines[0]


def _arch(tmp_path: Path) -> Path:
    arch = tmp_path / "arch"
    arch.mkdir()
    for p in (LOG15, LOG16):
        shutil.copy(need(p), arch / p.name)
    return arch


def _attach(tmp_path: Path, *extra: str) -> Result:
    """``db attach ORA23`` of the fixture's logs (``extra`` options after, ``--dictionary``
    given there replacing the fixture's checkpoint)."""
    (tmp_path / "home").mkdir()
    dic = [] if "--dictionary" in extra else ["--dictionary", str(need(CHECKPOINT))]
    home = ["--home", str(tmp_path / "home")]
    return runner.invoke(
        app, ["attach", "ORA23", "--archive", str(_arch(tmp_path)), *dic, *home, *extra]
    )


def test_logs_of_a_location_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    """Before: the header line and nothing else, exit 0, as if the directory held no log."""
    r = runner.invoke(app, ["logs", str(tmp_path / "nope"), "--format", FMT])
    line = _one_line(r.output, "GGS-SRC-0600")
    assert r.exit_code == 1 and str(tmp_path / "nope") in line and "not a directory" in line


def test_logs_with_a_format_without_a_sequence_is_refused(tmp_path: Path) -> None:
    """attach refuses a LOG_ARCHIVE_FORMAT without %s; ``db logs --format`` listed nothing."""
    arch = _arch(tmp_path)
    r = runner.invoke(app, ["logs", str(arch), "--format", "arch%t_%r.dbf"])
    assert r.exit_code == 1 and "has no %s" in _one_line(r.output, "GGS-REDO-")


def test_attach_with_an_empty_format_is_refused(tmp_path: Path) -> None:
    """Before: ``--format ''`` attached with the default format (0 logs), silently."""
    r = _attach(tmp_path, "--format", "")
    assert r.exit_code == 1 and "empty" in _one_line(r.output, "GGS-REDO-0020")
    assert not (tmp_path / "home" / "dirdb" / "ORA23").exists()


def test_an_attached_database_is_named_as_such_by_the_embedded_commands(tmp_path: Path) -> None:
    """``db show`` prints what was attached; the commands of an embedded database say the
    name is an attached one (before: ``database ORA23 does not exist``)."""
    r = _attach(tmp_path, "--format", FMT)
    assert r.exit_code == 0, r.output
    home = ["--home", str(tmp_path / "home")]
    r = runner.invoke(app, ["show", "ORA23", *home])
    assert r.exit_code == 0, r.output
    rows = dict(line.split(":", 1) for line in r.output.splitlines())
    assert rows["DB_NAME"].strip() == "ORA23"
    assert rows["KIND"].strip() == "attached: Oracle archived logs"
    assert rows["LOG_ARCHIVE_DEST"].strip() == str((tmp_path / "arch").resolve())
    assert rows["LOG_ARCHIVE_FORMAT"].strip() == FMT
    assert rows["TABLES"].strip() == "20"
    assert rows["LOGS"].strip() == "2"
    for cmd in (["dump", "ORA23"], ["dictionary", "ORA23"], ["sql", "ORA23", "SELECT 1"]):
        r = runner.invoke(app, [*cmd, *home])
        line = _one_line(r.output, "GGS-REDO-0020")
        assert r.exit_code == 1 and "ORA23 is an attached database" in line, cmd


def test_dump_options_that_do_not_apply_are_refused(tmp_path: Path) -> None:
    """Before: ``--layout``/``--big-endian`` on a log file, ``--thread`` on a log file or
    ``--hex``, ``--dictionary`` without ``--json`` were accepted and did nothing."""
    log = str(need(LOG16))
    dic = str(need(CHECKPOINT))
    for extra, word in (
        (["--layout", "11g"], "--layout"),
        (["--big-endian"], "--big-endian"),
        (["--thread", "2"], "--thread"),
        (["--dictionary", dic], "--dictionary"),
    ):
        r = runner.invoke(app, ["dump", log, *extra])
        assert r.exit_code == 1 and word in _one_line(r.output, "GGS-SRC-0100"), extra
    hexes = tmp_path / "r.hex"
    hexes.write_text("00\n")
    r = runner.invoke(app, ["dump", "--hex", str(hexes), "--thread", "1"])
    assert r.exit_code == 1 and "--thread" in _one_line(r.output, "GGS-SRC-0100")


def test_from_scn_acts_on_hex_records(tmp_path: Path) -> None:
    """Before: ``--hex FILE --from-scn N`` printed every record."""
    from tests.redo import oracdc
    from tests.redo.corpus import ORACDC

    recs = [r for r in oracdc.records(need(ORACDC) / "Op11_5_Test.java") if r.order == "<"]
    hexes = tmp_path / "r.hex"
    hexes.write_text("\n".join(r.raw.hex() for r in recs) + "\n")
    every = runner.invoke(app, ["dump", "--hex", str(hexes), "--json"])
    assert every.exit_code == 0, every.output
    scns = sorted(json.loads(x)["scn"] for x in every.output.splitlines())
    assert len(scns) >= 2 and scns[0] < scns[-1]
    r = runner.invoke(app, ["dump", "--hex", str(hexes), "--json", "--from-scn", str(scns[-1])])
    assert r.exit_code == 0, r.output
    assert [json.loads(x)["scn"] for x in r.output.splitlines()] == [
        s for s in scns if s >= scns[-1]
    ]


def test_hex_of_odd_length_says_so(tmp_path: Path) -> None:
    hexes = tmp_path / "r.hex"
    hexes.write_text("# a ticket\n\n0a0b0\n")
    r = runner.invoke(app, ["dump", "--hex", str(hexes)])
    line = _one_line(r.output, "GGS-REDO-0002")
    assert r.exit_code == 1 and "line 3" in line and "odd number of hex digits (5)" in line
    hexes.write_text("0a0bzz\n")
    r = runner.invoke(app, ["dump", "--hex", str(hexes)])
    line = _one_line(r.output, "GGS-REDO-0002")
    assert "line 1" in line and "not hex" in line and "'z'" in line


def test_logs_in_object_storage_show_no_credentials(s3_server: str) -> None:
    """Before: the PATH column printed the URL with its access key and secret."""
    from engine import storage

    base = storage.join(s3_server, "walk")
    for p in (LOG15, LOG16):
        storage.put_file(need(p), storage.join(base, p.name))
    args, secret = stdin_args(base)
    r = runner.invoke(app, ["logs", *args, "--format", FMT], input=secret)
    assert r.exit_code == 0, r.output
    assert "test:test" not in r.output and r.output.count("arch1_1") == 2


def test_a_catalog_naming_no_container_of_the_dictionary_is_said() -> None:
    """``TABLE CDB$ROOT.OLR_TEST.*;`` over the fixture (its table is FREEPDB1's) captured
    nothing and said nothing; a mistyped PDB name is a warning naming the containers there."""
    from dataclasses import replace

    from engine.extract.containers import selected
    from tests.redo.test_containers import DICT, _model

    named = replace(DICT, tables=tuple(t for t in DICT.tables if t.container))
    warned: list[str] = []
    tables = "TABLE PDB1.HR.EMP;\nTABLE PDB9.HR.*;\nTABLE PDB?.HR.DEPT;\n"
    kept = selected(named, _model(tables), warned.append)
    assert {(t.con_id, t.name) for t in kept.tables} == {(3, "EMP"), (3, "DEPT")}
    assert len(warned) == 1, warned
    assert "PDB9.HR.*" in warned[0] and "(PDB1, PDB2)" in warned[0] and "OGG-02636" in warned[0]
    warned.clear()
    selected(
        named,
        _model("SOURCECATALOG PDB1X\nTABLE HR.EMP;\nTABLEEXCLUDE PDB7.HR.X;\n"),
        warned.append,
    )
    assert len(warned) == 1 and "PDB1X" in warned[0], warned


def test_create_refuses_the_name_of_an_attached_database(tmp_path: Path) -> None:
    """attach refuses an embedded database's name; create made an embedded database beside
    the attached one of the same name (both in dirdb/ORA23)."""
    assert _attach(tmp_path, "--format", FMT).exit_code == 0
    r = runner.invoke(app, ["create", "ora23", "--home", str(tmp_path / "home")])
    line = _one_line(r.output, "GGS-REDO-0020")
    assert r.exit_code == 1 and "ORA23 is an attached database" in line
    assert not (tmp_path / "home" / "dirdb" / "ORA23" / "data.sqlite").exists()


def test_attach_a_dictionary_nested_too_deeply_or_too_large(tmp_path: Path) -> None:
    """A deeply nested JSON was a RecursionError traceback; the size limit the loader keeps
    (MAX_DICTIONARY_BYTES) was not applied to attach, which read the file itself."""
    from engine.redo import dictionary

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    r = _attach(tmp_path, "--dictionary", str(deep))
    line = _one_line(r.output, "GGS-REDO-0010")
    assert r.exit_code == 1 and "nested too deeply" in line
    big = tmp_path / "big.json"
    with big.open("wb") as f:  # sparse: no disk used
        f.truncate(dictionary.MAX_DICTIONARY_BYTES + 1)
    shutil.rmtree(tmp_path / "home")
    shutil.rmtree(tmp_path / "arch")
    r = _attach(tmp_path, "--dictionary", str(big))
    line = _one_line(r.output, "GGS-REDO-0010")
    assert r.exit_code == 1 and "larger than" in line
    assert not (tmp_path / "home" / "dirdb" / "ORA23").exists()


def test_dump_a_log_in_object_storage(s3_server: str) -> None:
    """``db logs`` lists s3:// logs; ``db dump`` of one said 'No such file or directory',
    printing the URL's secret."""
    from engine import storage

    base = storage.join(s3_server, "dump")
    storage.put_file(need(LOG16), storage.join(base, LOG16.name))
    args, secret = stdin_args(storage.join(base, LOG16.name))
    r = runner.invoke(app, ["dump", *args], input=secret)
    assert r.exit_code == 0, r.output
    assert r.output.rstrip().endswith("END OF REDO DUMP: 7 record(s), 14 change(s)")
    assert "test:test" not in r.output
    args, secret = stdin_args(storage.join(base, "absent.dbf"))
    r = runner.invoke(app, ["dump", *args], input=secret)
    line = _one_line(r.output, "GGS-SRC-0600")
    assert r.exit_code == 1 and "absent.dbf" in line and "test:test" not in line


def test_hex_line_numbers_are_the_files_lines(tmp_path: Path) -> None:
    """A form feed or a vertical tab in a comment (pasted from a ticket) made a line of its
    own (str.splitlines), so the position said was past the real line."""
    hexes = tmp_path / "r.hex"
    hexes.write_bytes(b"# page 1 \x0c # page 2 \x0b # end\r\n0a0bzz\r\n")
    r = runner.invoke(app, ["dump", "--hex", str(hexes)])
    line = _one_line(r.output, "GGS-REDO-0002")
    assert r.exit_code == 1 and "line 2: not hex: 'z'" in line


def test_dump_of_a_current_log_and_of_a_database_as_json(tmp_path: Path) -> None:
    """Before: a current log (the embedded database's, as Oracle's online log being written:
    its header counts no blocks and holds no next SCN) dumped as ``0 record(s)``, exit 0."""
    home = ["--home", str(tmp_path)]
    assert runner.invoke(app, ["create", "SRC", *home]).exit_code == 0
    sql = "CREATE TABLE hr.t (id NUMBER PRIMARY KEY); INSERT INTO hr.t VALUES (1)"
    assert runner.invoke(app, ["sql", "SRC", sql, *home]).exit_code == 0
    (log,) = (tmp_path / "dirdb" / "SRC" / "redo").rglob("*.log")
    by_name = runner.invoke(app, ["dump", "SRC", *home]).stdout.count("REDO RECORD - ")
    r = runner.invoke(app, ["dump", str(log)])
    assert r.exit_code == 0 and by_name > 0, r.output
    assert r.stdout.count("REDO RECORD - ") == by_name
    assert f"END OF REDO DUMP: {by_name} record(s)" in r.stdout
    assert (
        f"Current log (sequence 1, being written: its header counts no blocks yet): "
        f"{by_name} record(s) read, to the end of the file." in r.stderr
    )
    r = runner.invoke(app, ["dump", str(log), "--json"])
    assert [json.loads(line)["scn"] > 0 for line in r.stdout.splitlines()] == [True] * by_name
    # the database by name: the same records (before: "--json prints Oracle log files"),
    # typed by its dictionary as Oracle's
    dic = tmp_path / "dict.json"
    assert runner.invoke(app, ["dictionary", "SRC", "--out", str(dic), *home]).exit_code == 0
    r = runner.invoke(app, ["dump", "SRC", "--json", "--dictionary", str(dic), *home])
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == by_name, r.output
    values = [c.get("values") for line in r.stdout.splitlines()
              for c in json.loads(line)["changes"] if c.get("table") == "HR.T"]  # fmt: skip
    assert {"ID": "1"} in values
    r = runner.invoke(app, ["dump", "SRC", "--json", "--thread", "2", *home])
    assert r.exit_code == 0 and r.stdout == ""
    # db logs of the directory: no next SCN nor block count yet (was 281474976710655 and 2)
    (row,) = runner.invoke(app, ["logs", str(log.parent)]).stdout.splitlines()[1:]
    assert row.split()[3] == "-" and row.split()[6] == "-", row
    # a redo write under way (a torn block at the end): what is whole, and where it stopped
    log.write_bytes(log.read_bytes() + bytes(512))
    r = runner.invoke(app, ["dump", str(log)])
    assert r.exit_code == 0 and r.stdout.count("REDO RECORD - ") == by_name, r.output
    assert "record(s) read, to what is not redo yet (" in r.stderr


def test_a_key_without_a_secret_is_one_line_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the location went on with a key and no secret, and the server's refusal came
    back as ``GGS-SRC-0600: ...: cannot open: ... AWS Error ACCESS_DENIED during HeadObject``
    on the first log (no terminal to prompt on, nothing in the home's store)."""
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    home = ["--home", str(tmp_path)]
    where = "s3://AKIAWALK@bucket/arch?endpoint_override=127.0.0.1:9&scheme=http"
    for args in (["logs", where], ["dump", f"{where}/arch1_16_1.dbf"]):
        r = runner.invoke(app, [*args, *home])
        line = _one_line(r.output, "ERROR: ")
        assert r.exit_code == 1 and "no secret for key AKIAWALK" in line, r.output
        assert "--password-stdin" in line
    # with the AWS environment's secret, the location goes on as documented (docs/security.md)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "from-the-environment")
    r = runner.invoke(app, ["logs", where, *home])
    assert "no secret for key" not in r.output
