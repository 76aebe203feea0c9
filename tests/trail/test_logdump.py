"""Logdump: text views against golden files (--regen-golden rewrites them), the
JSON lines, the interactive session with piped input, and the ``ggsci logdump`` command."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import pytest
import typer
from trail_seed002 import EXAMPLES, STUDENT
from typer.testing import CliRunner

from engine.logdump import DisplayOptions, LogdumpSession
from engine.logdump.dump import dump_files
from engine.trail import TrailWriter, encode_record
from engine.trail.layout import IOType
from ggsci.cli_logdump import logdump
from tests.harness import golden

GOLDEN = Path(__file__).parent / "golden"
CREATED = 1_364_774_400_000_000  # 2013-04-01 00:00:00


def _check_golden(name: str, text: str) -> None:
    golden.check(GOLDEN / name, text)


@pytest.fixture
def seed_trail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The seed's seven examples, in order, in dirdat/aa000000000 (relative paths, a
    fixed clock: the dump is the same on every machine; no checksums: the seed's record
    sizes)."""
    monkeypatch.chdir(tmp_path)
    with TrailWriter.open(
        "dirdat/aa",
        clock=lambda: CREATED,
        durable=False,
        checksum=False,
        header_info={"Producer": "ggsci extract", "DbName": "SRC", "GroupName": "EXT1"},
    ) as writer:
        writer.define_table(STUDENT)
        for records in EXAMPLES.values():
            writer.append(*(encode_record(e.record) for e in records))
    return Path("dirdat/aa000000000")


@pytest.mark.parametrize(
    ("golden", "options"),
    [
        ("logdump_default.txt", DisplayOptions()),
        ("logdump_data.txt", DisplayOptions(ghdr=False, detail="DATA", fileheader="ON")),
        ("logdump_brief.txt", DisplayOptions(ghdr=False, detail="OFF", fileheader="OFF")),
    ],
)
def test_text_views(seed_trail: Path, golden: str, options: DisplayOptions) -> None:
    out = io.StringIO()
    count = dump_files([seed_trail], out, options=options)
    assert count == 1 + 2 + 15  # header, DDR and TDR (12.2+ default), the seed's 15 records
    _check_golden(golden, out.getvalue())


def test_json_lines_golden_and_semantics(seed_trail: Path) -> None:
    out = io.StringIO()
    dump_files([seed_trail], out, as_json=True)
    _check_golden("logdump.jsonl", out.getvalue())
    objects = [json.loads(line) for line in out.getvalue().splitlines()]
    assert objects[0]["op"] == "FileHeader" and objects[0]["rba"] == 0
    # 12.2+ (the default): the file's DDR, then the table's TDR before its first record
    assert (objects[1]["op"], objects[1]["metadata"], objects[1]["io_type"]) == (
        "Metadata", "DDR", 170,
    )  # fmt: skip
    assert (objects[2]["metadata"], objects[2]["ddr_index"], objects[2]["tdr_index"]) == (
        "TDR", 1, 1,
    )  # fmt: skip
    assert objects[2]["columns"]["0"] == "STUDENT_KEY"
    for a, b in itertools.pairwise(objects):
        assert b["rba"] == a["rba"] + a["length"]
    rows = objects[3:]
    expected = [e for records in EXAMPLES.values() for e in records]
    assert [o["length"] for o in rows] == [e.length for e in expected]
    assert [o["length"] for o in rows] == [
        224,
        138,
        126,
        139,
        115,
        115,
        127,
        103,
        103,
        218,
        192,
        202,
        218,
        192,
        202,
    ]
    first = rows[0]
    assert first == {
        "file": "dirdat/aa000000000",
        "rba": objects[3]["rba"],
        "length": 224,
        "io_type": 5,
        "op": "Insert",
        "trans_ind": 3,
        "before_after": "A",
        "io_time": "2013-03-31 23:59:58.000000",
        "table": "US03.STUDENT",
        "columns": {
            "STUDENT_KEY": "1011",
            "FIRST_NAME": "Jordan",
            "SURNAME": "Sherwood",
            "GENDER": "M",
            "UNIVERSITY": "Manchester",
            "SUBJECT": "Chemistry",
            "ENTRY_YEAR": "2013",
            "TUITION_FEE": "9000",
        },
        "tokens": {"ORAROWID": "AAASrPAAEAAAAQ2AAK", "LOGCSN": "1621215", "TRANID": "4.11.854"},
    }
    update = rows[3]
    assert (update["op"], update["io_type"], update["trans_ind"]) == ("FieldComp", 15, 0)
    assert update["columns"] == {"STUDENT_KEY": "1007", "TUITION_FEE": "7500"}
    assert rows[4]["tokens"] == {"ORAROWID": "AAASrPAAEAAAAQ2AAH", "LOGCSN": None, "TRANID": None}
    assert [r["trans_ind"] for r in rows[6:9]] == [0, 1, 2]
    assert rows[6]["before_after"] == "B" and rows[6]["op"] == "Delete"


