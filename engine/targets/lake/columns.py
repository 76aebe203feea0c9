"""One batch's operations on one table as Arrow columns, reduced per key in Arrow (the
columnar twin of :mod:`reduce`, which takes one record at a time).

A :class:`Change` is what the Replicat's columnar path (engine/replicat/lakefast.py) hands a
table: in commit order, each operation's kind (:data:`INSERT`, :data:`UPDATE`,
:data:`DELETE`), and per target column its values (trail text) with which operations carry
it (a compressed update carries some columns only). :func:`reduce_change` leaves the table
as applying every operation one after the other would, as :class:`reduce.Reduced` does:

* a key whose last operation is a delete holds no row;
* else its row is the last insert or delete of the key, overlaid with the columns each later
  update carries, in order: ``full`` (a column none of them set is NULL);
* a key with updates only is ``partial``: the columns the updates set, the others from the
  table's current row (``known`` says which columns each row sets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.targets.lake import LakeError
from engine.targets.lake.types import _bad_value, _cast

INSERT, UPDATE, DELETE = 0, 1, 2


@dataclass
class Change:
    ops: np.ndarray  # uint8, INSERT / UPDATE / DELETE, in commit order
    columns: dict[str, tuple[pa.Array, np.ndarray]]  # target column -> (values, present)
    key: tuple[str, ...]


@dataclass
class Reduced:
    """Rows that hold at the end (trail text; ``known`` per column for the ``partial`` rows)
    and the keys that hold none."""

    upserts: pa.Table
    known: dict[str, np.ndarray]
    partial: np.ndarray  # bool per upsert row: its base is the table's current row
    deletes: pa.Table


def _key_ids(arrays: list[pa.Array]) -> np.ndarray:
    """One integer per distinct key (several columns combined)."""
    ids: np.ndarray | None = None
    for a in arrays:
        enc = pc.dictionary_encode(a, null_encoding="encode")
        codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64)
        ids = codes if ids is None else ids * (len(enc.dictionary) + 1) + codes
    assert ids is not None
    _, inverse = np.unique(ids, return_inverse=True)
    return np.asarray(inverse, np.int64)


def reduce_change(c: Change, table: str) -> Reduced:
    n = len(c.ops)
    for k in c.key:
        present = c.columns[k][1] if k in c.columns else np.zeros(n, bool)
        if not present.all():
            i = int(np.flatnonzero(~present)[0])
            raise LakeError(
                f"Key column(s) {k} of {table} missing from operation {i + 1} of the batch "
                "(a record without its key cannot be applied by key).",
            )
    kid = _key_ids([c.columns[k][0] for k in c.key])
    keys = int(kid.max()) + 1 if n else 0
    idx = np.arange(n, dtype=np.int64)
    ops = c.ops
    last = np.full(keys, -1, np.int64)
    np.maximum.at(last, kid, idx)
    reset = ops != UPDATE
    last_reset = np.full(keys, -1, np.int64)
    np.maximum.at(last_reset, kid[reset], idx[reset])
    deleted = ops[last] == DELETE
    live = np.flatnonzero(~deleted)
    gone = np.flatnonzero(deleted)
    alive = ops != DELETE
    after = idx >= last_reset[kid]
    values: dict[str, pa.Array] = {}
    known: dict[str, np.ndarray] = {}
    for name, (arr, present) in c.columns.items():
        mask = present & alive & after
        lastc = np.full(keys, -1, np.int64)
        np.maximum.at(lastc, kid[mask], idx[mask])
        pick = lastc[live]
        known[name] = pick >= 0
        values[name] = pc.take(arr, pa.array(pick, mask=pick < 0))
    upserts = pa.table(values) if values else pa.table({})
    partial = last_reset[live] < 0
    first = last[gone]
    deletes = pa.table({k: pc.take(c.columns[k][0], pa.array(first)) for k in c.key})
    return Reduced(upserts, known, partial, deletes)


def cast_table(table: pa.Table, schema: pa.Schema, name: str) -> pa.Table:
    """``table`` (columns of trail text, any subset of ``schema``'s) as ``schema``: the
    other columns NULL; a value a column cannot hold raises :class:`LakeError` as
    :func:`types.to_arrow` does."""
    n = table.num_rows
    arrays = []
    for f in schema:
        if f.name not in table.column_names:
            arrays.append(pa.nulls(n, f.type))
            continue
        col = table.column(f.name).combine_chunks()
        if col.type == f.type:
            arrays.append(col)
            continue
        values = col.to_pylist()
        try:
            arrays.append(_cast(values, f.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
            arrays.append(_bad_value(values, f, name))
    return pa.Table.from_arrays(arrays, schema=schema)
