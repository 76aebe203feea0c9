"""Property tests of the transaction cache (seed 000/002 rules).

Whatever the interleaving of transactions, rollbacks to savepoint and outcomes, and however
small the memory budget (forcing page-outs to disk), the committed transactions come out
whole, in commit order, with exactly their surviving rows; rolled-back ones never do.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.changes import Kind, Lcr, Position
from engine.extract.cache import SPILL_MAGIC, TransactionCache
from engine.extract.lcrcodec import encode_lcrs
from engine.extract.tasks.assemble import to_records
from engine.home.datafile import seal
from engine.trail.layout import IOType, TransInd

ops = st.lists(
    st.tuples(
        st.sampled_from(["row", "row", "row", "undo", "end"]),
        st.integers(0, 5),  # which transaction
        st.booleans(),  # commit (True) or rollback (False), for "end"
    ),
    max_size=120,
)


def lcr(kind: Kind, xid: str, n: int, **kw: object) -> Lcr:
    return Lcr(kind, xid, Position(1, 1, n * 100), n * 100 + 50, scn=1000 + n, time_us=n, **kw)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(ops, st.sampled_from([0, 600, 10_000, 1 << 30]))
def test_committed_transactions_whole_in_commit_order(
    tmp_path_factory: object, script: list[tuple[str, int, bool]], budget: int
) -> None:
    tmp = tmp_path_factory.mktemp("spill")  # type: ignore[attr-defined]
    cache = TransactionCache(Path(tmp), budget=budget)
    generation = [0] * 6
    model: dict[str, list[str]] = {}
    expected: list[tuple[str, list[str]]] = []
    got: list[tuple[str, list[str]]] = []
    for n, (op, t, commit) in enumerate(script):
        xid = f"1.{t}.{generation[t]}"
        if op == "row":
            ref = f"{xid}#{n}"
            cache.add(
                lcr(
                    Kind.ROW,
                    xid,
                    n,
                    io_type=IOType.INSERT,
                    table="A.B",
                    columns=((0, ref),),
                    ref=ref,
                )
            )
            model.setdefault(xid, []).append(ref)
        elif op == "undo" and model.get(xid):
            ref = model[xid].pop()  # rollback to the savepoint before the last change
            cache.undo(lcr(Kind.UNDO, xid, n, ref=ref))
        elif op == "end" and xid in model:
            if commit:
                out = cache.commit(xid)
                assert out is not None
                _, rows = out
                got.append((xid, [r.ref for r in rows]))
                expected.append((xid, model.pop(xid)))
            else:
                assert cache.rollback(xid) is not None
                model.pop(xid)
            generation[t] += 1
    assert got == expected
    assert set(cache.txns) == set(model)
    if budget == 0 and any(model.values()):
        assert cache.spills > 0


def test_every_transaction_is_cached_even_without_captured_rows(tmp_path: Path) -> None:
    cache = TransactionCache(tmp_path)
    cache.begin(lcr(Kind.BEGIN, "5.1.1", 1))
    cache.add(lcr(Kind.ROW, "5.2.1", 2, io_type=IOType.INSERT, table="A.B", ref="r"))
    oldest = cache.oldest()
    assert oldest is not None and oldest.xid == "5.1.1"
    out = cache.commit("5.1.1")
    assert out is not None and out[1] == []


def test_large_transaction_spills_to_disk_and_commits_whole(tmp_path: Path) -> None:
    cache = TransactionCache(tmp_path, budget=50_000)
    for i in range(5_000):
        cache.add(
            lcr(
                Kind.ROW,
                "7.7.7",
                i,
                io_type=IOType.INSERT,
                table="A.B",
                columns=((0, "x" * 20),),
                ref=str(i),
            )
        )
    assert cache.spills > 0 and cache.weight <= 50_000
    assert list(tmp_path.glob("*.spill"))
    out = cache.commit("7.7.7")
    assert out is not None
    assert [r.ref for r in out[1]] == [str(i) for i in range(5_000)]
    assert not list(tmp_path.glob("*.spill"))


def test_assembled_records_carry_trans_ind_and_first_record_tokens() -> None:
    rows = [
        lcr(
            Kind.ROW,
            "4.11.854",
            i,
            io_type=IOType.FIELDCOMP,
            table="US03.STUDENT",
            columns=((0, str(i)),),
            rowid=f"R{i}",
        )
        for i in range(3)
    ]
    recs = to_records("4.11.854", 1621215, 99, rows)
    assert [r.trans_ind for r in recs] == [TransInd.BEGIN, TransInd.MIDDLE, TransInd.END]
    assert [(r.logcsn, r.tranid) for r in recs] == [
        ("1621215", "4.11.854"),
        (None, None),
        (None, None),
    ]
    assert all(r.io_time_us == 99 for r in recs)
    [one] = to_records("1.1.1", 5, 0, rows[:1])
    assert one.trans_ind == TransInd.WHOLE


def test_streamed_commit_matches_the_whole_one(tmp_path: Path) -> None:
    from engine.extract.tasks.assemble import stream_records

    for n in (1, 2, 5):
        rows = [
            lcr(
                Kind.ROW,
                "4.1.1",
                i,
                io_type=IOType.INSERT,
                table="A.B",
                columns=((0, str(i)),),
                ref=str(i),
            )
            for i in range(n)
        ]
        assert list(stream_records("4.1.1", 9, 7, rows)) == to_records("4.1.1", 9, 7, rows)
    assert list(stream_records("4.1.1", 9, 7, [])) == []
    cache = TransactionCache(tmp_path, budget=20_000)
    for i in range(2_000):
        cache.add(
            lcr(
                Kind.ROW,
                "8.8.8",
                i,
                io_type=IOType.INSERT,
                table="A.B",
                columns=((0, "y" * 30),),
                ref=str(i),
            )
        )
    cache.undo(lcr(Kind.UNDO, "8.8.8", 3000, ref="5"))
    assert cache.spills > 0
    out = cache.commit_stream("8.8.8")
    assert out is not None
    refs = [r.ref for r in out[1]]
    assert refs == [str(i) for i in range(2_000) if i != 5]
    assert not list(tmp_path.glob("*.spill")) and cache.weight == 0


def test_a_page_file_left_by_a_killed_run_is_not_read_back(tmp_path: Path) -> None:
    stale = tmp_path / "txn_7_7_7.spill"
    old = [lcr(Kind.ROW, "7.7.7", 0, io_type=IOType.INSERT, table="A.B", ref="old")]
    stale.write_bytes(seal(SPILL_MAGIC, encode_lcrs(old)))
    cache = TransactionCache(tmp_path, budget=2_000)
    assert not stale.exists()  # cleared at start: the cache is rebuilt from redo
    stale.write_bytes(
        seal(SPILL_MAGIC, encode_lcrs(old))
    )  # and a page-out does not append to one either
    for i in range(20):
        cache.add(lcr(Kind.ROW, "7.7.7", i, io_type=IOType.INSERT, table="A.B", ref=str(i)))
    assert cache.spills > 0
    out = cache.commit("7.7.7")
    assert out is not None
    assert [r.ref for r in out[1]] == [str(i) for i in range(20)]
