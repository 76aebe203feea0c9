"""PostgreSQL source throughput (issue 25): the default workload shape of
``extract_throughput.py`` on a PostgreSQL 15 source, captured by the PostgreSQL Extract to a
checksummed, checkpointed trail, beside ``pg_recvlogical`` with ``test_decoding`` writing the
same changes to a text file, on the same database in the same run.

Workload: an 8-column table like seed 002's STUDENT (integer key, five varchar, two numeric),
transactions of 100 row changes: 50% insert transactions, then 30% update transactions
(TUITION_FEE of 100 existing rows), then 20% delete transactions. Two slots are created
before it (the Extract's, by REGISTER; pg_recvlogical's), so both read the same WAL.

Also measured, for the plugin choice (docs/postgres-source.md): decoding the backlog through
the SQL interface with ``test_decoding`` (text) and with ``pgoutput`` (binary protocol, a
publication of the table), no client-side parsing.

With ``--big-transaction N`` it then also captures one transaction of N inserts under
``--cachemgr-mb`` of CACHEMGR (the cache pages it out; the test suite runs 1,000,000 rows in
tests/postgres/test_faults.py) and prints its time.

Prints ``name=value`` lines; the last is ``ratio_vs_recvlogical`` (the Extract's changes per
second over pg_recvlogical's; goal >= 0.9).

    python benchmarks/pg_source.py [--transactions N] [--big-transaction N [--cachemgr-mb M]]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg

from engine.home.groups import GroupDef, GroupKind, GroupStore, SourceType
from engine.home.layout import Home
from engine.postgres.run import PgExtractRun
from engine.postgres.slot import register
from params.check import check_text
from tests.postgres.cluster import PG_BIN, start_cluster

TABLE = (
    "CREATE TABLE student (student_id int PRIMARY KEY, first_name varchar(30), "
    "last_name varchar(30), email varchar(60), phone varchar(20), city varchar(30), "
    "tuition_fee numeric(10,2), credits numeric(4))"
)


def workload(url: str, transactions: int) -> int:
    """The changes made (row changes of committed transactions)."""
    ins = transactions * 50 // 100
    upd = transactions * 30 // 100
    dele = transactions - ins - upd
    changes = 0
    with psycopg.connect(url) as conn:
        for t in range(ins):
            lo = t * 100 + 1
            conn.execute(
                "INSERT INTO student SELECT g, 'First' || g, 'Last' || g, 'user' || g || "
                "'@example.org', '555-' || g, 'City' || (g %% 50), 1000 + g %% 997, g %% 120 "
                "FROM generate_series(%s::int, %s::int) g",
                (lo, lo + 99),
            )
            conn.commit()
            changes += 100
        for t in range(upd):
            lo = (t % ins) * 100 + 1
            conn.execute(
                "UPDATE student SET tuition_fee = tuition_fee + 1 "
                "WHERE student_id BETWEEN %s AND %s",
                (lo, lo + 99),
            )
            conn.commit()
            changes += 100
        for t in range(dele):
            lo = t * 100 + 1
            conn.execute("DELETE FROM student WHERE student_id BETWEEN %s AND %s", (lo, lo + 99))
            conn.commit()
            changes += 100
    return changes


def big(url: str, home: Home, group: GroupDef, text: str, rows: int, cache_mb: int) -> None:
    """One transaction of ``rows`` inserts captured under ``cache_mb`` of CACHEMGR."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE big (id int PRIMARY KEY, pad text)")
        t = time.perf_counter()
        conn.execute("INSERT INTO big SELECT g, 'row ' || g FROM generate_series(1, %s) g", (rows,))
        print(f"big_transaction_insert_s={time.perf_counter() - t:.2f}")
    model = check_text(text.replace("EXTTRAIL", f"CACHEMGR CACHESIZE {cache_mb}MB\nEXTTRAIL")).model
    t = time.perf_counter()
    run = PgExtractRun(home, model, group, lambda c, s, m: None, durable=True)
    run.run(threading.Event(), stop_at_eof=True, idle=0)
    run.close()
    big_s = time.perf_counter() - t
    assert run.capture.stats.trail_records == rows, run.capture.stats.trail_records
    print(f"big_transaction_rows={rows}")
    print(f"big_transaction_cache_page_outs={run.capture.cache.spills}")
    print(f"big_transaction_extract_s={big_s:.2f}")
    print(f"big_transaction_rows_per_s={rows / big_s:.0f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--transactions", type=int, default=2000)
    ap.add_argument("--profile", action="store_true", help="cProfile the Extract's part")
    ap.add_argument("--big-transaction", type=int, default=0, help="rows of one transaction")
    ap.add_argument("--cachemgr-mb", type=int, default=8, help="CACHEMGR for the big one")
    args = ap.parse_args()
    cluster = start_cluster()
    try:
        url = cluster.url("bench")
        with psycopg.connect(cluster.url(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE bench")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(TABLE)
            conn.execute("CREATE PUBLICATION bench_pub FOR TABLE student")
            conn.execute("SELECT pg_create_logical_replication_slot('recv', 'test_decoding')")
            conn.execute("SELECT pg_create_logical_replication_slot('peek_td', 'test_decoding')")
            conn.execute("SELECT pg_create_logical_replication_slot('peek_po', 'pgoutput')")
        with tempfile.TemporaryDirectory(prefix="ggsci-pgbench-") as tmp:
            home = Home(Path(tmp) / "home")
            home.create_subdirs()
            with psycopg.connect(url, autocommit=True) as conn:
                register(conn, home, "EPG", datetime.now())
            group = GroupDef(GroupKind.EXTRACT, "EPG", SourceType.TRANLOG, "x")
            GroupStore(home).save(group)
            t0 = time.perf_counter()
            changes = workload(url, args.transactions)
            print(f"changes={changes}")
            print(f"workload_s={time.perf_counter() - t0:.2f}")
            with psycopg.connect(url, autocommit=True) as conn:
                end = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
                assert end is not None
                for slot, sql in (
                    ("peek_td", "SELECT count(*) FROM pg_logical_slot_peek_changes('peek_td', "
                                "NULL, NULL, 'include-xids', '1', 'include-timestamp', '1')"),
                    ("peek_po", "SELECT count(*) FROM pg_logical_slot_peek_binary_changes("
                                "'peek_po', NULL, NULL, 'proto_version', '1', "
                                "'publication_names', 'bench_pub')"),
                ):  # fmt: skip
                    t = time.perf_counter()
                    conn.execute(sql).fetchone()
                    name = "test_decoding" if slot == "peek_td" else "pgoutput"
                    print(f"peek_{name}_s={time.perf_counter() - t:.2f}")
            out = Path(tmp) / "recv.txt"
            t = time.perf_counter()
            subprocess.run(
                [str(PG_BIN / "pg_recvlogical"), "-d", url, "--slot", "recv", "--start",
                 "-o", "include-xids=1", "-o", "include-timestamp=1", "--endpos", str(end[0]),
                 "--no-loop", "-f", str(out)],
                check=True, timeout=3600,
            )  # fmt: skip
            recv_s = time.perf_counter() - t
            recv_rate = changes / recv_s
            print(f"recvlogical_s={recv_s:.2f}")
            print(f"recvlogical_changes_per_s={recv_rate:.0f}")
            text = f"EXTRACT EPG\nSOURCEDB {url}\nEXTTRAIL ./dirdat/ep\nTABLE public.*;\n"
            model = check_text(text).model
            t = time.perf_counter()
            run = PgExtractRun(home, model, group, lambda c, s, m: None, durable=True)
            start_s = time.perf_counter() - t
            if args.profile:
                import cProfile
                import pstats

                prof = cProfile.Profile()
                prof.runcall(run.run, threading.Event(), stop_at_eof=True, idle=0)
                pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
            else:
                run.run(threading.Event(), stop_at_eof=True, idle=0)
            run.close()
            ext_s = time.perf_counter() - t
            written = run.capture.stats.trail_records
            assert written == changes, (written, changes)
            ext_rate = changes / ext_s
            print(f"extract_start_s={start_s:.2f}")  # connect, catalog, trail (in extract_s)
            print(f"extract_s={ext_s:.2f}")
            print(f"extract_trail_records={written}")
            print(f"extract_changes_per_s={ext_rate:.0f}")
            if args.big_transaction:
                big(url, home, group, text, args.big_transaction, args.cachemgr_mb)
            print(f"ratio_vs_recvlogical={ext_rate / recv_rate:.2f}")
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
