"""The rule over all parameters: every parameter and option ``params check`` accepts either
acts (engine code reads what it sets) or gets a "not used" warning; an option a parameter
does not have is an error with its line and column. The list in docs/params.md is the one
:mod:`params.doclist` derives from the checker, and is held to it here."""

from __future__ import annotations

import dataclasses
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from engine.replicat.engine import SUPPORTED_RESPONSES
from engine.replicat.mapping import MAP_OPTION_READERS
from params import doclist
from params.catalog import MAP_ACTS, REPERROR_ACTS, data_specs
from params.check import check_text
from params.models import ParamFile

ROOT = Path(__file__).resolve().parents[2]
#: Model fields that say where a statement was, not what it asks for.
WHERE_FIELDS = frozenset({"path", "line", "unused", "text"})
#: Parameters that act without a model field of their own that engine code reads.
ACTS_OTHERWISE = {
    "SOURCECATALOG": "acts on the names of the TABLE and MAP statements after it",
    "BR": "alone it asks for the defaults, which apply without it; its options act",
    "WARNLONGTRANS": "alone it asks for the defaults, which apply without it",
    "CACHEMGR": "it needs an option: its CACHESIZE acts",
}
#: A statement after a toggle, which the toggle acts on.
FOLLOWER = {"EXTRACT": "TABLE a.b;", "REPLICAT": "MAP a.b, TARGET c.d;"}


@cache
def entries() -> tuple[doclist.Entry, ...]:
    return tuple(doclist.entries())


@cache
def engine_source() -> str:
    parts = []
    for d in ("engine", "ggsci"):
        for f in sorted((ROOT / d).rglob("*.py")):
            parts.append(f.read_text(encoding="utf-8"))
    # the model's own methods the engine calls (AccessRule.rank / matches)
    parts.append((ROOT / "params" / "access.py").read_text(encoding="utf-8"))
    return "\n".join(parts)


def _model(text: str) -> ParamFile:
    r = check_text(text + "\n", "t.prm")
    assert r.ok, [d.message for d in r.errors]
    return r.model


def _diff(a: Any, b: Any, name: str = "") -> set[str]:
    """Names of the fields (leaves, or a sequence whose length differs) where a and b differ."""
    if a == b:
        return set()
    if dataclasses.is_dataclass(a) and dataclasses.is_dataclass(b) and type(a) is type(b):
        out: set[str] = set()
        for f in dataclasses.fields(a):
            if f.name not in WHERE_FIELDS:
                out |= _diff(getattr(a, f.name), getattr(b, f.name), f.name)
        return out
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        out = set()
        for x, y in zip(a, b, strict=True):
            out |= _diff(x, y, name)
        return out
    return {name}


def _read_by_engine(field: str) -> bool:
    return re.search(rf"\.{field}\b", engine_source()) is not None


def _named(keyword: str) -> bool:
    """Engine code that reads the keyword itself (the Manager reads mgr.prm on its own)."""
    return f'== "{keyword}"' in engine_source() or f'key == "{keyword}"' in engine_source()


def test_docs_params_md_holds_the_generated_list() -> None:
    text = (ROOT / "docs" / "params.md").read_text(encoding="utf-8")
    assert doclist._section(text) == doclist.markdown(), (
        "docs/params.md is stale: run python -m params.doclist --write"
    )


def test_map_options_that_act_are_the_replicat_registry() -> None:
    assert set(MAP_OPTION_READERS) == MAP_ACTS
    listed = {
        e.option
        for e in entries()
        if e.parameter == "MAP" and e.option and e.status == doclist.ACTS
    }
    assert listed == MAP_ACTS


def test_reperror_responses_that_act_are_the_replicat_registry() -> None:
    assert SUPPORTED_RESPONSES == REPERROR_ACTS
    listed = {e.option for e in doclist.reperror_entries() if e.status == doclist.ACTS}
    assert listed == REPERROR_ACTS


