"""FETCHOPTIONS: the key of an update that the redo does not carry, fetched by ROWID.

Seed 002: "The primary key value is not explicitly stored in the redo change vector; it is
included in the supplemental data for the undo change vector" - and the printed dumps omit
that supplemental data, so their updates reach the Extract without the key. GoldenGate then
fetches what it needs from the source database; so does this hook, on the driver: the miner
leaves such an update with its columns (:meth:`engine.extract.tasks.miner.Miner._rows`, the C walk
declines it), and :meth:`KeyFetch.rows` - a per-record hook at commit, like the heartbeat
rule - reads the key columns of the row at the record's ROWID from the embedded source
(:class:`engine.embedded.fetch.RowFetcher`) and adds them to the record, which is then the
seed's record (key, then the changed columns).

When the key cannot be fetched (the row is gone, ``FETCHOPTIONS NOFETCH`` or
``NOUSEROWID``), ``MISSINGROW`` decides: ALLOW / IGNORE (the default) write the record as the
redo gave it, REPORT does that and reports the row, DISCARD drops the record, ABEND stops the
Extract (:class:`KeyNotFetched`, an :class:`~engine.extract.start.ExtractError`). Every
failure but ALLOW's is said in the report file (:data:`NOT_FETCHED`): IGNORE's once per
table, REPORT's for each row with its columns, DISCARD's for each row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from engine.changes import Lcr
from engine.embedded.dictionary import Dictionary, TableDef
from engine.embedded.errors import SourceError
from engine.embedded.fetch import RowFetcher
from engine.extract.start import ExtractError
from engine.extract.tasks.values import converter
from engine.runtime.events import Severity
from engine.trail.codec import user_token
from engine.trail.layout import IOType
from params.models import FetchOptions, ParamFile, TableSpec

Emit = Callable[[str, Severity, str], None]
NOT_FETCHED = "OGG-01923"
"""Warning: an update's key was not in the redo and could not be fetched."""
ABENDED = "OGG-01924"
"""MISSINGROW ABEND: the Extract stops on a key it could not fetch."""
KEY_FETCH_TOKEN = "GGS_KEY_FETCH"
"""The user token of a record written without its key: NOFETCH, NOUSEROWID or MISSINGROW."""


class Fetcher(Protocol):
    def fetch(
        self, table: TableDef, rowid: str, columns: tuple[int, ...]
    ) -> dict[int, bytes | None] | None: ...

    def close(self) -> None: ...


class KeyNotFetched(ExtractError):
    """MISSINGROW ABEND: the Extract abends with this message."""

    def __init__(self, text: str) -> None:
        super().__init__(ABENDED, text)


