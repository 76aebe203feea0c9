"""The C kernel engine/_native/pgdecode.c against its Python twin engine/postgres/fastpath.py:
the same events for test_decoding lines as the plugin writes them (any names, values, types,
REPLICA IDENTITY and before-image modes) and for any text at all; and the records both make
are the records of the capture's per-line Python path (a real PostgreSQL, three slots)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.postgres import capture, fastpath
from engine.postgres.capture import PgCapture
from tests.harness import kernels
from tests.postgres.pgsource import prm, records, run_once, setup_group, sql

_KERNEL = kernels.kernel("pgdecode")

chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
names = st.text(chars, min_size=1, max_size=8)
texts = st.text(chars, max_size=24)
stamps = st.from_regex(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(\+00)?", fullmatch=True
)
bare = st.one_of(
    st.from_regex(r"-?[0-9]{1,10}(\.[0-9]{1,3})?", fullmatch=True),
    st.sampled_from(["true", "false", "t", "f", "B'0101'", "B'", "NaN"]),
)


def quote_ident(name: str) -> str:
    plain = name.isidentifier() and name == name.lower() and name.isascii()
    return name if plain else '"' + name.replace('"', '""') + '"'


@st.composite
def specs(draw: Any) -> fastpath.TableSpec:
    cols = draw(st.lists(names, min_size=1, max_size=6, unique=True))
    codes = bytes(draw(st.lists(st.integers(0, 7), min_size=len(cols), max_size=len(cols))))
    keys = tuple(draw(st.lists(st.integers(0, len(cols) - 1), max_size=3, unique=True)))
    return fastpath.TableSpec(
        "public.t", b"public.t", tuple(cols), codes, keys or tuple(range(len(cols))),
        draw(st.booleans()), draw(st.booleans()), draw(st.integers(0, 3)),
    )  # fmt: skip


def value(draw: Any, code: int, toast: bool) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return "null"
    if kind == 1 and toast:
        return "unchanged-toast-datum"
    if kind == 2:
        return str(draw(bare))
    raw = draw(stamps) if code in (4, 5) and kind < 6 else draw(texts)
    if code == 2 and kind == 3:
        raw = "\\x" + draw(st.from_regex(r"[0-9a-f]{0,12}", fullmatch=True))
    return "'" + raw.replace("'", "''") + "'"


def image(draw: Any, spec: fastpath.TableSpec, toast: bool) -> str:
    parts = []
    for c, name in enumerate(spec.columns):
        if draw(st.integers(0, 5)) == 0:
            continue  # left out (NULL of an old key, a dropped column)
        parts.append(f"{quote_ident(name)}[text]:{value(draw, spec.conversions[c], toast)}")
    if draw(st.integers(0, 15)) == 0 and parts:
        parts.reverse()  # out of order: left to Python
    return " ".join(parts)


@st.composite
def lines(draw: Any, spec: fastpath.TableSpec) -> list[str]:
    out = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.integers(0, 12))
        if kind == 0:
            out.append(f"BEGIN {draw(st.integers(0, 10**9))}")
        elif kind == 1:
            out.append(f"COMMIT {draw(st.integers(0, 10**9))} (at {draw(stamps)})")
        elif kind == 2:
            out.append(draw(st.sampled_from([
                "table public.other: INSERT: a[integer]:1",
                "table public.skip: INSERT: a[integer]:1",
                "table public.t, public.u: TRUNCATE: (no-flags)",
                "message: transactional: 1 prefix: p, sz: 1 content:x",
                'table "Odd".t: INSERT: a[integer]:1',
                "table public.t: DELETE: (no-tuple-data)",
            ])))  # fmt: skip
        else:
            op = draw(st.sampled_from(["INSERT", "UPDATE", "DELETE"]))
            body = image(draw, spec, op == "UPDATE")
            if op == "UPDATE" and draw(st.booleans()):
                body = f"old-key: {image(draw, spec, False)} new-tuple: {body}"
            out.append(f"table public.t: {op}: {body}")
    return out


def all_events(scan: Any, rows: list[tuple[int, str]], tables: dict[str, Any]) -> list[Any]:
    events: list[Any] = []
    at = 0
    while at < len(rows):
        got, at = scan(rows, at, tables)
        events.extend(got)
    return events


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_the_kernel_makes_the_twins_events_for_test_decoding_lines(data: Any) -> None:
    spec = data.draw(specs())
    rows = [(i * 40 + 7, line) for i, line in enumerate(data.draw(lines(spec)))]
    tables: dict[str, Any] = {"public.t": spec, "public.skip": None}
    want = all_events(fastpath.scan_py, rows, tables)
    assert all_events(_KERNEL.scan, rows, tables) == want


@settings(max_examples=400, deadline=None)
@given(
    text=st.lists(st.text(st.one_of(st.sampled_from("table public.t:INSERTUPDAE a[]'\"x1 -BGNCOMI()"),
                                    st.sampled_from("\t\n\ré\u00a0\U0001f600\ud800")),
                          max_size=60), max_size=4),
    spec=specs(),
)  # fmt: skip
def test_the_kernel_makes_the_twins_events_for_any_text(
    text: list[str], spec: fastpath.TableSpec
) -> None:
    rows = [(i, "table public.t: " + t if i % 2 else t) for i, t in enumerate(text)]
    tables: dict[str, Any] = {"public.t": spec}
    assert all_events(_KERNEL.scan, rows, tables) == all_events(fastpath.scan_py, rows, tables)


def test_a_run_ends_at_sixteen_operations_and_at_a_table_past_the_limit() -> None:
    specs_ = {
        f"public.t{i}": fastpath.TableSpec(
            f"public.t{i}", f"public.t{i}".encode(), ("a",), b"\x01", (0,), False, False, 0
        )
        for i in range(70)
    }
    rows = [(i, f"table public.t{i}: INSERT: a[integer]:{i}") for i in range(70)]
    want = all_events(fastpath.scan_py, rows, dict(specs_))
    assert all_events(_KERNEL.scan, rows, dict(specs_)) == want
    runs = [e for e in want if e[0] == fastpath.RUN]
    assert [r[2] for r in runs][:4] == [16, 16, 16, 16]
    assert [e[0] for e in want].count(fastpath.SLOW) == 1  # the 65th table of one call


@pytest.mark.postgres
@pytest.mark.parametrize("befores", ["", "GETUPDATEBEFORES\n", "GETUPDATEBEFORES\nUPDATERECORDFORMAT COMPACT\n"])  # fmt: skip
def test_kernel_twin_and_python_path_write_the_same_records(
    home: Any, pgdb: str, monkeypatch: pytest.MonkeyPatch, befores: str
) -> None:
    sql(
        pgdb,
        'CREATE TABLE t (id int PRIMARY KEY, "Odd ""Col""" text, b bytea, f boolean, '
        "ts timestamp, tz timestamptz, m money, bits bit(4), n numeric, big text, pt point)",
        "CREATE TABLE full_t (a int, b text, c date)",
        "ALTER TABLE full_t REPLICA IDENTITY FULL",
        "CREATE TABLE r (id int PRIMARY KEY, v text)",  # TABLE ... WHERE: the Python path
        "CREATE TABLE u (id int)",
    )
    modes = ("kernel", "twin", "python", "fragments")
    groups = [setup_group(home, pgdb, name) for name in ("EA", "EB", "EC", "ED")]
    sql(
        pgdb,
        "INSERT INTO t SELECT g, 'it''s ' || g, '\\x0aff', g % 2 = 0, '2020-01-02 03:04:05.5', "
        "'2020-01-02 03:04:05+02', 12.5, B'1010', g / 3.0, 'é' || (SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 200)), "
        "point(1, 2) FROM generate_series(1, 40) g",
        "UPDATE t SET f = NOT f WHERE id % 3 = 0",
        "UPDATE t SET id = id + 100 WHERE id % 7 = 0",
        'UPDATE t SET "Odd ""Col""" = NULL, n = \'NaN\' WHERE id % 5 = 0',
        "DELETE FROM t WHERE id % 4 = 0",
        "INSERT INTO full_t VALUES (1, NULL, '2020-01-01'), (2, 'x''y', NULL)",
        "UPDATE full_t SET b = 'z' WHERE a = 1",
        "DELETE FROM full_t",
        # one transaction mixing a table of the kernel, one of the Python path and a truncate
        "INSERT INTO t (id) VALUES (1000); INSERT INTO r SELECT g, 'v' FROM generate_series(1, 6)"
        " g; UPDATE t SET f = true WHERE id = 1000; INSERT INTO u VALUES (1); TRUNCATE u;"
        " DELETE FROM r WHERE id = 5; INSERT INTO t (id) VALUES (1001)",
    )
    tables = (
        "TABLE public.t;\nTABLE public.full_t;\nTABLE public.u;\nTABLE public.r, WHERE (id > 3);"
    )
    got = []
    for group, mode in zip(groups, modes, strict=True):
        with monkeypatch.context() as m:
            if mode == "twin":
                m.setattr(fastpath, "_NATIVE", None)
            if mode == "fragments":  # every run through the transaction cache
                m.setattr(capture, "RUN_BUDGET", 1)
            if mode == "python":  # every change line by PgCapture's per-line path
                m.setattr(PgCapture, "_spec", lambda self, table: None)
            extra = "GETTRUNCATES\n" + befores
            run = run_once(home, group, prm(pgdb, tables, extra, group.name))
            if mode == "python":
                assert not any(run.capture.fast.values())
            else:
                assert run.capture.fast.get("public.t") is not None
        got.append([(r.io_type, r.table, r.columns, r.before_columns, r.trans_ind, r.tranid,
                     r.logcsn, r.io_time_us) for r in records(home, group.name[:2].lower())])  # fmt: skip
    assert len(got[0]) > 60
    assert {r[1] for r in got[0]} == {"public.t", "public.full_t", "public.u", "public.r"}
    assert got[0] == got[1] == got[2] == got[3]
