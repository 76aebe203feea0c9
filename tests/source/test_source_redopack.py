"""The fast path's packer of Oracle's change vectors: its Python twin against the generic
path, and the compiled kernel (engine/_native/redopack.c) against its Python twin.

:mod:`engine.embedded.redopack` states what the kernel does: for any row, undo address,
block state and transaction, its records must be the bytes :func:`payloads.encode_vector`
writes for the change vectors :mod:`engine.embedded.redogen` builds (the generic path's,
as :mod:`engine.embedded.dml` puts them together). The C module must give the same bytes
and leave the transaction and the database's cleanout map in the same state, for any
values SQLite can hand it: NULLs, empty strings, integers of any size and sign, floats
fractional, huge, tiny or not finite, multi-byte UTF-8, dates valid and not. What the C
kernel does not encode itself goes to the Python encoders, so a value that makes the Python
path raise makes the C path raise the same error. Its offsets are the tables' of
engine/redo/vectors.py and layout.py (:func:`test_the_c_layouts_are_the_tables`). The
workload's golden hashes are checked with whichever kernel is built;
:func:`test_the_python_twin_gives_the_golden_redo` checks the twin in the same run.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine._native import enabled as native_enabled
from engine._native import load
from engine.embedded import bulk
from engine.embedded import redogen as rg
from engine.embedded import redopack as rp
from engine.embedded.dictionary import ColumnDef, IndexDef, TableDef
from engine.embedded.rows import supp_columns
from engine.redo import framing as F
from engine.redo import layout as L
from engine.redo import onlinelog as O
from engine.redo import payloads as P
from engine.redo import vectors as V
from engine.redo.ids import Uba, Xid, make_dba
from engine.redo.model import (
    OBJ_UNDO,
    ROLLBACK_FLAG,
    ChangeVector,
    Column,
    IndexOp,
    Ktb,
    UndoApplied,
)
from engine.redo.rowid import fb_value
from tests.harness import kernels
from tests.source.test_source_workload_golden import GOLDEN, SCENARIOS, _fingerprint

_C: Any = load("redopack")
needs_c = kernels.loaded("redopack")
SOURCE = Path(__file__).resolve().parents[2] / "engine/_native/redopack.c"

COLUMNS = (
    ColumnDef("ID", "NUMBER", nullable=False),
    ColumnDef("NAME", "VARCHAR2", 4000),
    ColumnDef("AMOUNT", "NUMBER"),
    ColumnDef("CREATED", "DATE"),
    ColumnDef("STATUS", "CHAR", 1),
)
TABLES = {
    # the workload's shape: a NUMBER key and its index
    "number key": TableDef(
        "WL", "T", 76481, 76482, COLUMNS, key=("ID",),
        indexes=(IndexDef("PK", 76483, 76483, ("ID",), primary=True, block=0x441),),
    ),
    # a character key (its index form may be too long) and no index
    "text key": TableDef(
        "WL", "U", 76490, 76491, COLUMNS, key=("NAME",),
        indexes=(IndexDef("UK", 76492, 76492, ("NAME",), unique=True, block=0x461),),
    ),
    "no index": TableDef("WL", "V", 76495, 76496, COLUMNS, key=("ID",)),
}  # fmt: skip
SCN = 1_600_123

# values SQLite gives back, and some it would not (the Python encoders decide about those)
good_numbers = st.one_of(
    st.none(),
    st.integers(-(2**64), 2**64),
    st.integers(-(10**38), 10**38),
    st.floats(-1e20, 1e20),
    st.floats(-1e6, 1e6).map(lambda f: round(f, 2)),
)
numbers = st.one_of(
    good_numbers,
    st.just(""),
    st.integers(),
    st.floats(),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    st.text(max_size=5),
)
good_dates = st.one_of(
    st.none(),
    st.datetimes().map(lambda d: d.strftime("%Y-%m-%d %H:%M:%S")),
    st.datetimes().map(str),  # with microseconds
)
dates = st.one_of(
    good_dates,
    st.just(""),
    st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\Z"),  # Feb 30 ...
    st.text(max_size=20),
    st.integers(),
)
texts = st.one_of(st.none(), st.just(""), st.text(), st.text(min_size=200), st.integers())
good_rows = st.tuples(good_numbers, texts, good_numbers, good_dates, texts)
row_values = st.one_of(good_rows, good_rows, st.tuples(numbers, texts, numbers, dates, texts))
BY_KIND = {"N": numbers, "D": dates, "T": texts}

# a transaction: usn, slot, undo record, undo sequence, started, row block seen, leaf
# seen, ITL entries left in the row block by commits (None: not dirty)
txns = st.tuples(
    st.integers(1, 10),
    st.integers(0, 47),
    st.integers(0, 0x101),
    st.integers(0, 0xFFFF),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.one_of(
        st.none(),
        st.lists(st.tuples(st.integers(1, 3), st.just(2), st.integers(0, 2**63)), max_size=3),
    ),
)
places = st.tuples(
    st.integers(1, 2**48 - 1),  # scn
    st.integers(0, 0x3FFFFF),  # block
    st.integers(0, 0xFFFF),  # slot
)
SESSION = P.encode_vector(rg.session_info(40, 7, "WL", "T1", 12345))


def _kernels(name: str, kinds: str | None = None, encoders: Any = None) -> tuple[Any, rp.Table]:
    table = TABLES[name]
    shape = rp.shape_of(table)
    k, e = rp.codecs_of(table)
    kinds, encoders = kinds or k, encoders or e
    native = None if _C is None else _C.Table(shape, kinds, encoders)
    return native, rp.Table(shape, kinds, encoders)


def _ids(txn: tuple[Any, ...], dba: int, leaf: int) -> rg.TxnIds:
    usn, slot, rec, seq, started, seen, leaf_seen, _ = txn
    if not started:  # a transaction's 5.2 points at its next undo record: a byte
        rec = min(rec, 0xFE)
    ids = rg.TxnIds(Xid(usn, slot, 0x357), undo_seq=seq, rec=rec, started=started)
    if seen:
        ids.blocks.add(dba)
    if leaf_seen:
        ids.blocks.add(leaf)
    return ids


def _dirty(txn: tuple[Any, ...], dba: int) -> dict[int, list[tuple[int, int, int]]]:
    entries = txn[-1]
    return {} if entries is None else {dba: list(entries), dba + 1: [(1, 2, 3)]}


def _state(txn: tuple[Any, ...], dba: int, leaf: int) -> rp.Txn:
    ids = _ids(txn, dba, leaf)
    return rp.Txn(rp.tx_head(ids), ids, _dirty(txn, dba), SESSION)


def _outcome(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except Exception as exc:  # the same error type on both paths
        return type(exc)


def _after(tx: rp.Txn) -> tuple[Any, ...]:
    ids = tx.ids
    return ids.rec, ids.undo_seq, ids.started, sorted(ids.blocks), ids.last_uba, tx.dirty


# ---------------------------------------------------------------------------- the tables


def _c_layouts() -> dict[str, tuple[int, str]]:
    src = SOURCE.read_text()
    return {
        f"{t}.{f}": (int(o), c)
        for t, f, o, c in re.findall(r"#define (\w+?)_AT_(\w+) (\d+), '(\w)'", src)
    }


def _c_constants() -> dict[str, int]:
    src = SOURCE.read_text()
    return {n: int(v, 0) for n, v in re.findall(r"#define (\w+) (0x[0-9A-Fa-f]+|\d+)u?\b", src)}


def test_the_c_layouts_are_the_tables() -> None:
    """Every field redopack.c writes is at the offset, and of the width, that the tables of
    engine/redo/vectors.py (and layout.py's vector header) give; every size is theirs."""
    layouts = {
        name: {f.name: (f.offset, f.fmt) for f in layout.fields}
        for name, layout in (("VECTOR_HEADER_12C", L.VECTOR_HEADER_12C),
                             ("BLOCK_HEADER", L.BLOCK_HEADER),
                             ("RECORD_HEADER", L.RECORD_HEADER), ("LWN_HEADER", L.LWN_HEADER))
    }  # fmt: skip
    got = _c_layouts()
    assert len(got) > 60
    for name, (off, code) in got.items():
        table, field = name.split(".")
        if table in layouts:
            assert layouts[table][field] == (off, code), name
        else:
            want = getattr(V, f"{table}_AT")[field]
            assert want == (off, code), name
    consts = _c_constants()
    assert consts["VECTOR_HEADER_12C_SIZE"] == L.VECTOR_HEADER_12C.size
    assert consts["BLOCK_HEADER_SIZE"] == L.BLOCK_HEADER.size
    assert consts["RECORD_HEADER_SIZE"] == L.RECORD_HEADER.size
    assert consts["LWN_HEADER_SIZE"] == L.LWN_HEADER.size
    assert consts["VLD_LWN"] == L.VLD_LWN
    for name in ("BLOCK_SIGNATURE", "BLOCK_TYPE_REDO", "FIRST_RECORD_FLAG"):
        assert consts[name] == getattr(L, name), name
    for name in ("KTUDH_SIZE", "KTUDB_SIZE", "KTUB_SIZE", "KTUCM_SIZE", "KTUCF_SIZE", "KTB_SIZE",
                 "CLEANOUT_SIZE", "CLEANOUT_ENTRY_SIZE", "KDO_ROW_NULLS", "KDO_URP_NULLS",
                 "KDO_SLOT_SIZE", "SUPP_SIZE", "SUPP_TYPE", "INDEX_SIZE", "KTB_CLEANOUT",
                 "KTUB_BEGIN"):  # fmt: skip
        assert consts[name] == getattr(V, name), name
    # the values the generic path writes, as the Python twin names them
    for name in ("ITL", "LB_REDO", "TSN", "BEGIN_FLG", "FLG", "COMMIT_STA", "COMMIT_FLG",
                 "KDO_FLAG", "FB", "OP_F", "OP_C", "OP_Z", "KDO_IRP", "KDO_DRP", "KDO_URP",
                 "INDEX_INSERT", "INDEX_DELETE", "INDEX_PURGE", "INDEX_RESTORE", "MAX_FIELD"):  # fmt: skip
        assert consts[name] == getattr(rp, name), name
    assert consts["KEYDATA"] == rp.KEYDATA.size
    assert consts["FB"] == fb_value("--H-FL--")
    assert consts["OBJ_UNDO"] == OBJ_UNDO and consts["ROLLBACK_FLAG"] == ROLLBACK_FLAG
    assert consts["UNDO_FILE"] == rg.UNDO_FILE and consts["KDO_SIZE_MAX"] == rg.KDO_SIZE_MAX


# ---------------------------------------------------------------------------- twin = generic

raw = st.one_of(st.none(), st.binary(min_size=1, max_size=80))
raw_rows = st.tuples(st.binary(min_size=1, max_size=70), raw, raw, raw, raw)
IDENTITY = (lambda v: v,) * 5  # the values given already as Oracle bytes


def _model(
    table: TableDef, op: str, ids: rg.TxnIds, dirty: Any, dba: int, slot: int,
    row: tuple[bytes | None, ...], set_cols: tuple[int, ...], new: tuple[bytes | None, ...],
) -> list[list[ChangeVector]]:  # fmt: skip
    """The records the generic path (engine/embedded/dml.py) writes for the change."""
    pre = [] if ids.started else [rg.slot_alloc(ids, SCN)]
    session = [] if ids.started else [rg.session_info(40, 7, "WL", "T1", 12345)]
    cols = rg.columns_of(row)
    size = rg.row_size(tuple(c.data for c in cols))
    if op == "insert":
        undo_kdo = rg.kdo("DRP", rg.UNDO_KTB, table, dba, slot=slot)
    elif op == "update":
        old = tuple(Column(i, row[i]) for i in set_cols)
        undo_kdo = rg.kdo("URP", rg.UNDO_KTB, table, dba, slot=slot, lock=0,
                          cc=len(table.columns), nnew=len(set_cols), columns=old)  # fmt: skip
    else:
        undo_kdo = rg.kdo("IRP", rg.UNDO_KTB, table, dba, slot=slot, size=size, lb=0,
                          cc=len(cols), columns=cols)  # fmt: skip
    undo_cv, uba = rg.row_undo(ids, table, SCN, undo_kdo, supp_columns(table, row))
    ids.started = True
    ktb, _ = rg.ktb_for(ids, dba, uba, dirty, SCN)
    if op == "insert":
        kdo = rg.kdo("IRP", ktb, table, dba, slot=slot, size=size, lb=2, cc=len(cols),
                     columns=cols)  # fmt: skip
        code = 2
    elif op == "update":
        cols_new = tuple(Column(i, v) for i, v in zip(set_cols, new, strict=True))
        kdo = rg.kdo("URP", ktb, table, dba, slot=slot, lock=1, cc=len(table.columns),
                     nnew=len(set_cols), columns=cols_new)  # fmt: skip
        code = 5
    else:
        kdo = rg.kdo("DRP", ktb, table, dba, slot=slot)
        code = 3
    cvs = [*pre, undo_cv, rg.row_redo(ids, table, SCN, dba, code, kdo), *session]
    records = [cvs]
    if op != "update" and table.indexes:
        index = table.indexes[0]
        key = rg.index_key((table.column_index(index.columns[0]),), row)
        keys = [(key, rg.keydata(dba, slot), slot)]
        records.append(rg.index_change(ids, table, index, SCN, op == "insert", keys))
    return records


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(sorted(TABLES)),
    op=st.sampled_from(["insert", "update", "delete"]),
    row=raw_rows,
    new=raw_rows,
    set_cols=st.lists(st.integers(1, 4), min_size=1, max_size=4, unique=True),
    txn=txns,
    where=st.tuples(st.integers(0x430, 0x3FFFFF), st.integers(0, 0xFFFF)),
)
def test_the_python_twin_writes_the_generic_paths_vectors(
    name: str,
    op: str,
    row: tuple[bytes | None, ...],
    new: tuple[bytes | None, ...],
    set_cols: list[int],
    txn: tuple[Any, ...],
    where: tuple[int, int],
) -> None:
    table = TABLES[name]
    block, slot = where
    dba = make_dba(4, block)
    leaf = make_dba(4, table.indexes[0].block) if table.indexes else 0
    cols = tuple(set_cols)
    new_vals = tuple(new[i] for i in cols)
    ids = _ids(txn, dba, leaf)
    model = _model(table, op, ids, _dirty(txn, dba), dba, slot, row, cols, new_vals)
    want = [b"".join(P.encode_vector(cv) for cv in rec) for rec in model]
    _, twin = _kernels(name, "TTTTT", IDENTITY)
    tx = _state(txn, dba, leaf)
    key = row[twin.shape.key_col]
    if op == "insert":
        got = twin.insert(tx, SCN, dba, slot, (7, *row))
    elif op == "update":
        got = twin.update(tx, SCN, dba, slot, cols, (7, key, *(row[i] for i in cols)), new_vals)
    else:
        got = twin.delete(tx, SCN, dba, slot, (7, *row))
    assert list(got) == want
    assert (ids.rec, ids.undo_seq, ids.started, ids.blocks) == (
        tx.ids.rec, tx.ids.undo_seq, tx.ids.started, tx.ids.blocks
    )  # fmt: skip
    for rec, cvs in zip(got, model, strict=True):  # the framing reader takes them whole
        vectors = F.parse_record(F.build_record("<", SCN, 1, [rec]), "<", "12c").vectors
        assert [(v.layer, v.code) for v in vectors] == [(cv.layer, cv.code) for cv in cvs]


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(sorted(TABLES)),
    rows=st.lists(raw_rows, min_size=1, max_size=40),
    txn=txns,
    block=st.integers(0x430, 0x3FFFFF),
)
def test_array_inserts_are_the_generic_ones(
    name: str, rows: list[tuple[bytes | None, ...]], txn: tuple[Any, ...], block: int
) -> None:
    """redopack.array_insert = dml's array insert record (5.1 QMD undo + 11.11 QMI)."""
    table = TABLES[name]
    dba = make_dba(4, block)
    slotted = [(i * 3 % 700, row) for i, row in enumerate(rows)]
    ids = _ids(txn, dba, 0)
    dirty = _dirty(txn, dba)
    pre = [] if ids.started else [rg.slot_alloc(ids, SCN)]
    session = [] if ids.started else [rg.session_info(40, 7, "WL", "T1", 12345)]
    slots = tuple(slot for slot, _ in slotted)
    undo_cv, uba = rg.row_undo(
        ids, table, SCN, rg.kdo("QMD", rg.UNDO_KTB, table, dba, slots=slots), ()
    )
    ids.started = True
    ktb, _ = rg.ktb_for(ids, dba, uba, dirty, SCN)
    qmi = rg.kdo("QMI", ktb, table, dba, lock=1, rows=rg.rows_image(slotted))
    cvs = [*pre, undo_cv, rg.row_redo(ids, table, SCN, dba, 11, qmi), *session]
    tx = _state(txn, dba, 0)
    body = rp.row_pieces([row for _, row in slotted])
    got, got_uba = rp.array_insert(rp.shape_of(table), tx, SCN, dba, list(slots), body)
    if _C is not None:
        assert _C.row_pieces([row for _, row in slotted]) == body
    assert got == b"".join(P.encode_vector(cv) for cv in cvs)
    assert got_uba == (uba.dba, uba.seq, uba.rec)
    assert (tx.ids.rec, tx.ids.blocks, tx.dirty) == (ids.rec, ids.blocks, dirty)


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(sorted(TABLES)),
    row=raw_rows,
    usn=st.integers(1, 10),
    block=st.integers(0x430, 0x3FFFFF),
    rec=st.integers(1, 255),
)
def test_compensation_records_are_the_generic_ones(
    name: str, row: tuple[bytes | None, ...], usn: int, block: int, rec: int
) -> None:
    """redopack.undone = undo.compensate's change vectors (the generic rollback's)."""
    table = TABLES[name]
    shape = rp.shape_of(table)
    ids = rg.TxnIds(Xid(usn, 3, 0x357), undo_seq=0x1234, started=True)
    x = rp.tx_head(ids)
    dba, slot = make_dba(4, block), block % 300
    uba = (ids.undo_dba, 0x1234, rec)
    applied = UndoApplied(ids.xid, Uba(*uba), table.obj, table.dataobj)
    marker = ChangeVector(5, 6, applied, cls=x.cls + 1, afn=3,
                          dba=uba[0], scn=SCN)  # fmt: skip
    ktb = Ktb(op=0x02, kind="C", uba=Uba(*uba))
    key = row[shape.key_col]
    cols = rg.columns_of(row)
    size = rg.row_size(tuple(c.data for c in cols))

    def cv(code: int, kdo: Any) -> ChangeVector:
        return ChangeVector(11, code, kdo, afn=4, dba=dba, obj=table.dataobj, scn=SCN)

    drp = cv(3, rg.kdo("DRP", ktb, table, dba, slot=slot))
    irp = cv(2, rg.kdo("IRP", ktb, table, dba, slot=slot, size=size, lb=0, cc=len(cols),
                       columns=cols))  # fmt: skip
    old = tuple(Column(i, row[i]) for i in (2, 4))
    urp = cv(5, rg.kdo("URP", ktb, table, dba, slot=slot, cc=5, nnew=2, columns=old))

    def leaf(insert: bool) -> list[ChangeVector]:
        if not table.indexes:
            return []
        ikey = rp.index_key(key)
        kd = rg.keydata(dba, slot)
        body = IndexOp(action="insert leaf row" if insert else "delete leaf row", ktb=ktb,
                       itl=2, sno=slot, row_size=len(ikey) + len(kd) + 4,
                       keys=ikey if insert else b"", keydata=kd if insert else b"")  # fmt: skip
        index = table.indexes[0]
        return [ChangeVector(10, 2 if insert else 4, body, afn=4,
                             dba=make_dba(4, index.block), obj=index.dataobj, scn=SCN)]  # fmt: skip

    def enc(cvs: list[ChangeVector]) -> bytes:
        return b"".join(P.encode_vector(cv) for cv in cvs)

    got = rp.undone(shape, x, SCN, uba, dba, slot, "ins", (), key)
    assert got == enc([marker, drp, *leaf(False)])
    got = rp.undone(shape, x, SCN, uba, dba, slot, "del", row, key)
    assert got == enc([marker, irp, *leaf(True)])
    got = rp.undone(shape, x, SCN, uba, dba, slot, "upd", (row[2], row[4]), None, (2, 4))
    assert got == enc([marker, urp])
    if _C is not None:  # the compiled kernel's
        native, _ = _kernels(name)
        calls = [
            ("ins", (), key, ()),
            ("del", row, key, ()),
            ("upd", (row[2], row[4]), None, (2, 4)),
        ]
        for kind, values, k, nos in calls:
            want = rp.undone(shape, x, SCN, uba, dba, slot, kind, values, k, nos)
            assert native.undone(x, SCN, uba, dba, slot, kind, values, k, nos) == want


