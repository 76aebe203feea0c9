"""A home with a trail and a lakehouse Replicat run in process, and reading tables back with
the same libraries (deltalake, pyiceberg) into sorted Python rows."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

from replicat_helpers import add_group, model

from engine.home.groups import GroupKind, GroupStore, SourceType
from engine.home.layout import Home
from engine.replicat import checkpoint_table as ct
from engine.replicat.lakerun import LakeReplicatRun
from engine.runtime.events import Severity

TRAIL = "./dirrmt/bb"
CKPT_DB = "dirchk/lake.db"


def lake_home(root: Path) -> Home:
    h = Home(root)
    h.create_subdirs()
    conn = sqlite3.connect(h.root / CKPT_DB)
    ct.create(conn, ct.TableName.parse("gg.chkpt"), "sqlite")
    conn.close()
    return h


def props_text(kind: str, location: str = "./lake", extra: str = "") -> str:
    return (
        "gg.handlerlist=lake\n"
        f"gg.handler.lake.type={kind}\n"
        f"gg.handler.lake.location={location}\n"
        "gg.handler.lake.mode=op\n"
        "gg.handler.lake.batchIntervalMs=0\n" + extra
    )


def prm(maps: str, ops: int = 1000) -> str:
    return (
        "REPLICAT rep\nTARGETDB LIBFILE libggjava.so SET property=dirprm/rep.props\n"
        f"GROUPTRANSOPS {ops}\n{maps}\n"
    )


def lake_run(
    home: Home,
    kind: str,
    maps: str,
    *,
    location: str = "./lake",
    ops: int = 1000,
    extra: str = "",
    cpt: str | None = "gg.chkpt",
    reuse: bool = False,
) -> tuple[LakeReplicatRun, list[str]]:
    """The Replicat REP of ``home`` (added, unless ``reuse``: as a process restarted)."""
    (home.dirprm / "rep.props").write_text(props_text(kind, location, extra))
    stored = GroupStore(home).get("REP") if reuse else None
    group = stored or add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, TRAIL)
    if cpt and not reuse:
        group = replace(group, checkpoint_table=cpt)
        GroupStore(home).save(group)
    seen: list[str] = []

    def emit(code: str, _sev: Severity, text: str) -> None:
        seen.append(f"{code} {text}")

    r = LakeReplicatRun(home, model(home, "rep", prm(maps, ops)), group, emit)
    return r, seen


def drain(r: LakeReplicatRun) -> None:
    r.run(lambda: False, stop_at_eof=True, idle=0.01)
    r.close()


def read_delta(path: Path | str, options: dict[str, str] | None = None) -> list[dict[str, Any]]:
    from deltalake import DeltaTable

    rows = DeltaTable(str(path), storage_options=options).to_pyarrow_table().to_pylist()
    return sorted(rows, key=_order)


def read_iceberg(home: Home, ident: str, catalog_dir: Path | None = None) -> list[dict[str, Any]]:
    from pyiceberg.catalog import load_catalog

    where = catalog_dir or home.root / "lake"
    cat = load_catalog(
        "ggsci", type="sql", uri=f"sqlite:///{where / 'iceberg_catalog.db'}", warehouse=str(where)
    )
    return sorted(cat.load_table(ident).scan().to_arrow().to_pylist(), key=_order)


def _order(row: dict[str, Any]) -> tuple[str, ...]:
    return tuple("" if v is None else str(v) for v in row.values())
