"""Typed models and validation of the parameters the engine acts on."""

from __future__ import annotations

import pytest

from params.check import check_text
from params.models import FileKind, ParamFile


def ok(text: str) -> ParamFile:
    r = check_text(text)
    assert r.ok, [d.message for d in r.errors]
    return r.model


def errors(text: str) -> list[str]:
    return [d.message for d in check_text(text).errors]


EXT = "EXTRACT ext1\nUSERIDALIAS ggsrc DOMAIN OracleGoldenGate\nEXTTRAIL ./dirdat/lt\n"


def test_reference_example_file() -> None:
    m = ok(
        EXT
        + "BR BRINTERVAL 2H, BRDIR ./BR\nWARNLONGTRANS 2H, CHECKINTERVAL 10M\n"
        + "TRANLOGOPTIONS EXCLUDEUSER ggadmin\nDDL INCLUDE MAPPED OBJNAME hr.* &\n"
        + "    EXCLUDE OBJNAME hr.tmp_*\nGETTRUNCATES\nTABLE hr.*;\nTABLEEXCLUDE hr.tmp_*\n"
    )
    assert m.kind is FileKind.EXTRACT and m.group == "EXT1"
    assert m.br.interval == 7200 and m.br.brdir == "./BR"
    assert (m.warn_long_trans.threshold, m.warn_long_trans.check_interval) == (7200, 600)
    assert m.tranlog.exclude_users == ("ggadmin",)
    assert m.ddl is not None and [c.action for c in m.ddl.clauses] == ["INCLUDE", "EXCLUDE"]
    assert m.captured("HR", "EMP") is not None
    assert m.captured("hr", "tmp_x") is None
    assert m.captured("SCOTT", "EMP") is None
    assert m.tables[0].get_truncates


def test_keywords_are_case_insensitive() -> None:
    m = ok(
        "extract e1\nExtTrail ./dirdat/aa\ntranlogoptions excludeuser X\nTranLogOptions BUFSIZE 65536\ntable a.b;"
    )
    assert m.tranlog.exclude_users == ("X",) and m.tranlog.bufsize == 65536


# ---------------------------------------------------------------- BR


def test_br_defaults() -> None:
    br = ok(EXT).br
    assert (br.brdir, br.interval, br.fs_option) == ("BR", 4 * 3600, "MS_SYNC")
    assert not (br.off or br.off_on_failure or br.keep_stale_files or br.explicit)


def test_br_every_option() -> None:
    br = ok(
        EXT + "BR BRDIR /u01/ogg/brfiles, BRINTERVAL 20M, BRKEEPSTALEFILES, BROFFONFAILURE, "
        "BRFSOPTION MS_ASYNC\n"
    ).br
    assert (br.brdir, br.interval, br.keep_stale_files, br.off_on_failure, br.fs_option) == (
        "/u01/ogg/brfiles",
        1200,
        True,
        True,
        "MS_ASYNC",
    )
    assert ok(EXT + "BR BROFF\n").br.off


@pytest.mark.parametrize("path", ["/tmp/br", "./TEMP", "/data/MyTmpDir", "c:\\Temp\\x"])
def test_brdir_with_temp_or_tmp_is_an_error(path: str) -> None:
    [msg] = errors(EXT + f"BR BRDIR {path}\n")
    assert "temporary directories" in msg


@pytest.mark.parametrize(
    ("value", "ok_"),
    [("20M", True), ("19M", False), ("96H", True), ("97H", False), ("5761M", False), ("1h", True)],
)
def test_brinterval_range(value: str, ok_: bool) -> None:
    errs = errors(EXT + f"BR BRINTERVAL {value}\n")
    assert (not errs) == ok_, errs


def test_brinterval_needs_a_unit() -> None:
    [msg] = errors(EXT + "BR BRINTERVAL 4\n")
    assert "M or H" in msg


def test_brinterval_rounded_to_checkpointsecs_and_the_model_says_so() -> None:
    r = check_text(EXT + "CHECKPOINTSECS 7\nBR BRINTERVAL 20M\n")
    assert r.ok
    assert (
        r.model.br.interval == 1200 and r.model.br.effective_interval == 1204 and r.model.br.rounded
    )
    [note] = [d for d in r.diagnostics if d.code == "br-rounded"]
    assert note.severity.value == "note" and "1204" in note.message and note.origin.line == 5