@needs_c
@settings(max_examples=200, deadline=None)
@given(
    records=st.lists(
        st.tuples(st.binary(max_size=600), st.integers(1, 2**48 - 1), st.integers(0, 0xFFFF),
                  st.integers(0, 0xFF)),
        min_size=1, max_size=6,
    ),
    order=st.sampled_from(["<", ">"]),
)  # fmt: skip
def test_the_c_gather_is_the_online_logs(
    records: list[tuple[bytes, int, int, int]], order: L.Order
) -> None:
    """Records gathered into an LWN's stream by the C kernel and by OnlineLog.gather's
    Python: the same bytes and record offsets."""
    got = []
    for native in (_C, None):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(O, "_NATIVE", native)
            got.append(_gathered(records, order))
    assert got[0] == got[1]


def _gathered(records: list[tuple[bytes, int, int, int]], order: L.Order) -> tuple[Any, ...]:
    log = O.OnlineLog.__new__(O.OnlineLog)  # its record stream only: no file
    log.header = O.new_header(thread=1, sequence=7, first_scn=1, first_time=0, dbid=1,
                              db_name="X", resetlogs_id=1, resetlogs_scn=0, order=order)  # fmt: skip
    log._stream, log._starts = bytearray(), []
    for vectors, scn, subscn, vld in records:
        log.gather(scn, subscn, vectors, 9, vld)
    return bytes(log._stream), log._starts, log.pending_scn, log._lwn_scn


