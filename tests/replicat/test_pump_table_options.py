"""The pump applies its own TABLE row options (PASSTHRU or not): COLSEXCEPT, WHERE,
FILTER, TOKENS (incoming user tokens kept, read by @TOKEN); unknown column: OGG-00366."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from replicat_helpers import EMP, add_group, dele, ins, model, txn_records, upd, write_trail

from engine.home.groups import GroupKind, SourceType
from engine.home.layout import Home
from engine.pump import PumpError
from engine.pump.pump import Pump
from engine.runtime.events import Severity
from engine.trail.codec import user_token, user_tokens
from engine.trail.reader import TrailReader


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    return h


def run_pump(
    home: Home, table: str
) -> list[tuple[str, tuple[tuple[int, str | None], ...], list[tuple[str, str | None]]]]:
    group = add_group(home, GroupKind.EXTRACT, "PMP", SourceType.EXTTRAILSOURCE, "./dirdat/aa")
    prm = f"EXTRACT pmp\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/bb\nPASSTHRU\n{table}\n"

    def emit(code: str, sev: Severity, text: str) -> None:
        pass

    pump = Pump(home, model(home, "pmp", prm), group, emit, durable=False)
    try:
        pump.run(lambda: False, stop_at_eof=True)
    finally:
        pump.close()
    return [
        (r.op_name, r.columns, user_tokens(r))
        for _, r in TrailReader(home.root / "dirrmt" / "bb").records()
        if r.io_type != 170
    ]


def write(home: Home) -> None:
    first = txn_records(100, [ins(1, sal=10), ins(2, sal=500), upd(2, 20), dele(1)])
    first[1] = replace(first[1], extra_tokens=(user_token("TKN-SRC", "east"),))
    write_trail(home.root / "dirdat" / "aa", [first])


def test_pump_applies_its_table_options(home: Home) -> None:
    write(home)
    got = run_pump(
        home,
        "TABLE hr.emp, COLSEXCEPT (name), FILTER (ON INSERT, sal > 100), "
        "TOKENS (TKN-OP = GGS_OP_TYPE, TKN-FROM = @TOKEN ('TKN-SRC'));",
    )
    assert got == [
        ("Insert", ((0, "2"), (2, "500")),
         [("TKN-SRC", "east"), ("TKN-OP", "INSERT"), ("TKN-FROM", "east")]),
        ("FieldComp", ((0, "2"), (2, "20")), [("TKN-OP", "SQL COMPUPDATE"), ("TKN-FROM", None)]),
        ("Delete", ((0, "1"),), [("TKN-OP", "DELETE"), ("TKN-FROM", None)]),
    ]  # fmt: skip
    assert EMP.column_names[1] == "NAME"


def test_pump_where_and_unknown_column(home: Home) -> None:
    write(home)
    got = run_pump(home, "TABLE hr.emp, WHERE (id = 2);")
    assert [(op, cols[0]) for op, cols, _ in got] == [("Insert", (0, "2")), ("FieldComp", (0, "2"))]


def test_pump_unknown_column_abends(home: Home) -> None:
    write(home)
    with pytest.raises(PumpError) as err:
        run_pump(home, "TABLE hr.emp, WHERE (salary = 2);")
    assert err.value.code == "OGG-00366"
    assert "WHERE of TABLE HR.EMP: SALARY" in str(err.value)


def test_getenv_ggfileheader_and_ggs_trans_rba_read_the_input_trail(home: Home) -> None:
    """Seed 003 names @GETENV ('GGFILEHEADER', ...) (the file header's tokens, COMPATIBILITY
    first) and GGS_TRANS_RBA (the record header's AuditRBA) for mapping; both were refused."""
    from engine.trail.reader import TrailReader as Reader

    write(home)
    reader = Reader(home.root / "dirdat" / "aa")
    records = [r for _, r in reader.records() if r.io_type != 170]
    header = reader.header
    assert header is not None
    got = run_pump(
        home,
        "TABLE hr.emp, TOKENS (TKN-COMPAT = @GETENV ('GGFILEHEADER', 'COMPATIBILITY'), "
        "TKN-SEQ = @GETENV ('GGFILEHEADER', 'FILESEQNO'), "
        "TKN-PRODUCER = @GETENV ('GGFILEHEADER', 'PRODUCER'), TKN-RBA = GGS_TRANS_RBA);",
    )
    tokens = dict(got[0][2])
    assert tokens["TKN-COMPAT"] == str(header.compatibility)
    assert tokens["TKN-SEQ"] == str(header.seqno)
    assert tokens["TKN-PRODUCER"] == str(header.get("Producer"))
    assert tokens["TKN-RBA"] == str(records[0].audit_rba)


def test_ggfileheader_keys_name_header_tokens_and_unknown_keys_are_refused() -> None:
    from engine.trail.layout import HEADER_TOKENS
    from params.check import check_text
    from params.expr import GGFILEHEADER_KEYS

    assert set(GGFILEHEADER_KEYS.values()) <= {name for name, _ in HEADER_TOKENS.values()}
    prm = "EXTRACT e\nSOURCEDB s\nEXTTRAIL ./dirdat/aa\nTABLE a.b, TOKENS (T = {});\n"
    assert check_text(prm.format("@GETENV ('GGFILEHEADER', 'COMPATIBILITY')")).ok
    assert check_text(prm.format("GGS_TRANS_RBA")).ok
    bad = check_text(prm.format("@GETENV ('GGFILEHEADER', 'NOSUCHKEY')"))
    assert not bad.ok
