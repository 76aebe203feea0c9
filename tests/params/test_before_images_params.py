"""GETUPDATEBEFORES / IGNOREUPDATEBEFORES and UPDATERECORDFORMAT as the checker models them:
toggles for the TABLE (and MAP) statements after them, the format with its 19c+ default,
and a warning when UPDATERECORDFORMAT has no before image to act on."""

from __future__ import annotations

from params.check import check_text

HEAD = "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\n"


def test_the_toggles_act_on_the_table_statements_after_them() -> None:
    r = check_text(HEAD + "TABLE a.x;\nGETUPDATEBEFORES\nTABLE a.y;\nIGNOREUPDATEBEFORES\n"
                   "TABLE a.z;\nUPDATERECORDFORMAT FULL\n")  # fmt: skip
    assert not r.diagnostics, r.diagnostics
    assert [(t.source.name, t.get_update_befores) for t in r.model.tables] == [
        ("X", False),
        ("Y", True),
        ("Z", False),
    ]
    assert r.model.update_record_format == "FULL"


def test_updaterecordformat_alone_is_compact() -> None:
    r = check_text(HEAD + "UPDATERECORDFORMAT\nGETUPDATEBEFORES\nTABLE a.y;\n")
    assert not r.diagnostics and r.model.update_record_format == "COMPACT"


def test_updaterecordformat_without_getupdatebefores_is_not_used() -> None:
    r = check_text(HEAD + "UPDATERECORDFORMAT COMPACT\nTABLE a.y;\nGETUPDATEBEFORES\n")
    assert [(d.code, d.origin.line) for d in r.diagnostics] == [("not-used", 4)]
    assert "no TABLE is under GETUPDATEBEFORES" in r.diagnostics[0].message


def test_in_a_replicat_getupdatebefores_acts_on_the_maps_after_it() -> None:
    r = check_text("REPLICAT r1\nTARGETDB ./t.db\nGETUPDATEBEFORES\nMAP a.x, TARGET a.x;\n"
                   "IGNOREUPDATEBEFORES\nMAP a.y, TARGET a.y;\n")  # fmt: skip
    assert not r.diagnostics, r.diagnostics
    assert [t.get_update_befores for t in r.model.tables] == [True, False]