def test_brreset_is_an_option_of_br_not_a_parameter() -> None:
    """Seed 000 lists BRRESET among BR's options; alone it is not a parameter."""
    assert ok(EXT + "BR BRRESET\n").br.reset is True
    assert ok(EXT + "BR BRDIR ./BR, BRRESET\n").br.reset is True
    assert ok(EXT + "BR BRDIR ./BR\n").br.reset is False
    [msg] = errors(EXT + "BRRESET\n")
    assert "start-up option" in msg and "command line" in msg


# ---------------------------------------------------------------- WARNLONGTRANS


def test_warnlongtrans_defaults() -> None:
    w = ok(EXT).warn_long_trans
    assert (w.threshold, w.check_interval, w.explicit) == (3600, 300, False)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("40s", 40), ("600sec", 600), ("10SECS", 10), ("2second", 2), ("3SECONDS", 3), ("5m", 300),
     ("2MIN", 120), ("1mins", 60), ("1minute", 60), ("2MINUTES", 120), ("2h", 7200),
     ("1HOUR", 3600), ("2hours", 7200), ("1DAY", 86400), ("2d", 172800), ("3days", 259200)],
)  # fmt: skip
def test_warnlongtrans_units(text: str, seconds: int) -> None:
    assert ok(EXT + f"WARNLONGTRANS {text}\n").warn_long_trans.threshold == seconds


def test_warnlongtrans_checkinterval_minimum_and_unit_errors() -> None:
    assert errors(EXT + "WARNLONGTRANS 1H, CHECKINTERVAL 299S\n") == [
        "CHECKINTERVAL must be at least 5 minutes (got 299S)"
    ]
    assert ok(EXT + "WARNLONGTRANS 1H, CHECKINTERVAL 300s\n").warn_long_trans.check_interval == 300
    assert "unknown unit 'W'" in errors(EXT + "WARNLONGTRANS 1W\n")[0]
    assert "no space" in errors(EXT + "WARNLONGTRANS 1 H\n")[0]
    assert "needs a unit" in errors(EXT + "WARNLONGTRANS 60\n")[0]


# ---------------------------------------------------------------- TRANLOGOPTIONS


def test_tranlogoptions_typed_options_several_per_line_and_lines() -> None:
    t = ok(
        EXT + "TRANLOGOPTIONS PURGEORPHANEDTRANSACTIONS TRANSCLEANUPFREQUENCY 15\n"
        "TRANLOGOPTIONS EXCLUDEUSER ggrep, EXCLUDEUSER ggrep2 EXCLUDEUSERID 90\n"
        "TRANLOGOPTIONS EXCLUDETRANS ggs_repl EXCLUDETAG 00 EXCLUDETAG +\n"
        "TRANLOGOPTIONS ARCHIVEDLOGONLY ALTARCHIVELOGDEST PRIMARY INSTANCE ora1 /arch/1\n"
        "TRANLOGOPTIONS BUFSIZE 2000000\n"
    ).tranlog
    assert t.purge_orphaned and t.trans_cleanup_frequency == 15
    assert t.exclude_users == ("ggrep", "ggrep2") and t.exclude_user_ids == (90,)
    assert t.exclude_trans == ("ggs_repl",) and t.exclude_tags == ("00", "+")
    assert t.archived_log_only and t.alt_archive_log_dests == ("/arch/1",)
    assert t.bufsize == 2_000_000


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("TRANSCLEANUPFREQUENCY 0", "1 to 43200"),
        ("TRANSCLEANUPFREQUENCY 43201", "1 to 43200"),
        ("BUFSIZE 10", "8192 to 10000000"),
        ("EXCLUDEUSR gg", "did you mean EXCLUDEUSER"),
        ("EXCLUDEUSERID abc", "whole number"),
    ],
)
def test_tranlogoptions_errors(line: str, fragment: str) -> None:
    [msg] = errors(EXT + f"TRANLOGOPTIONS {line}\n")
    assert fragment in msg


def test_every_reference_tranlogoption_is_recognised() -> None:
    r = check_text(
        EXT
        + "TRANLOGOPTIONS DBLOGREADER DBLOGREADERBUFSIZE 1048576 INTEGRATEDPARAMS (max_sga_size 200, parallelism 2)\n"
        "TRANLOGOPTIONS MININGUSERALIAS tiger2 DOMAIN d ASMUSER SYS@ASM, ASMPASSWORD pw\n"
        "TRANLOGOPTIONS LOGRETENTION ENABLED PERFORMANCEPROFILE HIGH MIXEDENDIAN ON\n"
        "TRANLOGOPTIONS ALTLOGDEST /u01/logs\n"
    )
    assert r.ok, [d.message for d in r.errors]
    assert {d.code for d in r.diagnostics} == {"not-used"}


