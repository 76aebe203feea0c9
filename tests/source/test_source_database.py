"""Database-level redo: switch by size, several threads, SCN order, imports, DDL records."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest

from engine.embedded import dml
from engine.embedded.database import Database
from engine.embedded.dictionary import load_dictionary
from engine.embedded.dump_parse import parse_dump
from engine.embedded.logfile import read_records
from engine.embedded.sql import execute, run_script
from engine.redo.model import Ddl
from tests.harness.logical import decode
from tests.redo.test_payloads import _filled as filled

VECTORS = Path(__file__).parent / "vectors"


def test_switch_by_size_keeps_every_record(make_db: Callable[..., Database]) -> None:
    db = make_db(threads=2, log_bytes=16 * 1024)
    a, b = db.session("A", username="APP", thread=1), db.session("B", username="APP", thread=2)
    execute(db, a, "CREATE TABLE t (id NUMBER PRIMARY KEY, pad VARCHAR2(200))")
    for i in range(120):
        s = a if i % 3 else b
        execute(db, s, f"INSERT INTO t VALUES ({i}, '{'x' * 150}')")
        if i % 10 == 9:
            execute(db, a, "COMMIT")
            execute(db, b, "COMMIT")
    infos = db.list_logs()
    t1 = [i for i in infos if i.thread == 1]
    assert len(t1) > 3 and all(i.archived for i in t1[:-1]) and not t1[-1].archived
    for prev, nxt in itertools.pairwise(t1):
        assert prev.next_scn == nxt.first_scn and nxt.sequence == prev.sequence + 1
    records = [lr.record for i in infos for lr in read_records(i.path)]
    d = decode(records, load_dictionary(db.root / "dictionary.json"))
    ids = sorted(int(c.after["ID"]) for t in d.committed for c in t.changes)
    assert ids == list(range(120))
    assert {r.thread for r in records} == {1, 2}
    scns = [r.scn for r in records]
    assert len(set(scns)) > 100


def test_ddl_is_logged_with_its_definition(make_db: Callable[..., Database]) -> None:
    db = make_db()
    s = db.session("A", username="APP")
    list(run_script(db, s, "CREATE TABLE t (id NUMBER); ALTER TABLE t ADD PRIMARY KEY (id);"))
    ddl = [cv.body for lr in db.records() for cv in lr.record.changes if isinstance(cv.body, Ddl)]
    assert [d.text.split()[0] for d in ddl] == ["CREATE", "ALTER"]
    assert '"key": ["ID"]' in ddl[-1].definition
    execute(db, s, "DROP TABLE t")
    d = decode([lr.record for lr in db.records()], load_dictionary(db.root / "dictionary.json"))
    assert [len(t.ddl) for t in d.committed] == [1, 1, 1]


def test_import_keeps_oracle_sequences_scns_and_vectors(make_db: Callable[..., Database]) -> None:
    """The seed's records written in Oracle's format and read back: the same sequences, SCNs
    and change vectors (a 19.1 row the abridged dump leaves a column out of reads back with
    that column NULL); their RBAs are where our log writer put them."""
    db = make_db()
    records = []
    for p in sorted(VECTORS.glob("*.dump")):
        records += parse_dump(p.read_text().splitlines()).records
    assert db.append_foreign(records, load_dictionary(VECTORS / "seed_dictionary.json")) == 33
    back = [lr.record for lr in db.records()]
    assert [(r.thread, r.rba.sequence, r.scn, r.subscn) for r in back] == [
        (r.thread, r.rba.sequence, r.scn, r.subscn) for r in records
    ]
    for b, r in zip(back, records, strict=True):
        assert b.changes == tuple(filled(cv) for cv in r.changes)
        assert (b.lwn is None) == (r.lwn is None)
    assert [i.sequence for i in db.list_logs()] == [0x44, 0x45, 0x46, 0x47, 0x49, 0x4B, 0x4D]
    # native work continues after the imported SCNs
    s = db.session("A", username="US03")
    execute(db, s, "INSERT INTO student (student_key) VALUES (2000)")
    execute(db, s, "COMMIT")
    assert db.records()[-1].record.scn > max(r.scn for r in records)


def test_committed_redo_reaches_a_tailing_reader(
    make_db: Callable[..., Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    import engine.embedded.database as database

    monkeypatch.setattr(database, "FLUSH_INTERVAL", 0.0)
    db = make_db()
    s = db.session("A", username="APP")
    execute(db, s, "CREATE TABLE t (id NUMBER)")
    (info,) = db.list_logs()
    seen = list(read_records(info.path))
    dml.insert(s, db, db.table("APP", "T"), [(Decimal(1),)], array=False)
    s.commit(db)  # no checkpoint: the commit itself must make the redo readable
    new = [lr.record.ops for lr in read_records(info.path, seen[-1].end)]
    assert new == [("5.2", "5.1", "11.2", "5.20"), ("5.4",)]
