"""The parameter catalogue, as data: known GoldenGate parameter and option names.

The lists live in ``params/data/*.txt`` so that adding a real GoldenGate name is a data
change, not a code change. Which parameters the engine *acts on* is the set of names with a
handler in :mod:`params.build`; which of their options it ignores is :data:`IGNORED_OPTIONS`;
which MAP options it acts on is :data:`MAP_ACTS` (held equal to the Replicat's own registry,
``engine.replicat.mapping.MAP_OPTION_READERS``, by ``tests/params/test_acts_or_warns.py``).

A parameter the engine does not act on may carry its options in ``parameters.txt``
(``NAME | OPTION OPTION:kind OPTION:int:lo:hi``): its statement is then parsed, so an
option it does not have is an error with a position, and a number out of the reference's
range too; the whole statement still gets the "not used" warning.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import cache
from importlib import resources


def _lines(name: str) -> list[str]:
    text = resources.files("params").joinpath("data", name).read_text(encoding="utf-8")
    return [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
    ]


@cache
def known_parameters() -> frozenset[str]:
    """Every real GoldenGate parameter name we recognise (upper case)."""
    return frozenset(ln.split()[0].upper() for ln in _lines("parameters.txt"))


@dataclass(frozen=True)
class DataSpec:
    """The form of a parameter the engine does not act on, from ``parameters.txt``:
    positional argument kinds (``@kind``, ``@kind?`` optional), options and their kinds
    (``flag`` for none), and the whole-number ranges of options (``OPTION:int:lo:hi``,
    ``hi`` may be empty)."""

    positional: tuple[str, ...]
    options: dict[str, str]
    ranges: dict[str, tuple[int, int | None]]


@cache
def data_specs() -> dict[str, DataSpec]:
    """Parameters listed with a form (a ``|`` on their line) in ``parameters.txt``."""
    out: dict[str, DataSpec] = {}
    for ln in _lines("parameters.txt"):
        if "|" not in ln:
            continue
        head, _, tail = ln.partition("|")
        words = head.split()
        pos = tuple(w[1:] for w in words[1:] if w.startswith("@"))
        opts: dict[str, str] = {}
        ranges: dict[str, tuple[int, int | None]] = {}
        for item in tail.split():
            name, _, form = item.partition(":")
            kind, _, rng = form.partition(":")
            opts[name.upper()] = kind or "flag"
            if rng:
                lo, _, hi = rng.partition(":")
                ranges[name.upper()] = (int(lo), int(hi) if hi else None)
        out[words[0].upper()] = DataSpec(pos, opts, ranges)
    return out


@cache
def tranlog_options() -> dict[str, str]:
    """TRANLOGOPTIONS option name → the form of its argument (see the data file's header)."""
    out: dict[str, str] = {}
    for ln in _lines("tranlogoptions.txt"):
        name, form = ln.split()
        out[name.upper()] = form
    return out


#: Options of TABLE / MAP / SEQUENCE statements and the form of their argument.
TABLE_OPTIONS: dict[str, str] = {
    "TARGET": "name",
    "COLS": "parens",
    "COLSEXCEPT": "parens",
    "KEYCOLS": "parens",
    "WHERE": "parens",
    "FILTER": "parens",
    "COLMAP": "parens",
    "TOKENS": "parens",
    "SQLEXEC": "parens",
    "EVENTACTIONS": "parens",
    "FETCHCOLS": "parens",
    "FETCHCOLSEXCEPT": "parens",
    "FETCHMODCOLS": "parens",
    "FETCHMODCOLSEXCEPT": "parens",
    "GETBEFORECOLS": "parens",
    "COLCHARSET": "parens",
    "THREAD": "parens",
    "THREADRANGE": "parens",
    "REPERROR": "parens",
    "MAPEXCEPTION": "parens",
    "RESOLVECONFLICT": "parens",
    "COMPARECOLS": "parens",
    "PARTITIONOBJID": "parens",
    "DEF": "word",
    "TARGETDEF": "word",
    "CHARSET": "word",
    "EXITPARAM": "word",
    "SQLPREDICATE": "word",
    "FETCHBEFOREFILTER": "flag",
    "TRIMSPACES": "flag",
    "NOTRIMSPACES": "flag",
    "TRIMVARSPACES": "flag",
    "NOTRIMVARSPACES": "flag",
    "HANDLECOLLISIONS": "flag",
    "NOHANDLECOLLISIONS": "flag",
    "INSERTALLRECORDS": "flag",
    "MAPALLCOLUMNS": "flag",
    "NOMAPALLCOLUMNS": "flag",
    "EXCEPTIONSONLY": "flag",
    "ALLOWDUPTARGETMAP": "flag",
}


#: Options of MAP / MAPEXCLUDE (Replicat) and the form of their argument: the union of the
#: MAP options of GoldenGate's references 11.2 to 23ai (Linux, UNIX, Windows).
MAP_OPTIONS: dict[str, str] = {
    "TARGET": "name",
    "COLMAP": "parens",
    "KEYCOLS": "parens",
    "WHERE": "parens",
    "FILTER": "parens",
    "INSERTALLRECORDS": "flag",
    "HANDLECOLLISIONS": "flag",
    "NOHANDLECOLLISIONS": "flag",
    "REPERROR": "parens",
    "COMPARECOLS": "parens",
    "COORDINATED": "flag",
    "EVENTACTIONS": "parens",
    "EXCEPTIONSONLY": "flag",
    "EXITPARAM": "word",
    "INSERTAPPEND": "flag",
    "NOINSERTAPPEND": "flag",
    "MAPALLCOLUMNS": "flag",
    "NOMAPALLCOLUMNS": "flag",
    "MAPEXCEPTION": "parens",
    "MAPINVISIBLECOLUMNS": "flag",
    "NOMAPINVISIBLECOLUMNS": "flag",
    "RESOLVECONFLICT": "parens",
    "SQLEXEC": "parens",
    "THREAD": "parens",
    "THREADRANGE": "parens",
    "TRIMSPACES": "flag",
    "NOTRIMSPACES": "flag",
    "TRIMVARSPACES": "flag",
    "NOTRIMVARSPACES": "flag",
    "DEF": "word",
    "TARGETDEF": "word",
    "CHARSET": "word",
    "COLCHARSET": "parens",
    "PARTITIONOBJID": "parens",
}

#: The MAP options the Replicat acts on (the rest of MAP_OPTIONS get a "not used" warning).
MAP_ACTS = frozenset({"TARGET", "COLMAP", "KEYCOLS", "WHERE", "FILTER", "INSERTALLRECORDS",
                      "HANDLECOLLISIONS", "NOHANDLECOLLISIONS", "REPERROR"})  # fmt: skip

#: REPERROR responses of the references, and those the Replicat carries out (the others
#: are accepted with a warning that ABEND is used instead).
REPERROR_RESPONSES = frozenset({"ABEND", "DISCARD", "EXCEPTION", "IGNORE", "RETRYOP",
                                "TRANSABORT", "TRANSDISCARD", "TRANSEXCEPTION"})  # fmt: skip
REPERROR_ACTS = frozenset({"ABEND", "DISCARD", "IGNORE", "RETRYOP", "TRANSDISCARD"})

#: Options of parameters the engine acts on that it accepts but does not act on: each
#: gets a "not used" warning at its position (tests/params/test_acts_or_warns.py holds
#: every other option of a handled parameter to a model field the engine reads).
IGNORED_OPTIONS: dict[str, frozenset[str]] = {
    "RMTHOST": frozenset({"PARAMS"}),
    "CACHEMGR": frozenset({"CACHEBUFFERSIZE", "CACHEPAGEOUTSIZE", "CACHEDIRECTORY"}),
    "AUTORESTART": frozenset({"WAITSECONDS"}),
    "PURGEOLDEXTRACTS": frozenset({"FREQUENCYMINUTES", "FREQUENCYHOURS"}),
    "USERID": frozenset({"PASSWORD", "SYSDBA"}),
    "USERIDALIAS": frozenset({"SYSDBA"}),
    "SOURCEDB": frozenset({"SESSIONCHARSET", "PASSWORD", "SYSDBA"}),
    "TARGETDB": frozenset({"SESSIONCHARSET", "PASSWORD", "SYSDBA"}),
    "WARNLONGTRANS": frozenset({"NOUSETHREADS", "USELASTREADTIME", "SKIPEMPTYTRANS"}),
    "TRANLOGOPTIONS": frozenset({"BUFSIZE", "EXCLUDETAG", "INCLUDETAG", "EXCLUDEUSERID"}),
}  # fmt: skip

#: Parameters the checker validates (their form, ranges, place) that the engine does not
#: act on: each gets a "not used" warning after its checks. Found by
#: tests/params/test_acts_or_warns.py (nothing in the engine reads what they set).
IGNORED_PARAMETERS: dict[str, str] = {
    "MAXTRANSOPS": "a source transaction is applied in one target transaction",
    "PASSTHRU": "the pump applies its TABLE options with it or without it",
    "NOPASSTHRU": "the pump applies its TABLE options with it or without it",
    "LOGALLSUPCOLS": "the Extract writes the columns the redo holds",
    "EXTFILE": "the Extract writes trails only (EXTTRAIL, RMTTRAIL)",
    "RMTFILE": "the Extract writes trails only (EXTTRAIL, RMTTRAIL)",
}  # fmt: skip


#: The reasons of :data:`IGNORED_PARAMETERS` as a Replicat's file reads them (the general
#: reason names the Extract).
IGNORED_IN_REPLICAT: dict[str, str] = dict.fromkeys(
    ("GETUPDATEBEFORES", "IGNOREUPDATEBEFORES"),
    "a Replicat applies the update images the trail holds, whatever this says",
)


#: Parameters of the Extract (and pump) that a Replicat has no use for: in a Replicat's file
#: each gets a "not used" warning (the Replicat's own, in an Extract, are warned by
#: params/handlers_map.py). Parameters both kinds take (SOURCECATALOG, GETTRUNCATES,
#: DISCARDFILE, the logins ...) are not listed.
EXTRACT_ONLY_PARAMETERS = frozenset({
    "EXTTRAIL", "RMTTRAIL", "EXTFILE", "RMTFILE", "RMTHOST", "CACHEMGR", "BR", "BRRESET",
    "WARNLONGTRANS", "TRANLOGOPTIONS", "LOGALLSUPCOLS", "UPDATERECORDFORMAT",
    "RECOVERYOPTIONS", "PASSTHRU", "NOPASSTHRU", "SPARKMASTER", "SPARKCONF", "SPARKPROPERTIES",
    "RMTTASK", "FETCHOPTIONS", "COMPRESSDELETES", "NOCOMPRESSDELETES",
})  # fmt: skip


def suggest(word: str, candidates: frozenset[str] | set[str] | list[str]) -> str | None:
    """The closest candidate to ``word`` (case-insensitive), or None if nothing is close."""
    found = difflib.get_close_matches(word.upper(), sorted(candidates), n=1, cutoff=0.75)
    return found[0] if found else None


def did_you_mean(word: str, candidates: frozenset[str] | set[str] | list[str]) -> str:
    s = suggest(word, candidates)
    return f"; did you mean {s}?" if s else ""


#: FORMAT RELEASE values of EXTTRAIL / RMTTRAIL / ADD EXTTRAIL / ADD RMTTRAIL that ggsci
#: writes (engine/trail/releases.py maps each to its trail format; a test holds the two
#: lists equal).
FORMAT_RELEASES: tuple[str, ...] = ("11.2", "12.1", "12.2", "12.3", "18.1", "19.1", "21.1")


def format_release_name(text: str) -> str | None:
    """``12.2`` (``12.2.0.1``: the first two parts count) as a known FORMAT RELEASE, or
    None when ggsci writes no such release."""
    parts = text.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts):
        return None
    name = f"{int(parts[0])}.{int(parts[1])}"
    return name if name in FORMAT_RELEASES else None
