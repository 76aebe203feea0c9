"""The code archive shipped to a cluster's executors (engine/cluster/ship.py) is reused
when one of the same content's name is in the ship directory: executors unpack and run it.
A file of that name another user planted (the name is a digest of the installed code, which
anyone may compute), a link, or one others may write was reused as it was; now only the
user's own regular file is, anything else is built again over it."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from engine.cluster.ship import build_archive
from tests.shell.trust_helpers import NOBODY


def _planted(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("engine/__init__.py", "raise SystemExit('their code')\n")


@pytest.mark.parametrize("how", ["another user's", "writable by others", "a link"])
def test_a_planted_archive_is_built_again_not_shipped(tmp_path: Path, how: str) -> None:
    if os.geteuid() != 0:
        pytest.fail("plants another user's file: must run as root (CI does)")
    ship = tmp_path / "ship"
    name = build_archive(ship)
    good = name.read_bytes()
    name.unlink()
    if how == "a link":
        theirs = tmp_path / "theirs.zip"
        _planted(theirs)
        name.symlink_to(theirs)
        os.lchown(name, NOBODY, NOBODY)
    else:
        _planted(name)
        if how == "another user's":
            os.chown(name, NOBODY, NOBODY)
        else:
            name.chmod(0o666)
    assert build_archive(ship) == name
    assert not name.is_symlink() and name.read_bytes() == good
    st = name.stat()
    assert st.st_uid == os.geteuid() and not st.st_mode & 0o022
    if how == "a link":
        with zipfile.ZipFile(tmp_path / "theirs.zip") as z:  # not written through
            assert z.namelist() == ["engine/__init__.py"]
    assert build_archive(ship) == name and name.stat().st_ino == st.st_ino  # reused now