def test_the_online_log_gathers_headers_in_the_layouts_field_order() -> None:
    """OnlineLog.gather packs the record and LWN headers by position (Layout.pack_values)."""
    assert L.RECORD_HEADER.names == ("size", "vld", "scn_wrap", "scn", "subscn")
    assert L.LWN_HEADER.names[:5] == L.RECORD_HEADER.names
    assert L.LWN_HEADER.names[5:] == (
        "lwn_num", "lwn_nst", "lwn_len", "lwn_scn", "lwn_scn_wrap", "time"
    )  # fmt: skip
    for hl in (L.RECORD_HEADER, L.LWN_HEADER):
        values = list(range(1, len(hl.names) + 1))
        for order in ("<", ">"):
            want = hl.pack(order, dict(zip(hl.names, values, strict=True)))
            assert hl.pack_values(order, *values) == want


@settings(max_examples=100, deadline=None)
@given(
    usn=st.integers(1, 10),
    slot=st.integers(0, 47),
    scn=st.integers(1, 2**48 - 1),
    uba=st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 0xFFFF), st.integers(0, 0xFF)),
    rollback=st.booleans(),
)
def test_the_commit_is_the_generic_one_and_the_c_one(
    usn: int, slot: int, scn: int, uba: tuple[int, int, int], rollback: bool
) -> None:
    ids = rg.TxnIds(Xid(usn, slot, 0x1234), undo_seq=uba[1], rec=uba[2], started=True)
    ids.last_uba = Uba(*uba)
    want = P.encode_vector(rg.commit_cv(ids, scn, rollback))
    assert rp.commit(rp.tx_head(ids), scn, uba, rollback) == want
    if _C is not None:
        assert _C.commit(rp.tx_head(ids), scn, uba, rollback) == want


