"""Rows too large for one trail record, end to end with real processes (issue 29): ``ggsci db
run`` logs an 80 KB row in the embedded source, the Extract writes it as continued records
(seed 003: Continued, RecCount, RecordFragment), the pump carries them to the Collector's
trail, the Replicat joins them and the target equals the source (SQLite and PostgreSQL)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pipeline import ggsci, in_sync, new_home, report, shutdown, wait_until

from engine.home.layout import Home
from engine.logdump.dump import dump_files
from engine.trail.layout import IOType
from engine.trail.reader import TrailReader
from tests.harness import pipeline_home as ph

BIG = ph.TargetTable("APP", "BIG", (("ID", "NUMERIC PRIMARY KEY"), ("V", "VARCHAR(10)"),
                                    ("W", "TEXT")))  # fmt: skip

SCRIPT = """
CREATE TABLE app.big (id NUMBER PRIMARY KEY, v VARCHAR2(10), w VARCHAR2(400000));
INSERT INTO app.big VALUES (1, 'a', '{x80}');
INSERT INTO app.big VALUES (2, 'b', '{e70}');
INSERT INTO app.big VALUES (3, 'c', 'small');
COMMIT;
UPDATE app.big SET w = '{y100}' WHERE id = 3;
INSERT INTO app.big VALUES (4, 'd', '{x300}');
DELETE FROM app.big WHERE id = 2;
COMMIT;
"""


def _db_run(home: Home, text: str) -> None:
    script = home.root / "big.sql"
    script.write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "ggsci", "db", "run", "src", str(script), "--user", "APP",
         "--home", str(home.root)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def _pieces(path: Path) -> list[dict[str, object]]:
    out = io.StringIO()
    for f in sorted(path.parent.glob(path.name + "*")):
        dump_files([f], out, as_json=True)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _pipeline(tmp_path: Path, target: str) -> None:
    spec = ph.PipelineSpec(target, (BIG,))
    home = new_home(tmp_path, spec)
    out = ggsci(home, *ph.target_commands(spec))
    assert "ERROR" not in out, out
    text = SCRIPT.format(x80="x" * 80_000, e70="é€" * 35_000, y100="y" * 100_000,
                         x300="z" * 300_000)  # fmt: skip
    _db_run(home, text.split("INSERT", 1)[0])  # the table first, then the Extract starts
    try:
        out = ggsci(home, *ph.add_and_start_commands(spec))
        assert "REPLICAT REP1 starting" in out, out
        _db_run(home, "INSERT" + text.split("INSERT", 1)[1])
        try:
            wait_until(lambda: in_sync(home, spec) and bool(ph.source_rows(home, spec, BIG)),
                       "the target to equal the source", 180)  # fmt: skip
        except AssertionError:
            raise AssertionError(report(home, "EXT1") + report(home, "REP1")) from None
        rows = ph.target_rows(home, spec, BIG)
        assert [(r[0], len(r[2] or "")) for r in rows] == [
            ("1", 80_000), ("3", 100_000), ("4", 300_000)
        ]  # fmt: skip
    finally:
        shutdown(home, spec)
    # both trails hold the rows as continued records, read back joined
    for trail in (home.root / "dirdat" / "lt", home.root / "dirrmt" / "rt"):
        pieces = _pieces(trail)
        fragments = [p for p in pieces if p["io_type"] == IOType.RECORD_FRAGMENT]
        assert len(fragments) >= 1 + 1 + 1 + 4, (trail, len(fragments))
        assert all(p["table"] == "APP.BIG" for p in fragments)
        joined = [r for _, r in TrailReader(trail).records() if r.table == "APP.BIG"]
        sizes = sorted(len(dict(r.columns).get(2) or "") for r in joined)
        assert sizes[-4:] == [70_000, 80_000, 100_000, 300_000], sizes


@pytest.mark.e2e
def test_an_80kb_row_from_db_run_reaches_the_sqlite_target(tmp_path: Path) -> None:
    _pipeline(tmp_path, "./tgt.db")


@pytest.mark.e2e
@pytest.mark.postgres
def test_an_80kb_row_from_db_run_reaches_postgresql(tmp_path: Path, pg_url: str) -> None:
    _pipeline(tmp_path, pg_url)
