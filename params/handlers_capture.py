"""Handlers of the capture parameters for long-running transactions and the redo reader:
BR (Bounded Recovery), WARNLONGTRANS and TRANLOGOPTIONS."""

from __future__ import annotations

import re
from dataclasses import replace

from params import models as m
from params.archformat import format_problem
from params.builder import (
    BRINTERVAL_MAX,
    BRINTERVAL_MIN,
    BUFSIZE_RANGE,
    CHECKINTERVAL_MAX,
    CHECKINTERVAL_MIN,
    TRANSCLEANUP_RANGE,
    Builder,
    arg_of,
    as_duration,
    as_int,
    opt_named,
    unquote,
)
from params.grammar import Parsed, Tok


def h_br(b: Builder, p: Parsed) -> None:
    if not b.once("BR"):
        return
    b.br_statement = b.statement
    br = m.BoundedRecovery(explicit=True)
    if (t := arg_of(opt_named(p, "BRDIR"))) is not None:
        d = unquote(t.text)
        hit = re.search("temp|tmp", d, re.IGNORECASE)
        if hit:
            b.error(
                "value",
                f"BRDIR {d!r} contains {hit.group(0)!r}: temporary directories may be cleaned up, "
                "losing the Bounded Recovery files",
                t.loc + (1 if t.text != d else 0) + hit.start(),
            )
        br = replace(br, brdir=d)
    if (t := arg_of(opt_named(p, "BRINTERVAL"))) is not None:
        mt = re.fullmatch(r"(\d+)\s*([A-Za-z]*)", t.text)
        unit = mt.group(2).upper() if mt else ""
        if not mt or unit not in ("M", "H"):
            b.error(
                "syntax",
                f"BRINTERVAL is a number and M or H, like 20M or 4H (got {t.text!r})",
                t.loc,
            )
        else:
            secs = int(mt.group(1)) * (60 if unit == "M" else 3600)
            if not BRINTERVAL_MIN <= secs <= BRINTERVAL_MAX:
                b.error("value-range", f"BRINTERVAL must be from 20M to 96H (got {t.text})", t.loc)
            else:
                br = replace(br, interval=secs, effective_interval=secs)
                b.br_interval_loc = t.loc
    if (t := arg_of(opt_named(p, "BRFSOPTION"))) is not None:
        br = replace(br, fs_option=t.upper)
    br = replace(
        br,
        keep_stale_files=opt_named(p, "BRKEEPSTALEFILES") is not None,
        off=opt_named(p, "BROFF") is not None,
        off_on_failure=opt_named(p, "BROFFONFAILURE") is not None,
        # seed 000 lists BRRESET among BR's options: normal recovery for this start, as on
        # the command line (the standalone BRRESET statement is not a parameter)
        reset=opt_named(p, "BRRESET") is not None,
    )
    if (o := opt_named(p, "BRRESET")) is not None:
        b.warn(
            "every-start",
            "BR BRRESET acts on every start of this file: each start uses normal recovery, "
            "not Bounded Recovery; remove it after the start that needs it (seed 000 means it "
            "for one start from the command line: ggsci extract paramfile FILE BRRESET)",
            o.loc,
        )
    b.fields["br"] = br


def h_brreset(b: Builder, p: Parsed) -> None:
    b.error(
        "startup-option",
        "BRRESET is a start-up option: give it on the command line "
        "(ggsci extract paramfile FILE BRRESET) or as an option of BR (BR BRRESET)",
    )


def h_warnlongtrans(b: Builder, p: Parsed) -> None:
    wl = m.WarnLongTrans(explicit=True)
    thr = as_duration(b, p.positional[0], "WARNLONGTRANS")
    if thr is not None:
        if thr <= 0:
            b.error("value-range", "WARNLONGTRANS must be longer than zero", p.positional[0].loc)
        wl = replace(wl, threshold=thr)
    if (t := arg_of(opt_named(p, "CHECKINTERVAL"))) is not None:
        ci = as_duration(b, t, "CHECKINTERVAL")
        if ci is not None:
            if ci < CHECKINTERVAL_MIN:
                b.error(
                    "value-range", f"CHECKINTERVAL must be at least 5 minutes (got {t.text})", t.loc
                )
            elif ci > CHECKINTERVAL_MAX:
                b.error(
                    "value-range",
                    f"CHECKINTERVAL must be at most {CHECKINTERVAL_MAX} seconds",
                    t.loc,
                )
            else:
                wl = replace(wl, check_interval=ci)
    b.fields["warn_long_trans"] = replace(
        wl,
        use_threads=opt_named(p, "NOUSETHREADS") is None,
        use_last_read_time=opt_named(p, "USELASTREADTIME") is not None,
        skip_empty_trans=opt_named(p, "SKIPEMPTYTRANS") is not None,
    )


