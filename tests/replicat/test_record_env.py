"""The Replicat's lazily made record env (engine/replicat/mapping.RecordEnv) answers every
column and @GETENV question as a RowEnv made at once from the same record does, through
the RowEnv's getters and through its own (mapping.RECORD_GETENV: header and transaction
values read from the record, no Facts made)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.expr.rowrule import _GETENV, Facts, Process, RowEnv, RowRule
from engine.replicat.mapping import RECORD_GETENV, RecordEnv, record_fn
from engine.trail.layout import IOType, TransInd, event_io_type
from engine.trail.model import TrailPosition, TrailRecord
from params.expr import HEADER_ELEMENTS, Call, Col, Header, Lit

_NAMES = ("ID", "NAME", "SAL")
_RULE = RowRule("HR.EMP", _NAMES, (), index={n: i for i, n in enumerate(_NAMES)})
_WHEN = datetime(2026, 11, 24, 19, 40)


@dataclass(frozen=True)
class _Txn:
    logcsn: str | None
    tranid: str | None


@pytest.mark.parametrize(
    "record",
    [
        TrailRecord(IOType.INSERT, "HR.EMP", ((0, "1"), (1, "ann"), (2, None)),
                    TransInd.BEGIN, io_time_us=1_700_000_000_000_000, audit_rba=7,
                    audit_pos=4096, rowid="AAAAAAAAAAAAAAAAAA"),
        TrailRecord(IOType.KEYFIELDCOMP, "HR.EMP", ((0, "2"), (2, "5")), TransInd.END,
                    before_columns=((0, "1"),), audit_rba=8, audit_pos=12),
    ],
)  # fmt: skip
def test_the_lazy_record_env_is_the_row_env(record: TrailRecord) -> None:
    txn, at, process = _Txn("123", "1.2.3"), TrailPosition(4, 9876), Process("REP", "REPLICAT")
    facts = Facts(record.table, record.io_type, record.io_time_us, "123", "1.2.3",
                  record.rowid, record.audit_rba, record.audit_pos, record.trans_ind, 4, 9876)  # fmt: skip
    stats = {("", "INSERT"): 2}
    eager = RowEnv(_RULE, dict(record.columns), dict(record.before_columns), facts, process,
                   stats, _WHEN)  # fmt: skip
    exprs = [Call("GETENV", (Lit(info), Lit(key))) for info, key in _GETENV]
    exprs += [Col(n, image) for n in (*_NAMES, "NOPE") for image in ("", "BEFORE", "AFTER")]
    exprs += [Call("DATENOW"), Call("GETENV", (Lit("STATS"), Lit("INSERT")))]
    for e in exprs:
        fn = _RULE.fn(e)
        lazy = RecordEnv(_RULE, record, txn, at, process, stats, lambda: _WHEN)
        assert fn(lazy) == fn(eager), e
        lazy = RecordEnv(_RULE, record, txn, at, process, stats, lambda: _WHEN)
        assert record_fn(_RULE, e)(lazy) == fn(eager), e
    lazy = RecordEnv(_RULE, record, txn, at, process, stats, lambda: _WHEN)
    assert _RULE.fn(Call("GETENV", (Lit("RECORD"), Lit("FILERBA"))))(lazy) == 9876
    with pytest.raises(AttributeError):
        lazy.nothing  # noqa: B018  (an attribute it does not have is still an error)


_IO_TYPES = [IOType.INSERT, IOType.UPDATE, IOType.FIELDCOMP, IOType.KEYFIELDCOMP,
             IOType.DELETE, IOType.UNIFIED_UPDATE, IOType.PURGEDATA]  # fmt: skip
_TEXT = st.one_of(st.none(), st.sampled_from(["", "1", "ann", "HR.X"]))
_COLUMNS = st.lists(st.tuples(st.integers(0, 3), _TEXT), max_size=4).map(
    lambda cols: tuple(dict(cols).items())
)
_records = st.builds(
    TrailRecord,
    io_type=st.sampled_from(_IO_TYPES),
    table=st.sampled_from(["HR.EMP", "EMP", "A.B.C"]),
    columns=_COLUMNS,
    trans_ind=st.sampled_from(list(TransInd)),
    before_after=st.sampled_from(["A", "B"]),
    io_time_us=st.sampled_from([0, 1_700_000_000_123_456, 86_400_000_000]),
    audit_rba=st.integers(0, 2**31),
    audit_pos=st.integers(0, 2**40),
    rowid=st.one_of(st.none(), st.just("AAAAAAAAAAAAAAAAAB")),
    before_columns=_COLUMNS,
)


@settings(max_examples=200, deadline=None)
@given(
    _records,
    st.builds(_Txn, st.one_of(st.none(), st.just("77")), st.one_of(st.none(), st.just("1.2.3"))),
    st.builds(TrailPosition, st.integers(0, 999), st.integers(0, 2**40)),
)
def test_record_getters_are_the_row_env_getters(
    record: TrailRecord, txn: _Txn, at: TrailPosition
) -> None:
    """Every @GETENV key and GGS_* element, compiled with RECORD_GETENV on the lazy env,
    gives what the RowEnv's getters give on an env made at once with its Facts."""
    process, stats = Process("REP", "REPLICAT"), {("", "INSERT"): 2}

    facts = Facts(record.table, event_io_type(record.io_type, record.before_after),
                  record.io_time_us, txn.logcsn or "", txn.tranid or "", record.rowid,
                  record.audit_rba, record.audit_pos, record.trans_ind, at.seqno, at.rba)  # fmt: skip
    eager = RowEnv(_RULE, dict(record.columns), dict(record.before_columns), facts, process,
                   stats, _WHEN)  # fmt: skip
    assert set(RECORD_GETENV) == set(_GETENV)
    exprs = [Call("GETENV", (Lit(info), Lit(key))) for info, key in _GETENV]
    exprs += [Header(name) for name in HEADER_ELEMENTS]
    for e in exprs:
        lazy = RecordEnv(_RULE, record, txn, at, process, stats, lambda: _WHEN)
        assert record_fn(_RULE, e)(lazy) == _RULE.fn(e)(eager), e
