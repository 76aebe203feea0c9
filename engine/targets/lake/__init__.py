"""Lakehouse targets of the Replicat: Delta Lake tables (delta-rs, ``deltalake``) and Apache
Iceberg tables (``pyiceberg``, SQL catalog on SQLite by default), written in batches, with the
Replicat's position committed in the same table commit as the data (exactly once).

Modules:

- :mod:`location`  the handler's location (a directory or ``s3://``) as each library wants it
- :mod:`types`     the trail's text as typed Arrow columns; the type mapping of created tables
- :mod:`reduce`    one batch's operations on one table reduced to one row state per key
- :mod:`delta`     Delta tables: create, add columns, MERGE / append with the position, maintain
- :mod:`iceberg`   Iceberg tables: the same through pyiceberg

The Replicat's side (a room above this one) is :mod:`engine.replicat.lakeapply` (records as
batches per table: MAP, COLMAP, history columns) and :mod:`engine.replicat.lakerun` (the run
that commits a batch per table, then its checkpoint).

The libraries are the package's optional extra ``lake``: :func:`require` gives one line
naming it when one is missing.
"""

from __future__ import annotations

import importlib

from engine.targets import TargetError

EXTRA_HINT = "pip install 'ggsci[lake]' (the extra 'lake')"
_LIBRARIES = {"deltalake": ("deltalake",), "iceberg": ("pyiceberg", "sqlalchemy")}


class LakeError(TargetError):
    """A lakehouse table cannot be written (one line; ``code`` an OGG-style code)."""

    def __init__(self, message: str, code: str = "OGG-01004") -> None:
        super().__init__(message)
        self.code = code


def require(kind: str) -> None:
    """Raise :class:`LakeError` (one line naming the extra) when ``kind``'s library is absent."""
    for module in _LIBRARIES[kind]:
        try:
            importlib.import_module(module)
        except ImportError:
            raise LakeError(
                f"The {kind} handler needs the Python library {module}, which is not "
                f"installed: {EXTRA_HINT}.",
                "OGG-00664",
            ) from None
