"""Property tests: random interleavings of sessions (commits, rollbacks, savepoints).

An independent model applies every statement the database accepted, in execution order,
to a dict of current rows, keeps an undo log per session (rollback and rollback to
savepoint put rows back) and the rows/keys each open transaction holds. Properties:

1. the SQLite tables always equal the model's current rows (uncommitted changes included,
   as Oracle's blocks would hold them), and after everything ends they equal what the
   committed statements imply;
2. a statement refused with ORA-00054 touched a row or key another open transaction holds
   in the model, and an accepted statement touched none;
3. decoding the redo and replaying the committed transactions in commit order rebuilds
   the same tables (by ROWID), and rolled-back work never appears.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.dictionary import load_dictionary
from engine.embedded.errors import ConstraintError, RowLockedError
from engine.embedded.sql import execute
from tests.harness.logical import decode, replay

SESSIONS = ("A", "B", "C")
KEYS = range(8)

steps = st.lists(
    st.tuples(
        st.sampled_from(SESSIONS),
        st.one_of(
            st.tuples(st.just("insert"), st.sampled_from(KEYS), st.integers(0, 9)),
            st.tuples(st.just("update"), st.sampled_from(KEYS), st.integers(0, 9)),
            st.tuples(st.just("update_where"), st.integers(0, 9), st.integers(0, 9)),
            st.tuples(st.just("delete"), st.sampled_from(KEYS), st.just(0)),
            st.tuples(st.just("delete_where"), st.integers(0, 9), st.just(0)),
            st.tuples(st.just("savepoint"), st.sampled_from("XY"), st.just(0)),
            st.tuples(st.just("rollback_to"), st.sampled_from("XY"), st.just(0)),
            st.tuples(st.just("commit"), st.just(0), st.just(0)),
            st.tuples(st.just("rollback"), st.just(0), st.just(0)),
        ),
    ),
    max_size=60,
)


@dataclass
class Model:
    rows: dict[int, int] = field(default_factory=dict)  # id -> v (current, all sessions)
    undo: dict[str, list[tuple[int, int | None]]] = field(default_factory=dict)
    saves: dict[str, dict[str, int]] = field(default_factory=dict)
    holds: dict[str, set[int]] = field(default_factory=dict)  # ids a txn touched

    def held_by_other(self, session: str, ids: set[int]) -> bool:
        return any(ids & h for s, h in self.holds.items() if s != session)

    def change(self, session: str, changes: dict[int, int | None]) -> None:
        log = self.undo.setdefault(session, [])
        for k, v in changes.items():
            log.append((k, self.rows.get(k)))
            if v is None:
                self.rows.pop(k, None)
            else:
                self.rows[k] = v
        self.holds.setdefault(session, set()).update(changes)

    def undo_to(self, session: str, mark: int) -> None:
        log = self.undo.get(session, [])
        while len(log) > mark:
            k, v = log.pop()
            if v is None:
                self.rows.pop(k, None)
            else:
                self.rows[k] = v
        self.holds[session] = {k for k, _ in log}

    def end(self, session: str) -> None:
        self.undo.pop(session, None)
        self.saves.pop(session, None)
        self.holds.pop(session, None)


def _plan(model: Model, action: str, a: int, b: int) -> tuple[str, dict[int, int | None]]:
    if action == "insert":
        return f"INSERT INTO p VALUES ({a}, {b})", {a: b}
    if action == "update":
        return f"UPDATE p SET v = {b} WHERE id = {a}", ({a: b} if a in model.rows else {})
    if action == "update_where":
        hit = {k: b for k, v in model.rows.items() if v <= a}
        return f"UPDATE p SET v = {b} WHERE v <= {a}", hit
    if action == "delete":
        return f"DELETE FROM p WHERE id = {a}", ({a: None} if a in model.rows else {})
    hit2: dict[int, int | None] = {k: None for k, v in model.rows.items() if v >= a}
    return f"DELETE FROM p WHERE v >= {a}", hit2


def _table(db: Database) -> dict[int, int]:
    return {int(r[0]): int(r[1]) for r in db.conn.execute('SELECT "ID", "V" FROM "APP$P"')}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=steps)
def test_interleavings(
    script: list[tuple[str, tuple[str, Any, Any]]], tmp_path_factory: Any
) -> None:
    root = create_database(Path(tmp_path_factory.mktemp("prop")), "P", threads=2)
    db = Database(root, clock=ManualClock(datetime(2024, 1, 1), step=1))
    try:
        sess = {n: db.session(n, username="APP") for n in SESSIONS}
        execute(db, sess["A"], "CREATE TABLE p (id NUMBER PRIMARY KEY, v NUMBER)")
        model = Model()
        for name, (action, a, b) in script:
            s = sess[name]
            if action == "savepoint":
                execute(db, s, f"SAVEPOINT {a}")
                model.saves.setdefault(name, {})[a] = len(model.undo.get(name, []))
            elif action == "rollback_to":
                if a in model.saves.get(name, {}):
                    execute(db, s, f"ROLLBACK TO SAVEPOINT {a}")
                    mark = model.saves[name][a]
                    model.undo_to(name, mark)
                    model.saves[name] = {k: v for k, v in model.saves[name].items() if v <= mark}
            elif action in ("commit", "rollback"):
                execute(db, s, action.upper())
                if action == "rollback":
                    model.undo_to(name, 0)
                model.end(name)
            else:
                sql, changes = _plan(model, action, a, b)
                conflict = model.held_by_other(name, set(changes))
                try:
                    execute(db, s, sql)
                except RowLockedError:
                    assert conflict, sql
                    continue
                except ConstraintError:
                    assert action == "insert" and a in model.rows
                    continue
                assert not conflict, sql
                assert not (action == "insert" and a in model.rows and not conflict)
                model.change(name, changes)
            assert _table(db) == model.rows
        for name in SESSIONS:
            execute(db, sess[name], "COMMIT")
        assert _table(db) == model.rows
        decoded = decode(
            [lr.record for lr in db.records()], load_dictionary(db.root / "dictionary.json")
        )
        assert not decoded.open
        rebuilt = replay(decoded.committed).get("APP.P", {})
        assert {int(r["ID"]): int(r["V"]) for r in rebuilt.values()} == model.rows
        scns = [t.commit_scn for t in decoded.committed]
        assert scns == sorted(scns)
    finally:
        db.close()
