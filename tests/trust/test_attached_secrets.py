"""An archive location's secret (``s3://KEY:SECRET@...``) given to ``ggsci db attach`` or
``TRANLOGOPTIONS ALTARCHIVELOGDEST`` is kept in the credential store and shown nowhere:
not in ``db show`` / ``db logs`` / error lines, not in the home's other files (report,
ggserr.log, attached.json), not in a Spark process's command line, not in any file under
/tmp after an Extract mined the archive in Spark tasks.

The secret is a fresh random token (the local S3 server accepts any), so finding it
anywhere is a leak, never a coincidence."""

from __future__ import annotations

import os
import secrets
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from engine import storage
from engine.extract.run import ExtractRun
from engine.home.credstore import CredentialStore
from engine.home.groups import GroupStore
from engine.home.layout import Home
from engine.redo.attached import attached
from ggsci.cli_db import app
from params.check import check_text
from tests.harness.secretargs import key_alone
from tests.redo.corpus import CHECKPOINT, LOG15, LOG16, need
from tests.shell.conftest import Shell

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

runner = CliRunner()
FMT = "arch%t_%s_%r.dbf"
PRM = (
    "EXTRACT e1\nSOURCEDB ora\nTRANLOGOPTIONS ARCHIVEDLOGONLY\n{extra}"
    "EXTTRAIL ./dirdat/aa\nTABLE OLR_TEST.*;\n"
)


@pytest.fixture
def secret() -> str:
    return "Sk" + secrets.token_hex(12)


def _with_secret(s3_server: str, secret: str, *names: str) -> str:
    base = storage.join(s3_server, *names)
    assert "s3://test:test@" in base
    return base.replace("s3://test:test@", f"s3://AKIAGGTEST:{secret}@")


def _db(home: Home, *args: str) -> tuple[int, str]:
    """``ggsci db ARGS``; a location's secret goes on standard input (--password-stdin), as a
    command line may not hold it (one with an unencoded ``/`` is left there: refused)."""
    argv, given = list(args), None
    for i, a in enumerate(argv):
        if a.startswith("s3://AKIAGGTEST:") and "/" not in a.split("@", 1)[0][5:]:
            argv[i], secret = key_alone(a)
            given = secret + "\n"
    if given is not None:
        argv.append("--password-stdin")
    r = runner.invoke(app, [*argv, "--home", str(home.root)], input=given)
    return r.exit_code, r.output


def _files_holding(root: Path, needle: bytes, since: float, skip: Path | None = None) -> list[str]:
    """Files under ``root`` changed since ``since`` (smaller than 64 MB) that hold ``needle``."""
    found = []
    for d, _dirs, files in os.walk(root):
        for f in files:
            p = Path(d, f)
            try:
                st = p.lstat()
                if not p.is_file() or p.is_symlink() or st.st_size > 64 << 20:
                    continue
                if st.st_mtime < since or (skip is not None and p == skip):
                    continue
                if needle in p.read_bytes():
                    found.append(str(p))
            except OSError:
                continue
    return found


def _cmdlines_holding(needle: bytes) -> list[str]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = Path("/proc", pid, "cmdline").read_bytes()
            except OSError:
                continue
            if needle in cmd:
                out.append(f"{pid}: {cmd[:200]!r}")
    return out


def _group(home: Home, extra: str) -> str:
    """Extract E1 added, its parameter file with ``extra``; the parameter text."""
    prm = PRM.format(extra=extra)
    (home.dirprm / "e1.prm").write_text(prm)
    shell = Shell(home)
    shell.run("ADD EXTRACT e1, TRANLOG, EXTSEQNO 15, EXTRBA 0")
    shell.run("ADD EXTTRAIL ./dirdat/aa, EXTRACT e1")
    return prm


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    h = Home(tmp_path / "gghome")
    h.create_subdirs()
    yield h


