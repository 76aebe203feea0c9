"""From parsed statements to a validated :class:`~params.models.ParamFile`.

One handler per parameter name, in the :data:`HANDLERS` table; a name with a handler is
one the engine acts on. Handlers never raise for a user's mistake: they add positioned
diagnostics and go on, so that a whole file is checked in one pass.
"""

from __future__ import annotations

import math
from dataclasses import replace

from params import models as m
from params.builder import (
    BRINTERVAL_MAX,
    GGSCI_COMMANDS,
    MAY_PRECEDE_GROUP,
    Builder,
    Handler,
    as_int,
)
from params.catalog import (
    EXTRACT_ONLY_PARAMETERS,
    IGNORED_IN_REPLICAT,
    IGNORED_OPTIONS,
    IGNORED_PARAMETERS,
    data_specs,
    did_you_mean,
    known_parameters,
)
from params.errors import Diagnostic, Origin, Severity
from params.grammar import GrammarError, Parsed, parse_statement
from params.handlers_capture import (
    h_br,
    h_brreset,
    h_fetchoptions,
    h_tranlogoptions,
    h_warnlongtrans,
)
from params.handlers_core import (
    flag_handler,
    h_cachemgr,
    h_checkpointsecs,
    h_ddl,
    h_discardfile,
    h_extfile,
    h_group,
    h_int_field,
    h_noop,
    h_recoveryoptions,
    h_report,
    h_reportcount,
    h_rmthost,
    h_rmttask,
    h_sourcecatalog,
    h_sourcedb,
    h_table,
    h_targetdb,
    h_trail,
    h_updaterecordformat,
    h_userid,
    h_useridalias,
    toggle_handler,
    warn_updaterecordformat_alone,
)
from params.handlers_globals import h_allowoutputdir
from params.handlers_manager import (
    h_accessrule,
    h_autorestart,
    h_autostart,
    h_downcritical,
    h_dynamicportlist,
    h_lag,
    h_port,
    h_purgeoldextracts,
)
from params.handlers_map import (
    collisions_toggle,
    h_insertallrecords,
    h_reperror,
    op_toggle,
    warn_reperror_after_maps,
)
from params.handlers_spark import h_sparkconf, h_sparkmaster, h_sparkproperties
from params.postgres_rules import NOT_USED as PG_NOT_USED
from params.postgres_rules import PG_ONLY, is_postgres_spec
from params.text import Statement

