"""The lakehouse Replicat's columnar path: the trailcols kernel against its Python twin
(property tests over valid, sealed, damaged and cut trails), and the columnar path against
the record-by-record one (GGSCI_LAKE_COLUMNAR=0) on the same trails, table by table, with
the operations it hands over (key updates, truncates, a MAP with an expression) in them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lakehelp import drain, lake_home, lake_run, read_delta, read_iceberg
from replicat_helpers import dele, ins, txn_records, upd, write_trail

from engine.replicat.lakeread import scan, scan_py
from engine.targets.lake.columns import DELETE, INSERT, UPDATE, Change, reduce_change
from engine.targets.lake.reduce import Reduced
from engine.trail.codec import encode_record
from engine.trail.layout import IOType, TransInd
from engine.trail.model import TableDef, TrailRecord
from engine.trail.writer import seal
from tests.harness.kernels import kernel_or_none, needs

KIT = kernel_or_none("trailcols")

# -- the kernel and its twin ----------------------------------------------------------------
_value = st.one_of(st.none(), st.text(max_size=12))
_big = st.one_of(_value, st.just("x" * 70_000))  # a row too large for one record: Continued
_ascii = st.text(alphabet=st.characters(max_codepoint=127), max_size=6)
_IO = (IOType.INSERT, IOType.UPDATE, IOType.FIELDCOMP, IOType.DELETE, IOType.KEYFIELDCOMP,
       IOType.PURGEDATA, IOType.METADATA)  # fmt: skip


@st.composite
def _record(draw: Any) -> TrailRecord:
    io = draw(st.sampled_from(_IO))
    idx = sorted(draw(st.sets(st.integers(0, 9), max_size=5)))
    cols = tuple((i, draw(_big if i == 9 else _value)) for i in idx)
    before = tuple((i, draw(_value)) for i in idx[:1]) if io == IOType.KEYFIELDCOMP else ()
    return TrailRecord(
        io_type=io,
        table=draw(st.sampled_from(["HR.EMP", "HR.DEPT", "S.Ä"])),
        columns=cols,
        before_columns=before,
        trans_ind=draw(st.sampled_from(list(TransInd))),
        before_after=draw(st.sampled_from("AB")),
        io_time_us=draw(st.integers(0, 2**62)),
        logcsn=draw(st.one_of(st.none(), _ascii)),
        tranid=draw(st.one_of(st.none(), _ascii)),
        rowid=draw(st.one_of(st.none(), st.just("AAASrPAAEAAAAQ2AAK"))),
        continued=draw(st.booleans()),
    )


@needs("trailcols")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=st.lists(_record(), max_size=12),
    sealed=st.booleans(),
    damage=st.one_of(st.none(), st.tuples(st.integers(0, 10**6), st.integers(0, 255))),
    cut=st.integers(0, 40),
    max_records=st.integers(0, 20),
    max_columns=st.integers(0, 12),
)
def test_the_kernel_reads_as_its_twin(
    records: list[TrailRecord],
    sealed: bool,
    damage: tuple[int, int] | None,
    cut: int,
    max_records: int,
    max_columns: int,
) -> None:
    buf = bytearray(b"".join(encode_record(r) for r in records))
    if sealed:
        buf = bytearray(seal(bytes(buf)))
    if damage is not None and buf:
        buf[damage[0] % len(buf)] = damage[1]
    data = bytes(buf[: max(len(buf) - cut, 0)])
    assert KIT is not None
    offset = 0
    for _ in range(3):  # from the start, then from where each scan stopped (skipping it)
        got = KIT.scan(data, offset, len(data), sealed, max_records, max_columns)
        want = scan_py(data, offset, len(data), sealed, max_records, max_columns)
        assert got == want
        stop = got[1]
        if got[2] != 2 or stop + 4 > len(data):
            break
        offset = stop + max(int.from_bytes(data[stop + 2 : stop + 4], "big"), 1)
        if offset > len(data):
            break


def test_a_scan_gives_arrow_columns_and_stops_at_what_is_not_a_plain_change() -> None:
    recs = [
        *txn_records(7, [ins(1), upd(1, 5), dele(1)]),
        TrailRecord(io_type=IOType.KEYFIELDCOMP, table="HR.EMP", columns=((0, "9"),),
                    before_columns=((0, "1"),)),
    ]  # fmt: skip
    data = b"".join(encode_record(r) for r in recs)
    s = scan(data, 0, len(data), False, 100)
    n, stop, reason = s[0], s[1], s[2]
    assert (n, reason, s[9]) == (3, 2, ["HR.EMP"])
    assert stop == len(data) - len(encode_record(recs[3]))
    assert list(np.frombuffer(s[6], np.uint8)) == [IOType.INSERT, IOType.FIELDCOMP, IOType.DELETE]
    assert s[10] == [(0, "7", "1.7.7")]
    from engine.replicat.lakeread import Chunk

    chunk = Chunk.of(0, 100, s, {})
    assert chunk.columns[0][0].to_pylist() == ["1", "1", "1"]
    assert chunk.columns[1][0].to_pylist() == ["n1", None, None]
    assert list(chunk.columns[2][1]) == [True, True, False]  # a delete carries its key only
    assert list(chunk.rba) == [100 + int(r) for r in np.frombuffer(s[3], np.int64)]


# -- the reduction in Arrow against the record-by-record one ----------------------------------
_op = st.tuples(st.sampled_from([INSERT, UPDATE, DELETE]), st.integers(0, 4),
                st.one_of(st.none(), st.integers(0, 9)), st.booleans())  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(ops=st.lists(_op, max_size=25))
def test_the_arrow_reduction_leaves_what_the_record_one_leaves(
    ops: list[tuple[int, int, int | None, bool]],
) -> None:
    import pyarrow as pa

    red = Reduced()
    kinds, keys, vals, carried = [], [], [], []
    for kind, key, val, has in ops:
        k = (str(key),)
        row: dict[str, Any] = {"ID": str(key)}
        if kind != DELETE and has:
            row["V"] = None if val is None else str(val)
        if kind == INSERT:
            red.insert(k, row)
        elif kind == UPDATE:
            red.update(k, row)
        else:
            red.delete(k)
        kinds.append(kind)
        keys.append(str(key))
        vals.append(row.get("V"))
        carried.append("V" in row)
    change = Change(
        np.array(kinds, np.uint8),
        {"ID": (pa.array(keys, pa.string()), np.ones(len(ops), bool)),
         "V": (pa.array(vals, pa.string()), np.array(carried, bool))},
        ("ID",),
    )  # fmt: skip
    got = reduce_change(change, "T")
    deleted = {r["ID"] for r in got.deletes.to_pylist()}
    assert deleted == {k[0] for k, s in red.states.items() if s.row is None}
    rows = got.upserts.to_pylist()
    want = {k[0]: s for k, s in red.states.items() if s.row is not None}
    assert {r["ID"] for r in rows} == set(want)
    for i, r in enumerate(rows):
        s = want[r["ID"]]
        assert s.row is not None
        assert bool(got.partial[i]) == (not s.full)
        if s.full or "V" in s.row:
            assert r["V"] == s.row.get("V")
        assert bool(got.known["V"][i]) == ("V" in s.row)


# -- the columnar path against the record-by-record one -----------------------------------
MAPS = "MAP hr.emp, TARGET hr.emp, KEYCOLS (ID);\nMAP hr.emp, TARGET hr.emp_hist, INSERTALLRECORDS;"


def _run(tmp: Path, kind: str, txns: list[list[TrailRecord]], ops: int, columnar: bool,
         maps: str = MAPS) -> tuple[dict[str, list[dict[str, Any]]], Any]:  # fmt: skip
    home = lake_home(tmp)
    write_trail(home.root / "dirrmt" / "bb", txns)
    old = os.environ.get("GGSCI_LAKE_COLUMNAR")
    os.environ["GGSCI_LAKE_COLUMNAR"] = "1" if columnar else "0"
    try:
        r, _ = lake_run(home, kind, maps, ops=ops)
        drain(r)
    finally:
        if old is None:
            del os.environ["GGSCI_LAKE_COLUMNAR"]
        else:
            os.environ["GGSCI_LAKE_COLUMNAR"] = old
    out = {}
    for t in ("emp", "emp_hist"):
        if kind == "deltalake":
            path = home.root / "lake" / "hr" / t
            out[t] = read_delta(path) if path.exists() else []
        else:
            try:
                out[t] = read_iceberg(home, f"hr.{t}")
            except Exception:  # no such table
                out[t] = []
    return out, r


def _both(tmp: Path, kind: str, txns: list[list[TrailRecord]], ops: int, maps: str) -> Any:
    """Both paths on the same trail: their tables (equal, or the test fails) and the
    columnar run."""
    fast, r = _run(tmp / "fast", kind, txns, ops, True, maps)
    slow, _ = _run(tmp / "slow", kind, txns, ops, False, maps)
    assert _canon(fast["emp"]) == _canon(slow["emp"])
    assert _canon(fast["emp_hist"]) == _canon(slow["emp_hist"])
    return fast, slow, r


def _key_update(old: int, new: int) -> Any:
    return (IOType.KEYFIELDCOMP, "HR.EMP", ((0, str(new)), (2, "77")), ((0, str(old)),))


_step = st.tuples(st.sampled_from("iuudkt"), st.integers(0, 6), st.integers(0, 6))


@st.composite
def _workload(draw: Any) -> list[list[TrailRecord]]:
    txns = []
    for csn in range(100, 100 + draw(st.integers(1, 8))):
        ops: list[Any] = []
        for what, a, b in draw(st.lists(_step, min_size=1, max_size=5)):
            if what == "i":
                ops.append(ins(a, sal=b))
            elif what == "u":
                ops.append(upd(a, b))
            elif what == "d":
                ops.append(dele(a))
            elif what == "k" and draw(st.booleans()):
                ops.append(_key_update(a, b))
            elif what == "t" and draw(st.integers(0, 5)) == 0:
                ops.append((IOType.PURGEDATA, "HR.EMP", ()))
            else:
                ops.append(ins(a + 10, sal=b))
        txns.append(txn_records(csn, ops))
    return txns


def _canon(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (str(r.get("POSITION")), str(r.get("ID"))))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(txns=_workload(), ops=st.integers(1, 12), kind=st.sampled_from(["deltalake", "iceberg"]))
def test_the_columnar_path_leaves_the_tables_the_record_path_leaves(
    tmp_path_factory: pytest.TempPathFactory, txns: list[list[TrailRecord]], ops: int, kind: str
) -> None:
    tmp = tmp_path_factory.mktemp("cols")
    _, _, r = _both(tmp, kind, txns, ops, MAPS)
    assert r.fast is not None


@pytest.mark.parametrize("kind", ["deltalake", "iceberg"])
def test_both_paths_in_one_run_hand_over_and_back(tmp_path: Path, kind: str) -> None:
    """A key update and a truncate go to the record path, the rest to columns; a compressed
    update of a row of an earlier batch takes the other columns from the table."""
    txns = [
        txn_records(100, [ins(1), ins(2), ins(3)]),
        txn_records(101, [upd(1, 50), dele(2)]),
        txn_records(102, [_key_update(3, 30), ins(4)]),
        txn_records(103, [upd(30, 9), ins(5), upd(4, 8)]),
        txn_records(104, [(IOType.PURGEDATA, "HR.EMP", ()), ins(6)]),
        txn_records(105, [ins(7), upd(6, 1)]),
        txn_records(106, [upd(7, 2)]),
    ]
    fast, _, r = _both(tmp_path, kind, txns, 2, MAPS)
    assert _canon(fast["emp"]) == [
        {"ID": "6", "NAME": "n6", "SAL": "1"},
        {"ID": "7", "NAME": "n7", "SAL": "2"},
    ]
    assert len(fast["emp_hist"]) == 14  # every operation but the truncate
    assert r.fast.handovers == 2 and r.fast.operations > 0
    assert any("columnar path" in line for line in r.status_lines())


def test_a_map_with_an_expression_goes_record_by_record(tmp_path: Path) -> None:
    maps = (
        "MAP hr.emp, TARGET hr.emp, KEYCOLS (ID), COLMAP (USEDEFAULTS, NAME = @STRCAT (NAME, 'x'));"
    )
    txns = [txn_records(100, [ins(1), ins(2)]), txn_records(101, [upd(1, 5)])]
    fast, r = _run(tmp_path / "fast", "deltalake", txns, 10, True, maps)
    assert _canon(fast["emp"]) == [
        {"ID": "1", "NAME": "n1x", "SAL": "5"},
        {"ID": "2", "NAME": "n2x", "SAL": "1"},
    ]
    assert r.fast.operations == 0 and r.fast.handovers >= 1


def test_a_new_table_definition_between_batches_maps_by_it(tmp_path: Path) -> None:
    home = lake_home(tmp_path / "home")
    trail = home.root / "dirrmt" / "bb"
    write_trail(trail, [txn_records(100, [ins(1)])])
    wider = TableDef("HR.EMP", ("ID", "NAME", "SAL", "DEPT"))
    add = (IOType.INSERT, "HR.EMP", ((0, "2"), (1, "b"), (2, "3"), (3, "sales")))
    write_trail(trail, [txn_records(101, [add, upd(1, 9)])], tables=(wider,))
    r, _ = lake_run(home, "deltalake", "MAP hr.emp, TARGET hr.emp, KEYCOLS (ID);")
    drain(r)
    assert read_delta(home.root / "lake" / "hr" / "emp") == [
        {"ID": "1", "NAME": "n1", "SAL": "9", "DEPT": None},
        {"ID": "2", "NAME": "b", "SAL": "3", "DEPT": "sales"},
    ]
    assert r.fast is not None and r.fast.operations == 3 and r.fast.handovers == 0


@pytest.mark.parametrize("kind", ["deltalake", "iceberg"])
def test_a_key_of_two_columns(tmp_path: Path, kind: str) -> None:
    def up(i: int, sal: int) -> Any:
        return (IOType.FIELDCOMP, "HR.EMP", ((0, str(i)), (1, f"n{i}"), (2, str(sal))))

    def de(i: int) -> Any:
        return (IOType.DELETE, "HR.EMP", ((0, str(i)), (1, f"n{i}")))

    txns = [
        txn_records(100, [ins(1), ins(2), ins(3), ins(4)]),
        txn_records(101, [up(1, 5), de(2)]),
        txn_records(102, [up(3, 6), de(4), ins(4, sal=9)]),
    ]
    maps = "MAP hr.emp, TARGET hr.emp, KEYCOLS (ID, NAME);"
    fast, _, r = _both(tmp_path, kind, txns, 3, maps)
    assert _canon(fast["emp"]) == [
        {"ID": "1", "NAME": "n1", "SAL": "5"},
        {"ID": "3", "NAME": "n3", "SAL": "6"},
        {"ID": "4", "NAME": "n4", "SAL": "9"},
    ]
    assert r.fast.operations == 9 and r.fast.handovers == 0


def _many_files(path: Path, txns: list[list[TrailRecord]]) -> list[Path]:
    from replicat_helpers import EMP

    from engine.trail.writer import TrailWriter

    writer = TrailWriter.open(path, durable=False, max_bytes=3000)
    writer.define_table(EMP)
    for records in txns:
        writer.append_many(encode_record(r) for r in records)
    writer.close()
    return sorted(path.parent.glob(path.name + "[0-9]*"))


def _txns(count: int) -> list[list[TrailRecord]]:
    return [
        txn_records(100 + t, [ins(t), upd(t, t + 1), ins(t + 1000), dele(t + 1000)])
        for t in range(count)
    ]


@pytest.mark.parametrize("columnar", [True, False])
def test_many_trail_files_and_an_unfinished_transaction(tmp_path: Path, columnar: bool) -> None:
    """Files rolled over (their headers and TDRs read), the records of a transaction not
    yet ended left for later: the same tables, the same position."""
    home = lake_home(tmp_path / "home")
    trail = home.root / "dirrmt" / "bb"
    files = _many_files(trail, _txns(40))
    assert len(files) > 3
    with open(files[-1], "ab") as f:  # an unfinished transaction at the end
        f.write(
            seal(b"".join(encode_record(r) for r in txn_records(999, [ins(5000), ins(5001)])[:1]))
        )
    os.environ["GGSCI_LAKE_COLUMNAR"] = "1" if columnar else "0"
    try:
        r, _ = lake_run(home, "deltalake", MAPS, ops=7)
        drain(r)
    finally:
        del os.environ["GGSCI_LAKE_COLUMNAR"]
    rows = read_delta(home.root / "lake" / "hr" / "emp")
    assert [row["ID"] for row in rows] == sorted(str(t) for t in range(40))
    assert len(read_delta(home.root / "lake" / "hr" / "emp_hist")) == 160
    end = files[-1].stat().st_size - len(
        seal(encode_record(txn_records(999, [ins(5000), ins(5001)])[0]))
    )
    assert (r.progress.position.seqno, r.progress.position.rba) == (len(files) - 1, end)
    if columnar:
        assert r.fast is not None and r.fast.operations == 160 and r.fast.handovers == 0


@pytest.mark.parametrize("columnar", [True, False])
def test_a_damaged_record_abends_after_the_transactions_before_it(
    tmp_path: Path, columnar: bool
) -> None:
    from engine.replicat import ReplicatError

    home = lake_home(tmp_path / "home")
    trail = home.root / "dirrmt" / "bb"
    write_trail(trail, _txns(6))
    path = sorted(trail.parent.glob("bb[0-9]*"))[0]
    data = bytearray(path.read_bytes())
    at = data.rindex(b"n4")  # a value of the 5th transaction's insert
    data[at] ^= 0x20
    path.write_bytes(bytes(data))
    os.environ["GGSCI_LAKE_COLUMNAR"] = "1" if columnar else "0"
    try:
        r, _ = lake_run(home, "deltalake", MAPS, ops=1000)
        with pytest.raises(ReplicatError) as err:
            drain(r)
    finally:
        del os.environ["GGSCI_LAKE_COLUMNAR"]
    assert err.value.code == "OGG-01184" and "Checksum mismatch" in err.value.text
    rows = read_delta(home.root / "lake" / "hr" / "emp")
    assert [row["ID"] for row in rows] == ["0", "1", "2", "3"]
    if columnar:
        assert r.fast is not None and r.fast.operations == 16 and r.fast.handovers == 0


@pytest.mark.parametrize("kind", ["deltalake", "iceberg"])
def test_a_row_too_large_for_one_record_goes_record_by_record(tmp_path: Path, kind: str) -> None:
    """A Continued row (its base record and RecordFragments) is read by the record path,
    the transactions around it by columns."""
    big = (IOType.INSERT, "HR.EMP", ((0, "9"), (1, "y" * 70_000), (2, "1")))
    txns = [
        txn_records(100, [ins(1), ins(2)]),
        txn_records(101, [big, upd(1, 5)]),
        txn_records(102, [upd(9, 3), dele(2)]),
    ]
    fast, _, r = _both(tmp_path, kind, txns, 2, MAPS)
    assert _canon(fast["emp"]) == [
        {"ID": "1", "NAME": "n1", "SAL": "5"},
        {"ID": "9", "NAME": "y" * 70_000, "SAL": "3"},
    ]
    assert r.fast.handovers == 1 and r.fast.operations == 4
