"""The Replicat's lazily made record env (engine/replicat/mapping.RecordEnv) answers every
column and @GETENV question as a RowEnv made at once from the same record does."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pytest

from engine.expr.rowrule import _GETENV, Facts, Process, RowEnv, RowRule
from engine.replicat.mapping import RecordEnv
from engine.trail.layout import IOType, TransInd
from engine.trail.model import TrailPosition, TrailRecord
from params.expr import Call, Col, Lit

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
    assert _RULE.fn(Call("GETENV", (Lit("RECORD"), Lit("FILERBA"))))(lazy) == 9876
    with pytest.raises(AttributeError):
        lazy.nothing  # noqa: B018  (an attribute it does not have is still an error)