# ---------------------------------------------------------------- tables, toggles, misc


def test_gettruncates_is_a_toggle_for_following_tables() -> None:
    m = ok(EXT + "TABLE a.t1;\nGETTRUNCATES\nTABLE a.t2;\nIGNORETRUNCATES\nTABLE a.t3;\n")
    assert [t.get_truncates for t in m.tables] == [False, True, False]


def test_table_options_and_names() -> None:
    m = ok(
        EXT + "SOURCECATALOG pdb1\nTABLE hr.emp, COLS (id, name), KEYCOLS (id), WHERE (id > 10), "
        "FILTER (@STRFIND(name, 'x') > 0), TOKENS (TK = @GETENV('GGENVIRONMENT', 'HOSTNAME'));\n"
        'TABLE "Mixed"."Case";\nTABLE CDB$ROOT.OLEG.DEPT;\n'
    )
    t = m.tables[0]
    assert (t.source.catalog, t.source.owner, t.source.name) == ("PDB1", "HR", "EMP")
    assert t.cols == ("id", "name") and t.keycols == ("id",)
    assert t.option("WHERE") is not None and t.option("TOKENS") is not None
    assert m.captured("Mixed", "Case") is not None and m.captured("MIXED", "CASE") is None
    assert m.tables[2].source.catalog == "CDB$ROOT"


def test_map_needs_target_and_no_question_wildcard_in_target() -> None:
    rep = "REPLICAT r1\nASSUMETARGETDEFS\n"
    assert ok(rep + "MAP hr.*, TARGET hr2.*;\n").tables[0].target is not None
    assert "MAP needs a TARGET" in errors(rep + "MAP hr.emp;\n")[0]
    assert "not allowed in a TARGET" in errors(rep + "MAP hr.emp?, TARGET hr.emp?;\n")[0]


def test_table_before_a_trail_and_in_a_replicat() -> None:
    assert "must come after EXTTRAIL" in errors("EXTRACT e1\nTABLE a.b;\n")[0]
    assert "Replicat maps tables with MAP" in errors("REPLICAT r1\nTABLE a.b;\n")[0]


def test_manager_file() -> None:
    m = ok(
        "PORT 7809\nDYNAMICPORTLIST 7810-7820, 7830\nAUTOSTART ER *\n"
        "AUTORESTART EXTRACT e*, RETRIES 5, WAITMINUTES 1, RESETMINUTES 30\n"
        "PURGEOLDEXTRACTS ./dirdat/*, USECHECKPOINTS, MINKEEPHOURS 2\nLAGREPORTHOURS 1\n"
        "LAGINFOMINUTES 5\nLAGCRITICALSECONDS 90\n"
    )
    g = m.manager
    assert m.kind is FileKind.MANAGER and g.port == 7809
    assert len(g.dynamic_ports) == 12 and g.dynamic_ports[-1] == 7830
    assert g.autostart[0].group == "*" and g.autorestart[0].retries == 5
    assert g.purge_old_extracts[0].min_keep_hours == 2
    assert (g.lag_report_minutes, g.lag_info_seconds, g.lag_critical_seconds) == (60, 300, 90)
    assert "0 to 65535" in errors("PORT 70000\n")[0]
    assert ok("PORT 0\n").manager.port == 0  # the system chooses (docs/quickstart.md)
    g = ok(
        "PORT 0\nCHECKMINUTES 5\nSTARTUPVALIDATIONDELAY 0\nDOWNREPORTHOURS 2\nDOWNCRITICAL\n"
        "LAGINFOSECONDS 0\n"
    ).manager
    assert (g.check_minutes, g.startup_validation_seconds, g.down_report_minutes) == (5, 0, 120)
    assert g.down_critical and g.lag_info_seconds == 0
    assert "at least 1" in errors("CHECKMINUTES 0\n")[0]
    assert "RMTHOST MGRPORT" not in str(errors("EXTRACT e\nRMTHOST h, MGRPORT 0\n"))
    assert "MGRPORT must be 1 to 65535" in errors("EXTRACT e\nRMTHOST h, MGRPORT 0\n")[0]


