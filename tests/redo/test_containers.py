"""Containers of an attached container database: a TABLE statement's catalog part (or
SOURCECATALOG) selects the PDB, a two-part name every container, one name captured in two
containers is refused (OGG-02636) — engine/extract/containers.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.extract.alo import driver_dictionary
from engine.extract.capture import selection_for
from engine.extract.containers import exclude_catalogs, excluded_users, excludes, selected
from engine.extract.start import ExtractError
from engine.home.layout import Home
from engine.redo import dictionary as D
from ggsci.cli import build_app
from params.check import check_text
from params.models import ParamFile
from tests.redo.corpus import CHECKPOINT, LOG15, LOG16, need
from tests.redo.test_alo_ggsci import FMT, _add, _attach, _extract_here, _home, _rows
from tests.shell.conftest import Shell

COLS = (D.Column("ID", 1, "NUMBER", 22),)


def _table(con: int, container: str | None, owner: str, name: str, obj: int) -> D.Table:
    return D.Table(con, owner, name, obj, (obj,), COLS, ("ID",), container)


DICT = D.Dictionary(
    100,
    "AL32UTF8",
    "AL16UTF16",
    (
        _table(3, "PDB1", "HR", "EMP", 70),
        _table(3, "PDB1", "HR", "DEPT", 71),
        _table(4, "PDB2", "HR", "EMP", 70),  # the same object number, another container
        _table(5, None, "HR", "JOBS", 72),  # a container the dictionary does not name
    ),
)


def _model(tables: str) -> ParamFile:
    prm = "EXTRACT e1\nSOURCEDB ora\nTRANLOGOPTIONS ARCHIVEDLOGONLY\nEXTTRAIL ./dirdat/aa\n"
    res = check_text(prm + tables)
    assert not res.errors, res.errors
    return res.model


def _captured(tables: str, warn: list[str] | None = None) -> set[tuple[int, str]]:
    """(container, owner.name) the Extract decodes and its driver captures."""
    d = selected(DICT, _model(tables), (warn if warn is not None else []).append)
    sel = selection_for(_model(tables), driver_dictionary(d))
    by_name = {f"{t.owner}.{t.name}": t.con_id for t in d.tables}
    chosen = {q for q, t in driver_dictionary(d).tables.items() if sel.captured(t)}
    return {(by_name[q], q) for q in chosen}


def test_a_catalog_selects_its_container() -> None:
    assert _captured("TABLE PDB1.HR.*;\n") == {(3, "HR.EMP"), (3, "HR.DEPT")}
    assert _captured("TABLE pdb2.hr.emp;\n") == {(4, "HR.EMP")}
    assert _captured("TABLE PDB9.HR.*;\n") == set()


def test_sourcecatalog_names_the_container_of_the_two_part_names_after_it() -> None:
    assert _captured("SOURCECATALOG PDB2\nTABLE HR.EMP;\n") == {(4, "HR.EMP")}
    assert _captured("TABLE PDB1.HR.DEPT;\nSOURCECATALOG PDB2\nTABLE HR.*;\n") == {
        (3, "HR.DEPT"),
        (4, "HR.EMP"),
    }


def test_a_two_part_name_selects_every_container_when_unambiguous() -> None:
    assert _captured("TABLE HR.DEPT;\n") == {(3, "HR.DEPT")}
    assert _captured("TABLE HR.JOBS;\n") == {(5, "HR.JOBS")}


def test_a_name_captured_in_two_containers_is_refused_in_one_line() -> None:
    with pytest.raises(ExtractError) as e:
        _captured("TABLE HR.*;\n")
    assert e.value.code == "OGG-02636"
    text = str(e.value)
    assert "\n" not in text
    assert "HR.EMP in containers PDB1 (con_id 3), PDB2 (con_id 4)" in text
    assert "catalog.owner.table, or SOURCECATALOG" in text


def test_an_exclude_with_a_catalog_leaves_the_other_container() -> None:
    got = _captured("TABLE PDB1.HR.*;\nTABLEEXCLUDE PDB1.HR.DEPT;\n")
    assert got == {(3, "HR.EMP")}
    got = _captured("TABLE *.HR.EMP;\nTABLEEXCLUDE PDB2.HR.EMP;\n")
    assert got == {(3, "HR.EMP")}


def test_a_container_without_a_name_matches_no_catalog_and_is_said() -> None:
    warned: list[str] = []
    assert _captured("TABLE PDB1.HR.*;\nTABLE PDB5.HR.JOBS;\n", warned) == {
        (3, "HR.EMP"),
        (3, "HR.DEPT"),
    }
    assert len(warned) == 1 and "names no container 5" in warned[0]


def test_both_dictionary_formats_carry_the_container_name(tmp_path: Path) -> None:
    olr = D.load(need(CHECKPOINT))
    assert {t.container for t in olr.tables} == {"FREEPDB1"}
    path = tmp_path / "d.json"
    path.write_text(json.dumps(DICT.to_json()))
    assert D.load(path) == DICT
    old = DICT.to_json()
    for t in old["tables"]:
        t.pop("container", None)  # a dictionary written before container names
    path.write_text(json.dumps(old))
    assert {t.container for t in D.load(path).tables} == {None}


def test_the_fixture_by_its_pdb(tmp_path: Path) -> None:
    """End to end through ggsci (the command in this process, on the test session's Spark:
    test_alo_ggsci runs it as a child process; the selection's cases are above)."""
    root, arch = _home(tmp_path, (LOG15, LOG16))
    prm = root / "dirprm" / "e1.prm"
    prm.write_text(prm.read_text().replace("TABLE OLR_TEST.*;", "TABLE freepdb1.OLR_TEST.*;"))
    _attach(root, arch, 2)
    _add(root)
    run = _extract_here(root)
    assert run.exit_code == 0, run.output
    (row,) = _rows(root)
    assert (row["table"], row["columns"]) == (
        "OLR_TEST.TEST_CDC",
        {"ID": "1", "NAME": "hello world"},
    )


def test_excludeuser_with_a_catalog_excludes_that_containers_user_only() -> None:
    """The miner names a CDB session's user PDB.USER (engine/redo/capture.py); EXCLUDEUSER
    USER matches it in every container, PDB.USER in that one; without containers the
    catalog is not compared (run.py says so)."""
    cdb = excluded_users(["app", "pdb1.gg", "cdb$root.c##ops"], DICT.containers)
    assert cdb == {"APP", "PDB1.GG", "CDB$ROOT.C##OPS"}
    assert excludes(cdb, "PDB1.GG") and excludes(cdb, "pdb2.app") and excludes(cdb, "APP")
    assert not excludes(cdb, "PDB2.GG") and not excludes(cdb, "GG")
    assert excludes(cdb, "CDB$ROOT.C##OPS") and not excludes(cdb, "PDB1.C##OPS")
    flat = excluded_users(["pdb1.gg"], {})
    assert flat == {"GG"} and excludes(flat, "GG")
    assert DICT.containers == {1: "CDB$ROOT", 3: "PDB1", 4: "PDB2"}
    assert (
        D.Dictionary(1, "AL32UTF8", "AL16UTF16", (_table(0, None, "A", "B", 9),)).containers == {}
    )


def test_an_excludeuser_catalog_naming_no_container_is_refused_or_said() -> None:
    named = D.Dictionary(100, "AL32UTF8", "AL16UTF16", DICT.tables[:3])
    assert exclude_catalogs(["PDB1.GG", "CDB$ROOT.X", "GG"], named) == []
    with pytest.raises(ExtractError) as e:
        exclude_catalogs(["PDB1.GG", "PDB9.GG"], named)
    assert e.value.code == "OGG-02340" and "non-existing catalog 'PDB9'" in str(e.value)
    assert "PDB1, PDB2" in str(e.value) and "\n" not in str(e.value)
    # a container the dictionary does not name (5): PDB9 may be it, said, not refused
    (said,) = exclude_catalogs(["PDB9.GG"], DICT)
    assert "names no container 5" in said


@pytest.mark.parametrize(
    ("exclude", "rows", "said"),
    [
        ("FREEPDB1.OLR_TEST", 0, ""),  # the fixture's session: OLR_TEST in FREEPDB1 (con 3)
        ("OLR_TEST", 0, ""),
        ("CDB$ROOT.OLR_TEST", 1, ""),  # another container's user of that name
        ("NOPDB.OLR_TEST", None, "OGG-02340"),
    ],
)
def test_excludeuser_by_container_on_the_fixture(
    tmp_path: Path, exclude: str, rows: int | None, said: str
) -> None:
    root, arch = _home(tmp_path, (LOG15,))
    prm = root / "dirprm" / "e1.prm"
    text = prm.read_text().replace("TABLE", f"TRANLOGOPTIONS EXCLUDEUSER {exclude}\nTABLE")
    prm.write_text(text)
    app = build_app()
    r = CliRunner().invoke(app, ["db", "attach", "ora23", "--archive", str(arch), "--dictionary",
                                 str(need(CHECKPOINT)), "--format", FMT, "--home", str(root)])  # fmt: skip
    assert r.exit_code == 0, r.output
    shell = Shell(Home(root))
    shell.run("ADD EXTRACT e1, TRANLOG, EXTSEQNO 15, EXTRBA 0")
    shell.run("ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")
    r = CliRunner().invoke(
        app, ["extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof", "--home", str(root)]
    )
    if rows is None:
        assert r.exit_code == 1 and said in r.output, r.output
        assert "non-existing catalog 'NOPDB'" in r.output and "Traceback" not in r.output
        return
    assert r.exit_code == 0, r.output
    assert "OGG-10144" not in r.output and "OGG-02340" not in r.output, r.output
    assert len(_rows(root)) == rows
