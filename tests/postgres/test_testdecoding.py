"""The test_decoding text parser: property test (any names, types and values, formatted as
the plugin formats them, parse back to themselves) and its refusals of what is not the
plugin's text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.postgres import testdecoding as td
from engine.postgres.lsn import BadLsn, format_lsn, parse_lsn

BARE = {"integer", "bigint", "numeric", "double precision"}


def quote_ident(name: str) -> str:
    plain = name.isidentifier() and name == name.lower() and name.isascii()
    return name if plain else '"' + name.replace('"', '""') + '"'


def literal(type_name: str, value: td.Value) -> str:
    if value is None:
        return "null"
    if isinstance(value, td.Unchanged):
        return "unchanged-toast-datum"
    if type_name in BARE:
        return value
    return "'" + value.replace("'", "''") + "'"


names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                min_size=1, max_size=12)  # fmt: skip
types = st.sampled_from(["text", "character varying", "integer[]", "timestamp with time zone",
                         "jsonb", "bytea", "integer", "numeric"])  # fmt: skip
texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                max_size=30)  # fmt: skip
numbers = st.from_regex(r"-?[0-9]{1,12}(\.[0-9]{1,4})?", fullmatch=True)


@st.composite
def column(draw: st.DrawFn) -> td.Column:
    t = draw(types)
    v = draw(st.one_of(st.none(), st.just(td.UNCHANGED_TOAST),
                       numbers if t in BARE else texts))  # fmt: skip
    return (draw(names), t, v)


@given(st.lists(column(), min_size=1, max_size=6), st.lists(column(), max_size=4))
def test_update_lines_parse_back(new: list[td.Column], old: list[td.Column]) -> None:
    def part(cols: list[td.Column]) -> str:
        return " ".join(f"{quote_ident(n)}[{t}]:{literal(t, v)}" for n, t, v in cols)

    line = 'table public."T x": UPDATE: ' + (
        f"old-key: {part(old)} new-tuple: {part(new)}" if old else part(new)
    )
    ch = td.parse_line(line)
    assert isinstance(ch, td.Change)
    assert ch.tables == ('public."T x"',) and ch.op == "UPDATE"
    assert list(ch.new) == new and list(ch.old) == old


def test_other_lines() -> None:
    assert td.parse_line("BEGIN 725") == td.Begin("725")
    assert td.parse_line("COMMIT 725 (at 2026-11-28 11:29:54.087358+00)") == td.Commit(
        "725", "2026-11-28 11:29:54.087358+00"
    )
    ch = td.parse_line("table public.a, s.b: TRUNCATE: restart_seqs cascade")
    assert isinstance(ch, td.Change) and ch.tables == ("public.a", "s.b")
    assert ch.flags == "restart_seqs cascade"
    ch = td.parse_line("table public.a: DELETE: (no-tuple-data)")
    assert isinstance(ch, td.Change) and ch.old == () and ch.new == ()
    assert isinstance(td.parse_line("message: transactional: 1 prefix: x"), td.Message)


@pytest.mark.parametrize(
    "line",
    ["table public.t UPDATE", "table public.t: MERGE: a[int]:1", "table public.t: INSERT: a:1",
     'table "unterminated: INSERT: a[integer]:1'],
)  # fmt: skip
def test_refusals_are_decode_errors(line: str) -> None:
    with pytest.raises(td.DecodeError):
        td.parse_line(line)


@given(st.integers(0, 2**64 - 1))
def test_lsn_round_trip(value: int) -> None:
    assert parse_lsn(format_lsn(value)) == value


def test_bad_lsn() -> None:
    with pytest.raises(BadLsn):
        parse_lsn("0/XYZ")


def test_params_check_warns_oracle_only_parameters_of_a_postgres_extract() -> None:
    from params.check import check_text

    text = (
        "EXTRACT epg\nSOURCEDB postgresql://gg@db/src\nTRANLOGOPTIONS EXCLUDEUSER gg\n"
        "BR BROFF\nWARNLONGTRANS 1H\nEXTTRAIL ./dirdat/ep\nTABLE public.*;\n"
    )
    warned = [d.message for d in check_text(text).diagnostics if d.code == "not-used"]
    assert any(m.startswith("TRANLOGOPTIONS is not used by a PostgreSQL Extract") for m in warned)
    assert any(m.startswith("BR is not used by a PostgreSQL Extract") for m in warned)
    assert any(m.startswith("WARNLONGTRANS is not used by a PostgreSQL Extract") for m in warned)
    oracle = text.replace("postgresql://gg@db/src", "src")
    assert not [d for d in check_text(oracle).diagnostics if "PostgreSQL" in d.message]


def test_params_check_filtertable_acts_for_postgres_only() -> None:
    from params.check import check_text

    pg = (
        "EXTRACT epg\nSOURCEDB postgresql://gg@db/src\nTRANLOGOPTIONS FILTERTABLE gg.ckpt\n"
        "IGNOREREPLICATES\nEXTTRAIL ./dirdat/ep\nTABLE public.*;\n"
    )
    result = check_text(pg)
    assert [d.message for d in result.diagnostics if d.code == "not-used"] == []
    assert result.model.tranlog.filter_tables == ("gg.ckpt",)
    assert not result.model.get_replicates
    assert check_text(pg.replace("IGNOREREPLICATES", "GETREPLICATES")).model.get_replicates
    oracle = pg.replace("postgresql://gg@db/src", "src")
    warned = [d.message for d in check_text(oracle).diagnostics if d.code == "not-used"]
    assert "TRANLOGOPTIONS FILTERTABLE is used by a PostgreSQL Extract only" in warned
    assert "IGNOREREPLICATES is used by a PostgreSQL Extract only" in warned