# ---------------------------------------------------------------------------- C = twin


@needs_c
@settings(max_examples=400, deadline=None)
@given(
    name=st.sampled_from(sorted(TABLES)),
    op=st.sampled_from(["insert", "update", "delete"]),
    values=row_values,
    new=row_values,
    set_cols=st.lists(st.integers(0, 4), min_size=1, max_size=5, unique=True),
    txn=txns,
    where=places,
)
def test_the_c_row_change_is_the_python_one(
    name: str,
    op: str,
    values: tuple[Any, ...],
    new: tuple[Any, ...],
    set_cols: list[int],
    txn: tuple[Any, ...],
    where: tuple[int, int, int],
) -> None:
    scn, block, slot = where
    dba = make_dba(4, block)
    native, python = _kernels(name)
    key_col = python.shape.key_col
    cols = tuple(set_cols)
    results = []
    for kernel in (native, python):
        tx = _state(txn, dba, make_dba(4, 0x441))
        head = (tx, scn, dba, slot)
        if op == "insert":
            got = _outcome(kernel.insert, *head, (7, *values))
        elif op == "update":
            row = (7, values[key_col], *(values[i] for i in cols))
            got = _outcome(kernel.update, *head, cols, row, tuple(new[i] for i in cols))
        else:
            got = _outcome(kernel.delete, *head, (7, *values))
        results.append((got, None if isinstance(got, type) else _after(tx)))
    assert results[0] == results[1]