def h_tranlogoptions(b: Builder, p: Parsed) -> None:
    t = b.tranlog
    for o in p.options:
        a = arg_of(o)
        if o.name == "PURGEORPHANEDTRANSACTIONS":
            t["purge_orphaned"] = True
        elif o.name == "NOPURGEORPHANEDTRANSACTIONS":
            t["purge_orphaned"] = False
        elif o.name == "TRANSCLEANUPFREQUENCY":
            v = as_int(b, a, "TRANSCLEANUPFREQUENCY (minutes)", *TRANSCLEANUP_RANGE)
            if v is not None:
                t["trans_cleanup_frequency"] = v
        elif o.name == "EXCLUDEUSER" and a is not None:
            t["exclude_users"] = (*t.get("exclude_users", ()), unquote(a.text))
        elif o.name == "EXCLUDEUSERID":
            v = as_int(b, a, "EXCLUDEUSERID", 0)
            if v is not None:
                t["exclude_user_ids"] = (*t.get("exclude_user_ids", ()), v)
        elif o.name == "EXCLUDETRANS" and a is not None:
            t["exclude_trans"] = (*t.get("exclude_trans", ()), unquote(a.text))
        elif o.name in ("EXCLUDETAG", "INCLUDETAG") and a is not None:
            key = "exclude_tags" if o.name == "EXCLUDETAG" else "include_tags"
            t[key] = (*t.get(key, ()), a.upper)
        elif o.name == "ARCHIVEDLOGONLY":
            t["archived_log_only"] = True
        elif o.name == "NOARCHIVEDLOGONLY":
            t["archived_log_only"] = False
        elif o.name == "ALTARCHIVELOGDEST":
            path = [x for x in o.args if isinstance(x, Tok)][-1]
            dest = unquote(path.text)
            problem = _dest_problem(dest)
            if problem is not None:
                b.error("value", f"TRANLOGOPTIONS ALTARCHIVELOGDEST {problem}", path.loc)
            else:
                t["alt_archive_log_dests"] = (*t.get("alt_archive_log_dests", ()), dest)
        elif o.name == "ALTARCHIVEDLOGFORMAT" and a is not None:
            fmt = unquote(a.text)
            problem = format_problem(fmt, writing=False, name="TRANLOGOPTIONS ALTARCHIVEDLOGFORMAT")
            if problem is not None:  # (the Extract cannot tell the logs' sequences apart)
                b.error("value", problem, a.loc)
            else:
                t["alt_archived_log_format"] = fmt
        elif o.name == "PATHMAP" and a is not None:
            pairs = _path_map(a.text)
            if pairs is None:
                b.error(
                    "syntax",
                    "PATHMAP needs ('driver path', 'task path' [, ...]) in pairs",
                    o.loc,
                )
            else:
                t["path_map"] = (*t.get("path_map", ()), *pairs)
        elif o.name == "FILTERTABLE" and a is not None:
            t["filter_tables"] = (*t.get("filter_tables", ()), unquote(a.text))
        elif o.name == "BUFSIZE":
            v = as_int(b, a, "BUFSIZE (bytes)", *BUFSIZE_RANGE)
            if v is not None:
                t["bufsize"] = v
        else:
            args = " ".join(x.text for x in o.args if isinstance(x, Tok))
            b.tranlog_other.append((o.name, args))
            b.warn(
                "not-used",
                f"TRANLOGOPTIONS {o.name} is accepted but not used by this engine",
                o.loc,
            )
    if not p.options:
        b.error("syntax", "TRANLOGOPTIONS needs an option", len(p.keyword.text))


def _dest_problem(dest: str) -> str | None:
    """What is wrong with an ALTARCHIVELOGDEST (None: nothing). It is a fully qualified
    path (GoldenGate's reference) or a storage URL: a relative one would point wherever the
    Extract happens to run from. A control character (NUL...) names no file."""
    if any(ord(c) < 32 or ord(c) == 127 for c in dest):
        return "holds a control character"
    if "://" not in dest and not dest.startswith(("/", "file:")):
        return f"{dest}: give the absolute path (a relative one depends on where the Extract runs)"
    return None


def _path_map(text: str) -> tuple[tuple[str, str], ...] | None:
    """``('/driver/a', '/task/a', ...)``: where the Extract sees a shared mount, then where
    its Spark tasks see it (pairs); None when the list is not pairs of paths."""
    inner = text.strip()
    if not (inner.startswith("(") and inner.endswith(")")):
        return None
    items = [unquote(x.strip()) for x in inner[1:-1].split(",")]
    if not items or len(items) % 2 or not all(items):
        return None
    return tuple((items[i], items[i + 1]) for i in range(0, len(items), 2))


#: FETCHOPTIONS options accepted but without effect here, and why (a "not used" warning).
_FETCH_NOT_USED = {
    "FETCHPKUPDATECOLS": "only the key of an update is fetched",
    "MISSINGCOLS": "only the key of an update is fetched",
    "SUPPRESSDUPLICATES": "only the key of an update is fetched",
    "MAXFETCHSTATEMENTS": "a fetch is one read of the source's storage",
    "INCONSISTENTROW": "the key itself is what is fetched, there is none to compare",
    "USEKEY": "the key itself is what is fetched (by ROWID)",
    "NOUSEKEY": "the key itself is what is fetched (by ROWID)",
    "USESNAPSHOT": "the embedded source keeps no row versions: the current row is read",
    "NOUSESNAPSHOT": "the embedded source keeps no row versions: the current row is read",
    "USELATESTVERSION": "the embedded source keeps no row versions: the current row is read",
    "NOUSELATESTVERSION": "the embedded source keeps no row versions: the current row is read",
}


def h_fetchoptions(b: Builder, p: Parsed) -> None:
    """FETCHOPTIONS: in force for the TABLE statements after it (until the next one)."""
    opts = m.FetchOptions()
    for o in p.options:
        if o.name == "MISSINGROW":
            a = arg_of(o)
            opts = replace(opts, missing_row=a.upper if a else "IGNORE")
        elif o.name == "NOFETCH":
            opts = replace(opts, nofetch=True)
        elif o.name in ("USEROWID", "NOUSEROWID"):
            opts = replace(opts, use_rowid=o.name == "USEROWID")
        else:
            b.warn("not-used", f"FETCHOPTIONS {o.name} is accepted but not used by this "
                   f"engine: {_FETCH_NOT_USED[o.name]}", o.loc)  # fmt: skip
    fetches = b.fields.get("fetch_options", ())
    b.fields["fetch_options"] = (*fetches, (len(b.tables), opts))