def test_other_engine_parameters() -> None:
    m = ok(
        EXT + "CHECKPOINTSECS 5\nCACHEMGR CACHESIZE 2GB, CACHEDIRECTORY ./dirtmp\n"
        "REPORTCOUNT EVERY 10 MINUTES, RATE\nREPORT AT 23:30 ON SUNDAY\n"
        "DISCARDFILE ./dirrpt/e1.dsc, APPEND, MEGABYTES 100\nLOGALLSUPCOLS\nUPDATERECORDFORMAT COMPACT\n"
        "GROUPTRANSOPS 500\nMAXTRANSOPS 10000\n"
    )
    assert m.checkpoint_secs == 5 and m.cachemgr.cache_size == 2 << 30
    assert m.report_count is not None and (
        m.report_count.every,
        m.report_count.unit,
        m.report_count.rate,
    ) == (10, "MINUTES", True)
    assert m.report_schedule == ("AT 23:30 ON SUNDAY",)
    assert m.discard is not None and m.discard.append and m.log_all_sup_cols
    assert m.update_record_format == "COMPACT" and (m.group_trans_ops, m.max_trans_ops) == (
        500,
        10000,
    )
    r = ok("REPLICAT r1\nHANDLECOLLISIONS\nREPERROR (DEFAULT, ABEND)\nREPERROR (-1, DISCARD)\n")
    assert r.handle_collisions and [(e.error, e.response) for e in r.reperrors] == [
        ("DEFAULT", "ABEND"),
        ("-1", "DISCARD"),
    ]


def test_login_forms_and_passwords_not_in_repr() -> None:
    m = ok("EXTRACT e1\nUSERID gg, PASSWORD s3cret\n")
    assert m.login.userid == "gg" and m.login.password_given and "s3cret" not in repr(m)
    assert ok("EXTRACT e1\nSOURCEDB src1\n").login.sourcedb == "src1"
    assert ok("EXTRACT e1\nuserid gg password x\n").login.userid == "gg"


def test_unknown_parameter_did_you_mean_and_not_used_warning() -> None:
    r = check_text(
        EXT + "TRANLOGOPTION EXCLUDEUSER x\nSETENV (ORACLE_SID = 'ORCL')\nENCRYPTTRAIL AES192\n"
    )
    [err] = r.errors
    assert err.message == "unknown parameter 'TRANLOGOPTION'; did you mean TRANLOGOPTIONS?"
    warns = [d.message for d in r.diagnostics if d.code == "not-used"]
    assert warns == [
        "SETENV is a GoldenGate parameter not used by this engine",
        "ENCRYPTTRAIL is a GoldenGate parameter not used by this engine",
    ]


def test_ggsci_command_in_a_parameter_file() -> None:
    [msg] = errors(EXT + "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1\n")
    assert msg.startswith("ADD is a GGSCI command, not a parameter")


def test_group_name_rules_and_position() -> None:
    assert "1 to 8" in errors("EXTRACT toolonggroup\n")[0]
    assert "must be the first parameter" in errors("CHECKPOINTSECS 5\nEXTRACT e1\n")[0]
    assert errors("EXTRACT e1\nEXTRACT e2\n")[0] == "EXTRACT may appear only once (first at line 1)"


def test_every_problem_of_a_file_is_reported() -> None:
    r = check_text(
        EXT + "BR BRINTERVAL 10M\nWARNLONGTRANS 1H, CHECKINTERVAL 1M\nPORTT 7809\nTABLE x;\n"
    )
    assert [d.origin.line for d in r.errors] == [4, 5, 6, 7]


def test_option_keywords_are_not_read_as_units_or_arguments() -> None:
    assert errors(EXT + "WARNLONGTRANS 2 CHECKINTERVAL 10M\n") == [
        "WARNLONGTRANS needs a unit right after the number (S, M, H or D): 2H?"
    ]
    assert errors(EXT + "BR BRINTERVAL 4 BRDIR ./BR\n") == [
        "BRINTERVAL is a number and M or H, like 20M or 4H (got '4')"
    ]
    assert errors(EXT + "RMTHOST MGRPORT 7809\n") == [
        "RMTHOST: unexpected MGRPORT here (is an argument missing before it?)"
    ]


def test_brinterval_rounding_stays_within_96_hours() -> None:
    br = ok(EXT + "CHECKPOINTSECS 7\nBR BRINTERVAL 96H\n").br
    assert br.effective_interval <= 96 * 3600 and br.effective_interval % 7 == 0


def test_cachesize_units() -> None:
    assert ok(EXT + "CACHEMGR CACHESIZE 512B\n").cachemgr.cache_size == 512
    assert ok(EXT + "CACHEMGR CACHESIZE 64 MB\n").cachemgr.cache_size == 64 << 20
