"""FETCHOPTIONS (Extract): in force for the TABLE statements after it; MISSINGROW, NOFETCH
and USEROWID / NOUSEROWID act, the other options are warned as not used, a wrong action is
an error at its column, and a Replicat's file warns the parameter as not used."""

from __future__ import annotations

from engine.extract.keyfetch import options_for
from params.check import check_text
from params.models import FetchOptions

HEAD = "EXTRACT e1\nSOURCEDB s\nEXTTRAIL ./dirdat/lt\n"


def test_each_table_takes_the_fetchoptions_before_it() -> None:
    r = check_text(HEAD + "TABLE a.x;\nFETCHOPTIONS MISSINGROW ABEND, NOUSEROWID\nTABLE b.*;\n"
                   "TABLE b2.*;\nFETCHOPTIONS NOFETCH\nTABLE c.y;\n")  # fmt: skip
    assert r.ok
    m = r.model
    got = [options_for(m, t) for t in m.tables]
    assert got == [
        FetchOptions(),
        FetchOptions("ABEND", use_rowid=False),
        FetchOptions("ABEND", use_rowid=False),
        FetchOptions(nofetch=True),  # a new FETCHOPTIONS starts from the defaults
    ]
    assert options_for(m, None) == FetchOptions()


def test_options_without_effect_are_warned_and_a_wrong_action_is_an_error() -> None:
    r = check_text(HEAD + "FETCHOPTIONS USESNAPSHOT, MISSINGROW REPORT\nTABLE a.x;\n")
    assert r.ok and options_for(r.model, r.model.tables[0]).missing_row == "REPORT"
    (w,) = [d for d in r.diagnostics if d.code == "not-used"]
    assert "FETCHOPTIONS USESNAPSHOT" in w.message and w.origin.col == 14
    bad = check_text(HEAD + "FETCHOPTIONS MISSINGROW SKIP\nTABLE a.x;\n")
    (e,) = bad.errors
    assert "ALLOW, IGNORE, REPORT, DISCARD or ABEND" in e.message and e.origin.line == 4
    rep = check_text("REPLICAT r1\nTARGETDB ./t.db\nFETCHOPTIONS NOFETCH\nMAP a.x, TARGET a.x;\n")
    assert [d.code for d in rep.diagnostics] == ["not-used"]
