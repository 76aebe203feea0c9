"""Replicat on an SQLite target: mapping, apply, HANDLECOLLISIONS, REPERROR, DISCARDFILE,
GROUPTRANSOPS, and the checkpoint table's watermarks across restarts."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from replicat_helpers import EMP, add_group, dele, ins, model, txn_records, upd, write_trail

from engine.home.groups import GroupKind, SourceType
from engine.home.layout import Home
from engine.replicat import MappingError, ReplicatError
from engine.replicat import checkpoint_table as ct
from engine.replicat.engine import ReplicatRun
from engine.replicat.mapping import parse_colmap
from engine.replicat.progress import Progress
from engine.runtime.events import Severity
from engine.targets.base import temporal_text
from engine.trail.layout import IOType
from engine.trail.model import TableDef, TrailPosition

TRAIL = "./dirrmt/bb"
BASE = "REPLICAT rep\nTARGETDB ./tgt.db\nASSUMETARGETDEFS\n"


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.create_subdirs()
    conn = sqlite3.connect(h.root / "tgt.db")
    conn.execute("CREATE TABLE emp (id NUMERIC PRIMARY KEY, name TEXT, sal NUMERIC)")
    conn.execute("CREATE TABLE emp2 (eid NUMERIC, ename TEXT, sal NUMERIC, src TEXT)")
    ct.create(conn, ct.TableName.parse("gg.chkpt"), "sqlite")
    conn.close()
    return h


def rows(home: Home, table: str = "emp") -> list[tuple[object, ...]]:
    conn = sqlite3.connect(home.root / "tgt.db")
    try:
        return conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
    finally:
        conn.close()


def run(home: Home, params: str, *, cpt: str | None = "gg.chkpt") -> tuple[ReplicatRun, list[str]]:
    group = add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, TRAIL)
    if cpt:
        from dataclasses import replace

        from engine.home.groups import GroupStore

        group = replace(group, checkpoint_table=cpt)
        GroupStore(home).save(group)
    seen: list[str] = []

    def emit(code: str, _sev: Severity, text: str) -> None:
        seen.append(f"{code} {text}")

    r = ReplicatRun(home, model(home, "rep", BASE + params), group, emit)
    return r, seen


def drain(r: ReplicatRun) -> None:
    r.run(lambda: False, stop_at_eof=True)
    r.close()


def trail(home: Home) -> Path:
    return home.root / "dirrmt" / "bb"


def test_colmap_parsing() -> None:
    cm = parse_colmap("(USEDEFAULTS, ename = name, src = 'it''s', n = 5, z = NULL)")
    assert cm.use_defaults and cm.columns == (("ENAME", "NAME"),)
    assert cm.literals == (("SRC", "it's"), ("N", "5"), ("Z", None))
    assert [t for t, _ in parse_colmap("(a = @STRCAT(b, c))").computed] == ["A"]
    with pytest.raises(MappingError) as err:
        parse_colmap("(a = @NOSUCH(b))")
    assert err.value.code == "OGG-00919"


def test_temporal_text() -> None:
    assert temporal_text("2024-05-01:10:11:12") == "2024-05-01 10:11:12"
    assert temporal_text("2024-05-01:10:11:12.123456000") == "2024-05-01 10:11:12.123456"
    assert temporal_text("2024-05-01:10:11:12.000000000") == "2024-05-01 10:11:12"


def test_insert_update_delete_and_watermark_restart(home: Home) -> None:
    write_trail(
        trail(home),
        [
            txn_records(100, [ins(1), ins(2), ins(3)]),
            txn_records(101, [upd(1, 50), dele(2)]),
            txn_records(102, [(IOType.KEYFIELDCOMP, "HR.EMP", ((0, "30"),), ((0, "3"),))]),
        ],
    )
    r, _ = run(home, "MAP hr.*, TARGET hr.*;\n")
    drain(r)
    assert rows(home) == [(1, "n1", 50), (30, "n3", 1)]
    assert r.progress.csn == 102 and r.progress.xids == ("1.6.102",)
    # The trail is read again from the start (ALTER REPLICAT EXTSEQNO 0 would do it; here
    # the file checkpoint is simply gone): the watermarks skip everything already applied.
    conn = sqlite3.connect(home.root / "tgt.db")
    conn.execute("UPDATE chkpt SET seqno = 0, rba = 0")
    conn.commit()
    conn.close()
    write_trail(
        trail(home), [txn_records(102, [ins(9)], tranid="2.0.1"), txn_records(103, [ins(4)])]
    )
    again, seen = run(home, "MAP hr.*, TARGET hr.*;\n")
    assert any(s.startswith("OGG-06506") for s in seen)
    drain(again)
    # 102/1.6.102 was applied; 102/2.0.1 shares its CSN but not its id: applied now.
    assert rows(home) == [(1, "n1", 50), (4, "n4", 1), (9, "n9", 1), (30, "n3", 1)]
    assert again.skipped == 3
    assert again.progress.csn == 103 and again.progress.xids == ("1.7.103",)


def test_lox_overflow_round_trip(home: Home) -> None:
    many = [txn_records(500, [ins(i)], tranid=f"{i}.{i}.{10_000 + i}") for i in range(1, 300)]
    write_trail(trail(home), many)
    r, _ = run(home, "GROUPTRANSOPS 1\nMAP hr.emp, TARGET hr.emp;\n")
    drain(r)
    assert len(r.progress.xids) == 299
    conn = sqlite3.connect(home.root / "tgt.db")
    lox = conn.execute("SELECT count(*) FROM chkpt_lox").fetchone()[0]
    main = conn.execute("SELECT log_cmplt_csn, length(log_cmplt_xids) FROM chkpt").fetchone()
    conn.close()
    assert lox >= 1 and main[0] == "500" and main[1] <= 2000
    again, _ = run(home, "MAP hr.emp, TARGET hr.emp;\n")
    assert again.progress.xids == r.progress.xids
    assert "299.299.10299" in again.progress.xids
    again.close()


def test_keycols_colmap_and_literals(home: Home) -> None:
    write_trail(trail(home), [txn_records(100, [ins(1), ins(2)]), txn_records(101, [upd(2, 7)])])
    r, _ = run(
        home,
        "MAP hr.emp, TARGET hr.emp2, KEYCOLS (eid), "
        "COLMAP (USEDEFAULTS, eid = id, ename = name, src = 'trail');\n",
    )
    drain(r)
    assert rows(home, "emp2") == [(1, "n1", 1, "trail"), (2, "n2", 7, "trail")]


def test_collisions_abend_by_default_and_are_handled_with_handlecollisions(home: Home) -> None:
    conn = sqlite3.connect(home.root / "tgt.db")
    conn.execute("INSERT INTO emp VALUES (1, 'old', 0)")
    conn.commit()
    conn.close()
    txns = [txn_records(100, [ins(1)]), txn_records(101, [upd(5, 9), dele(6)])]
    write_trail(trail(home), txns)
    r, _ = run(home, "MAP hr.emp, TARGET hr.emp;\n")
    with pytest.raises(ReplicatError) as err:
        drain(r)
    assert err.value.code == "OGG-01004" and "Database error 1 " in err.value.text
    assert rows(home) == [(1, "old", 0)]  # nothing of the failed group was committed
    r.close()
    hc, _ = run(home, "HANDLECOLLISIONS\nMAP hr.emp, TARGET hr.emp;\n")
    drain(hc)
    assert rows(home) == [(1, "n1", 1), (5, None, 9)]
    assert hc.applier.collisions == 3


def test_reperror_discard_and_ignore(home: Home) -> None:
    write_trail(
        trail(home),
        [txn_records(100, [ins(1), upd(7, 1)]), txn_records(101, [dele(8), ins(2)])],
    )
    r, _ = run(
        home,
        "REPERROR (DEFAULT, DISCARD)\nREPERROR (1403, DISCARD)\n"
        "DISCARDFILE ./dirrpt/rep.dsc, PURGE\nMAP hr.emp, TARGET hr.emp;\n",
    )
    drain(r)
    assert rows(home) == [(1, "n1", 1), (2, "n2", 1)]
    text = (home.root / "dirrpt" / "rep.dsc").read_text()
    assert text.count("Discarded record from action DISCARD on error 1403") == 2
    assert "Problem replicating HR.EMP to emp" in text and "ID = 7" in text
    write_trail(trail(home), [txn_records(102, [dele(9), ins(3)])])
    ign, _ = run(home, "REPERROR (1403, IGNORE)\nMAP hr.emp, TARGET hr.emp;\n")
    drain(ign)
    assert ign.ignored == 1 and [x[0] for x in rows(home)] == [1, 2, 3]


def test_database_errors_retry_record_by_record(home: Home) -> None:
    conn = sqlite3.connect(home.root / "tgt.db")
    conn.execute(
        "CREATE TABLE strict_emp (id NUMERIC PRIMARY KEY, name TEXT NOT NULL, sal NUMERIC)"
    )
    conn.commit()
    conn.close()
    null_name = (IOType.INSERT, "HR.EMP", ((0, "5"), (1, None), (2, "1")))
    write_trail(trail(home), [txn_records(100, [ins(1), null_name, ins(2)])])
    r, _ = run(home, "REPERROR (1400, DISCARD)\nMAP hr.emp, TARGET hr.strict_emp;\n")
    drain(r)
    assert [x[0] for x in rows(home, "strict_emp")] == [1, 2]
    assert r.discard.discarded == 1


def test_missing_target_table_and_no_checkpoint_table(home: Home) -> None:
    write_trail(trail(home), [txn_records(100, [ins(1)])], (TableDef("HR.EMP", EMP.column_names),))
    r, seen = run(home, "MAP hr.emp, TARGET hr.nope;\n", cpt=None)
    assert any(s.startswith("OGG-02544") for s in seen)
    with pytest.raises(MappingError) as err:
        drain(r)
    assert err.value.code == "OGG-00199"
    r.close()
    with pytest.raises(ReplicatError) as err2:
        run(home, "MAP hr.emp, TARGET hr.emp;\n", cpt="gg.missing")
    assert err2.value.code == "OGG-00446"


def test_progress_filter() -> None:
    p = Progress(TrailPosition(0, 0), 100, ("a", "b"))

    class T:
        def __init__(self, csn: int | None, tranid: str) -> None:
            self.csn, self.tranid = csn, tranid

    assert p.applied(T(99, "z"))  # type: ignore[arg-type]
    assert p.applied(T(100, "a"))  # type: ignore[arg-type]
    assert not p.applied(T(100, "c"))  # type: ignore[arg-type]
    assert not p.applied(T(101, "a"))  # type: ignore[arg-type]
    assert not p.applied(T(None, "a"))  # type: ignore[arg-type]
