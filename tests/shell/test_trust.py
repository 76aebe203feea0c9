"""Trust, without daemons: group names, files the home's owner did not write, corrupt group,
checkpoint and credential-store files, and who may act on a home (docs/security.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine.home.groups import GroupStore
from engine.home.jsonfile import seal
from engine.home.layout import Home
from engine.home.names import InvalidGroupName, check_group_name
from engine.home.trust import NotHomeOwner, check_home_owner
from engine.manager.main import Manager
from engine.manager.params import ManagerParams
from engine.runtime.ipc import Request
from engine.runtime.process import run_group

from .conftest import Shell
from .trust_helpers import NOBODY, as_nobody

RULE = "a group name is 1 to 8 characters, a letter then letters, digits or _."


def add_groups(shell: Shell) -> None:
    assert shell.run("ADD EXTRACT ext1, TRANLOG, BEGIN NOW") == "EXTRACT added.\n"
    assert shell.run("ADD EXTRACT ext2, TRANLOG, BEGIN NOW") == "EXTRACT added.\n"
    assert shell.run("ADD REPLICAT rep1, EXTTRAIL ./dirdat/rt") == "REPLICAT added.\n"


# -- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../../../../X/EVIL", "X/EVIL", "1ABC", "ABCDEFGHI", "", "A B"])
def test_bad_group_names_are_refused_with_the_rule(name: str) -> None:
    with pytest.raises(InvalidGroupName) as exc:
        check_group_name(name)
    assert str(exc.value) == f"Invalid group name {name}: {RULE}"


def test_ggsci_says_the_rule_for_a_name_too_long(shell: Shell) -> None:
    assert shell.run("START EXTRACT abcdefghij") == (
        f"ERROR: Invalid group name ABCDEFGHIJ: {RULE}\n"
    )
    assert shell.run("INFO REPLICAT r12345678") == f"ERROR: Invalid group name R12345678: {RULE}\n"


def test_manager_refuses_a_path_as_group_name(home: Home, tmp_path: Path) -> None:
    """The attack of the issue: START EXTRACT ../../../../X/EVIL made the Manager read
    X/EVIL.grp outside the home. Now the name is refused before any file is looked at."""
    outside = tmp_path / "X"
    outside.mkdir()
    evil = {"kind": "EXTRACT", "name": "EVIL", "source": "TRANLOG", "created": "x"}
    evil |= {"params": "/etc/shadow", "report": str(tmp_path / "leak.rpt")}
    (outside / "EVIL.grp").write_text(json.dumps(evil))
    manager = Manager(home, ManagerParams(port=0))
    rel = os.path.relpath(outside / "EVIL", home.dirchk)
    for word in ("START", "KILL"):
        reply = manager.table.dispatch(Request.parse(f"{word} EXTRACT {rel}"))
        assert not reply.ok
        assert reply.lines == (f"ERROR: Invalid group name {rel}: {RULE}",)
    assert not (tmp_path / "leak.rpt").exists()
    assert not (home.sub("dirout") / "EVIL.out").exists()


def test_group_process_refuses_a_bad_name(home: Home, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_group(home, "EXTRACT", "../x") == 2
    assert capsys.readouterr().err == f"Invalid group name ../x: {RULE}\n"


def test_group_store_never_builds_a_path_from_a_bad_name(home: Home) -> None:
    store = GroupStore(home)
    assert store.get("../../etc/passwd") is None
    with pytest.raises(InvalidGroupName):
        store.path("../x")


# -- files the owner did not write -------------------------------------------------------------


def test_group_file_writable_by_others_is_not_used(shell: Shell, home: Home) -> None:
    add_groups(shell)
    (home.dirchk / "EXT1.grp").chmod(0o666)
    out = shell.run("INFO EXTRACT ext1")
    assert out == (
        "ERROR: Group file dirchk/EXT1.grp is writable by others (mode 0666); it is not used.\n"
    )
    assert "EXT2" in shell.run("INFO EXTRACT *")


def test_group_file_of_another_user_or_a_symlink_is_not_used(shell: Shell, home: Home) -> None:
    add_groups(shell)
    os.chown(home.dirchk / "EXT1.grp", NOBODY, NOBODY)
    assert shell.run("STATUS EXTRACT ext1") == (
        "ERROR: Group file dirchk/EXT1.grp is owned by nobody, not by the home's owner root; "
        "it is not used.\n"
    )
    target = home.dirchk / "EXT2.grp"
    (home.root / "elsewhere.grp").write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(home.root / "elsewhere.grp")
    assert shell.run("STATUS EXTRACT ext2") == (
        "ERROR: Group file dirchk/EXT2.grp is a symbolic link; it is not used.\n"
    )


# -- corrupt files ---------------------------------------------------------------------------


def test_one_corrupt_group_file_affects_its_group_only(shell: Shell, home: Home) -> None:
    add_groups(shell)
    (home.dirchk / "EXT2.grp").write_text("{not json")
    out = shell.run("INFO ALL")
    assert "EXTRACT     STOPPED     EXT1" in out and "REPLICAT    STOPPED     REP1" in out
    assert out.endswith(
        "ERROR: Group file dirchk/EXT2.grp is corrupt (not JSON: Expecting property name "
        "enclosed in double quotes at line 1 column 2).\n"
    )
    assert out.count("ERROR") == 1 and "Traceback" not in out
    assert not shell.ok
    assert "EXTRACT EXT1: STOPPED" in shell.run("STATUS EXTRACT *")
    assert shell.run("STATUS REPLICAT rep1") == "REPLICAT REP1: STOPPED\n"
    assert shell.run("DELETE EXTRACT ext2") == (
        "Deleted EXTRACT EXT2 (its unusable group file EXT2.grp removed).\n"
    )
    assert not (home.dirchk / "EXT2.grp").exists() and not (home.dirchk / "EXT2.cpe").exists()
    assert "ERROR" not in shell.run("INFO ALL") and shell.ok


def test_a_group_file_of_the_wrong_shape_is_named(shell: Shell, home: Home) -> None:
    add_groups(shell)
    (home.dirchk / "REP1.grp").write_text('["a list"]')
    (home.dirchk / "EXT1.grp").write_text(json.dumps(seal({"kind": "EXTRACT"})))
    out = shell.run("INFO ALL")
    assert "ERROR: Group file dirchk/EXT1.grp is corrupt (missing 'name').\n" in out
    assert "ERROR: Group file dirchk/REP1.grp is corrupt (not a JSON object but list)" in out
    assert "EXTRACT     STOPPED     EXT2" in out


def test_one_corrupt_checkpoint_file_affects_its_group_only(shell: Shell, home: Home) -> None:
    add_groups(shell)
    (home.dirchk / "EXT1.cpe").write_text("garbage")
    line = (
        "ERROR: Checkpoint file dirchk/EXT1.cpe is corrupt (not JSON: Expecting value at line 1 "
        "column 1).\n"
    )
    out = shell.run("INFO ALL")
    assert "EXTRACT     STOPPED     EXT2" in out and out.endswith(line) and out.count("ERROR") == 1
    assert shell.run("INFO EXTRACT ext2, SHOWCH").startswith("\nEXTRACT    EXT2")
    out = shell.run("INFO EXTRACT *, SHOWCH")
    assert line in out and "EXTRACT    EXT2" in out
    assert shell.run("DELETE EXTRACT ext1") == "Deleted EXTRACT EXT1.\n"


def test_a_group_process_names_its_corrupt_checkpoint_file(
    shell: Shell, home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    add_groups(shell)
    (home.dirchk / "REP1.cpr").write_text("{}")
    assert run_group(home, "REPLICAT", "rep1") == 2
    err = capsys.readouterr().err
    assert "OGG-00444" in err and "Checkpoint file dirchk/REP1.cpr is corrupt" in err
    assert "Checkpoint file dirchk/REP1.cpr is corrupt" in home.ggserr_log.read_text()


CORRUPT_STORES = {
    "not json": ("{", "is corrupt (not JSON: Expecting property name enclosed in double quotes"),
    "a list": ("[]", "is corrupt (the top level is a list, not domains)"),
    "domain not a dict": ('{"D": 1}', "is corrupt (domain D holds a int, not aliases)"),
    "alias not a dict": ('{"D": {"a": "x"}}', "is corrupt (alias a in domain D is not an entry)"),
    "no user": ('{"D": {"a": {"password": "p"}}}', "has no user string"),
    "no password": ('{"D": {"a": {"user": "u"}}}', "has no password string"),
    "number password": ('{"D": {"a": {"user": "u", "password": 5}}}', "has no password string"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT_STORES))
def test_a_corrupt_credential_store_is_one_line_and_kept_untouched(
    shell: Shell, home: Home, case: str
) -> None:
    content, reason = CORRUPT_STORES[case]
    assert shell.run("ADD CREDENTIALSTORE").startswith("Credential store created")
    path = home.sub("dircrd") / "credentials.json"
    path.write_text(content)
    path.chmod(0o600)
    for command in (
        "INFO CREDENTIALSTORE",
        "ALTER CREDENTIALSTORE ADD USER scott PASSWORD tiger ALIAS s1",
        "DBLOGIN USERIDALIAS s1",
    ):
        out = shell.run(command)
        assert out.startswith("ERROR: "), (command, out)
        assert "Credential store dircrd/credentials.json " in out, (command, out)
        assert reason in out and out.count("\n") == 1, (command, out)
        assert out.endswith("; repair it, or DELETE CREDENTIALSTORE and add the aliases again.\n")
    assert path.read_text() == content  # nothing written over what could not be read
    assert shell.run("DELETE CREDENTIALSTORE").startswith("Credential store deleted")


def test_a_credential_store_readable_by_others_is_not_used(shell: Shell, home: Home) -> None:
    shell.run("ADD CREDENTIALSTORE")
    shell.run("ALTER CREDENTIALSTORE ADD USER scott PASSWORD tiger ALIAS s1")
    (home.sub("dircrd") / "credentials.json").chmod(0o644)
    out = shell.run("INFO CREDENTIALSTORE")
    assert "is readable by others (mode 0644); chmod 600 it" in out and "tiger" not in out


# -- who may act on a home ---------------------------------------------------------------------


def test_only_the_owner_acts_on_a_home(root_home: Home) -> None:
    check_home_owner(root_home)  # we own it
    with pytest.raises(NotHomeOwner) as exc:
        check_home_owner(root_home, euid=NOBODY)
    assert str(exc.value) == (
        f"ERROR: Home {root_home.root} belongs to user root, not to nobody; "
        "only the home's owner may act on it."
    )
    check_home_owner(Home(root_home.root / "not-yet"), euid=NOBODY)  # not created: no owner


def test_ggsci_as_another_user_is_refused_with_one_line(root_home: Home) -> None:
    (root_home.dirprm / "mgr.prm").write_text("PORT 0\n")
    done = as_nobody(
        "import ggsci.launch",
        f"sys.exit(ggsci.launch.run({str(root_home.root)!r}, ['INFO ALL']))",
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        f"ERROR: Home {root_home.root} belongs to user root, not to nobody; "
        "only the home's owner may act on it.\n"
    )


def test_processes_as_another_user_are_refused(root_home: Home) -> None:
    home = str(root_home.root)
    done = as_nobody(
        "import engine.runtime.process, engine.manager.main",
        f"rc = engine.runtime.process.main(['EXTRACT', 'EXT1', '--home', {home!r}])\n"
        f"rc2 = engine.manager.main.main(['--home', {home!r}])\n"
        "print(rc, rc2)",
    )
    assert done.stdout == "2 2\n", done.stderr
    assert done.stderr.count("belongs to user root, not to nobody") == 2
    assert not root_home.ggserr_log.exists()
    assert list(root_home.dirpcs.iterdir()) == []


@pytest.mark.parametrize("damage", ["directory", "list", "garbage"])
def test_an_unreadable_process_file_is_no_process_file(
    shell: Shell, home: Home, damage: str
) -> None:
    add_groups(shell)
    path = home.dirpcs / "EXT1.pce"
    if damage == "directory":
        path.mkdir()
    else:
        path.write_text("[]" if damage == "list" else "\x00\xff")
    out = shell.run("INFO ALL")
    assert "EXTRACT     STOPPED     EXT1" in out and "ERROR" not in out and shell.ok


def test_ggsci_extract_paramfile_holds_the_group_lock(home: Home) -> None:
    from typer.testing import CliRunner

    from engine.home.status import ProcessLock
    from ggsci.cli import build_app

    prm = home.dirprm / "ext1.prm"
    prm.write_text("EXTRACT ext1\nEXTTRAIL ./dirdat/lt\nTABLE hr.*;\n")
    lock = ProcessLock.acquire(home, "EXTRACT", "EXT1")  # as a running EXT1 holds it
    try:
        result = CliRunner().invoke(
            build_app(), ["extract", "--home", str(home.root), "paramfile", str(prm)]
        )
    finally:
        lock.release()
    assert result.exit_code == 1
    assert "ERROR OGG-01454  Unable to lock EXTRACT EXT1 (error 11, " in result.output
    assert ".lck" not in result.output and "dirpcs" not in result.output
    assert f"Lock currently held by process id (PID) {os.getpid()}." in result.output
    assert not (home.dirrpt / "EXT1.rpt").exists()  # stopped before anything was written


def test_ggsci_db_refuses_a_home_of_another_user(
    root_home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    import engine.home.trust
    from ggsci.cli import build_app

    monkeypatch.setattr(engine.home.trust.os, "geteuid", lambda: NOBODY)  # as nobody would run it
    result = CliRunner().invoke(build_app(), ["db", "create", "src", "--home", str(root_home.root)])
    assert result.exit_code == 1
    assert result.output == (
        f"ERROR: Home {root_home.root} belongs to user root, not to nobody; "
        "only the home's owner may act on it.\n"
    )
    assert list(root_home.dirdb.iterdir()) == []
