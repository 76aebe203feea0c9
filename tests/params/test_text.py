"""The lexical layer: lines, comments, continuation, ``;`` statements, positions."""

from __future__ import annotations

from params.build import all_parameters
from params.catalog import TABLE_OPTIONS
from params.text import Statement, lex, split_lines, strip_comment


def statements(text: str) -> list[Statement]:
    res = lex(text, "t.prm", parameters=all_parameters(), table_options=frozenset(TABLE_OPTIONS))
    return [i for i in res.items if isinstance(i, Statement)]


def texts(text: str) -> list[str]:
    return [s.text for s in statements(text)]


def test_line_endings_and_missing_final_newline() -> None:
    assert split_lines("a\r\nb\rc\nd") == ["a", "b", "c", "d"]
    assert texts("EXTRACT e1\r\nEXTTRAIL ./dirdat/aa") == ["EXTRACT e1", "EXTTRAIL ./dirdat/aa"]


def test_comments_anywhere_but_inside_quotes() -> None:
    assert strip_comment("TABLE a.b; -- the table") == "TABLE a.b; "
    assert strip_comment("TABLE a.b, WHERE (x = '--not a comment');") == (
        "TABLE a.b, WHERE (x = '--not a comment');"
    )
    assert texts("-- only a comment\nCOMMENT also one\ncomment lower case too\nPORT 7809") == [
        "PORT 7809"
    ]


def test_ampersand_continuation_and_positions() -> None:
    sts = statements("DDL INCLUDE MAPPED &\n\tOBJNAME hr.* &\n    EXCLUDE OBJNAME hr.tmp_*\n")
    assert len(sts) == 1
    st = sts[0]
    assert st.text == "DDL INCLUDE MAPPED OBJNAME hr.* EXCLUDE OBJNAME hr.tmp_*"
    at = st.locate(st.text.index("EXCLUDE"))
    assert (at.line, at.col) == (3, 5)
    at = st.locate(st.text.index("OBJNAME"))
    assert (at.line, at.col) == (2, 2)  # after a tab: columns count characters


def test_semicolon_statements_span_lines_without_ampersand() -> None:
    assert texts(
        "MAP hr.emp,\n  TARGET hr.emp2,\n  COLMAP (USEDEFAULTS);\nREPORTCOUNT 10 RECORDS"
    ) == [
        "MAP hr.emp, TARGET hr.emp2, COLMAP (USEDEFAULTS);",
        "REPORTCOUNT 10 RECORDS",
    ]


def test_several_statements_on_one_line_and_semicolons_in_quotes() -> None:
    assert texts("TABLE a.b; TABLE a.c, WHERE (x = 'a;b');") == [
        "TABLE a.b;",
        "TABLE a.c, WHERE (x = 'a;b');",
    ]


def test_unterminated_table_is_reported_at_its_end_and_next_line_kept() -> None:
    res = lex(
        "TABLE hr.emp\nEXTTRAIL ./dirdat/bb\n",
        "t.prm",
        parameters=all_parameters(),
        table_options=frozenset(TABLE_OPTIONS),
    )
    assert [d.message for d in res.diagnostics] == ["TABLE statement is not terminated by ';'"]
    d = res.diagnostics[0]
    assert (d.origin.line, d.origin.col) == (1, 13)
    assert [i.text for i in res.items if isinstance(i, Statement)] == [
        "TABLE hr.emp",
        "EXTTRAIL ./dirdat/bb",
    ]


def test_option_lines_inside_a_table_statement_are_not_new_parameters() -> None:
    assert texts("TABLE hr.emp\n  KEYCOLS (id)\n  ;") == ["TABLE hr.emp KEYCOLS (id) ;"]


def test_trailing_semicolon_on_plain_parameter_is_tolerated() -> None:
    assert texts("DDL INCLUDE OBJNAME test.*;") == ["DDL INCLUDE OBJNAME test.*"]