def test_db_commands_never_show_the_secret(home: Home, s3_server: str, secret: str) -> None:
    base = _with_secret(s3_server, secret, "arch-show")
    for p in (LOG15, LOG16):
        storage.put_file(need(p), storage.join(base, p.name))
    outputs = []
    for args in (
        (
            "attach",
            "ora",
            "--archive",
            base,
            "--dictionary",
            str(need(CHECKPOINT)),
            "--format",
            FMT,
        ),
        ("show", "ora"),
        ("logs", "ora"),
        ("logs", base, "--format", FMT),
        ("dump", storage.join(base, LOG15.name)),
        ("attach", "ora2", "--archive", base + "&bad_option=1", "--dictionary", str(CHECKPOINT)),
        ("attach", "ora", "--archive", base, "--dictionary", str(CHECKPOINT)),
        ("dump", storage.join(base, "nothing.dbf")),
        ("logs", base.replace("ggsci/", "nobucket/"), "--format", FMT),
    ):
        code, out = _db(home, *args)
        outputs.append((args[0], code, out))
    assert [c for _, c, _ in outputs[:5]] == [0] * 5, outputs
    assert [c for _, c, _ in outputs[5:8]] == [1] * 3, outputs
    for what, _code, out in outputs:
        assert secret not in out, (what, out)
        assert "Traceback" not in out
    assert "AKIAGGTEST" in outputs[1][2] or "***@" in outputs[1][2]
    store = CredentialStore(home).path
    assert _files_holding(home.root, secret.encode(), 0, skip=store) == []


@pytest.mark.parametrize("where", ["/", "+"])
def test_a_secret_with_a_slash_or_plus_is_masked_in_every_message(where: str) -> None:
    """AWS secret keys hold ``/`` and ``+``. Unencoded, ``/`` ends the URL's authority: the
    user part was taken for a path and shown whole (storage.describe, mask_secrets)."""
    from params.masking import mask_secrets

    secret = f"abc{where}DEF{where}ghi"
    location = f"s3://AKIAGGTEST:{secret}@bucket/arch?region=us-east-1"
    for shown in (storage.describe(location), mask_secrets(f"ALTARCHIVELOGDEST {location}")):
        assert "DEF" not in shown, shown
        assert "bucket/arch" in shown, shown
    try:
        storage.list_files(location)
    except storage.StorageError as exc:
        assert "DEF" not in str(exc), str(exc)


def test_an_extract_in_spark_tasks_leaves_the_secret_nowhere(
    home: Home, s3_server: str, secret: str, spark: SparkSession
) -> None:
    """Attached by an s3:// location with a secret, the archive read by ALTARCHIVELOGDEST
    of the same kind: the Extract mines it in Spark tasks; then no file of the home but the
    credential store, no file under /tmp written meanwhile, and no process's command line
    holds the secret."""
    started = time.time() - 1
    attached_at = _with_secret(s3_server, secret, "arch-run-a")
    alt = _with_secret(s3_server, secret, "arch-run-b")
    for p in (LOG15, LOG16):
        storage.put_file(need(p), storage.join(alt, p.name))
    code, out = _db(home, "attach", "ora", "--archive", attached_at, "--dictionary",
                    str(need(CHECKPOINT)), "--format", FMT)  # fmt: skip
    assert code == 0, out
    prm = _group(home, f'TRANLOGOPTIONS ALTARCHIVELOGDEST "{alt}"\n')
    events: list[str] = []
    run = ExtractRun(home, check_text(prm).model, GroupStore(home).get("E1"),
                     lambda c, _s, t: events.append(f"{c} {t}"), spark=spark,
                     durable=False)  # fmt: skip
    run.capture.split_bytes = 64 << 10  # several tasks
    try:
        run.run(threading.Event(), stop_at_eof=True)
    finally:
        run.close()
    assert list((home.root / "dirdat").glob("aa0*")), events
    needle = secret.encode()
    assert not [e for e in events if secret in e]
    assert _cmdlines_holding(needle) == []
    # the parameter file holds what its owner wrote there (as a USERID's PASSWORD would)
    store = CredentialStore(home).path
    leaks = _files_holding(home.root, needle, 0, skip=store)
    assert leaks == [str(home.dirprm / "e1.prm")]
    assert _files_holding(Path("/tmp"), needle, started, skip=store) == leaks
    shutil.rmtree(home.root / "dirdat")


