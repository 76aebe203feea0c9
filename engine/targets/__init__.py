"""Target databases of Replicat: SQLite files (the embedded default) and PostgreSQL.

A :class:`~engine.targets.base.Target` is one connection with explicit transactions,
savepoints, table introspection (columns, their kind, the primary key) and errors mapped to
Oracle-style numbers so that ``REPERROR (1403, ...)`` means the same on every target.
:func:`~engine.targets.resolve.open_target` chooses the target from TARGETDB or the login.

Errors (all :class:`TargetError`, a ``RuntimeError``):

* :class:`TargetConnectError` - the database cannot be found or opened;
* :class:`TargetSqlError` - a statement failed; ``number`` is the Oracle-style error number
  (1 unique constraint, 1400 NOT NULL, 1403 no data found, 1722 invalid number, else the
  database's own code as a number when it has one, else 0).
"""

from __future__ import annotations


class TargetError(RuntimeError):
    """Root of this package's errors; ``number`` is an Oracle-style error number."""

    def __init__(self, message: str, number: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.number = number


class TargetConnectError(TargetError):
    pass


class TargetSqlError(TargetError):
    pass


NO_DATA_FOUND = 1403
UNIQUE_CONSTRAINT = 1
