"""An Iceberg batch applied by key as one copy-on-write snapshot, the rows to drop found in
Arrow.

pyiceberg's own delete takes a filter expression: for a batch that touches 10,000 keys an
``In`` of 10,000 literals, which it binds and evaluates per data file and manifest (most of
an Iceberg commit's time, docs/replicat.md). Here each data file of the table is read as
pyiceberg's delete reads it (``ArrowScan``: the current schema, position deletes applied),
the rows whose key the batch touches are found with ``pyarrow.compute.is_in`` (or a join for
a key of several columns), and a file that holds some is replaced by one without them; the
rows that hold at the end of the batch are added, all in one overwrite snapshot of the
caller's transaction.

It uses two helpers pyiceberg keeps module-private (``ArrowScan``, ``_dataframe_to_data_files``,
the ones its ``Transaction.delete`` uses), so the extra ``lake`` pins pyiceberg below 0.13.
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan, _dataframe_to_data_files
from pyiceberg.table import Table, Transaction


def hits(df: pa.Table, touched: pa.Table, key_cols: tuple[str, ...]) -> np.ndarray:
    """Which rows of ``df`` have a key among ``touched``'s."""
    if len(key_cols) == 1:
        k = key_cols[0]
        values = touched.column(k).combine_chunks().cast(df.schema.field(k).type)
        return np.asarray(pc.is_in(df.column(k), value_set=values).to_numpy(zero_copy_only=False))
    rowno = "__gg_row"
    probe = df.select(list(key_cols)).append_column(
        rowno, pa.array(np.arange(df.num_rows, dtype=np.int64))
    )
    keys = touched.select(list(key_cols)).cast(probe.select(list(key_cols)).schema)
    found = probe.join(
        keys.group_by(list(key_cols)).aggregate([]), list(key_cols), join_type="inner"
    )
    hit = np.zeros(df.num_rows, bool)
    hit[found.column(rowno).to_numpy()] = True
    return hit


def apply(
    table: Table,
    tx: Transaction,
    touched: pa.Table,
    upserts: pa.Table,
    key_cols: tuple[str, ...],
    summary: dict[str, str],
) -> None:
    """In ``tx``: every row whose key is in ``touched`` removed, ``upserts`` added."""
    meta = tx.table_metadata
    schema = meta.schema()
    io = table.io
    commit_uuid, counter = uuid.uuid4(), itertools.count(0)
    replaced: list[tuple[Any, list[Any]]] = []
    if touched.num_rows:
        for task in table.scan().plan_files():
            df = ArrowScan(
                table_metadata=meta, io=io, projected_schema=schema, row_filter=AlwaysTrue()
            ).to_table(tasks=[task])
            hit = hits(df, touched, key_cols)
            if not hit.any():
                continue
            keep = df.filter(pa.array(~hit))
            files = (
                list(_dataframe_to_data_files(meta, keep, io, commit_uuid, counter))
                if keep.num_rows
                else []
            )
            replaced.append((task.file, files))
    added = (
        list(_dataframe_to_data_files(meta, upserts, io, commit_uuid, counter))
        if upserts.num_rows
        else []
    )
    if not replaced and not added:
        return
    with tx.update_snapshot(snapshot_properties=summary).overwrite() as snapshot:
        snapshot.commit_uuid = commit_uuid
        for original, files in replaced:
            snapshot.delete_data_file(original)
            for f in files:
                snapshot.append_data_file(f)
        for f in added:
            snapshot.append_data_file(f)