HANDLERS: dict[str, Handler] = {
    "EXTRACT": h_group,
    "REPLICAT": h_group,
    "SOURCEDB": h_sourcedb,
    "TARGETDB": h_targetdb,
    "USERID": h_userid,
    "USERIDALIAS": h_useridalias,
    "EXTTRAIL": h_trail,
    "RMTTRAIL": h_trail,
    "EXTFILE": h_extfile,
    "RMTFILE": h_extfile,
    "RMTHOST": h_rmthost,
    "SOURCECATALOG": h_sourcecatalog,
    "CHECKPOINTSECS": h_checkpointsecs,
    "CACHEMGR": h_cachemgr,
    "REPORTCOUNT": h_reportcount,
    "REPORT": h_report,
    "REPORTROLLOVER": h_report,
    "DISCARDFILE": h_discardfile,
    "GETTRUNCATES": toggle_handler("get_truncates", True),
    "GETREPLICATES": flag_handler("get_replicates", True),
    "IGNOREREPLICATES": flag_handler("get_replicates", False),
    "IGNORETRUNCATES": toggle_handler("get_truncates", False),
    "GETUPDATEBEFORES": toggle_handler("get_update_befores", True),
    "IGNOREUPDATEBEFORES": toggle_handler("get_update_befores", False),
    "NOCOMPRESSDELETES": toggle_handler("full_deletes", True),
    "COMPRESSDELETES": toggle_handler("full_deletes", False),
    "LOGALLSUPCOLS": flag_handler("log_all_sup_cols"),
    "UPDATERECORDFORMAT": h_updaterecordformat,
    "RECOVERYOPTIONS": h_recoveryoptions,
    "DDL": h_ddl,
    "ASSUMETARGETDEFS": flag_handler("assume_target_defs"),
    "HANDLECOLLISIONS": collisions_toggle(True),
    "NOHANDLECOLLISIONS": collisions_toggle(False),
    "INSERTALLRECORDS": h_insertallrecords,
    "IGNOREINSERTS": op_toggle("INSERTS", True),
    "GETINSERTS": op_toggle("INSERTS", False),
    "IGNOREUPDATES": op_toggle("UPDATES", True),
    "GETUPDATES": op_toggle("UPDATES", False),
    "IGNOREDELETES": op_toggle("DELETES", True),
    "GETDELETES": op_toggle("DELETES", False),
    "PASSTHRU": flag_handler("passthru"),
    "NOPASSTHRU": flag_handler("passthru", False),
    "REPERROR": h_reperror,
    "GROUPTRANSOPS": h_int_field("group_trans_ops", "GROUPTRANSOPS", 1),
    "MAXTRANSOPS": h_int_field("max_trans_ops", "MAXTRANSOPS", 1),
    "PORT": h_port,
    "DYNAMICPORTLIST": h_dynamicportlist,
    "AUTOSTART": h_autostart,
    "AUTORESTART": h_autorestart,
    "ACCESSRULE": h_accessrule,
    "PURGEOLDEXTRACTS": h_purgeoldextracts,
    "LAGREPORTMINUTES": h_lag("lag_report_minutes", 1),
    "LAGREPORTHOURS": h_lag("lag_report_minutes", 60),
    "LAGINFOSECONDS": h_lag("lag_info_seconds", 1, lo=0),
    "LAGINFOMINUTES": h_lag("lag_info_seconds", 60, lo=0),
    "LAGINFOHOURS": h_lag("lag_info_seconds", 3600, lo=0),
    "LAGCRITICALSECONDS": h_lag("lag_critical_seconds", 1),
    "LAGCRITICALMINUTES": h_lag("lag_critical_seconds", 60),
    "LAGCRITICALHOURS": h_lag("lag_critical_seconds", 3600),
    "CHECKMINUTES": h_lag("check_minutes", 1),
    "STARTUPVALIDATIONDELAY": h_lag("startup_validation_seconds", 1, lo=0),
    "DOWNREPORTMINUTES": h_lag("down_report_minutes", 1),
    "DOWNREPORTHOURS": h_lag("down_report_minutes", 60),
    "DOWNCRITICAL": h_downcritical,
    "BR": h_br,
    "BRRESET": h_brreset,
    "WARNLONGTRANS": h_warnlongtrans,
    "FETCHOPTIONS": h_fetchoptions,
    "TRANLOGOPTIONS": h_tranlogoptions,
    "TABLE": h_table,
    "TABLEEXCLUDE": h_table,
    "MAP": h_table,
    "MAPEXCLUDE": h_table,
    "SEQUENCE": h_table,
    "SEQUENCEEXCLUDE": h_table,
    "MACROCHAR": h_noop,
    "RMTTASK": h_rmttask,
    "SPARKMASTER": h_sparkmaster,
    "SPARKCONF": h_sparkconf,
    "SPARKPROPERTIES": h_sparkproperties,
    "ALLOWOUTPUTDIR": h_allowoutputdir,
}


def engine_parameters() -> frozenset[str]:
    """Names the engine acts on (those with a handler)."""
    return frozenset(HANDLERS)


def all_parameters() -> frozenset[str]:
    return known_parameters() | engine_parameters()


