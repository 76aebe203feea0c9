"""A storage location's secret lives only in the credential store: ``db attach --archive
s3://KEY:SECRET@...`` and an embedded database's archive destination are written down
without it and read back with it (engine/home/storagecreds.py)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from engine import storage
from engine.embedded.archiver import ArchiveParams, archive_params, set_archive_dest
from engine.embedded.database import create_database, drop_database
from engine.home import storagecreds
from engine.home.credstore import CredentialStore
from engine.home.layout import Home
from engine.redo.attached import attach, attached, detach
from tests.redo.corpus import CHECKPOINT, LOG15, need


def _home(tmp_path: Path) -> Home:
    home = Home(tmp_path / "gg")
    home.create_subdirs()
    return home


def _on_disk(home: Home) -> str:
    """Every file of the home but the credential store, as text."""
    store = CredentialStore(home).path
    return "".join(
        p.read_bytes().decode("latin-1") for p in home.root.rglob("*") if p.is_file() and p != store
    )


def test_an_attached_location_keeps_its_secret_in_the_store_only(
    tmp_path: Path, s3_server: str
) -> None:
    home = _home(tmp_path)
    base = storage.join(s3_server, "alo-secret")
    storage.put_file(need(LOG15), storage.join(base, LOG15.name))
    assert "test:test@" in base
    got = attach(home.dirdb, "ora", base, need(CHECKPOINT), "arch%t_%s_%r.dbf")
    assert got.archive == base  # the caller goes on with it whole
    record = json.loads((home.dirdb / "ORA" / "attached.json").read_text())
    assert record["archive"] == base.replace("test:test@", "test@")
    assert "test:test" not in _on_disk(home)
    store = CredentialStore(home)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert store.entries(storagecreds.DOMAIN) == [("GGSTORAGE", "ATTACHED_ORA", "test")]
    again = attached(home.dirdb, "ora")
    assert again is not None and again.archive == base
    assert [e.location for e in storage.list_files(again.archive)] != []
    assert detach(home.dirdb, "ora")
    assert store.entries(storagecreds.DOMAIN) == []


def test_an_archive_destination_keeps_its_secret_in_the_store_only(
    tmp_path: Path, s3_server: str
) -> None:
    home = _home(tmp_path)
    dest = storage.join(s3_server, "dest-secret")
    root = create_database(home.dirdb, "src", archive=ArchiveParams(dest))
    assert archive_params(root).dest == dest
    assert "test:test" not in _on_disk(home)
    assert CredentialStore(home).lookup("ARCHIVEDEST_SRC", "GGSTORAGE").password == "test"
    set_archive_dest(root, str(tmp_path / "plain"))  # no secret: the kept one goes
    assert archive_params(root).dest == str(tmp_path / "plain")
    assert CredentialStore(home).entries("GGSTORAGE") == []
    set_archive_dest(root, dest)
    drop_database(home.dirdb, "src")  # and a dropped database's goes
    assert CredentialStore(home).entries("GGSTORAGE") == []


def test_a_location_without_a_secret_makes_no_store(tmp_path: Path) -> None:
    home = _home(tmp_path)
    assert storagecreds.keep(home, "s3://bucket/p?region=x", "A") == "s3://bucket/p?region=x"
    assert storagecreds.keep(home, "/data/arch", "A") == "/data/arch"
    assert not CredentialStore(home).exists()
    assert storagecreds.restore(home, "s3://key@bucket/p", "A") == "s3://key@bucket/p"


def test_a_store_another_user_could_read_is_refused_in_one_line(tmp_path: Path) -> None:
    home = _home(tmp_path)
    store = CredentialStore(home)
    store.create()
    store.path.chmod(0o644)
    with pytest.raises(storagecreds.StorageCredentialError) as e:
        storagecreds.keep(home, "s3://key:sec@bucket/p", "A")
    assert "\n" not in str(e.value) and "readable by others" in str(e.value)
    assert "sec@" not in str(e.value)