def test_every_option_that_acts_sets_something_the_engine_reads() -> None:
    """An 'acts' option changes the model, and engine code reads the field it changes."""
    silent: list[str] = []
    unread: list[str] = []
    for e in entries():
        if not e.option or e.status != doclist.ACTS or e.parameter in ("MAP", "MAPEXCLUDE"):
            continue
        base = next(x for x in entries() if x.parameter == e.parameter and not x.option)
        if e.statement == base.statement:  # the option is part of the base statement
            continue
        fields = _diff(_model(e.context + base.statement), _model(e.context + e.statement))
        if not fields:
            if e.option.startswith("NO"):
                opposites = [e.option[3:] if e.option.startswith("NO_") else e.option[2:]]
            else:
                opposites = ["NO" + e.option, "NO_" + e.option]  # NOCHECKSUM, NO_OBJECTDEFS
            for opposite in opposites:
                if opposite in doclist._options(e.parameter) and not fields:
                    other = e.statement.replace(e.option, opposite)
                    fields = _diff(_model(e.context + other), _model(e.context + e.statement))
        if not fields:
            silent.append(f"{e.parameter} {e.option}")
        if fields == {"options"}:  # a TABLE option kept as text: engine code names it
            if f'"{e.option}"' not in engine_source() and not _read_by_engine(e.option.lower()):
                unread.append(f"{e.parameter} {e.option}")
            continue
        if fields and not any(_read_by_engine(f) for f in fields) and not _named(e.option):
            unread.append(f"{e.parameter} {e.option} -> {', '.join(sorted(fields))}")
    assert silent == [], "accepted, no warning, and nothing in the model changes"
    assert unread == [], "set in the model but never read by engine code"


def test_every_parameter_that_acts_sets_something_the_engine_reads() -> None:
    silent: list[str] = []
    unread: list[str] = []
    for e in entries():
        if e.option or e.status != doclist.ACTS or e.parameter in doclist.PREPROCESSOR:
            continue
        if e.parameter in ACTS_OTHERWISE or e.parameter in ("EXTRACT", "REPLICAT"):
            continue
        globals_only = doclist.components_of(e) == ["GLOBALS"]  # ALLOWOUTPUTDIR: in no group
        context = e.context or ("" if globals_only else "REPLICAT r1\n")
        follower = FOLLOWER.get(context.split()[0], "") if context else ""
        if not check_text(f"{context}{follower}\n", "t.prm").ok:
            follower = ""
        after = _model(f"{context}{e.statement}\n{follower}")
        fields = _diff(_model(context + follower), after)
        if not fields:  # a toggle at its default: compare with its opposite
            for other in _opposites(e.parameter):
                fields |= _diff(_model(f"{context}{other}\n{follower}"), after)
        if not fields:
            silent.append(e.parameter)
        if fields and not any(_read_by_engine(f) for f in fields) and not _named(e.parameter):
            unread.append(f"{e.parameter} -> {', '.join(sorted(fields))}")
    assert silent == [], "accepted, no warning, and nothing in the model changes"
    assert unread == [], "set in the model but never read by engine code"


def _opposites(name: str) -> list[str]:
    names = {x.parameter for x in entries()}
    pairs = [("GET", "IGNORE"), ("IGNORE", "GET"), ("NO", "")]
    out = [b + name[len(a) :] for a, b in pairs if name.startswith(a)] + ["NO" + name]
    return [o for o in out if o in names]


@pytest.mark.parametrize(
    ("text", "message", "col"),
    [
        ("BATCHSQL BATCHSIZE 1000", "unknown BATCHSQL option 'BATCHSIZE'", 10),
        ("BATCHSQL OPSPERBATCH 0", "BATCHSQL OPSPERBATCH must be 1 to 100000", 22),
        ("BATCHSQL BATCHESPERQUEUE 1001", "BATCHESPERQUEUE must be 1 to 1000", 26),
        ("MAP a.b, TARGET c.d, COLMAPP (x = y);", "did you mean COLMAP?", 22),
        ("MAP a.b, TARGET c.d, TOKENS (x = y);", "unknown MAP option 'TOKENS'", 22),
        ("REPERROR (DEFAULT, DISCRAD)", "did you mean DISCARD?", 20),
        ("REPERROR (1403, RETRYOP, MAXTRIES 3)", "did you mean MAXRETRIES?", 26),
        ("ALLOWNOOPUPDATES NOW", "unexpected 'NOW'", 18),
        ("RMTHOST h, MGRPORT 7809, TCPBUFSIZ 100", "did you mean TCPBUFSIZE?", 26),
        ("MAP a.b, TARGET c.d, COLMAP (x = @STRCAT(a, ));", "COLMAP:", 34),
    ],
)
def test_an_option_a_parameter_does_not_have_is_an_error_at_its_position(
    text: str, message: str, col: int
) -> None:
    r = check_text(f"REPLICAT r1\n{text}\n", "t.prm")
    errors = [(d.origin.line, d.origin.col, d.message) for d in r.errors]
    assert any(line == 2 and c == col and message in msg for line, c, msg in errors), errors


