"""Which parameters of an Extract do nothing when its source is PostgreSQL (issue 25).

An Extract whose SOURCEDB is a ``postgresql://`` URL or a libpq string (or whose USERID names
``user@postgresql://...``) captures from a logical replication slot
(docs/postgres-source.md): the parameters below read Oracle's redo, manage the redo
Extract's open transactions, or replicate DDL, and get a "not used" warning naming why.
(A USERIDALIAS source is only known when the credential store is read, at start.)
"""

from __future__ import annotations

import re
from typing import Final

#: parameter -> why a PostgreSQL Extract does not use it
NOT_USED: Final[dict[str, str]] = {
    "TRANLOGOPTIONS": "it sets how Oracle redo is read; PostgreSQL's WAL is decoded by the "
    "server for the replication slot (only FILTERTABLE acts)",
    "THREADOPTIONS": "PostgreSQL has one WAL, no redo threads",
    "BR": "Bounded Recovery persists open transactions; the slot delivers only committed ones",
    "FETCHOPTIONS": "the key comes from REPLICA IDENTITY (ADD TRANDATA), nothing is fetched",
    "WARNLONGTRANS": "the slot shows a transaction only when it commits: none is open to warn of",
    "DDL": "DDL is not in PostgreSQL's logical decoding",
    "DDLOPTIONS": "DDL is not in PostgreSQL's logical decoding",
}


#: parameters only a PostgreSQL Extract acts on (TRANLOGOPTIONS FILTERTABLE's companions)
PG_ONLY: Final = frozenset({"GETREPLICATES", "IGNOREREPLICATES"})


def is_postgres_spec(spec: str | None) -> bool:
    if not spec:
        return False
    return spec.startswith(("postgresql://", "postgres://")) or bool(
        re.match(r"^\s*[a-z_]+\s*=", spec)
    )
