"""params check on TABLE row options: WHERE / FILTER / TOKENS parsed into the model, their
mistakes positioned, and the options the Extract does not act on warned."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ggsci.cli import build_app
from params.check import check_text
from params.expr import Binary, Col, Lit

HEAD = "EXTRACT ext1\nEXTTRAIL ./dirdat/aa\n"


def diags(text: str) -> list[tuple[str, int, int, str]]:
    result = check_text(HEAD + text)
    return [(d.severity.value, d.origin.line, d.origin.col, d.message) for d in result.diagnostics]


def test_the_issue_example_is_parsed_into_the_model() -> None:
    result = check_text(HEAD + "TABLE hr.t, COLSEXCEPT (secret), WHERE (v > 5),\n"
                        "  TOKENS (TKN-HOST = @GETENV ('GGENVIRONMENT', 'HOSTNAME'));\n")  # fmt: skip
    assert not result.diagnostics
    [spec] = result.model.tables
    assert spec.cols_except == ("secret",)
    assert spec.where == Binary(">", Col("V", "", 40), Lit(5, 44), 40)
    assert [t.name for t in spec.tokens] == ["TKN-HOST"]


def test_mistakes_in_expressions_are_positioned() -> None:
    got = diags(
        "TABLE hr.u, WHERE (v >> 5);\n"
        "TABLE hr.w, FILTER (ON INSERT, @STRUPP (x) = 'A');\n"
        "TABLE hr.x, TOKENS (TKN-A = @STRCAT (a));\n"
        "TABLE hr.y, TOKENS (TKN-B);\n"
        "TABLE hr.z, FILTER (RAISEERROR 99, v > 1);\n"
    )
    assert got == [
        ("error", 3, 23, "WHERE: unexpected '>' in expression"),
        ("error", 4, 32, "FILTER: unknown function @STRUPP; did you mean STRUP?"),
        ("error", 6, 21, "TOKENS: TKN-B needs = and a value"),
        ("error", 7, 13, "FILTER RAISEERROR applies to a Replicat MAP, not to TABLE"),
    ]


def test_options_not_acted_on_are_warned_at_the_option() -> None:
    got = diags("TABLE hr.x, EVENTACTIONS (SHELL 'x'), SQLEXEC (ID q, QUERY 'x');\n")
    assert got == [
        ("warning", 3, 13, "TABLE option EVENTACTIONS is not used by this engine"),
        ("warning", 3, 39, "TABLE option SQLEXEC is not used by this engine"),
    ]


def test_params_show_json_holds_the_parsed_expressions(tmp_path: Path) -> None:
    f = tmp_path / "e1.prm"
    f.write_text(HEAD + "TABLE hr.t, FILTER (ON INSERT, v > 5), TOKENS (TKN-A = GGS_OP_TYPE);\n")
    res = CliRunner().invoke(build_app(), ["params", "show", "--json", str(f)])
    assert res.exit_code == 0, res.output
    [table] = json.loads(res.output)["tables"]
    assert table["filters"][0]["on"] == ["INSERT"]
    assert table["tokens"][0]["name"] == "TKN-A"


def test_several_filter_clauses_are_kept_in_order() -> None:
    """GoldenGate ANDs the FILTER clauses of one TABLE / MAP: each is kept, in order."""
    result = check_text(
        HEAD + "TABLE hr.t, FILTER (ON INSERT, v > 5), FILTER (IGNORE DELETE, w < 2);\n"
    )
    assert not result.diagnostics
    [spec] = result.model.tables
    assert [f.on for f in spec.filters] == [("INSERT",), ()]
    assert [f.ignore for f in spec.filters] == [(), ("DELETE",)]
    assert spec.filter == spec.filters[0]


def test_getenv_takes_double_quoted_strings_and_gg_header() -> None:
    """@GETENV ("GGHEADER", "OPTYPE") as GoldenGate's reference writes it; a double-quoted
    word outside @GETENV stays a column name."""
    from params.expr import Call, parse_expression

    for text in ('@GETENV ("GGHEADER", "OPTYPE")', "@GETENV ('GGHEADER', 'OPTYPE')",
                 "@GETENV ('GGHEADERINFO', \"OPTYPE\")"):  # fmt: skip
        e = parse_expression(text)
        assert isinstance(e, Call), (text, e)
        assert [a.value for a in e.args] == ["GGHEADERINFO", "OPTYPE"]  # type: ignore[union-attr]
    assert parse_expression('@STRUP ("name")') == Call("STRUP", (Col("name", "", 8),), 0)
    assert not diags('TABLE hr.t, TOKENS (TKN-OP = @GETENV ("GGHEADER", "OPTYPE"));\n')
    got = diags('TABLE hr.t, TOKENS (TKN-OP = @GETENV ("GGHEADER", "OPTYPEX"));\n')
    assert got and "unknown @GETENV ('GGHEADERINFO') key 'OPTYPEX'" in got[0][3]
