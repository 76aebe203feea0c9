"""The parameter catalogue, as data: known GoldenGate parameter and option names.

The lists live in ``params/data/*.txt`` so that adding a real GoldenGate name is a data
change, not a code change. Which names the engine *acts on* is not listed here: it is the
set of names with a handler in :mod:`params.build`.
"""

from __future__ import annotations

import difflib
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


def suggest(word: str, candidates: frozenset[str] | set[str] | list[str]) -> str | None:
    """The closest candidate to ``word`` (case-insensitive), or None if nothing is close."""
    found = difflib.get_close_matches(word.upper(), sorted(candidates), n=1, cutoff=0.75)
    return found[0] if found else None


def did_you_mean(word: str, candidates: frozenset[str] | set[str] | list[str]) -> str:
    s = suggest(word, candidates)
    return f"; did you mean {s}?" if s else ""