@needs_c
def test_a_value_longer_than_a_field_is_refused_before_anything_changes() -> None:
    native, python = _kernels("number key")
    for kernel in (native, python):
        tx = _state((3, 5, 0, 0x10, False, False, False, [(1, 2, 3)]), make_dba(4, 9), 0)
        before = _after(tx)
        with pytest.raises(ValueError):
            kernel.insert(tx, SCN, make_dba(4, 9), 3, (7, 1, "x" * 70_000, None, None, None))
        assert _after(tx) == before


@needs_c
@settings(max_examples=300, deadline=None)
@given(
    sizes=st.lists(st.integers(24, 3000), min_size=1, max_size=8),
    block_size=st.sampled_from(L.BLOCK_SIZES),
    order=st.sampled_from(["<", ">"]),
    first=st.integers(2, 2**32 - 100),
    sequence=st.integers(0, 2**32 - 1),
    fill=st.binary(min_size=1, max_size=64),
)
def test_the_c_block_cutter_is_onlinelogs(
    sizes: list[int], block_size: int, order: L.Order, first: int, sequence: int, fill: bytes
) -> None:
    """An LWN's record stream cut into sealed blocks (onlinelog.cut, the online-log
    writer's) by the C kernel: the same bytes, blocks a reader checks and takes back."""
    stream = (fill * (sum(sizes) // len(fill) + 1))[: sum(sizes)]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    want = O.cut(stream, starts, first, sequence, block_size, order)
    assert _C.cut(bytearray(stream), starts, first, sequence, block_size, order == ">") == want
    for k in range(len(want) // block_size):
        assert F.checksum_fold(want[k * block_size : (k + 1) * block_size], order) == 0


#: a value of 60,000..66,000 bytes, drawn by its size (hypothesis's own large binaries take
#: seconds each: only the sizes matter to where the pieces are cut)
_LARGE = st.builds(lambda n, b: bytes([b]) * n, st.integers(60_000, 66_000), st.integers(0, 255))


@needs_c
@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.one_of(st.none(), st.binary(max_size=300), _LARGE), max_size=6),
        max_size=5,
    )
)
def test_the_c_row_pieces_are_the_python_ones(rows: list[list[bytes | None]]) -> None:
    assert _outcome(_C.row_pieces, rows) == _outcome(rp.row_pieces, rows)


