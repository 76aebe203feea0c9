"""``ggsci db dump`` of Oracle's own logs, JSON and hex records."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ggsci.cli_db import app
from tests.redo import oracdc
from tests.redo.corpus import LOG15, LOG16, ORACDC, need

runner = CliRunner()


def test_dump_both_fixture_logs() -> None:
    for path, nrec, nvec in ((LOG15, 1110, 1194), (LOG16, 7, 14)):
        r = runner.invoke(app, ["dump", str(need(path))])
        assert r.exit_code == 0, r.output
        assert r.output.count("REDO RECORD - Thread:1 RBA: ") == nrec
        assert r.output.count("\nCHANGE #") == nvec
        assert r.output.rstrip().endswith(f"END OF REDO DUMP: {nrec} record(s), {nvec} change(s)")
    r = runner.invoke(app, ["dump", str(LOG15)])
    assert (
        "CHANGE #3 CON_ID:3 TYP:0 CLS:1 AFN:24 DBA:0x0600000e OBJ:72726 SCN:0x0000.00229a3b SEQ:1 OP:11.2"
        in r.output
    )
    assert "login   username = OLR_TEST" in r.output
    assert "col  1: [11]  68 65 6c 6c 6f 20 77 6f 72 6c 64" in r.output
    # a row piece names a next one only when it is not the last: the 8 whole rows (and
    # cluster key rows) of the fixture whose KDO field holds other pointers print none
    assert "\nnrid:" not in r.output


def test_dump_json() -> None:
    r = runner.invoke(app, ["dump", "--json", str(need(LOG15))])
    assert r.exit_code == 0, r.output
    objs = [json.loads(line) for line in r.output.splitlines()]
    assert len(objs) == 1110 and sum(len(o["changes"]) for o in objs) == 1194
    ins = next(
        o for o in objs if any(c["op"] == "11.2" and c["obj"] == 72726 for c in o["changes"])
    )
    assert (ins["rba"], ins["scn"], ins["subscn"]) == ("0x00000f.00000244.0168", 2267707, 1)
    c = next(c for c in ins["changes"] if c["op"] == "11.2")
    assert c == {
        "op": "11.2",
        "cls": 1,
        "afn": 24,
        "dba": 0x0600000E,
        "obj": 72726,
        "con_id": 3,
        "xid": "10.12.572",
        "fb": "--H-FL--",
        "rowid": "AAARwWAAYAAAAAOAAA",
        "columns": [{"col": 0, "hex": "c102"}, {"col": 1, "hex": "68656c6c6f20776f726c64"}],
    }
    undo = next(c for c in ins["changes"] if c["op"] == "5.1")
    assert (undo["xid"], undo["undo_op"], undo["supp_fb"]) == ("10.12.572", "DRP", "---DFL--")


def test_dump_hex_records(tmp_path: Path) -> None:
    recs = [r for r in oracdc.records(need(ORACDC) / "Op11_17_Test.java")]
    le = tmp_path / "le.hex"
    le.write_text("# oracdc\n" + "\n".join(r.raw.hex() for r in recs if r.order == "<") + "\n")
    r = runner.invoke(app, ["dump", "--hex", str(le), "--json"])
    assert r.exit_code == 0, r.output
    assert [json.loads(x)["changes"][0]["con_id"] for x in r.output.splitlines()] == [3, 3]
    # the 11.17 (LLB) fields oracdc's test asserts: type, table object, LOB column, LOB id
    assert [json.loads(x)["changes"][0]["llb"] for x in r.output.splitlines()] == [
        {"type": 1, "obj": 193768, "column": 0x24, "lob_id": "0000000100002ee38f9a"},
        {"type": 3, "obj": 191367, "column": 0x45},
    ]
    be = tmp_path / "be.hex"
    be.write_text(next(r.raw.hex() for r in recs if r.order == ">"))
    r = runner.invoke(app, ["dump", "--hex", str(be), "--big-endian"])
    assert r.exit_code == 0 and "OP:11.17" in r.output
    assert "LLB typ:1 xid: 0x0106.018.009886f1 obj:2308585 lid:000000010000f5447085" in r.output
    assert "column_id: 7" in r.output
    r = runner.invoke(app, ["dump", "--hex", str(be)])  # read little-endian: one error line
    assert r.exit_code == 1 and r.output.startswith("GGS-REDO-") and "Traceback" not in r.output


def test_dump_shows_the_head_a_pieces_supplemental_data_names(tmp_path: Path) -> None:
    """A 5.1's supplemental data carries the row's head (bdba.slot): a piece without H names
    its head there (oracdc's Op11_5_Test, homegeneousMtlSystemItemsInterface)."""
    recs = [r for r in oracdc.records(need(ORACDC) / "Op11_5_Test.java") if r.order == "<"]
    hexes = tmp_path / "op11_5.hex"
    hexes.write_text("\n".join(r.raw.hex() for r in recs) + "\n")
    r = runner.invoke(app, ["dump", "--hex", str(hexes), "--json"])
    assert r.exit_code == 0, r.output
    pairs = []
    for line in r.output.splitlines():
        changes = json.loads(line)["changes"]
        undo = next((c for c in changes if c["op"] == "5.1" and "supp_rowid" in c), None)
        redo = next((c for c in changes if c["op"] == "11.5"), None)
        if undo and redo:
            pairs.append((redo["fb"], redo["rowid"], undo["supp_rowid"]))
    assert ("----F---", "AAAqTGAAPAAPn9MAAB", "AAAqTGAAQAALwWaAAL") in pairs
    assert ("-----L--", "AAAqTGAAPAAPn9MAAC", "AAAqTGAAQAALwWaAAL") in pairs
    r = runner.invoke(app, ["dump", "--hex", str(hexes)])
    assert r.exit_code == 0 and "supp log bdba: 0x" in r.output


def test_dump_bad_inputs(tmp_path: Path) -> None:
    junk = tmp_path / "junk.dbf"
    junk.write_bytes(b"\x00" * 1000)
    r = runner.invoke(app, ["dump", str(junk)])
    assert r.exit_code == 1 and r.output.startswith("GGS-REDO-0002")
    r = runner.invoke(app, ["dump", "--hex", str(tmp_path / "absent.hex")])
    assert r.exit_code == 1 and "Traceback" not in r.output
    bad = tmp_path / "bad.hex"
    bad.write_text("zz\n")
    r = runner.invoke(app, ["dump", "--hex", str(bad), "--layout", "10g"])
    assert r.exit_code == 1 and "--layout" in r.output


def test_logs_of_an_archive_location(tmp_path: Path) -> None:
    import shutil

    for p in (LOG15, LOG16):
        shutil.copy(need(p), tmp_path / p.name)
    (tmp_path / "notes.txt").write_text("not a log")
    r = runner.invoke(app, ["logs", str(tmp_path)])
    assert r.exit_code == 0, r.output
    rows = [line.split() for line in r.output.splitlines()[1:]]
    assert [row[:6] for row in rows] == [
        ["1", "15", "2266630", "2267717", "1224959854", "23.6.0.0"],
        ["1", "16", "2267717", "2267723", "1224959854", "23.6.0.0"],
    ]
    (tmp_path / "arch1_17_1224959854.dbf").write_bytes(b"junk" * 100)
    r = runner.invoke(app, ["logs", str(tmp_path), "--format", "arch%t_%s_%r.dbf"])
    assert (
        r.exit_code == 1 and "arch1_17_1224959854.dbf" in r.output and "GGS-REDO-0002" in r.output
    )


def test_logs_in_object_storage(s3_server: str) -> None:
    from engine import storage
    from engine.redo import catalog

    base = storage.join(s3_server, "arch")
    for p in (LOG15, LOG16):
        storage.put_file(need(p), storage.join(base, p.name))
    found = catalog.list_logs(base, "arch%t_%s_%r.dbf")
    assert [(f.thread, f.sequence, f.header.resetlogs_id) for f in found] == [
        (1, 15, 1224959854),
        (1, 16, 1224959854),
    ]
    assert [f.sequence for f in catalog.chain(found, 1, 15, None, base)] == [15, 16]


def test_dump_json_with_a_dictionary(tmp_path: Path) -> None:
    from tests.redo.corpus import CHECKPOINT

    r = runner.invoke(
        app, ["dump", "--json", "--dictionary", str(need(CHECKPOINT)), str(need(LOG15))]
    )
    assert r.exit_code == 0, r.output
    objs = [json.loads(line) for line in r.output.splitlines()]
    typed = [c for o in objs for c in o["changes"] if c.get("table") == "OLR_TEST.TEST_CDC"]
    assert [(c["op"], c["values"]) for c in typed] == [("11.2", {"ID": "1", "NAME": "hello world"})]
    r = runner.invoke(
        app, ["dump", "--json", "--dictionary", str(tmp_path / "absent.json"), str(LOG16)]
    )
    assert r.exit_code == 1 and r.output.startswith("GGS-REDO-0010") and "Traceback" not in r.output