def test_without_table_definition_columns_are_keyed_by_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with TrailWriter.open("dirdat/bb", durable=False) as writer:
        writer.append(encode_record(EXAMPLES["single_update"][0].record))
    out = io.StringIO()
    dump_files([Path("dirdat/bb000000000")], out, as_json=True)
    row = json.loads(out.getvalue().splitlines()[1])
    assert row["columns"] == {"0": "1010", "7": "6000"}


def test_incomplete_tail_is_reported(seed_trail: Path) -> None:
    with open(seed_trail, "ab") as raw:
        raw.write(encode_record(EXAMPLES["single_delete"][0].record)[:40])
    out = io.StringIO()
    dump_files([seed_trail], out, as_json=True)
    last = json.loads(out.getvalue().splitlines()[-1])
    assert last["incomplete_tail"] == 40


SESSION_SCRIPT = """\
OPEN dirdat/aa000000000
NEXT
GHDR ON
DETAIL ON
NEXT 2
GHDR OFF
DETAIL DATA
NEXT
DETAIL OFF
POS 0
FILEHEADER DETAIL
N
SFET
SCANFORENDTRANS
COUNT
FILTER RECTYPE Delete
FILTER SHOW
POS FIRST
NEXT 2
FILTER CLEAR
FILTER INCLUDE FILENAME US03.*
FILTER EXCLUDE FILENAME *STUDENT
NEXT
FILTER CLEAR
POS EOF
NEXT
DETAIL SIDEWAYS
POS abc
BOGUS
NEXTTRAIL
EXIT
NEXT
"""


def test_interactive_session_golden(seed_trail: Path) -> None:
    out = io.StringIO()
    LogdumpSession(io.StringIO(SESSION_SCRIPT), out, echo=True).run()
    text = out.getvalue().replace(str(Path.cwd()), "<HOME>")
    assert "Logdump 31 > EXIT" in text
    assert "Logdump 32 >" not in text  # EXIT ends the session
    _check_golden("logdump_session.txt", text)


def test_session_without_open_file_and_end_of_input() -> None:
    out = io.StringIO()
    LogdumpSession(io.StringIO("NEXT\nCOUNT\n"), out).run()
    assert out.getvalue().count("no trail file open") == 2
    assert out.getvalue().endswith("Logdump 3 >\n")


def test_open_of_a_name_no_file_can_have_is_one_line() -> None:
    out = io.StringIO()
    LogdumpSession(io.StringIO("OPEN \x00\nCOUNT\n"), out).run()
    assert "cannot open trail file '\\x00': embedded null byte" in out.getvalue()
    assert "no trail file open" in out.getvalue()


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command(name="logdump")(logdump)

    @app.command(name="other")
    def other() -> None:  # a second command keeps typer from flattening the app
        """Placeholder so that 'logdump' stays a sub-command, as in ggsci's app."""

    return app


