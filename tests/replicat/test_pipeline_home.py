"""tests.harness.pipeline_home without processes: the files and commands to the letter, and a home
set up on an SQLite target read back through the same spec."""

from __future__ import annotations

from pathlib import Path

from engine.home.layout import Home
from tests.harness import pipeline_home as ph


def test_files_and_commands_of_the_default_pipeline() -> None:
    spec = ph.PipelineSpec("./tgt.db", grouptransops=200, heartbeat_frequency=1, mgr_port=7999)
    assert ph.prm_files(spec) == {
        "mgr.prm": "PORT 7999\nACCESSRULE, PROG COLLECTOR, IPADDR 127.0.0.1, ALLOW\n",
        "ext1.prm": "EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nCHECKPOINTSECS 1\n"
        "TABLE wl.*;\n",
        "pmp1.prm": "EXTRACT pmp1\nRMTHOST 127.0.0.1, MGRPORT 7999\nRMTTRAIL ./dirrmt/rt\n"
        "PASSTHRU\nCHECKPOINTSECS 1\nTABLE wl.*;\n",
        "rep1.prm": "REPLICAT rep1\nTARGETDB ./tgt.db\nASSUMETARGETDEFS\nCHECKPOINTSECS 1\n"
        "GROUPTRANSOPS 200\nMAP wl.*, TARGET wl.*;\n",
    }
    assert ph.target_commands(spec) == (
        "DBLOGIN SOURCEDB ./tgt.db",
        "ADD CHECKPOINTTABLE gg.chkpt",
        "ADD HEARTBEATTABLE, TARGETONLY",
        "DBLOGIN SOURCEDB src",
        "ADD HEARTBEATTABLE, FREQUENCY 1",
    )
    assert ph.add_and_start_commands(spec) == (
        "START MANAGER",
        "ADD EXTRACT ext1, TRANLOG, EXTSEQNO 1, EXTRBA 0",
        "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1",
        "ADD EXTRACT pmp1, EXTTRAILSOURCE ./dirdat/lt",
        "ADD RMTTRAIL ./dirrmt/rt, EXTRACT pmp1",
        "ADD REPLICAT rep1, EXTTRAIL ./dirrmt/rt, CHECKPOINTTABLE gg.chkpt",
        "START EXTRACT ext1",
        "START EXTRACT pmp1",
        "START REPLICAT rep1",
    )
    assert ph.stop_commands(spec) == (
        "STOP REPLICAT rep1",
        "STOP EXTRACT pmp1",
        "STOP EXTRACT ext1",
    )
    assert spec.groups == (("EXTRACT", "EXT1"), ("EXTRACT", "PMP1"), ("REPLICAT", "REP1"))


def test_options_left_out_and_added_and_several_schemas() -> None:
    hr = ph.TargetTable("HR", "EMP", (("ID", "NUMERIC PRIMARY KEY"), ("HIRED", "DATE")))
    spec = ph.PipelineSpec(
        "postgresql:///db?user=u",
        (hr, *ph.workload_tables(1)),
        pump=ph.Group("pmp1", checkpoint_secs=None),
        discard_file="./dirrpt/rep1.dsc",
    )
    assert ph.pump_prm(spec).splitlines()[-3:] == ["PASSTHRU", "TABLE hr.*;", "TABLE wl.*;"]
    assert ph.replicat_prm(spec).splitlines()[3:] == [
        "CHECKPOINTSECS 1",
        "DISCARDFILE ./dirrpt/rep1.dsc, PURGE",
        "MAP hr.*, TARGET hr.*;",
        "MAP wl.*, TARGET wl.*;",
    ]
    assert ph.target_commands(spec) == (
        "DBLOGIN SOURCEDB postgresql:///db?user=u",
        "ADD CHECKPOINTTABLE gg.chkpt",
    )
    assert hr.ddl("postgresql") == "CREATE TABLE hr.emp (ID NUMERIC PRIMARY KEY, HIRED TIMESTAMP)"
    assert hr.ddl("sqlite") == "CREATE TABLE EMP (ID NUMERIC PRIMARY KEY, HIRED DATE)"


def test_prepared_sqlite_home_reads_back_empty_and_equal(tmp_path: Path) -> None:
    spec = ph.PipelineSpec("./tgt.db")
    home = Home(tmp_path / "home")
    ph.prepare_home(home, spec)
    assert (home.dirprm / "rep1.prm").read_text() == ph.replicat_prm(spec)
    assert (home.dirdb / "SRC" / "data.sqlite").is_file()
    table = spec.tables[0]
    # the workload creates the source tables; the target's are there and empty
    assert ph.target_rows(home, spec, table) == []
    assert ph.normalise(1.50) == "1.5" and ph.normalise(None) is None