@pytest.mark.parametrize("slash", [False, True])
def test_the_report_and_ggserr_log_never_hold_the_secret(
    home: Home, s3_server: str, secret: str, slash: bool
) -> None:
    """``ggsci extract paramfile ... --stop-at-eof`` of an attached database with an
    ALTARCHIVELOGDEST secret: the report (its parameter echo), ggserr.log and the output
    mask it; with an unencoded ``/`` in it (the location is then unusable: the abend line
    names it) too."""
    from ggsci.cli import build_app

    key = f"{secret[:8]}/{secret[8:]}" if slash else secret
    alt = _with_secret(s3_server, key, "arch-rpt")
    for p in (LOG15, LOG16):
        storage.put_file(need(p), storage.join(_with_secret(s3_server, secret, "arch-rpt"), p.name))
    code, out = _db(home, "attach", "ora", "--archive", alt, "--dictionary",
                    str(need(CHECKPOINT)), "--format", FMT)  # fmt: skip
    assert code == (1 if slash else 0) and secret[8:] not in out, out
    if slash:  # attached without it, the parameter file gives the location
        code, out = _db(home, "attach", "ora", "--archive", str(home.root), "--dictionary",
                        str(need(CHECKPOINT)), "--format", FMT)  # fmt: skip
        assert code == 0, out
    _group(home, f"TRANLOGOPTIONS ALTARCHIVELOGDEST {alt}\n")
    argv = ["extract", "paramfile", "dirprm/e1.prm", "--stop-at-eof", "--home", str(home.root)]
    r = runner.invoke(build_app(), argv)
    assert r.exit_code == (1 if slash else 0), r.output
    assert secret[8:] not in r.output and "Traceback" not in r.output, r.output
    report = (home.dirrpt / "E1.rpt").read_text()
    assert "ALTARCHIVELOGDEST" in report and secret[8:] not in report, report
    leaks = _files_holding(home.root, secret[8:].encode(), 0, skip=CredentialStore(home).path)
    assert leaks == [str(home.dirprm / "e1.prm")]


def test_a_key_alone_uses_the_secret_the_store_keeps(
    home: Home, s3_server: str, secret: str
) -> None:
    """The secret put in the store first (ALTER CREDENTIALSTORE asks for it), the location
    given with the key alone: nothing secret on the command line (/proc/PID/cmdline is
    readable by other users), and the stored secret stays. Before, attach forgot it and
    listed the location without one."""
    base = _with_secret(s3_server, secret, "arch-key-alone")
    for p in (LOG15, LOG16):
        storage.put_file(need(p), storage.join(base, p.name))
    store = CredentialStore(home)
    store.create()
    store.add("AKIAGGTEST", secret, "ATTACHED_ORA", "GGSTORAGE", replace=False)
    key_only = base.replace(f"AKIAGGTEST:{secret}@", "AKIAGGTEST@")
    code, out = _db(home, "attach", "ora", "--archive", key_only, "--dictionary",
                    str(need(CHECKPOINT)), "--format", FMT)  # fmt: skip
    assert code == 0 and "(2 now)" in out, out
    assert store.lookup("ATTACHED_ORA", "GGSTORAGE").password == secret
    code, out = _db(home, "logs", "ora")
    assert code == 0 and len(out.strip().splitlines()) == 3, out
    assert _files_holding(home.root, secret.encode(), 0, skip=store.path) == []


def test_altarchivelogdest_with_the_key_alone_takes_the_attached_secret(
    home: Home, s3_server: str, secret: str
) -> None:
    """``ALTARCHIVELOGDEST s3://KEY@bucket/...`` naming the attached database's key: the
    catalog reads with the secret the store keeps, so the parameter file need hold none;
    another key, or a location with its own secret, is used as given."""
    from engine.extract.alo import ArchiveCatalog

    base = _with_secret(s3_server, secret, "arch-alt-key")
    code, out = _db(home, "attach", "ora", "--archive", base, "--dictionary",
                    str(need(CHECKPOINT)), "--format", FMT)  # fmt: skip
    assert code == 0, out
    key_only = base.replace(f"AKIAGGTEST:{secret}@", "AKIAGGTEST@").replace("arch-alt-key", "o")
    found = attached(home.dirdb, "ora")
    assert found is not None
    for dest, used in (
        (key_only, key_only.replace("AKIAGGTEST@", f"AKIAGGTEST:{secret}@")),
        (
            key_only.replace("AKIAGGTEST@", "OTHERKEY@"),
            key_only.replace("AKIAGGTEST@", "OTHERKEY@"),
        ),
        ("/data/arch", "/data/arch"),
    ):
        model = check_text(PRM.format(extra=f"TRANLOGOPTIONS ALTARCHIVELOGDEST {dest}\n")).model
        assert model is not None
        assert ArchiveCatalog.of(found, model).location == used
