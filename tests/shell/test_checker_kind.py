"""Issue 15: the checker's message on a Replicat names REPLICAT, not EXTRACT.

A parameter file is read for a group (the group process, EDIT PARAMS of a group, ``ggsci
params check`` of a group's file in a home, ``ggsci extract``): its first parameter must name
that group, and its lines are judged as that group's kind. A Replicat whose file was copied
from an Extract's used to be told "MAP is a Replicat parameter; an Extract selects tables with
TABLE"; it is now told that its file is REPLICAT REP5's.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.home.layout import Home
from ggsci.cli import build_app
from params.check import check_text
from params.models import ExpectedGroup, FileKind

from .conftest import Shell

runner = CliRunner()
COPIED = "EXTRACT rep5\nTARGETDB ./target.db\nMAP hr.*, TARGET hr.*;\n"


@pytest.fixture(autouse=True)
def no_gghome(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GGHOME", "")


def errors(text: str, expected: ExpectedGroup | None) -> list[str]:
    return [d.message for d in check_text(text, "r.prm", expected=expected).errors]


def test_a_replicats_file_that_begins_extract_names_the_replicat() -> None:
    assert errors(COPIED, None) == [
        "MAP is a Replicat parameter; an Extract selects tables with TABLE"
    ]  # read alone, the file is an Extract's
    found = errors(COPIED, ExpectedGroup("REPLICAT", "REP5"))
    assert found == [
        "EXTRACT rep5: this is the parameter file of REPLICAT REP5; "
        "its first parameter must be REPLICAT REP5"
    ]
    result = check_text(COPIED, "r.prm", expected=ExpectedGroup("REPLICAT", "REP5"))
    assert result.model.kind is FileKind.REPLICAT  # the MAP is judged as a Replicat's
    assert len(result.errors) == 1


def test_another_groups_name_or_no_group_parameter_is_an_error() -> None:
    other = "REPLICAT other\nMAP a.b, TARGET a.b;\n"
    assert errors(other, ExpectedGroup("REPLICAT", "REP3")) == [
        "REPLICAT other: this is the parameter file of REPLICAT REP3; "
        "its first parameter must be REPLICAT REP3"
    ]
    none = "TARGETDB ./t.db\nMAP a.b, TARGET a.b;\n"
    assert errors(none, ExpectedGroup("REPLICAT", "REP4")) == [
        "this is the parameter file of REPLICAT REP4; its first parameter must be REPLICAT REP4"
    ]
    assert errors("REPLICAT rep4\nMAP a.b, TARGET a.b;\n", ExpectedGroup("REPLICAT", "REP4")) == []
    assert errors("EXTRACT e1\nEXTTRAIL ./dirdat/aa\n", ExpectedGroup("EXTRACT")) == []


def test_the_replicat_process_abends_naming_its_group(tmp_path: Path) -> None:
    """What START REPLICAT rep5 runs: the group process checks the file as REPLICAT REP5's,
    every diagnostic to the report, OGG-10144 to abend."""
    from engine.home.groups import GroupStore
    from engine.runtime.paramcheck import load_group_params
    from engine.runtime.process import GroupContext, ProcessAbend
    from engine.runtime.report import ReportWriter

    home, _shell = _home(tmp_path)
    group = GroupStore(home).get("REP5")
    assert group is not None
    report = ReportWriter(home.dirrpt / "REP5.rpt")
    report.start("Oracle GoldenGate Delivery for Oracle", None, [])
    ctx = GroupContext(home, group, datetime.now, report)
    with pytest.raises(ProcessAbend) as abend:
        load_group_params(ctx)
    assert abend.value.code == "OGG-10144"
    text = report.path.read_text()
    assert "error: EXTRACT rep5: this is the parameter file of REPLICAT REP5" in text
    assert "an Extract selects tables" not in text


def _home(tmp_path: Path) -> tuple[Home, Shell]:
    home = Home(tmp_path / "h")
    home.create_subdirs()
    shell = Shell(home)
    shell.run("ADD REPLICAT rep5, EXTTRAIL ./dirdat/rt, NODBCHECKPOINT")
    (home.dirprm / "rep5.prm").write_text(COPIED)
    return home, shell


def test_edit_params_of_a_replicat_checks_it_as_that_replicat(tmp_path: Path) -> None:
    _, shell = _home(tmp_path)
    for target in ("rep5", "./dirprm/rep5.prm"):  # by group name or by its file
        out = shell.run(f"EDIT PARAMS {target}")
        assert "this is the parameter file of REPLICAT REP5" in out, out
        assert "an Extract selects tables" not in out
        assert not shell.ok


def test_params_check_of_a_homes_replicat_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, _shell = _home(tmp_path)
    monkeypatch.chdir(tmp_path)  # not a home: --home names it, the file is named relative to it
    result = runner.invoke(
        build_app(), ["--home", str(home.root), "params", "check", "dirprm/rep5.prm"]
    )
    assert result.exit_code == 1
    assert "1:9: error: EXTRACT rep5: this is the parameter file of REPLICAT REP5" in (
        result.output
    )
    assert "FAILED (replicat, 1 error(s)" in result.output
    assert "an Extract" not in result.output
    # and from anywhere, by its absolute name: the home is the one its dirprm/ is in
    monkeypatch.setenv("GGHOME", "")
    again = runner.invoke(build_app(), ["params", "check", str(home.dirprm / "rep5.prm")])
    assert "this is the parameter file of REPLICAT REP5" in again.output


def test_ggsci_extract_refuses_a_replicats_file_naming_start_replicat(tmp_path: Path) -> None:
    home = Home(tmp_path / "h")
    home.create_subdirs()
    (home.dirprm / "rep1.prm").write_text("REPLICAT rep1\nMAP hr.*, TARGET hr.*;\n")
    result = runner.invoke(
        build_app(), ["--home", str(home.root), "extract", "paramfile", "dirprm/rep1.prm"]
    )
    assert result.exit_code == 1
    assert (
        "1:10: error: REPLICAT rep1: an Extract's parameter file must begin with EXTRACT group "
        "(START REPLICAT rep1 runs a Replicat)"
    ) in result.output
    assert "OGG-01044" not in result.output  # not 'No EXTTRAIL or RMTTRAIL' from the Capture


def test_not_used_reasons_in_a_replicat_name_the_replicat() -> None:
    text = (
        "REPLICAT r1\nRMTHOST h, MGRPORT 7809\nUPDATERECORDFORMAT FULL\nGETUPDATEBEFORES\n"
        "MAP a.b, TARGET a.b;\n"
    )
    warnings = [d.message for d in check_text(text, "r.prm").diagnostics]
    # GETUPDATEBEFORES acts in a Replicat (INSERTALLRECORDS keeps the before images)
    assert warnings == [
        "RMTHOST is an Extract parameter: not used in a Replicat",
        "UPDATERECORDFORMAT is an Extract parameter: not used in a Replicat",
    ]


def test_ggsci_replicat_runs_a_replicat_in_the_foreground(tmp_path: Path) -> None:
    """``ggsci replicat paramfile FILE --stop-at-eof`` applies the group's trail; an Extract's
    file or an undefined group is one line, never the other kind's messages."""
    import sqlite3

    from engine.trail.codec import encode_record
    from engine.trail.layout import IOType, TransInd
    from engine.trail.model import TableDef, TrailRecord
    from engine.trail.writer import TrailWriter

    home = Home(tmp_path / "h")
    home.create_subdirs()
    with sqlite3.connect(home.root / "t.db") as db:
        db.execute("CREATE TABLE emp (id NUMERIC PRIMARY KEY, name TEXT)")
    shell = Shell(home)
    shell.run("ADD REPLICAT rep1, EXTTRAIL ./dirdat/rt, NODBCHECKPOINT")
    (home.dirprm / "rep1.prm").write_text(
        "REPLICAT rep1\nTARGETDB ./t.db\nASSUMETARGETDEFS\nMAP hr.*, TARGET hr.*;\n"
    )
    writer = TrailWriter.open(home.dirdat / "rt", durable=False, roll_on_restart=False)
    writer.define_table(TableDef("HR.EMP", ("ID", "NAME")))
    record = TrailRecord(
        io_type=IOType.INSERT,
        table="HR.EMP",
        columns=((0, "7"), (1, "Ada")),
        before_columns=(),
        before_after="A",
        trans_ind=TransInd.of(0, 1),
        io_time_us=1_700_000_000_000_000,
        logcsn="100",
        tranid="1.2.100",
    )
    writer.append_many([encode_record(record)])
    writer.close()
    base = ["--home", str(home.root), "replicat", "paramfile"]
    done = runner.invoke(build_app(), [*base, "dirprm/rep1.prm", "--stop-at-eof"])
    assert done.exit_code == 0, done.output
    assert "REPLICAT REP1: Applied 1 transactions (1 inserts," in done.output
    with sqlite3.connect(home.root / "t.db") as db:
        assert db.execute("SELECT id, name FROM emp").fetchall() == [(7, "Ada")]
    assert "OGG-00991" in (home.dirrpt / "REP1.rpt").read_text()

    (home.dirprm / "ext1.prm").write_text("EXTRACT ext1\nEXTTRAIL ./dirdat/lt\nTABLE hr.*;\n")
    refused = runner.invoke(build_app(), [*base, "dirprm/ext1.prm"])
    assert refused.exit_code == 1
    assert (
        "error: EXTRACT ext1: a Replicat's parameter file must begin with REPLICAT group "
        "(START EXTRACT ext1 runs an Extract)"
    ) in refused.output
    (home.dirprm / "rep9.prm").write_text("REPLICAT rep9\nMAP a.b, TARGET a.b;\n")
    undefined = runner.invoke(build_app(), [*base, "dirprm/rep9.prm"])
    assert undefined.exit_code == 1
    assert "ERROR OGG-01028  REPLICAT REP9 is not defined (ADD REPLICAT)." in undefined.output
