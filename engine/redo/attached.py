"""A real Oracle database attached to a home by its archived logs (``ggsci db attach``).

Laid out beside the embedded databases, as ``dirdb/NAME/``:

- ``attached.json`` (sealed, :mod:`engine.home.jsonfile`): ``{"kind": "oracle-archived-logs",
  "archive": LOCATION, "format": LOG_ARCHIVE_FORMAT, "dictionary": "oracle_dictionary.json",
  "attached": ISO time}``; LOCATION is an absolute directory or a storage URL (``s3://``),
  without its secret: ``s3://KEY:SECRET@...`` is written ``s3://KEY@...``, the secret kept
  in the home's credential store (:mod:`engine.home.storagecreds`, alias ``ATTACHED_NAME``);
- ``oracle_dictionary.json``: a copy of the dictionary given (OpenLogReplicator's schema
  checkpoint or ggsci's own dictionary JSON, :mod:`engine.redo.dictionary`), so the
  database's decoding does not depend on a file outside the home.

Names follow the embedded databases' rule (:func:`engine.home.names.database_name`): upper
case, at most 30 of ``A-Z 0-9 _ $ #``. ``SOURCEDB NAME`` of an Extract then reads this
database's archived logs (:mod:`engine.extract.alo`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engine import storage
from engine.home import storagecreds
from engine.home.jsonfile import JsonRefused, loads_bounded, unseal, write_json, write_private
from engine.home.layout import Home
from engine.home.names import database_name
from engine.home.trust import BadFile, check_trusted_dir, read_trusted
from engine.home.userfile import UserFileError, read_user_file
from engine.redo.archnames import DEFAULT_FORMAT, format_problem
from engine.redo.dictionary import MAX_DICTIONARY_BYTES, Dictionary, DictionaryError
from engine.redo.dictionary import load as load_dictionary
from engine.redo.errors import RedoError

KIND = "oracle-archived-logs"
RECORD = "attached.json"
DICTIONARY = "oracle_dictionary.json"


class AttachError(RedoError):
    """A mistake in ``ggsci db attach`` or an attached database that cannot be used."""

    default_code = "GGS-REDO-0020"


@dataclass(frozen=True)
class Attached:
    """One attached database: where its archived logs are, their names, its dictionary."""

    name: str
    root: Path
    archive: str
    format: str

    def with_secret(self, location: str) -> str:
        """``location`` (an ALTARCHIVELOGDEST) with the secret this database's alias keeps
        when it names the same key alone (``s3://KEY@bucket/...``): the parameter file then
        holds no secret. Any other location is returned as given."""
        return storagecreds.restore(_home(self.root.parent), location, _alias(self.name))

    @property
    def dictionary_path(self) -> Path:
        return self.root / DICTIONARY

    def dictionary(self) -> Dictionary:
        """The copy made at attach, read only if the home's owner wrote it (not a link, not
        another user's, writable by nobody else)."""
        path = self.dictionary_path
        try:
            raw = read_trusted(
                path, _home(self.root.parent), "Dictionary copy", MAX_DICTIONARY_BYTES
            )
        except FileNotFoundError:
            raise AttachError(f"{path} is missing: attach {self.name} again") from None
        except BadFile as exc:
            raise AttachError(str(exc)) from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AttachError(f"{path} is damaged (not UTF-8: {exc.reason})") from None
        return load_dictionary(path, text)


def _location(archive: str) -> str:
    """The archive location as stored: a local path made absolute and checked to be a
    directory; a storage URL checked to be usable (listed once)."""
    if storage.is_local(archive):
        path = storage.local_path(archive).resolve()
        if not path.is_dir():
            raise AttachError(f"archive location {archive} is not a directory")
        return str(path)
    try:
        storage.list_files(archive)
    except storage.StorageError as exc:
        raise AttachError(f"archive location {exc.message}") from None  # it names it, masked
    return archive


def _format(fmt: str) -> str:
    problem = format_problem(fmt, writing=False)  # a reader needs %s only
    if problem:
        raise AttachError(problem)
    return fmt


def attach(dirdb: Path, name: str, archive: str, dictionary: Path, fmt: str | None) -> Attached:
    """Record ``name`` under ``dirdb``: the archive location, its format and a copy of the
    dictionary (read first: one that does not load is refused, nothing is written)."""
    up = database_name(name)
    if up is None:
        raise AttachError(f"invalid database name {name!r}")
    root = dirdb / up
    _trusted_dirs(dirdb, root)
    if (root / "data.sqlite").exists():
        raise AttachError(f"database {up} already exists as an embedded database")
    if os.path.lexists(root / RECORD):
        raise AttachError(f"database {up} is already attached (ggsci db drop {up} first)")
    # (a key without its secret: the one ALTER CREDENTIALSTORE keeps under the alias)
    location = _location(storagecreds.restore(_home(dirdb), archive, _alias(up)))
    fmt = _format(DEFAULT_FORMAT if fmt is None else fmt)  # '' given is refused, not defaulted
    try:  # a FIFO, a device, a huge file: one line, never a wait
        data = read_user_file(dictionary, MAX_DICTIONARY_BYTES)
        text = data.decode("utf-8")
    except UserFileError as exc:  # a dictionary that cannot be read is a dictionary error
        raise DictionaryError(f"dictionary {exc}") from None
    except UnicodeDecodeError as exc:
        raise AttachError(f"dictionary {dictionary}: not UTF-8 ({exc.reason})") from None
    load_dictionary(dictionary, text)  # DictionaryError (one line) when it is not one
    try:
        stored = storagecreds.keep(_home(dirdb), location, _alias(up))
    except storagecreds.StorageCredentialError as exc:
        raise AttachError(str(exc)) from None
    root.mkdir(parents=True, exist_ok=True)
    write_private(root / DICTIONARY, data)
    record = {
        "kind": KIND,
        "archive": stored,
        "format": fmt,
        "dictionary": DICTIONARY,
        "attached": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    write_json(root / RECORD, record)
    return Attached(up, root, location, fmt)


def _home(dirdb: Path) -> Home:
    return Home(dirdb.parent)  # (Home.dirdb is its root's "dirdb")


def _trusted_dirs(dirdb: Path, root: Path) -> None:
    """:class:`AttachError` unless ``dirdb`` and the database's directory (when they exist)
    are the home owner's: a link another user planted there is never followed, a directory
    others may write is not used (:func:`engine.home.trust.check_trusted_dir`)."""
    home = _home(dirdb)
    for path in (dirdb, root):
        if not os.path.lexists(path):
            return
        try:
            check_trusted_dir(path, home, "Database directory" if path == root else "Directory")
        except BadFile as exc:
            raise AttachError(str(exc)) from None


def _alias(name: str) -> str:
    """The credential store alias of the archive location's secret."""
    return f"ATTACHED_{name}"


def attached(dirdb: Path, name: str) -> Attached | None:
    """The attached database ``name`` of ``dirdb``; None when it is not one (an embedded
    database, or none); :class:`AttachError` when its record is damaged."""
    up = database_name(name)
    if up is None:
        return None
    root = dirdb / up
    path = root / RECORD
    _trusted_dirs(dirdb, root)
    if not os.path.lexists(path):
        return None
    try:
        raw = read_trusted(path, _home(dirdb), "Attached database record")
    except FileNotFoundError:
        return None
    except BadFile as exc:
        raise AttachError(str(exc)) from None
    try:
        data = unseal(loads_bounded(raw))
        if data.get("kind") != KIND:
            raise AttachError(f"{path}: not an attached database record")
        archive = storagecreds.restore(_home(dirdb), str(data["archive"]), _alias(up))
        return Attached(up, root, archive, str(data["format"]))
    except (JsonRefused, KeyError, TypeError, AttributeError) as exc:
        raise AttachError(f"{path} is damaged ({exc}): attach {up} again") from None


def source_problem(dirdb: Path, sourcedb: str, archived_log_only: bool) -> str | None:
    """What is wrong with ``SOURCEDB sourcedb`` of an Extract when it names a database
    attached here (None when nothing is, or it is not attached): it needs TRANLOGOPTIONS
    ARCHIVEDLOGONLY (the logs are only ever read where they are archived)."""
    try:
        found = attached(dirdb, sourcedb)
    except AttachError as exc:
        return exc.message
    if found is None or archived_log_only:
        return None
    return (
        f"SOURCEDB {found.name} is an attached database read from its archived logs: "
        "add TRANLOGOPTIONS ARCHIVEDLOGONLY to the parameter file"
    )


def detach(dirdb: Path, name: str) -> bool:
    """Forget an attached database (its logs are not touched); whether it was one."""
    found = attached(dirdb, name)
    if found is None:
        return False
    (found.root / RECORD).unlink()
    storagecreds.forget(_home(dirdb), _alias(found.name))
    (found.root / DICTIONARY).unlink(missing_ok=True)
    if not any(found.root.iterdir()):
        found.root.rmdir()
    return True


__all__ = [
    "AttachError",
    "Attached",
    "DictionaryError",
    "attach",
    "attached",
    "detach",
    "source_problem",
]
