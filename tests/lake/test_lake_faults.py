"""Off the happy path: a table deleted under the Replicat (a clear abend, nothing written
elsewhere), tables on the local S3-protocol server, maintenance between batches, and a
missing library (one line naming the extra)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from lakehelp import drain, lake_home, lake_run, read_delta, read_iceberg
from replicat_helpers import dele, ins, txn_records, upd, write_trail

from engine.replicat import ReplicatError
from engine.targets.lake import LakeError, require
from engine.targets.lake.location import resolve

MAP_APPLY = "MAP hr.emp, TARGET hr.emp, KEYCOLS (ID);"


@pytest.mark.parametrize("kind", ["deltalake", "iceberg"])
def test_a_table_deleted_under_the_replicat_abends_it(tmp_path: Path, kind: str) -> None:
    home = lake_home(tmp_path / "home")
    trail = home.root / "dirrmt" / "bb"
    write_trail(trail, [txn_records(100, [ins(1)])])
    r, _ = lake_run(home, kind, MAP_APPLY)
    r.run(lambda: False, stop_at_eof=True, idle=0.01)
    if kind == "deltalake":
        shutil.rmtree(home.root / "lake" / "hr" / "emp")
    else:
        r.catalog.store.catalog.drop_table("hr.emp")  # type: ignore[attr-defined]
    write_trail(trail, [txn_records(101, [ins(2)])])
    with pytest.raises(ReplicatError) as err:
        drain(r)
    assert "was deleted under the Replicat" in err.value.text, err.value.text
    assert err.value.code == "OGG-01004"
    assert r.progress.csn == 100  # the batch is not checkpointed: a restart applies it again
    if kind == "deltalake":
        assert not (home.root / "lake" / "hr" / "emp").exists()  # not silently made again


@pytest.mark.parametrize("kind", ["deltalake", "iceberg"])
def test_tables_on_the_s3_protocol_server(tmp_path: Path, kind: str, s3_server: str) -> None:
    location = s3_server.replace("ggsci/?", f"ggsci/{kind}-{tmp_path.name}?")
    home = lake_home(tmp_path / "home")
    write_trail(home.root / "dirrmt" / "bb",
                [txn_records(100, [ins(1), ins(2)]), txn_records(101, [upd(1, 5), dele(2)])])  # fmt: skip
    r, _ = lake_run(home, kind, MAP_APPLY, location=location, ops=1)
    drain(r)
    loc = resolve(location, home.root)
    assert "test:test" not in loc.shown and loc.uri.startswith("s3://ggsci/")
    if kind == "deltalake":
        rows = read_delta(loc.table_uri("hr", "emp"), loc.delta_options)
    else:
        from pyiceberg.catalog import load_catalog

        cat = load_catalog("ggsci", type="sql", warehouse=loc.uri, **loc.iceberg_options,
                           uri=f"sqlite:///{home.dirchk / 'iceberg_catalog.db'}")  # fmt: skip
        rows = cat.load_table("hr.emp").scan().to_arrow().to_pylist()
    assert rows == [{"ID": "1", "NAME": "n1", "SAL": "5"}]


def test_maintenance_compacts_and_expires_between_batches(tmp_path: Path) -> None:
    home = lake_home(tmp_path / "home")
    write_trail(home.root / "dirrmt" / "bb", [txn_records(100 + i, [ins(i)]) for i in range(6)])
    r, _ = lake_run(home, "deltalake", MAP_APPLY, ops=1)
    r.run(lambda: False, stop_at_eof=True, idle=0.01)
    (line,) = r.maintain("OPTIMIZE")
    assert line.startswith("HR.EMP: optimized, 6 files compacted into 1"), line
    (line,) = r.maintain("VACUUM", 0)
    assert line.startswith("HR.EMP: vacuumed, ") and not line.endswith(" 0 files removed"), line
    assert [x["ID"] for x in read_delta(home.root / "lake" / "hr" / "emp")] == [
        str(i) for i in range(6)
    ]
    r.close()
    home2 = lake_home(tmp_path / "home2")
    write_trail(home2.root / "dirrmt" / "bb", [txn_records(100 + i, [ins(i)]) for i in range(4)])
    r, _ = lake_run(home2, "iceberg", MAP_APPLY, ops=1)
    r.run(lambda: False, stop_at_eof=True, idle=0.01)
    (line,) = r.maintain("EXPIRESNAPSHOTS", 0)
    assert line == "HR.EMP: 3 snapshots expired, 1 kept", line  # one per batch
    (line,) = r.maintain("OPTIMIZE")
    assert "not an Iceberg maintenance action" in line
    r.close()
    assert len(read_iceberg(home2, "hr.emp")) == 4


def test_a_missing_library_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyiceberg", None)
    with pytest.raises(LakeError) as err:
        require("iceberg")
    assert str(err.value) == (
        "The iceberg handler needs the Python library pyiceberg, which is not installed: "
        "pip install 'ggsci[lake]' (the extra 'lake')."
    )
    require("deltalake")


def test_the_foreground_replicat_delivers_to_the_lake(tmp_path: Path) -> None:
    """``ggsci replicat paramfile dirprm/rep.prm --stop-at-eof`` with TARGETDB LIBFILE."""
    import os
    import subprocess

    from lakehelp import TRAIL, prm, props_text
    from replicat_helpers import add_group

    from engine.home.groups import GroupKind, SourceType

    home = lake_home(tmp_path / "home")
    write_trail(home.root / "dirrmt" / "bb", [txn_records(100, [ins(1), ins(2)])])
    add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, TRAIL)
    (home.dirprm / "rep.props").write_text(props_text("deltalake"))
    (home.dirprm / "rep.prm").write_text(prm(MAP_APPLY) + "REPORTCOUNT EVERY 1 RECORDS\n")
    out = subprocess.run(
        [sys.executable, "-m", "ggsci", "replicat", "paramfile", "dirprm/rep.prm", "--stop-at-eof"],
        cwd=home.root, env={**os.environ, "GGHOME": str(home.root)}, capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert [r["ID"] for r in read_delta(home.root / "lake" / "hr" / "emp")] == ["1", "2"]
    report = (home.dirrpt / "REP.rpt").read_text()
    assert "Created deltalake table HR.EMP" in report, report
    assert " records processed as of " in report, report  # REPORTCOUNT acts here too


def test_a_table_deleted_while_the_replicat_was_stopped_is_not_made_again(tmp_path: Path) -> None:
    """The checkpoint database lists the tables the group has committed to: one of them
    missing at a restart abends the Replicat instead of starting an empty table that would
    miss every change before the restart position."""
    from replicat_helpers import dele

    home = lake_home(tmp_path / "home")
    trail = home.root / "dirrmt" / "bb"
    write_trail(trail, [txn_records(100, [ins(1)])])
    r, _ = lake_run(home, "deltalake", MAP_APPLY)
    drain(r)
    shutil.rmtree(home.root / "lake" / "hr" / "emp")
    write_trail(trail, [txn_records(101, [dele(1), ins(2)])])
    r, _ = lake_run(home, "deltalake", MAP_APPLY, reuse=True)
    with pytest.raises(LakeError, match="was deleted while the Replicat was stopped"):
        drain(r)
    assert not (home.root / "lake" / "hr" / "emp").exists()


def test_a_failed_iceberg_commit_abends_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalog commit that fails (here: injected at pyiceberg's commit) is one line naming
    the table, and the batch is not checkpointed: a restart applies it again."""
    from pyiceberg.table import Transaction

    home = lake_home(tmp_path / "home")
    trail = home.root / "dirrmt" / "bb"
    write_trail(trail, [txn_records(100, [ins(1)])])
    r, _ = lake_run(home, "iceberg", MAP_APPLY)
    r.run(lambda: False, stop_at_eof=True, idle=0.01)

    def refused(_self: Transaction) -> None:
        raise OSError("No space left on device (injected)")

    monkeypatch.setattr(Transaction, "commit_transaction", refused)
    write_trail(trail, [txn_records(101, [ins(2)])])
    with pytest.raises(ReplicatError) as err:
        drain(r)
    text = err.value.text
    assert "Iceberg table" in text and "failed: No space left on device (injected)" in text, text
    assert "\n" not in text and "Traceback" not in text
    assert r.progress.csn == 100
    monkeypatch.undo()
    assert len(read_iceberg(home, "hr.emp")) == 1  # nothing of the failed batch is there
