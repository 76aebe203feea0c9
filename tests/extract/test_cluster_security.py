"""Spark authentication and RPC encryption on a standalone cluster (docs/cluster.md,
"Authentication and encryption"): the master and worker hold a shared secret
(``spark.authenticate``) and encrypt RPC (``spark.network.crypto.enabled``); an Extract
given the same settings runs and writes its trail; one without the secret is refused and
abends with one line within its start-up bound; the secret is masked in its report."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.extract import standalone
from tests.extract.test_cluster_faults import extract, finish, one_error, source

pytestmark = [pytest.mark.spark, pytest.mark.e2e]

SECRET = "s3cret-for-the-cluster-only"
SECURE = {
    "spark.authenticate": "true",
    "spark.authenticate.secret": SECRET,
    "spark.network.crypto.enabled": "true",
}


@pytest.fixture(scope="module")
def cluster() -> Iterator[standalone.Cluster]:
    c = standalone.start_or_fail(1, daemon_conf=SECURE)
    yield c
    c.stop()


def test_an_extract_with_the_secret_runs_encrypted(
    cluster: standalone.Cluster, tmp_path: Path
) -> None:
    home = source(tmp_path)
    conf = "".join(f"SPARKCONF {k}={v}\n" for k, v in SECURE.items())
    proc = extract(home, f"SPARKMASTER {cluster.url}\n{conf}", stop_at_eof=True)
    out = finish(proc, 300)
    assert proc.returncode == 0, f"{out}\n{cluster.logs()}"
    assert "20 trail record(s)" in out, out
    report = (home.dirrpt / "E1.rpt").read_text()
    assert f"Spark master {cluster.url}" in report and SECRET not in report
    assert "OGG-25370" not in out + report  # (authenticated and encrypted: no warning)


def test_an_extract_without_the_secret_is_refused_in_one_line(
    cluster: standalone.Cluster, tmp_path: Path
) -> None:
    home = source(tmp_path)
    t0 = time.monotonic()
    proc = extract(
        home,
        f"SPARKMASTER {cluster.url}\nSPARKCONF spark.ggsci.startupTimeout=20s\n",
        stop_at_eof=True,
    )
    out = finish(proc, 240)
    took = time.monotonic() - t0
    assert proc.returncode == 1, out
    one_error(out, "The Spark session did not start within 20 s: the master refused", "SASL")
    # at its bound (and the process's own start), not when Spark's client gives up on the
    # refusing master (three tries 20 s apart: it did, the abend waited on the start's lock)
    assert took < 50, f"the Extract abended {took:.0f} s after its start (bound 20 s)"