@needs_c
@settings(max_examples=500, deadline=None)
@given(data=st.data())
def test_the_c_value_encodings_are_the_python_ones(data: st.DataObject) -> None:
    native, python = _kernels("number key")
    kinds, _ = rp.codecs_of(TABLES["number key"])
    values: list[object] = [None] * len(kinds)
    col = data.draw(st.integers(0, len(kinds) - 1))
    values[col] = data.draw(BY_KIND[kinds[col]])
    assert _outcome(native.encode, values) == _outcome(python.encode, values)


@needs_c
@pytest.mark.parametrize(
    "value",
    [0, -0.0, 0.0, 1, -1, 99, 100, -100, 10**38, -(10**38), 10**40, 2**63, -(2**63), 2**64,
     0.01, -0.01, 0.1, 0.5, 1.5, 123.45, -123.45, 1e-4, 1.5e-4, 1e-5, 1e15, 1e16, 1e22,
     123456789012.34, 0.30000000000000004, 1 / 3, 2.5e-300, float("inf"), float("nan")],
)  # fmt: skip
def test_boundary_numbers(value: object) -> None:
    native, python = _kernels("number key")
    row = (value, None, None, None, None)
    assert _outcome(native.encode, row) == _outcome(python.encode, row)


def test_the_c_kernel_is_built_wherever_there_is_a_compiler() -> None:
    if native_enabled() and (shutil.which("cc") or shutil.which("gcc")):
        assert _C is not None, "engine/_native/redopack.c did not build: see `pip install -e .`"