def build(
    path: str,
    statements: list[Statement],
    *,
    is_globals: bool = False,
    expected: m.ExpectedGroup | None = None,
) -> tuple[m.ParamFile, list[Diagnostic]]:
    """Validate ``statements`` (already preprocessed) into a model and its diagnostics;
    ``expected``: the group the file is read for (its first parameter must name it)."""
    b = Builder(path, expected=expected)
    if expected is not None:  # judged as that group's file from its first line
        b.fields["kind"] = expected.file_kind
    names = all_parameters()
    for st in statements:
        b.statement = st
        kw = st.keyword
        if not kw:
            b.error("syntax", f"expected a parameter name, found {st.text.strip()[:20]!r}")
            continue
        if kw in GGSCI_COMMANDS:
            b.error(
                "ggsci-command",
                f"{kw} is a GGSCI command, not a parameter: run it in GGSCI (or an OBEY script), "
                "not in a parameter file",
            )
            continue
        handler = HANDLERS.get(kw)
        if handler is None and kw not in names:
            b.error(
                "unknown-parameter",
                f"unknown parameter {_first_word(st)!r}{did_you_mean(kw, names)}",
            )
            continue
        if handler is None:
            if kw in data_specs():  # its form is known: check it before saying not used
                try:
                    _check_ranges(b, kw, parse_statement(kw, st.text))
                except GrammarError as exc:
                    if not st.tainted:
                        b.error("syntax", exc.message, exc.loc)
            b.warn("not-used", f"{kw} is a GoldenGate parameter not used by this engine")
            b.unused.append(m.Unused(kw, st.text, b.line))
            if kw not in MAY_PRECEDE_GROUP:
                b.count += 1
            continue
        try:
            parsed = parse_statement(kw, st.text)
        except GrammarError as exc:
            if st.tainted:
                b.tainted.add(kw)
            else:
                b.error("syntax", exc.message, exc.loc)
            b.count += 1
            continue
        mark = len(b.diagnostics)
        handler(b, parsed)
        for o in parsed.options:
            if o.name in IGNORED_OPTIONS.get(kw, ()):
                b.warn("not-used", f"{kw} option {o.name} is not used by this engine", o.loc)
        if kw in EXTRACT_ONLY_PARAMETERS and b.fields.get("kind") == m.FileKind.REPLICAT:
            b.warn("not-used", f"{kw} is an Extract parameter: not used in a Replicat")
        elif kw in IGNORED_PARAMETERS:  # (in a Replicat, a reason that names the Replicat)
            replicat = b.fields.get("kind") == m.FileKind.REPLICAT
            why = (IGNORED_IN_REPLICAT if replicat else {}).get(kw, IGNORED_PARAMETERS[kw])
            b.warn("not-used", f"{kw} is not used by this engine: {why}")
        if st.tainted:
            del b.diagnostics[mark:]
        if kw not in MAY_PRECEDE_GROUP:
            b.count += 1
    warn_reperror_after_maps(b)
    warn_updaterecordformat_alone(b)
    _warn_not_used_for_postgres(b, statements)
    if expected is not None and "GROUP" not in b.seen:
        first = statements[0].origin if statements else Origin(path, 1, 1, "")
        b.diagnostics.append(Diagnostic(Severity.ERROR, "wrong-group", expected.mismatch(), first))
    return _finish(b, is_globals), b.diagnostics


def _warn_not_used_for_postgres(b: Builder, statements: list[Statement]) -> None:
    """An Extract of a PostgreSQL source: the Oracle-only parameters warned as not used."""
    if b.fields.get("kind") != m.FileKind.EXTRACT:
        return
    login = b.fields.get("login") or m.Login()
    userid_db = login.userid.partition("@")[2] if login.userid else None
    postgres = is_postgres_spec(login.sourcedb) or is_postgres_spec(userid_db)
    for st in statements:
        b.statement = st
        if not postgres:  # loop detection acts for a PostgreSQL Extract only
            if st.keyword in PG_ONLY or (
                st.keyword == "TRANLOGOPTIONS" and "FILTERTABLE" in st.text.upper().split()
            ):
                what = (
                    "TRANLOGOPTIONS FILTERTABLE" if st.keyword == "TRANLOGOPTIONS" else st.keyword
                )
                b.warn("not-used", f"{what} is used by a PostgreSQL Extract only")
            continue
        why = PG_NOT_USED.get(st.keyword)
        if why is not None and not _only_filtertable(st.text):
            b.warn("not-used", f"{st.keyword} is not used by a PostgreSQL Extract: {why}")


