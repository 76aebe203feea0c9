"""docs/quickstart-postgres.md, run from the page against the session's PostgreSQL 15 (the
page's ``localhost:5432`` is this cluster's address): the same reading rules as
tests/shell/test_quickstart.py, plus ``psql URL -c "SQL"`` (run with psycopg, rows printed
as ``psql -At`` prints them)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import psycopg
import pytest

from engine.home.layout import Home
from engine.home.status import MANAGER, State, read_process_file
from tests.harness.pipeline_home import free_port
from tests.postgres.cluster import Cluster
from tests.shell.test_quickstart import commands, matches, run, steps

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
PAGE = Path(__file__).resolve().parents[2] / "docs" / "quickstart-postgres.md"
WAIT = 120.0


def psql(command: str) -> str:
    import shlex

    argv = shlex.split(command)
    assert argv[0] == "psql" and argv[2] == "-c", command
    with psycopg.connect(argv[1], autocommit=True) as conn:
        cur = conn.execute(argv[3])
        rows = cur.fetchall() if cur.description is not None else []
    return "".join("|".join("" if v is None else str(v) for v in r) + "\n" for r in rows)


def test_postgres_quickstart_runs_as_written(tmp_path: Path, pg_cluster: Cluster) -> None:
    here_addr = f"127.0.0.1:{pg_cluster.port}"
    # The page's Manager port, 7809, is GoldenGate's default: another program may hold it.
    port = str(free_port())
    cwd = tmp_path
    try:
        for step in steps(PAGE.read_text()):
            text = step.text.replace("localhost:5432", here_addr).replace("7809", port)
            if step.kind == "file":
                (cwd / step.target).write_text(text)
                continue
            deadline = time.monotonic() + (WAIT if step.wait else 0)
            while True:
                printed = []
                here = cwd
                for command, shown in commands(text):
                    if command.startswith("psql "):
                        out = psql(command)
                    else:
                        here, out = run(here, command)
                    printed.append((command, out, matches(shown, out)))
                missing = [p for p in printed if p[2] is not None]
                if not missing or time.monotonic() >= deadline:
                    break
                time.sleep(2)
            cwd = here
            for command, out, miss in missing:
                raise AssertionError(f"$ {command}\n{out}\n--- shown but not printed: {miss!r}")
    finally:
        h = Home(cwd)
        for kind, name in (("REPLICAT", "REP1"), ("EXTRACT", "PMP1"), ("EXTRACT", "EPG"),
                           (MANAGER, MANAGER)):  # fmt: skip
            pf = read_process_file(h, kind, name)
            if pf is not None and pf.state in (State.STARTING, State.RUNNING):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pf.pid, signal.SIGKILL)
        with psycopg.connect(pg_cluster.url(), autocommit=True) as conn:
            for (slot,) in conn.execute(
                "SELECT slot_name FROM pg_replication_slots WHERE database = 'shop'"
            ).fetchall():
                conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
            conn.execute("DROP DATABASE IF EXISTS shop WITH (FORCE)")
