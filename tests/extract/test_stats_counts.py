"""STATS counts kept by the Extract: per table and operation, for what reached the trail."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from engine.extract.run import ExtractRun
from engine.home.layout import Home
from engine.runtime.stats import StatsRequest
from params.check import check_text

from .conftest import run_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRM = "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\nTABLE hr.*;\n"


def figures(screen: list[str], table: str) -> dict[str, str]:
    start = screen.index(f"Extracting from {table} to {table}:")
    block = screen[start : start + 9]
    return {ln.split("\t")[1].strip(): ln.split("\t")[-1].strip() for ln in block if "\t" in ln}


def test_extract_counts_per_table_and_operation(
    home: Home, source: Any, spark: SparkSession
) -> None:
    _, open_db = source
    with open_db() as db:
        run_sql(db, [
            ("s1", "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, sal NUMBER)"),
            ("s1", "CREATE TABLE hr.dept (id NUMBER PRIMARY KEY)"),
            ("s1", "INSERT INTO hr.emp VALUES (1, 10)"),
            ("s1", "INSERT INTO hr.emp VALUES (2, 20)"),
            ("s1", "INSERT INTO hr.dept VALUES (7)"),
            ("s1", "COMMIT"),
            ("s1", "UPDATE hr.emp SET sal = 11 WHERE id = 1"),
            ("s1", "DELETE FROM hr.dept WHERE id = 7"),
            ("s1", "COMMIT"),
            ("s2", "INSERT INTO hr.emp VALUES (3, 30)"),
            ("s2", "ROLLBACK"),
        ])  # fmt: skip
    run = ExtractRun(home, check_text(PRM).model, None, lambda *a: None, spark=spark, durable=False)
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    screen = run.stats_book.screen(StatsRequest(("TOTAL",)))
    assert "Output to ./dirdat/aa:" in screen
    emp = figures(screen, "HR.EMP")
    assert (emp["Total inserts"], emp["Total updates"], emp["Total deletes"]) == (
        "2.00",
        "1.00",
        "0.00",
    )
    dept = figures(screen, "HR.DEPT")
    assert (dept["Total inserts"], dept["Total deletes"], dept["Total operations"]) == (
        "1.00",
        "1.00",
        "2.00",
    )