def _only_filtertable(text: str) -> bool:
    """TRANLOGOPTIONS [FILTERTABLE t]...: nothing but what a PostgreSQL Extract acts on."""
    words = text.replace(",", " ").split()[1:]
    return (
        bool(words) and all(w.upper() == "FILTERTABLE" for w in words[0::2]) and len(words) % 2 == 0
    )


def _check_ranges(b: Builder, kw: str, parsed: Parsed) -> None:
    ranges = data_specs()[kw].ranges
    for o in parsed.options:
        if o.name in ranges and o.args:
            as_int(b, o.args[0], f"{kw} {o.name}", *ranges[o.name])


def _first_word(st: Statement) -> str:
    w = st.text.split()
    return w[0] if w else ""


def _finish(b: Builder, is_globals: bool) -> m.ParamFile:
    f = b.fields
    kind = f.get("kind")
    if kind is None:
        if is_globals:
            kind = m.FileKind.GLOBALS
        elif b.manager:
            kind = m.FileKind.MANAGER
        else:
            kind = m.FileKind.OTHER
    allowed = f.get("allow_output_dirs", [])
    if allowed and kind in (m.FileKind.EXTRACT, m.FileKind.REPLICAT, m.FileKind.MANAGER):
        _name, st, loc = allowed[0]
        b.statement = st
        b.error(
            "globals-only",
            "ALLOWOUTPUTDIR belongs in GLOBALS (the Collector reads it there)",
            loc,
        )
    cps = f.get("checkpoint_secs", 10)
    br: m.BoundedRecovery = f.get("br", m.BoundedRecovery())
    eff = math.ceil(br.interval / cps) * cps
    if eff > BRINTERVAL_MAX:  # rounding up must not leave the allowed range
        eff = (br.interval // cps) * cps
    br = replace(br, effective_interval=eff)
    if br.rounded and b.br_statement is not None:
        b.statement = b.br_statement
        b.add(
            Severity.NOTE,
            "br-rounded",
            f"BRINTERVAL {br.interval}s runs as {eff}s, a whole multiple of CHECKPOINTSECS {cps}",
            b.br_interval_loc,
        )
    tl = b.tranlog
    tranlog = m.TranlogOptions(**tl, other=tuple(b.tranlog_other))
    mgr = m.Manager(**b.manager)
    return m.ParamFile(
        path=b.path,
        kind=kind,
        group=f.get("group"),
        login=f.get("login", m.Login()),
        source_catalog=f.get("source_catalog"),
        trails=tuple(b.trails),
        ext_files=tuple(b.ext_files),
        rmthost=f.get("rmthost"),
        tables=tuple(b.tables),
        checkpoint_secs=cps,
        cachemgr=f.get("cachemgr", m.CacheMgr()),
        br=br,
        warn_long_trans=f.get("warn_long_trans", m.WarnLongTrans()),
        tranlog=tranlog,
        report_count=f.get("report_count"),
        report_schedule=f.get("report_schedule", ()),
        report_rollover=f.get("report_rollover", ()),
        discard=f.get("discard"),
        log_all_sup_cols=f.get("log_all_sup_cols", False),
        update_record_format=f.get("update_record_format"),
        recovery_options=f.get("recovery_options", "APPENDMODE"),
        ddl=f.get("ddl"),
        assume_target_defs=f.get("assume_target_defs", False),
        handle_collisions=f.get("handle_collisions", False),
        passthru=f.get("passthru", False),
        reperrors=tuple(b.reperrors),
        group_trans_ops=f.get("group_trans_ops", 1000),
        max_trans_ops=f.get("max_trans_ops"),
        target_db=f.get("target_db"),
        handler_props=f.get("handler_props"),
        manager=mgr,
        spark=m.SparkParams(
            f.get("spark_master"), tuple(f.get("spark_conf", {}).items()), f.get("spark_properties")
        ),
        unused=tuple(b.unused),
        fetch_options=f.get("fetch_options", ()),
        get_replicates=f.get("get_replicates", False),
        allow_output_dirs=tuple(name for name, _st, _loc in allowed),
    )
