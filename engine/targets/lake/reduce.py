"""One batch's operations on one table, reduced to one state per key in commit order.

Applying the reduced states in one table commit leaves the table as applying every
operation one after the other would: the last operation on a key decides whether it holds
a row (an upsert) or none (a delete). A compressed update carries some columns only: the
state keeps which columns it knows and, when it does not know them all, from which key the
table's current row supplies the rest (``base``: itself, or the old key of a key update).

Pure: rows are dicts of column -> value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Key = tuple[Any, ...]
Row = dict[str, Any]


@dataclass(slots=True)
class State:
    """``row`` None: the key holds no row at the end of the batch. ``full``: the row holds
    every column; else ``base`` is the key whose row in the table supplies the others."""

    row: Row | None
    full: bool = True
    base: Key | None = None


@dataclass
class Reduced:
    """The states of one table's batch; ``truncated``: the table is emptied first."""

    states: dict[Key, State] = field(default_factory=dict)
    truncated: bool = False

    def insert(self, key: Key, row: Row) -> None:
        self.states[key] = State(dict(row), True, None)

    def update(self, key: Key, row: Row) -> None:
        prev = self.states.get(key)
        if prev is not None and prev.row is not None:
            prev.row.update(row)
            return
        if prev is not None or self.truncated:  # deleted (or emptied) in this batch
            self.states[key] = State(dict(row), True, None)  # what it carries, NULL the rest
            return
        self.states[key] = State(dict(row), False, key)

    def key_update(self, old: Key, new: Key, row: Row) -> None:
        prev = self.states.get(old)
        if old == new:
            self.update(new, row)
            return
        self.states[old] = State(None)
        if prev is not None and prev.row is not None:
            merged = {**prev.row, **row}
            self.states[new] = State(merged, prev.full, prev.base)
        elif prev is not None or self.truncated:
            self.states[new] = State(dict(row), True, None)
        else:
            self.states[new] = State(dict(row), False, old)

    def delete(self, key: Key) -> None:
        self.states[key] = State(None)

    def truncate(self) -> None:
        self.states.clear()
        self.truncated = True

    def bases(self) -> set[Key]:
        """The keys whose current rows in the table must be read (partial states)."""
        return {s.base for s in self.states.values() if not s.full and s.base is not None}
