"""Property: whatever a user does to a valid file, the checker answers with positioned
diagnostics, never with another exception."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from params.check import check_text
from params.text import split_lines

VALID = """\
EXTRACT ext1
USERIDALIAS ggsrc DOMAIN OracleGoldenGate
EXTTRAIL ./dirdat/lt
BR BRINTERVAL 2H, BRDIR ./BR, BRFSOPTION MS_SYNC
WARNLONGTRANS 2H, CHECKINTERVAL 10M
TRANLOGOPTIONS EXCLUDEUSER ggadmin PURGEORPHANEDTRANSACTIONS TRANSCLEANUPFREQUENCY 10
MACRO #k PARAMS (#c) BEGIN KEYCOLS (#c) END;
DDL INCLUDE MAPPED OBJNAME hr.* &
    EXCLUDE OBJNAME hr.tmp_*
CACHEMGR CACHESIZE 1GB
GETTRUNCATES
TABLE hr.emp, #k (id), WHERE (id > 'a;b'); -- comment
TABLE hr.x,
  COLS (a, b);
TABLEEXCLUDE hr.tmp_*
"""

TOKENS = ["&", ";", "--", "(", ")", ",", "'", '"', "?X", "#k", "#", "*", "\t", "\r\n", "\n", " ",
          "TABLE", "BR", "END;", "MACRO", "OBEY", "INCLUDE", "COMMENT", "99999999999999999999",
          "0", "M", "H", "BRRESET", "\x00", "é", "BEGIN"]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = VALID
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "dupline", "dropline"]))
        pos = draw(st.integers(0, len(text)))
        if kind == "insert":
            text = text[:pos] + draw(st.sampled_from(TOKENS)) + text[pos:]
        elif kind == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 8)) :]
        elif kind == "replace":
            text = text[:pos] + draw(st.text(max_size=4)) + text[pos + 1 :]
        else:
            lines = split_lines(text)
            i = draw(st.integers(0, len(lines) - 1))
            if kind == "dupline":
                lines.insert(i, lines[i])
            else:
                del lines[i]
            text = "\n".join(lines)
    return text


@settings(max_examples=300, deadline=None)
@given(mutated())
def test_mutations_give_only_positioned_diagnostics(text: str) -> None:
    result = check_text(text, "m.prm", env={"X": "1"})
    lines = split_lines(text)
    for d in result.diagnostics:
        assert d.origin.path == "m.prm"
        assert 1 <= d.origin.line <= len(lines)
        assert d.origin.col >= 1
        assert d.message


def test_the_unmutated_file_is_valid() -> None:
    assert check_text(VALID, env={}).ok