def test_cli_json_and_text(seed_trail: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(_app(), ["logdump", str(seed_trail), "--json"])
    assert result.exit_code == 0, result.output
    assert len(result.output.splitlines()) == 18
    result = runner.invoke(_app(), ["logdump", str(seed_trail), "--no-ghdr", "--detail", "off"])
    assert result.exit_code == 0
    assert "Insert               Len   110 RBA" in result.output


def test_cli_interactive_from_stdin(seed_trail: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(_app(), ["logdump"], input=f"OPEN {seed_trail}\nCOUNT\nEXIT\n")
    assert result.exit_code == 0
    assert "has 17 records" in result.output
    assert "Logdump 3 > EXIT" in result.output


def test_cli_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = tmp_path / "aa000000000"
    bad.write_bytes(b"XXXXXXXXXXXXXXXX")
    result = runner.invoke(_app(), ["logdump", str(bad)])
    assert result.exit_code == 1
    assert "TRAIL-002" in result.output
    result = runner.invoke(_app(), ["logdump", str(bad), "--detail", "maybe"])
    assert result.exit_code == 2


def test_registered_in_the_ggsci_app(seed_trail: Path) -> None:
    from ggsci.cli import build_app

    result = CliRunner().invoke(build_app(), ["logdump", str(seed_trail), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.splitlines()[3])["length"] == 224


def _first_row_rba(path: Path) -> int:
    """The RBA of the first data record (after the file header, the DDR and the TDR)."""
    from engine.trail import FileCursor, TrailRecord

    with FileCursor(path, verify=False) as cursor:
        return next(
            e.rba
            for e in cursor
            if isinstance(e.record, TrailRecord) and e.record.io_type != IOType.METADATA
        )


def test_real_process_with_piped_commands(seed_trail: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "ggsci", "logdump"],
        input=f"OPEN {seed_trail}\nPOS {_first_row_rba(seed_trail)}\nNEXT\nEXIT\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Logdump 3 > NEXT\n2013/03/31 23:59:58.000.000 Insert" in done.stdout
    assert done.stderr == ""


def test_scan_for_header_gets_past_corruption(seed_trail: Path) -> None:
    first = _first_row_rba(seed_trail)
    data = bytearray(seed_trail.read_bytes())
    data[first : first + 10] = b"\xee" * 10  # wreck the single insert's envelope and header
    seed_trail.write_bytes(bytes(data))
    out = io.StringIO()
    script = f"OPEN {seed_trail}\nPOS {first}\nNEXT\nSFH\nEXIT\n"
    LogdumpSession(io.StringIO(script), out, echo=True).run()
    text = out.getvalue()
    assert "Error: TRAIL-002" in text
    assert f"Record header found at RBA {first + 224} (224 bytes skipped)" in text
    assert f"FieldComp            Len    24 RBA {first + 224}" in text


def test_recovery_marker_shown_and_partial_transaction_not_counted(tmp_path: Path) -> None:
    """A crash inside a transaction, then an append-mode restart: Logdump shows the
    RestartAbend marker after the partial records, and COUNT leaves those records out of
    the transactions (they are counted, and named, as a partial transaction)."""
    from engine.trail.layout import IOType, TransInd
    from engine.trail.model import TrailRecord
    from engine.trail.writer import seal

    def txn(csn: int, rows: int) -> list[bytes]:
        return [
            encode_record(
                TrailRecord(
                    io_type=IOType.INSERT,
                    table="US03.STUDENT",
                    columns=((0, f"{csn}-{i}"),),
                    trans_ind=TransInd.of(i, rows),
                    logcsn=str(csn) if i == 0 else None,
                )
            )
            for i in range(rows)
        ]

    with TrailWriter.open(tmp_path / "aa", durable=False) as w:
        w.append(*txn(100, 2))
    with open(tmp_path / "aa000000000", "ab") as raw:
        raw.write(seal(b"".join(txn(101, 3)[:2])))
    with TrailWriter.open(tmp_path / "aa", durable=False) as w:
        w.append(*txn(101, 3))
    out = io.StringIO()
    script = f"OPEN {tmp_path / 'aa000000000'}\nCOUNT\nPOS 0\nNEXT 6\n"
    LogdumpSession(io.StringIO(script), out).run()
    text = out.getvalue()
    assert "LogTrail" in text and "has 5 records" in text
    lines = [" ".join(line.split()) for line in text.splitlines()]
    assert "Partial Trans Records 2" in lines
    assert "Average of 1 Transactions" in lines
    assert "Records/Trans ... 2" in lines  # not (2 + 2) / 1
    assert "Name: *RestartAbend*" in lines
    assert any("RestartAbend Len" in line for line in lines)


def test_show_rectype_lists_the_seed_types_and_ours() -> None:
    out = io.StringIO()
    LogdumpSession(io.StringIO("SHOW RECTYPE\nSHOW ENV\n"), out).run()
    lines = out.getvalue().splitlines()
    assert "*   5 - Insert" in lines  # written by ggsci
    assert "   11 - UpdateComp" in lines  # seed 003's table, not written here
    assert "* 205 - GGSComment" in lines and "* 211 - RestartAbend" in lines
    assert any(line.startswith("Error: usage: SHOW RECTYPE") for line in lines)


def test_save_records_to_a_new_trail_file(seed_trail: Path) -> None:
    from engine.trail import FileCursor, TrailReader, TrailRecord
    from engine.trail.txreader import TransactionReader

    saved = Path("dirdat/zz000000000")
    out = io.StringIO()
    script = (
        f"OPEN {seed_trail}\nPOS FIRST\nNEXT 4\nSAVE {saved} 3 RECORDS\n"
        f"SAVE {saved} 3 RECORDS\nSAVE {saved} ! 2 RECS NOCOMMENT\nSAVE x 2 BYTES\n"
        f"SAVE {saved} ! 3 RECORDS\nOPEN {saved}\nCOUNT\n"
    )
    LogdumpSession(io.StringIO(script), out, clock=lambda: CREATED).run()
    text = out.getvalue()
    assert text.count("3 records written to dirdat/zz000000000") == 2
    assert "2 records written to dirdat/zz000000000" in text
    assert "exists; SAVE dirdat/zz000000000 ! ... to overwrite it." in text
    assert "SAVE n BYTES is not supported" in text
    # The saved file: header, comment, the DDR and the table's TDR (from before the
    # position), the three records, comment.
    with FileCursor(saved, verify=True) as cursor:
        kinds = [e.record.op_name for e in cursor if isinstance(e.record, TrailRecord)]
    with TrailReader(seed_trail.with_name("aa")) as reader:
        pairs = [(r.op_name, r.columns) for _, r in reader.records()]
    source = [op for op, _ in pairs]
    # NEXT 4 showed the file header, the DDR, the TDR and the first Insert.
    assert kinds == ["GGSComment", "Metadata", "Metadata", *source[1:4], "GGSComment"]
    with TrailReader(Path("dirdat/zz")) as reader:
        copy = [(r.op_name, r.columns) for _, r in reader.records()]
        assert copy[1:4] == pairs[1:4]
        assert "US03.STUDENT" in reader.tables  # the columns keep their names
    assert "has 7 records" in text and "GGSComment                    2" in text
    assert "Metadata Records              2" in text
    # Pump and Replicat readers skip the comments: the whole transactions saved.
    reader = TransactionReader(Path("dirdat/zz"))
    got = [[r.op_name for r in t.records] for t in reader.poll()]
    reader.close()
    # The third saved record begins a transaction the count cut: it stays open.
    assert got == [["FieldComp"], ["Delete"]]
