"""PostgreSQL ==> PostgreSQL end to end with real processes: the PostgreSQL Extract, the
pump and the Replicat under the Manager, a workload running while the Extract is killed
with SIGKILL again and again; then an independent audit of the trail (every committed
ledger row once: lost 0, duplicated 0, and the audit proven by a mutation that drops and
one that repeats a change) and the target equal to the source."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from engine.home.layout import Home
from engine.home.status import read_process_file
from engine.trail.model import TrailRecord
from tests.harness import pipeline_home as ph
from tests.postgres.cluster import Cluster
from tests.postgres.pgsource import records
from tests.replicat.pipeline import kill9, running, wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


@pytest.fixture
def target_db(pg_cluster: Cluster) -> Iterator[str]:
    name = f"tgt{time.monotonic_ns() % 10**9}"
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield pg_cluster.url(name)
    with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


SCHEMA = (
    "CREATE TABLE ledger (id bigint PRIMARY KEY, tag text)",
    "CREATE TABLE acct (id int PRIMARY KEY, balance numeric(12,2), note text, seen timestamptz)",
)


def audit(recs: list[TrailRecord], committed: set[str]) -> tuple[int, int]:
    """(lost, duplicated) of the ledger inserts: each committed ledger id once in the trail."""
    seen = Counter(
        str(dict(r.columns)[0])
        for r in recs
        if r.table == "public.ledger" and r.op_name == "Insert"
    )
    lost = sum(1 for i in committed if seen[i] == 0)
    duplicated = sum(n - 1 for n in seen.values() if n > 1) + sum(
        1 for i in seen if i not in committed
    )
    return lost, duplicated


def _workload(url: str, stop: threading.Event, committed: set[str], seed: int) -> None:
    rnd = random.Random(seed)
    n = 0
    with psycopg.connect(url) as conn:
        while not stop.is_set() and n < 4000:
            n += 1
            with conn.transaction():
                conn.execute("INSERT INTO ledger VALUES (%s, %s)", (n, f"t{n}"))
                for _ in range(rnd.randint(1, 6)):
                    k = rnd.randint(1, 50)
                    op = rnd.random()
                    if op < 0.5:
                        conn.execute(
                            "INSERT INTO acct VALUES (%s, %s, %s, now()) ON CONFLICT (id) DO "
                            "UPDATE SET balance = acct.balance + 1, note = EXCLUDED.note",
                            (k, rnd.randint(0, 10**6) / 100, "x" * rnd.randint(0, 40)),
                        )
                    elif op < 0.8:
                        conn.execute("UPDATE acct SET balance = balance - 1 WHERE id = %s", (k,))
                    else:
                        conn.execute("DELETE FROM acct WHERE id = %s", (k,))
                rolled_back = rnd.random() < 0.1
                if rolled_back:
                    raise psycopg.Rollback()
            if not rolled_back:
                committed.add(str(n))
            time.sleep(0.002)


def _rows(url: str, table: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return [tuple(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()]


def test_postgres_to_postgres_kill9_soak(tmp_path: Path, pgdb: str, target_db: str) -> None:
    for url in (pgdb, target_db):
        with psycopg.connect(url, autocommit=True) as conn:
            for s in SCHEMA:
                conn.execute(s)
    home = Home(tmp_path / "home")
    home.create_subdirs()
    mgr_port = ph.free_port()  # the home is its own target host: its pump asks its Manager
    ph.write_prm_files(home, {
        "mgr.prm": f"PORT {mgr_port}\n{ph.COLLECTOR_RULE}\n",
        "epg.prm": f"EXTRACT EPG\nSOURCEDB {pgdb}\nEXTTRAIL ./dirdat/ep\nTABLE public.*;\n",
        "ppg.prm": f"EXTRACT PPG\nRMTHOST 127.0.0.1, MGRPORT {mgr_port}\nRMTTRAIL ./dirrmt/rp\n"
                   "PASSTHRU\nTABLE public.*;\n",
        "rpg.prm": f"REPLICAT RPG\nTARGETDB {target_db}\nASSUMETARGETDEFS\n"
                   "MAP public.*, TARGET public.*;\n",
    })  # fmt: skip
    out = ph.run_ggsci(
        home,
        f"DBLOGIN SOURCEDB {target_db}", "ADD CHECKPOINTTABLE public.ggs_ckpt",
        f"DBLOGIN SOURCEDB {pgdb}", "ADD TRANDATA public.*", "REGISTER EXTRACT epg DATABASE",
        "START MANAGER", "ADD EXTRACT epg, TRANLOG, BEGIN NOW", "ADD EXTTRAIL ./dirdat/ep, EXTRACT epg",
        "ADD EXTRACT ppg, EXTTRAILSOURCE ./dirdat/ep", "ADD RMTTRAIL ./dirrmt/rp, EXTRACT ppg",
        "ADD REPLICAT rpg, EXTTRAIL ./dirrmt/rp, CHECKPOINTTABLE public.ggs_ckpt",
        "START EXTRACT epg", "START EXTRACT ppg", "START REPLICAT rpg",
    )  # fmt: skip
    assert "OGG-25355" in out, out
    committed: set[str] = set()
    stop = threading.Event()
    try:
        wait_until(lambda: running(home, "EXTRACT", "EPG"), "the Extract to run", 60)
        worker = threading.Thread(target=_workload, args=(pgdb, stop, committed, 7))
        worker.start()
        for _ in range(3):
            time.sleep(1.5)
            wait_until(lambda: running(home, "EXTRACT", "EPG"), "the Extract to run", 60)
            kill9(home, "EXTRACT", "EPG")
            ph.run_ggsci(home, "START EXTRACT epg")
        time.sleep(1)
        stop.set()
        worker.join(60)
        wait_until(lambda: running(home, "EXTRACT", "EPG"), "the Extract to run", 60)
        wait_until(
            lambda: "Replication slot 'epg_" in ph.run_ggsci(home, "SEND EXTRACT epg, STATUS"),
            "SEND STATUS to show the slot", 60,
        )  # fmt: skip
        status = ph.run_ggsci(home, "SEND EXTRACT epg, STATUS", "INFO EXTRACT epg, DETAIL")
        assert "WAL retained:" in status and "Confirmed LSN:" in status, status
        assert "Log Read Checkpoint  PostgreSQL WAL" in status, status
        assert "Replication Slot     epg_" in status and "WAL Retained" in status, status
        refused = ph.run_ggsci(home, "SEND EXTRACT epg, SHOWTRANS")
        assert "SHOWTRANS is not available for a PostgreSQL Extract" in refused, refused
        wait_until(
            lambda: _rows(pgdb, "ledger") == _rows(target_db, "ledger")
            and _rows(pgdb, "acct") == _rows(target_db, "acct"),
            "the target to equal the source", 120,
        )  # fmt: skip
        lag = ph.run_ggsci(home, "LAG EXTRACT epg", "STATS EXTRACT epg")
        assert "PUBLIC.LEDGER" in lag and "Total updates" in lag, lag
    finally:
        stop.set()
        ph.run_ggsci(home, "STOP REPLICAT rpg", "STOP EXTRACT ppg", "STOP EXTRACT epg",
                     "STOP MANAGER !")  # fmt: skip
        _kill_groups(home)
    assert len(committed) > 50
    recs = records(home, "ep")
    assert audit(recs, committed) == (0, 0)
    # the audit sees a change dropped and a change repeated
    ledger = [i for i, r in enumerate(recs) if r.table == "public.ledger"]
    dropped = recs[: ledger[5]] + recs[ledger[5] + 1 :]
    assert audit(dropped, committed) == (1, 0)
    assert audit([*recs, recs[ledger[7]]], committed) == (0, 1)


def test_heartbeat_from_a_postgres_source(tmp_path: Path, pgdb: str, target_db: str) -> None:
    """ADD HEARTBEATTABLE after a PostgreSQL DBLOGIN: the Manager's job updates it, the
    Extract captures it without a TABLE line, and it reaches the target's GG_LAG through
    the pump and the Replicat."""
    home = Home(tmp_path / "home")
    home.create_subdirs()
    mgr_port = ph.free_port()  # the home is its own target host: its pump asks its Manager
    ph.write_prm_files(home, {
        "mgr.prm": f"PORT {mgr_port}\n{ph.COLLECTOR_RULE}\n",
        "epg.prm": f"EXTRACT EPG\nSOURCEDB {pgdb}\nEXTTRAIL ./dirdat/ep\nTABLE public.*;\n",
        "ppg.prm": f"EXTRACT PPG\nRMTHOST 127.0.0.1, MGRPORT {mgr_port}\nRMTTRAIL ./dirrmt/rp\n"
                   "PASSTHRU\nTABLE public.*;\n",
        "rpg.prm": f"REPLICAT RPG\nTARGETDB {target_db}\nASSUMETARGETDEFS\n"
                   "MAP public.*, TARGET public.*;\n",
    })  # fmt: skip
    out = ph.run_ggsci(
        home,
        f"DBLOGIN SOURCEDB {target_db}", "ADD CHECKPOINTTABLE public.ggs_ckpt",
        "ADD HEARTBEATTABLE, TARGETONLY",
        f"DBLOGIN SOURCEDB {pgdb}", "ADD HEARTBEATTABLE, FREQUENCY 1",
        "REGISTER EXTRACT epg DATABASE",
        "START MANAGER", "ADD EXTRACT epg, TRANLOG, BEGIN NOW", "ADD EXTTRAIL ./dirdat/ep, EXTRACT epg",
        "ADD EXTRACT ppg, EXTTRAILSOURCE ./dirdat/ep", "ADD RMTTRAIL ./dirrmt/rp, EXTRACT ppg",
        "ADD REPLICAT rpg, EXTTRAIL ./dirrmt/rp, CHECKPOINTTABLE public.ggs_ckpt",
        "START EXTRACT epg", "START EXTRACT ppg", "START REPLICAT rpg",
    )  # fmt: skip
    assert "OGG-25355" in out and "OGG-14091" in out, out
    paths = "SELECT DISTINCT incoming_path FROM postgres.gg_lag_history"
    try:
        wait_until(
            lambda: _query(target_db, paths) == [("EPG ==> PPG ==> RPG",)], "heartbeats", 120
        )
    finally:
        ph.run_ggsci(home, "STOP REPLICAT rpg", "STOP EXTRACT ppg", "STOP EXTRACT epg",
                     "STOP MANAGER !")  # fmt: skip
        _kill_groups(home)


def _query(url: str, q: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        try:
            return [tuple(r) for r in conn.execute(q).fetchall()]
        except psycopg.Error:
            return []


def _kill_groups(home: Home) -> None:
    import os
    import signal

    for kind, name in (("EXTRACT", "EPG"), ("EXTRACT", "PPG"), ("REPLICAT", "RPG")):
        pf = read_process_file(home, kind, name)
        if pf is not None and running(home, kind, name):
            os.kill(pf.pid, signal.SIGKILL)


def test_two_databases_replicating_into_each_other(
    tmp_path: Path, pgdb: str, target_db: str
) -> None:
    """Active-active: A ==> B and B ==> A, each Extract with FILTERTABLE of the checkpoint
    table its database's Replicat writes: every change arrives once on the other side and
    nothing comes back (each trail holds only its own database's transactions)."""
    a, b = pgdb, target_db
    for url in (a, b):
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE item (id int PRIMARY KEY, origin text, n int)")
    home = Home(tmp_path / "home")
    home.create_subdirs()

    def extract(name: str, url: str, trail: str, ckpt: str) -> str:
        return (f"EXTRACT {name}\nSOURCEDB {url}\nTRANLOGOPTIONS FILTERTABLE {ckpt}\n"
                f"EXTTRAIL {trail}\nTABLE public.item;\n")  # fmt: skip

    def replicat(name: str, url: str) -> str:
        return (
            f"REPLICAT {name}\nTARGETDB {url}\nASSUMETARGETDEFS\nMAP public.*, TARGET public.*;\n"
        )

    mgr_port = ph.free_port()  # the home is its own target host: its pump asks its Manager
    ph.write_prm_files(home, {
        "mgr.prm": f"PORT {mgr_port}\n{ph.COLLECTOR_RULE}\n",
        "ea.prm": extract("EA", a, "./dirdat/ea", "public.ckpt_a"),
        "eb.prm": extract("EB", b, "./dirdat/eb", "public.ckpt_b"),
        "rb.prm": replicat("RB", b),  # A's changes into B
        "ra.prm": replicat("RA", a),  # B's changes into A
    })  # fmt: skip
    out = ph.run_ggsci(
        home,
        f"DBLOGIN SOURCEDB {a}", "ADD CHECKPOINTTABLE public.ckpt_a", "ADD TRANDATA public.item",
        "REGISTER EXTRACT ea DATABASE",
        f"DBLOGIN SOURCEDB {b}", "ADD CHECKPOINTTABLE public.ckpt_b", "ADD TRANDATA public.item",
        "REGISTER EXTRACT eb DATABASE",
        "START MANAGER",
        "ADD EXTRACT ea, TRANLOG, BEGIN NOW", "ADD EXTTRAIL ./dirdat/ea, EXTRACT ea",
        "ADD EXTRACT eb, TRANLOG, BEGIN NOW", "ADD EXTTRAIL ./dirdat/eb, EXTRACT eb",
        "ADD REPLICAT rb, EXTTRAIL ./dirdat/ea, CHECKPOINTTABLE public.ckpt_b",
        "ADD REPLICAT ra, EXTTRAIL ./dirdat/eb, CHECKPOINTTABLE public.ckpt_a",
        "START EXTRACT ea", "START EXTRACT eb", "START REPLICAT rb", "START REPLICAT ra",
    )  # fmt: skip
    assert out.count("OGG-25355") == 2, out
    try:
        with psycopg.connect(a) as ca, psycopg.connect(b) as cb:
            for i in range(1, 41):
                conn, origin = (ca, "A") if i % 2 else (cb, "B")
                conn.execute("INSERT INTO item VALUES (%s, %s, 0)", (i, origin))
                conn.commit()
            inserted = [(i, "A" if i % 2 else "B", 0) for i in range(1, 41)]
            wait_until(
                lambda: _rows(a, "item") == inserted and _rows(b, "item") == inserted,
                "both databases to hold every insert", 120,
            )  # fmt: skip
            for i in range(1, 41, 4):  # updates on both sides, of rows the other made
                conn = cb if i % 2 else ca
                conn.execute("UPDATE item SET n = n + 1 WHERE id = %s", (i,))
                conn.commit()
        want = [(i, "A" if i % 2 else "B", 1 if i % 4 == 1 else 0) for i in range(1, 41)]
        wait_until(
            lambda: _rows(a, "item") == want and _rows(b, "item") == want,
            "both databases to hold every change", 120,
        )  # fmt: skip
        time.sleep(3)  # a change coming back would show now
        assert _rows(a, "item") == want and _rows(b, "item") == want
    finally:
        ph.run_ggsci(home, "STOP REPLICAT ra", "STOP REPLICAT rb", "STOP EXTRACT ea",
                     "STOP EXTRACT eb", "STOP MANAGER !")  # fmt: skip
        for kind, name in (("EXTRACT", "EA"), ("EXTRACT", "EB"), ("REPLICAT", "RA"),
                           ("REPLICAT", "RB")):  # fmt: skip
            pf = read_process_file(home, kind, name)
            if pf is not None and running(home, kind, name):
                import os
                import signal

                os.kill(pf.pid, signal.SIGKILL)
    # each trail: its own database's changes only (the other side's came back filtered)
    ea = records(home, "ea")
    eb = records(home, "eb")
    # A made 20 inserts; B made 20 inserts and the 10 updates (of rows A made)
    assert [r.op_name for r in ea].count("Insert") == 20 and len(ea) == 20
    assert [r.op_name for r in eb].count("FieldComp") == 10 and len(eb) == 30
    assert all(dict(r.columns).get(1, "A") == "A" for r in ea if r.op_name == "Insert")
    assert all(dict(r.columns).get(1, "B") == "B" for r in eb if r.op_name == "Insert")
