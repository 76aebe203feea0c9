"""Which target a Replicat applies to: TARGETDB, else the database of USERID ``user@db``.

* ``postgresql://...`` (or ``postgres://``): PostgreSQL (user and password from USERID are
  not known to the engine, which never sees passwords: put them in the URL or use a Unix
  socket with peer/trust authentication);
* anything else is an SQLite file, relative to the home (created if missing; its tables
  are not: a missing target table abends the Replicat with OGG-00199).

A name of an embedded *source* database (``dirdb/<NAME>/``) is refused: it is written only
through its own sessions, which produce its redo.
"""

from __future__ import annotations

from pathlib import Path

from engine.home.layout import Home
from engine.targets import TargetConnectError
from engine.targets.base import Target
from params.models import ParamFile


def target_spec(model: ParamFile) -> str | None:
    if model.target_db:
        return model.target_db
    userid = model.login.userid
    if userid and "@" in userid:
        return userid.partition("@")[2]
    return None


def open_target(home: Home, spec: str) -> Target:
    if spec.startswith(("postgresql://", "postgres://")):
        from engine.targets.postgres import PostgresTarget

        return PostgresTarget(spec)
    path = Path(spec).expanduser()
    path = path if path.is_absolute() else home.root / path
    if path.is_dir() or (home.dirdb / spec.upper() / "data.sqlite").exists():
        raise TargetConnectError(
            f"{spec} is an embedded source database, not a target: name an SQLite file "
            "(e.g. ./dirdb/target.db) or a postgresql:// URL."
        )
    from engine.targets.sqlite import SqliteTarget

    return SqliteTarget(path)
