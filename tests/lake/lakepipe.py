"""An Extract ==> pump ==> Replicat home whose Replicat delivers to lakehouse tables: the
pipeline of engine.pipeline_home with its checkpoint database ``./dirchk/lake.db`` (the
checkpoint table and heartbeat tables) and a Replicat parameter file naming a properties
file. Each source table is mapped twice: applied by key (``wl.*``) and as history
(``hist.*``, INSERTALLRECORDS). Tables are read back with deltalake / pyiceberg."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from lakehelp import props_text

from engine.home.layout import Home
from engine.targets.base import temporal_text
from tests.harness import pipeline_home as ph

CKPT_DB = "./dirchk/lake.db"
COLUMNS = tuple(c for c, _ in ph.WORKLOAD_COLUMNS)


def lake_spec(heartbeat: bool = False) -> ph.PipelineSpec:
    return ph.PipelineSpec(CKPT_DB, ph.workload_tables(2), grouptransops=200,
                           heartbeat_frequency=1 if heartbeat else None)  # fmt: skip


def lake_prm(spec: ph.PipelineSpec) -> str:
    return (
        f"REPLICAT {spec.replicat.name}\n"
        f"TARGETDB LIBFILE libggjava.so SET property=dirprm/{spec.replicat.name}.props\n"
        f"CHECKPOINTSECS 1\nGROUPTRANSOPS {spec.grouptransops}\n"
        "MAP wl.*, TARGET wl.*, KEYCOLS (ID);\n"
        "MAP wl.*, TARGET hist.*, INSERTALLRECORDS;\n"
    )


def prepare_lake_home(root: Path, spec: ph.PipelineSpec, kind: str, location: str) -> Home:
    home = Home(root)
    ph.prepare_home(home, spec)  # (its SQL tables in lake.db are not used)
    (home.dirprm / f"{spec.replicat.name}.prm").write_text(lake_prm(spec))
    props = props_text(kind, location).replace("batchIntervalMs=0", "batchIntervalMs=200")
    (home.dirprm / f"{spec.replicat.name}.props").write_text(props)
    return home


def _canon(column: str, v: Any) -> str | None:
    if v is None:
        return None
    text = str(v)
    if column == "CREATED":
        return temporal_text(text)
    try:
        return format(Decimal(text).normalize(), "f")
    except InvalidOperation:
        return text


def canonical(rows: list[dict[str, Any]]) -> list[tuple[str | None, ...]]:
    out = [tuple(_canon(c, r.get(c)) for c in COLUMNS) for r in rows]
    return sorted(out, key=lambda r: Decimal(r[0] or "0"))


def lake_rows(home: Home, kind: str, location: str, owner: str, name: str,
              options: dict[str, str] | None = None) -> list[dict[str, Any]] | None:  # fmt: skip
    """A table's rows read back with its own library (None while it does not exist)."""
    if kind == "deltalake":
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        base = location if location.startswith("s3://") else str(home.root / location)
        try:
            dt = DeltaTable(f"{base.rstrip('/')}/{owner.lower()}/{name.lower()}",
                            storage_options=options)  # fmt: skip
        except TableNotFoundError:
            return None
        return list(dt.to_pyarrow_table().to_pylist())
    from pyiceberg.exceptions import NoSuchTableError

    from engine.targets.lake.iceberg import open_catalog

    where = home.root / location if not location.startswith("s3://") else home.dirchk
    if not (where / "iceberg_catalog.db").exists():
        return None
    cat = open_catalog("ggsci", type="sql", uri=f"sqlite:///{where / 'iceberg_catalog.db'}",
                       warehouse=location, **(options or {}))  # fmt: skip
    try:
        return list(cat.load_table(f"{owner.lower()}.{name.lower()}").scan().to_arrow().to_pylist())
    except NoSuchTableError:
        return None


def source_canonical(home: Home, spec: ph.PipelineSpec, t: ph.TargetTable) -> list[Any]:
    rows = [dict(zip(COLUMNS, r, strict=True)) for r in ph.source_rows(home, spec, t)]
    return canonical(rows)


def _carried(values: Any) -> tuple[tuple[str, str | None], ...]:
    return tuple((c, v) for c, v in values if v is not None)


def history_verdict(home: Home, kind: str, location: str, spec: ph.PipelineSpec) -> Any:
    """The history tables (every operation appended, in trail order by POSITION) held to the
    source's committed changes (engine.soak.expected): lost, dup, out_of_order. Each change
    is compared by the columns the trail carries for it (a compressed update its changed
    columns and key, a delete its key), with its CSN and transaction id."""
    from tests.harness.soak.audit import compare_audit
    from tests.harness.soak.expected import image, read_source

    source = read_source(home.dirdb / "SRC", spec.schemas)
    rows: list[tuple[str, str, dict[str, Any]]] = []
    for t in spec.tables:
        for r in lake_rows(home, kind, location, "hist", t.name) or []:
            rows.append((str(r["POSITION"]), f"{t.schema}.{t.name}".upper(), r))
    rows.sort(key=lambda x: x[0])
    op = {"I": "INSERT", "U": "UPDATE", "D": "DELETE"}
    got = []
    for _, name, r in rows:
        values = {c: r[c] for c in COLUMNS}
        img = _carried(image(source.tables[name], values))
        got.append((name, op[str(r["OP_TYPE"])], (str(r["CSN"]), str(r["TRANID"]), img)))
    expected = [
        (c.table, c.op, (t.csn, t.xid, _carried(c.values))) for t in source.txns for c in t.changes
    ]
    return compare_audit(got, expected)  # type: ignore[arg-type]
