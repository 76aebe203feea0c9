"""Bad content affects only its own file (issue 28): a group, checkpoint, process or
credential-store file holding JSON nested 100,000 levels, or one far too large, is named on
one line; INFO ALL and INFO CREDENTIALSTORE go on, DELETE removes the damaged group, the
Manager starts; and the files a home keeps are sealed, so one changed digit is found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from engine.home.checkpoints import checkpoint_path
from engine.home.groups import GroupStore, checked_checkpoints
from engine.home.jsonfile import JsonRefused, loads_bounded, nesting
from engine.home.layout import Home
from engine.home.status import MANAGER, State, read_process_file
from engine.home.trust import BadFile

from .conftest import Shell

DEEP = b"[" * 100_000 + b"]" * 100_000


def add_groups(shell: Shell) -> None:
    assert shell.run("ADD EXTRACT ext1, TRANLOG, BEGIN NOW") == "EXTRACT added.\n"
    assert shell.run("ADD EXTRACT ext2, TRANLOG, BEGIN NOW") == "EXTRACT added.\n"
    assert shell.run("ADD REPLICAT rep1, EXTTRAIL ./dirdat/rt") == "REPLICAT added.\n"


def test_bounded_parsing_refuses_depth_and_size_before_parsing() -> None:
    for raw in (DEEP, b'{"a":' * 100_000 + b"1" + b"}" * 100_000):
        with pytest.raises(JsonRefused, match="nested deeper than 64 levels"):
            loads_bounded(raw)
    with pytest.raises(JsonRefused, match="larger than 100 bytes"):
        loads_bounded(b" " * 101 + b"1", max_bytes=100)
    # brackets inside strings are not nesting
    assert nesting(b'{"a": "[[[[[[[[[[\\"[[[["}') == 1
    assert loads_bounded(b'{"a": "' + b"[" * 1000 + b'"}') == {"a": "[" * 1000}


def test_deep_json_in_every_kind_of_file_affects_that_file_only(shell: Shell, home: Home) -> None:
    add_groups(shell)
    assert shell.run("ADD CREDENTIALSTORE").startswith("Credential store created")
    (home.dirchk / "EXT1.grp").write_bytes(DEEP)
    (home.dirchk / "EXT2.cpe").write_bytes(DEEP)
    (home.dirpcs / "REP1.pcr").write_bytes(DEEP)
    store = home.root / "dircrd" / "credentials.json"
    store.write_bytes(DEEP)
    out = shell.run("INFO ALL")
    assert "Traceback" not in out and "RecursionError" not in out
    assert "ERROR: Group file dirchk/EXT1.grp is corrupt (nested deeper than 64 levels).\n" in out
    assert (
        "ERROR: Checkpoint file dirchk/EXT2.cpe is corrupt (nested deeper than 64 levels).\n"
        in (out)
    )
    assert "REPLICAT    STOPPED     REP1" in out  # an unparsable process file is no process file
    out = shell.run("INFO CREDENTIALSTORE")
    assert out == (
        "ERROR: Credential store dircrd/credentials.json is corrupt (nested deeper than 64 "
        "levels); repair it, or DELETE CREDENTIALSTORE and add the aliases again.\n"
    )
    assert shell.run("DELETE EXTRACT ext1") == (
        "Deleted EXTRACT EXT1 (its unusable group file EXT1.grp removed).\n"
    )
    assert shell.run("DELETE EXTRACT ext2") == "Deleted EXTRACT EXT2.\n"
    assert not (home.dirchk / "EXT1.grp").exists() and not (home.dirchk / "EXT2.cpe").exists()


def test_a_huge_group_file_is_refused_unread(home: Home, shell: Shell) -> None:
    add_groups(shell)
    with open(home.dirchk / "EXT1.grp", "wb") as fh:  # sparse: 100 MB that take no disk
        fh.truncate(100 << 20)
    with pytest.raises(BadFile, match="is too large"):
        GroupStore(home).get("EXT1")
    assert "EXTRACT     STOPPED     EXT2" in shell.run("INFO ALL")


def test_the_manager_starts_beside_deep_files(shell: Shell, home: Home) -> None:
    add_groups(shell)
    (home.dirprm / "mgr.prm").write_text("PORT 0\nAUTOSTART ER *\n")
    (home.dirchk / "EXT1.grp").write_bytes(DEEP)
    (home.dirchk / "EXT2.cpe").write_bytes(DEEP)
    (home.dirpcs / "REP1.pcr").write_bytes(DEEP)
    (home.dirchk / "heartbeat.json").write_bytes(DEEP)
    env = {**os.environ, "GGSCI_RUNNER_EXTRACT": "engine.runners:ParameterCheckRunner"}
    env["GGSCI_RUNNER_REPLICAT"] = env["GGSCI_RUNNER_EXTRACT"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine.manager", "--home", str(home.root)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pf = read_process_file(home, MANAGER, MANAGER)
            if (pf is not None and pf.state == State.RUNNING) or proc.poll() is not None:
                break
            time.sleep(0.1)
        pf = read_process_file(home, MANAGER, MANAGER)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert pf is not None and pf.state == State.RUNNING
        time.sleep(1.5)  # a watch round or two over the damaged files
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
    log = home.ggserr_log.read_text()
    assert "RecursionError" not in log and "Traceback" not in log


def test_one_changed_digit_in_a_checkpoint_file_is_found(shell: Shell, home: Home) -> None:
    add_groups(shell)
    path = checkpoint_path(home, "EXTRACT", "EXT1")
    text = path.read_text()
    assert '"checksum": "sha256:' in text
    data = json.loads(text)
    data["batch_id"] += 1
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(BadFile, match=r"dirchk/EXT1.cpe is corrupt \(checksum mismatch\)"):
        checked_checkpoints(home, "EXTRACT", "EXT1")
    del data["checksum"]
    path.write_text(json.dumps(data, indent=1))
    with pytest.raises(BadFile, match=r"dirchk/EXT1.cpe is corrupt \(no checksum\)"):
        checked_checkpoints(home, "EXTRACT", "EXT1")


def test_a_process_file_with_a_changed_digit_counts_as_none(home: Home) -> None:
    from engine.home.status import ProcessFile, write_process_file

    write_process_file(home, ProcessFile("REPLICAT", "REP1", os.getpid(), State.RUNNING, "x"))
    assert read_process_file(home, "REPLICAT", "REP1") is not None
    path = home.dirpcs / "REP1.pcr"
    path.write_text(path.read_text().replace(f'"pid": {os.getpid()}', '"pid": 1'))
    assert read_process_file(home, "REPLICAT", "REP1") is None