class KeyFetch:
    """The per-record hook: ``rows`` at commit (on the driver)."""

    def __init__(
        self,
        fetcher: Fetcher,
        table_of: Callable[[str], TableDef | None],
        key_of: Callable[[str], tuple[int, ...]],
        options_of: Callable[[str], FetchOptions],
        emit: Emit,
    ) -> None:
        self.fetcher = fetcher
        self.table_of = table_of
        self.key_of = key_of
        self.options_of = options_of
        self.emit = emit
        self.fetched = 0
        self.missing: Counter[str] = Counter()

    def close(self) -> None:
        self.fetcher.close()

    def rows(self, rows: Iterable[Lcr]) -> Iterator[Lcr]:
        for lcr in rows:
            if lcr.io_type != IOType.FIELDCOMP or lcr.record:
                yield lcr  # a template carries its key (the miner encodes only those)
                continue
            table = self.table_of(lcr.table)
            have = {i for i, _ in lcr.columns}
            missing = tuple(i for i in self.key_of(lcr.table) if i not in have)
            if table is None or not missing:
                yield lcr
                continue
            out = self._fetch(lcr, table, missing)
            if out is not None:
                yield out

    def _fetch(self, lcr: Lcr, table: TableDef, missing: tuple[int, ...]) -> Lcr | None:
        options = self.options_of(lcr.table)
        raw = None
        if lcr.rowid and options.use_rowid and not options.nofetch:
            try:
                raw = self.fetcher.fetch(table, lcr.rowid, missing)
            except SourceError as exc:  # not a missing row: the fetch itself failed
                raise ExtractError(ABENDED, f"Fetch from the source failed: {exc}.") from exc
        if raw is not None:
            self.fetched += 1
            key = tuple((i, converter(table.columns[i].type)(raw[i])) for i in missing)
            return replace(lcr, columns=tuple(sorted(lcr.columns + key)))
        return self._not_fetched(lcr, table, missing, options)

    def _not_fetched(
        self, lcr: Lcr, table: TableDef, missing: tuple[int, ...], options: FetchOptions
    ) -> Lcr | None:
        action = options.missing_row
        self.missing[lcr.table] += 1
        names = ", ".join(table.columns[i].name for i in missing)
        why = (
            "no fetch (FETCHOPTIONS NOFETCH)"
            if options.nofetch
            else "no fetch by ROWID (FETCHOPTIONS NOUSEROWID)"
            if not options.use_rowid
            else f"no row at ROWID {lcr.rowid}"
        )
        what = (
            f"Key column(s) {names} of an update of {lcr.table} are not in the redo and "
            f"could not be fetched: {why} (SCN {lcr.scn})"
        )
        if action == "ABEND":
            raise KeyNotFetched(f"{what}. MISSINGROW ABEND.")
        if action == "DISCARD":
            self.emit(NOT_FETCHED, Severity.WARNING, f"{what}; the record is discarded.")
            return None
        if action == "REPORT":
            shown = ", ".join(f"{table.columns[i].name} = {v}" for i, v in lcr.columns)
            self.emit(NOT_FETCHED, Severity.WARNING, f"{what}; written without it: {shown}.")
        elif action == "IGNORE" and self.missing[lcr.table] == 1:
            self.emit(NOT_FETCHED, Severity.WARNING, f"{what}; written without it (MISSINGROW "
                      "IGNORE: later ones of this table are not reported).")  # fmt: skip
        # the record says it too: a user token (Logdump shows TKN-GGS_KEY_FETCH)
        status = (
            "NOFETCH"
            if options.nofetch
            else "NOUSEROWID"
            if not options.use_rowid
            else ("MISSINGROW")
        )
        return replace(lcr, tokens=(*lcr.tokens, user_token(KEY_FETCH_TOKEN, status)))


def options_for(model: ParamFile, spec: TableSpec | None) -> FetchOptions:
    """The FETCHOPTIONS in force where the TABLE statement ``spec`` stands: the last one
    before it (the defaults when there is none, or no statement)."""
    at = next((i for i, t in enumerate(model.tables) if t is spec), -1)
    found = [o for n, o in model.fetch_options if n <= at]
    return found[-1] if found else FetchOptions()


def for_extract(
    model: ParamFile,
    root: Path,
    dictionary: Callable[[], Dictionary],
    keycols: Callable[[], dict[str, tuple[int, ...]]],
    emit: Emit,
) -> KeyFetch:
    """The hook of an Extract reading the embedded source at ``root``: ``dictionary`` gives
    the current dictionary, ``keycols`` the KEYCOLS keys by table (the table's own key
    otherwise), FETCHOPTIONS the one in force where the table's TABLE statement stands."""

    def table_of(qualified: str) -> TableDef | None:
        return dictionary().tables.get(qualified)

    def key_of(qualified: str) -> tuple[int, ...]:
        keys = keycols().get(qualified)
        t = table_of(qualified)
        if keys or t is None:
            return keys or ()
        return tuple(t.column_index(k) for k in t.key_columns)

    def options_of(qualified: str) -> FetchOptions:
        t = table_of(qualified)
        return options_for(model, model.captured(t.owner, t.name) if t else None)

    return KeyFetch(RowFetcher(root), table_of, key_of, options_of, emit)