@pytest.mark.parametrize("scenario", ["rollbacks", "switches", "array"])
def test_the_python_twin_gives_the_golden_redo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario: str
) -> None:
    """The golden hashes with the pure-Python kernel, whichever one the build gives."""
    monkeypatch.setattr(bulk, "TABLE_KERNEL", rp.Table)
    monkeypatch.setattr(bulk, "COMMIT", rp.commit)
    monkeypatch.setattr(bulk, "ROW_PIECES", rp.row_pieces)
    want = json.loads(GOLDEN.read_text())[scenario]
    assert _fingerprint(tmp_path, SCENARIOS[scenario]) == want


@needs_c
@pytest.mark.parametrize(
    "value",
    ["2024-02-29 23:59:59", "2023-02-29 00:00:00", "2000-02-29 12:00:00", "1900-02-29 12:00:00",
     "0001-01-01 00:00:00", "0000-01-01 00:00:00", "9999-12-31 23:59:59", "2024-13-01 00:00:00",
     "2024-04-31 00:00:00", "2024-01-01 24:00:00", "2024-01-01 23:60:00", "2024-01-01 23:59:60",
     "2024-01-01T10:00:00", "2024-01-01 10:00:00.5", " 2024-01-01 10:00:00", "２０２４-01-01 10:00:00"],
)  # fmt: skip
def test_boundary_dates(value: str) -> None:
    native, python = _kernels("number key")
    row = (1, None, None, value, None)
    assert _outcome(native.encode, row) == _outcome(python.encode, row)