@pytest.mark.parametrize(
    ("text", "col"),
    [
        ("BATCHSQL OPSPERBATCH 200, BATCHESPERQUEUE 100", 1),
        ("MAP a.b, TARGET c.d, THREAD (1);", 22),
        ("RMTHOST h, MGRPORT 7809, PARAMS x", 26),
        ("REPERROR (DEFAULT, TRANSABORT, MAXRETRIES 3)", 20),
        ("TARGETDB x, SESSIONCHARSET UTF8", 13),
        ("NOLIST", 1),
        ("MAPEXCLUDE a.b, COLMAP (x = y);", 17),
        ("MAP a.b, TARGET c.d;\nREPERROR (1403, IGNORE)", 1),
    ],
)
def test_accepted_but_not_used_is_a_warning_at_its_position(text: str, col: int) -> None:
    r = check_text(f"REPLICAT r1\n{text}\n", "t.prm")
    assert r.ok, [d.message for d in r.errors]
    line = 2 + text.count("\n")
    warned = [(d.origin.line, d.origin.col) for d in r.diagnostics if d.code == "not-used"]
    assert (line, col) in warned, (warned, [d.message for d in r.diagnostics])


def test_replicat_parameters_in_an_extract_warn() -> None:
    for name in ("HANDLECOLLISIONS", "INSERTALLRECORDS", "IGNOREDELETES", "REPERROR (1, IGNORE)"):
        r = check_text(f"EXTRACT e1\nEXTTRAIL ./dirdat/aa\n{name}\n", "t.prm")
        assert [d.code for d in r.diagnostics] == ["not-used"], name


def test_every_form_in_parameters_txt_parses() -> None:
    """Each option listed for a parameter not used is accepted (with the not-used warning)."""
    for name, spec in data_specs().items():
        for e in [x for x in entries() if x.parameter == name and x.option]:
            assert e.status != doclist.REFUSED, (name, e.option, e.statement)
        assert set(spec.options) == {
            x.option for x in entries() if x.parameter == name and x.option
        }


def test_legacy_forms_of_real_files() -> None:
    """Forms of 11.2-era files: REPERROR without parentheses, commas or none between the
    RETRYOP options, MAP options without commas."""
    text = (
        "REPLICAT r1\nREPERROR DEFAULT, DISCARD\nREPERROR (1403 , RETRYOP MAXRETRIES 3 DELAYSECS 1)\n"
        "REPERROR (-1, IGNORE)\nREPERROR RESET\nREPERROR (DEFAULT2, ABEND)\n"
        "MAP a.b, TARGET c.d REPERROR (1, DISCARD) HANDLECOLLISIONS;\n"
    )
    r = check_text(text, "t.prm")
    assert r.ok, [d.message for d in r.errors]
    for login in (
        "USERID ggs, PASSWORD AACAAAAAAAAAAADAVHTDKHHCSCPIKAFB, ENCRYPTKEY DEFAULT",
        "USERID ggs, PASSWORD AACAAAAAAAAAAADAVHTDKHHCSCPIKAFB, BLOWFISH, ENCRYPTKEY mykey",
        "USERID ggs, PASSWORD x AES128 ENCRYPTKEY DEFAULT",
        "TRANLOGOPTIONS ASMUSER sys@ASM, ASMPASSWORD xxx, ENCRYPTKEY DEFAULT",
    ):
        got = check_text(f"EXTRACT e1\n{login}\n", "t.prm")
        assert got.ok, (login, [d.message for d in got.errors])
    (spec,) = r.model.tables
    assert [(x.error, x.response) for x in spec.reperrors] == [
        ("1", "DISCARD"),
        ("DEFAULT2", "ABEND"),
    ]
    assert spec.handle_collisions


def test_extract_parameters_in_a_replicat_are_warned_not_used() -> None:
    """A Replicat has no use for the Extract's parameters: each gets a "not used" warning at
    its line, and the same lines in an Extract act without one."""
    body = "EXTTRAIL ./dirdat/aa\nBR BRINTERVAL 4H\nWARNLONGTRANS 2H\n"
    rep = check_text(f"REPLICAT r1\n{body}MAP a.b, TARGET a.b;\n", "r1.prm")
    assert [(d.origin.line, d.message) for d in rep.diagnostics] == [
        (2, "EXTTRAIL is an Extract parameter: not used in a Replicat"),
        (3, "BR is an Extract parameter: not used in a Replicat"),
        (4, "WARNLONGTRANS is an Extract parameter: not used in a Replicat"),
    ]
    ext = check_text(f"EXTRACT e1\n{body}TABLE a.b;\n", "e1.prm")
    assert [d.message for d in ext.diagnostics] == []
