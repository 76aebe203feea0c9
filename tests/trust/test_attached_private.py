"""Nobody else in, on the paths of an attached database (``ggsci db attach/show/logs/drop``,
``SOURCEDB`` of one): its directory, record and dictionary copy are believed only when the
home's owner made them; a link another user planted is never followed, a file or directory
others may write is not used, another user cannot read them; each refusal is one line.

CI runs as root: "another user" is ``nobody`` (uid 65534), who owns what the tests plant
(``lchown``) and runs code after dropping to it (tests/shell/trust_helpers.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.home.layout import Home
from engine.redo.attached import AttachError, attached, source_problem
from ggsci.cli_db import app
from tests.redo.corpus import CHECKPOINT, LOG15, need
from tests.shell.trust_helpers import NOBODY, as_nobody, open_home

runner = CliRunner()
FMT = "arch%t_%s_%r.dbf"


@pytest.fixture
def home() -> Iterator[Home]:
    """A home every user may search the way to (its own directories stay the owner's)."""
    if os.geteuid() != 0:
        pytest.fail("these tests plant other users' files and must run as root (CI does)")
    h = open_home()
    try:
        yield h
    finally:
        shutil.rmtree(h.root.parent, ignore_errors=True)


def _db(home: Home, *args: str) -> tuple[int, str]:
    r = runner.invoke(app, [*args, "--home", str(home.root)])
    return r.exit_code, r.output


def _one_line(out: str) -> str:
    lines = out.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out, out
    return lines[0]


def _attach(home: Home, name: str = "ORA") -> Path:
    arch = home.root.parent / "arch"
    arch.mkdir(exist_ok=True)
    shutil.copy(need(LOG15), arch / LOG15.name)
    code, out = _db(
        home, "attach", name, "--archive", str(arch), "--dictionary", str(need(CHECKPOINT)),
        "--format", FMT,
    )  # fmt: skip
    assert code == 0, out
    return home.dirdb / name.upper()


def _plant(path: Path) -> None:
    """Make ``path`` (a file, a directory or a link) another user's."""
    os.lchown(path, NOBODY, NOBODY)


def _refused(home: Home, name: str, reason: str) -> None:
    """Every command and the Extract's check refuse ``name`` in one line saying ``reason``."""
    for args in (("show", name), ("logs", name), ("drop", name), ("sql", name, "SELECT 1")):
        code, out = _db(home, *args)
        line = _one_line(out)
        assert code == 1 and line.startswith("GGS-REDO-0020: ") and reason in line, (args, out)
    with pytest.raises(AttachError, match=re.escape(reason)):
        attached(home.dirdb, name)
    problem = source_problem(home.dirdb, name, True)
    assert problem is not None and reason in problem


def test_another_user_cannot_read_the_record_or_the_dictionary_copy(home: Home) -> None:
    root = _attach(home)
    # the copy is the owner's alone whatever the umask (pytest runs with 022)
    for p in (root / "attached.json", root / "oracle_dictionary.json"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    body = (
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        open(p, 'rb').read(1)\n"
        "        print('READ', p)\n"
        "    except PermissionError:\n"
        "        print('DENIED', p)\n"
    )
    files = [root / "attached.json", root / "oracle_dictionary.json"]
    code = f"sys.argv[1:] = {[str(p) for p in files]!r}\n" + body
    r = as_nobody("", code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [w for p in files for w in ("DENIED", str(p))]


def test_a_database_directory_linked_by_another_user_is_never_followed(home: Home) -> None:
    """A link in dirdb/ another user made (dirdb writable for a moment, say) to their own
    copy of an attached database: before, its record and dictionary were believed."""
    root = _attach(home)
    theirs = home.root.parent / "theirs"
    shutil.copytree(root, theirs)
    for p in (theirs, *theirs.iterdir()):
        _plant(p)
    (home.dirdb / "EVIL").symlink_to(theirs)
    _plant(home.dirdb / "EVIL")
    _refused(home, "EVIL", "is a symbolic link of nobody, not of the home's owner root")
    code, out = _db(home, "attach", "EVIL", "--archive", "/tmp", "--dictionary", str(CHECKPOINT))
    assert code == 1 and "is a symbolic link of nobody" in _one_line(out)
    assert sorted(p.name for p in theirs.iterdir()) == ["attached.json", "oracle_dictionary.json"]


def test_a_database_directory_of_another_user_or_open_to_others_is_not_used(home: Home) -> None:
    root = _attach(home)
    root.chmod(0o777)
    _refused(home, "ORA", "is writable by others (mode 0777)")
    root.chmod(0o700)
    _plant(root)
    _refused(home, "ORA", "is owned by nobody, not by the home's owner root")


def test_an_owners_own_link_to_an_owners_directory_is_followed(home: Home) -> None:
    """A DBA who keeps a database's directory on another disk and links it: that is the
    owner's choice, followed."""
    root = _attach(home)
    elsewhere = home.root.parent / "disk2" / "ORA2"
    elsewhere.parent.mkdir()
    shutil.copytree(root, elsewhere)
    (home.dirdb / "ORA2").symlink_to(elsewhere)
    found = attached(home.dirdb, "ORA2")
    assert found is not None and len(found.dictionary().tables) == 20


@pytest.mark.parametrize("what", ["attached.json", "oracle_dictionary.json"])
def test_a_record_or_dictionary_planted_as_a_link_is_not_used(home: Home, what: str) -> None:
    root = _attach(home)
    theirs = home.root.parent / f"theirs-{what}"
    shutil.copy(root / what, theirs)
    _plant(theirs)
    (root / what).unlink()
    (root / what).symlink_to(theirs)
    _plant(root / what)
    if what == "attached.json":
        _refused(home, "ORA", "attached.json is a symbolic link; it is not used")
        return
    code, out = _db(home, "show", "ORA")
    assert code == 1 and "oracle_dictionary.json is a symbolic link" in _one_line(out)
    found = attached(home.dirdb, "ORA")
    assert found is not None
    with pytest.raises(AttachError, match="is a symbolic link; it is not used"):
        found.dictionary()


@pytest.mark.parametrize("what", ["attached.json", "oracle_dictionary.json"])
def test_a_record_or_dictionary_another_user_may_write_is_not_used(home: Home, what: str) -> None:
    root = _attach(home)
    for mode, owner, reason in (
        (0o620, 0, "is writable by others (mode 0620)"),
        (0o600, NOBODY, "is owned by nobody, not by the home's owner root"),
    ):
        (root / what).chmod(mode)
        os.chown(root / what, owner, owner)
        if what == "attached.json":
            _refused(home, "ORA", reason)
        else:
            code, out = _db(home, "show", "ORA")
            assert code == 1 and reason in _one_line(out), out


def test_attach_writes_its_copy_over_a_planted_link_not_through_it(home: Home) -> None:
    """A link left where the dictionary copy goes (to a file of the owner's elsewhere): the
    copy replaces the link; the file it pointed at is untouched."""
    root = home.dirdb / "ORA"
    root.mkdir(parents=True)
    victim = home.root.parent / "victim.txt"
    victim.write_text("keep me\n")
    (root / "oracle_dictionary.json").symlink_to(victim)
    _attach(home)
    assert victim.read_text() == "keep me\n"
    copy = root / "oracle_dictionary.json"
    assert not copy.is_symlink() and stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert copy.read_bytes() == need(CHECKPOINT).read_bytes()


def test_a_world_readable_dictionary_of_another_user_may_be_given(home: Home) -> None:
    """Reading a dictionary another user wrote and left readable is fine: it is copied, and
    the copy is the owner's."""
    theirs = home.root.parent / "their_dict.json"
    shutil.copy(need(CHECKPOINT), theirs)
    theirs.chmod(0o644)
    _plant(theirs)
    arch = home.root.parent / "arch"
    arch.mkdir()
    code, out = _db(
        home, "attach", "ORA", "--archive", str(arch), "--dictionary", str(theirs), "--format", FMT
    )
    assert code == 0, out
    copy = home.dirdb / "ORA" / "oracle_dictionary.json"
    assert copy.stat().st_uid == 0 and stat.S_IMODE(copy.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    "name", ["../x", "a/b", "ß", "ı", "ﬀ", "A" * 31, "a\x00b", "", "..", "dirdb/../X"]
)
def test_a_name_that_is_not_a_database_name_is_refused(tmp_path: Path, name: str) -> None:
    """``upper()`` folded some letters into a name: ``ß`` became database ``SS``, ``ı``
    database ``I`` (engine.home.names.database_name)."""
    home = tmp_path / "home"
    home.mkdir()
    args = ["--archive", str(tmp_path), "--dictionary", "/dev/null", "--home", str(home)]
    r = runner.invoke(app, ["attach", name, *args])
    assert r.exit_code == 1 and "invalid database name" in _one_line(r.output), r.output
    assert not (home / "dirdb").exists() or list((home / "dirdb").iterdir()) == []


def test_another_user_running_db_commands_on_the_home_gets_one_line(home: Home) -> None:
    """As ``nobody``, every ``db`` command naming the owner's home is refused before it
    reads anything of it (one line, exit 1); nothing of the home changes."""
    _attach(home)
    before = {p: p.stat().st_mtime_ns for p in home.root.rglob("*")}
    h = str(home.root)
    commands = [
        ["attach", "X", "--archive", "/tmp", "--dictionary", str(CHECKPOINT), "--home", h],
        ["show", "ORA", "--home", h],
        ["logs", "ORA", "--home", h],
        ["dump", "ORA", "--home", h],
        ["drop", "ORA", "--home", h],
        ["sql", "ORA", "SELECT 1", "--home", h],
        ["list", "--home", h],
    ]
    body = (
        "out = []\n"
        f"for args in {commands!r}:\n"
        "    r = CliRunner().invoke(app, args)\n"
        "    out.append([r.exit_code, r.output or repr(r.exception)])\n"
        "print(json.dumps(out))\n"
    )
    imports = (  # as root, each command once on no home: what it imports lazily is loaded
        "import json\nfrom typer.testing import CliRunner\nfrom ggsci.cli_db import app\n"
        f"for args in {commands!r}:\n"
        f"    CliRunner().invoke(app, [a if a != {h!r} else '/nonexistent' for a in args])\n"
    )
    r = as_nobody(imports, body)
    assert r.returncode == 0, r.stderr
    for args, (code, out) in zip(commands, json.loads(r.stdout), strict=True):
        assert code == 1 and _one_line(out) == (
            f"ERROR: Home {home.root} belongs to user root, not to nobody; "
            "only the home's owner may act on it."
        ), (args, out)
    assert {p: p.stat().st_mtime_ns for p in home.root.rglob("*")} == before


@pytest.mark.parametrize("fmt", ["../%t_%s_%r.dbf", "sub/%s.arc", "..\\%s.arc", "/etc/%s"])
def test_a_format_with_a_directory_part_is_refused(tmp_path: Path, fmt: str) -> None:
    """LOG_ARCHIVE_FORMAT names files, not directories: ``db attach --format`` and ``db logs
    --format`` refuse a separator in one line (params/archformat.py, a guard)."""
    home = tmp_path / "home"
    home.mkdir()
    h = ["--home", str(home)]
    for args in (
        ["attach", "ORA", "--archive", str(tmp_path), "--dictionary", str(need(CHECKPOINT))],
        ["logs", str(tmp_path)],
    ):
        r = runner.invoke(app, [*args, "--format", fmt, *h])
        assert r.exit_code == 1 and "names a directory" in _one_line(r.output), r.output
    assert not (home / "dirdb").exists() or list((home / "dirdb").iterdir()) == []


def test_a_directory_named_like_the_database_does_not_hide_it(
    home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``db logs ora`` where the DBA stands in a directory holding a directory ``ora``:
    before, that directory was listed (as an archive location) instead of database ORA."""
    _attach(home)
    (tmp_path / "ora").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out = _db(home, "logs", "ora")
    assert code == 0 and out.strip().splitlines()[1].endswith(LOG15.name), out
    code, out = _db(home, "logs", "./ora")  # a path: the directory, as asked
    assert code == 0 and len(out.strip().splitlines()) == 1, out
