"""Helpers of the PostgreSQL-source tests: a registered group in a home, an in-process
Extract run over a parameter file, and the trail's records."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any

import psycopg

from engine.home.groups import GroupDef, GroupKind, GroupStore, SourceType
from engine.home.layout import Home
from engine.postgres.run import PgExtractRun
from engine.postgres.slot import register
from engine.runtime.events import Severity
from engine.trail.model import TrailRecord
from engine.trail.reader import TrailReader
from params.check import check_text


def setup_group(home: Home, url: str, name: str = "EPG", *, begin: str | None = None,
                lsn: int | None = None) -> GroupDef:  # fmt: skip
    with psycopg.connect(url, autocommit=True) as conn:
        register(conn, home, name, datetime.now())
    group = GroupDef(GroupKind.EXTRACT, name, SourceType.TRANLOG, "2026-01-01 00:00:00",
                     begin=begin, scn=lsn)  # fmt: skip
    GroupStore(home).save(group)
    return group


def prm(url: str, tables: str = "TABLE public.*;", extra: str = "", name: str = "EPG") -> str:
    return (
        f"EXTRACT {name}\nSOURCEDB {url}\n{extra}EXTTRAIL ./dirdat/{name[:2].lower()}\n{tables}\n"
    )


class Events:
    def __init__(self) -> None:
        self.lines: list[tuple[str, Severity, str]] = []

    def __call__(self, code: str, sev: Severity, text: str) -> None:
        self.lines.append((code, sev, text))

    def codes(self) -> list[str]:
        return [c for c, _, _ in self.lines]


def run_once(home: Home, group: GroupDef, text: str, events: Events | None = None) -> PgExtractRun:
    result = check_text(text)
    assert not result.errors, result.errors
    run = PgExtractRun(home, result.model, group, events or Events(), durable=False)
    try:
        run.run(threading.Event(), stop_at_eof=True, idle=0)
    finally:
        run.close()
    return run


def records(home: Home, prefix: str = "ep") -> list[TrailRecord]:
    with TrailReader(str(home.root / "dirdat" / prefix)) as reader:
        return [r for _, r in reader.records()]


def sql(url: str, *statements: str, params: Any = None) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for s in statements:
            conn.execute(s, params)
