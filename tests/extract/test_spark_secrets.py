"""Secrets in Spark settings are masked like every other secret: in the report's
parameter echo, ggserr.log, ``params show`` (its statements and its model) (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ggsci.cli import build_app
from params.masking import MASK, mask_secrets, secret_key

SECRETS = {
    "SPARKCONF spark.executorEnv.AWS_SECRET_ACCESS_KEY=wJalrXUtn/K7MDENG": "wJalrXUtn",
    "SPARKCONF spark.authenticate.secret=s3cret-shared": "s3cret-shared",
    "SPARKCONF spark.ssl.keyStorePassword = hunter2": "hunter2",
    "SPARKCONF spark.hadoop.fs.s3a.secret.key=abc/def": "abc/def",
    "SPARKCONF spark.kubernetes.authenticate.submission.oauthToken=tok123": "tok123",
    "spark.authenticate.secret   s3cret-in-a-properties-file": "s3cret-in-a",
    "AWS_SECRET_ACCESS_KEY=wJalr2 spark-submit ...": "wJalr2",
}


@pytest.mark.parametrize("line", sorted(SECRETS))
def test_a_secret_setting_is_masked(line: str) -> None:
    masked = mask_secrets(line)
    assert SECRETS[line] not in masked and MASK in masked
    assert mask_secrets(masked) == masked


@pytest.mark.parametrize(
    "line",
    [
        "SPARKCONF spark.cores.max=8",
        "SPARKCONF spark.ssl.keyStore=/etc/ks.jks",
        "SPARKCONF spark.executorEnv.AWS_ACCESS_KEY_ID=AKIA1",
        "TABLE hr.emp, TOKENS (TK_HOST = @GETENV('GGENVIRONMENT', 'HOSTNAME'));",
    ],
)
def test_an_ordinary_setting_is_shown(line: str) -> None:
    assert mask_secrets(line) == line


def test_secret_key_names() -> None:
    assert secret_key("spark.authenticate.secret")
    assert secret_key("spark.executorEnv.AWS_SECRET_ACCESS_KEY")
    assert secret_key("spark.hadoop.fs.s3a.access.key")
    assert not secret_key("spark.cores.max")
    assert not secret_key("spark.ssl.keyStore")


def test_params_show_masks_spark_secrets(tmp_path: Path) -> None:
    f = tmp_path / "e1.prm"
    f.write_text(
        "EXTRACT e1\nEXTTRAIL ./dirdat/aa\n"
        "SPARKCONF spark.executorEnv.AWS_SECRET_ACCESS_KEY=wJalrXUtn/K7MDENG\n"
        "SPARKCONF spark.authenticate.secret=s3cret-shared\n"
        "SPARKCONF spark.cores.max=4\nTABLE hr.*;\n"
    )
    for args in (["params", "show", str(f)], ["params", "show", "--json", str(f)]):
        res = CliRunner().invoke(build_app(), args)
        assert res.exit_code == 0, res.output
        assert "wJalrXUtn" not in res.output and "s3cret-shared" not in res.output
        assert MASK in res.output
    model = json.loads(res.output)
    assert ["spark.cores.max", "4"] in model["spark"]["conf"]
    assert ["spark.authenticate.secret", MASK] in model["spark"]["conf"]
