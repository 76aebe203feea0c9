"""A lake target's ``gg.handler.NAME.location`` with a secret whose ``/`` is not
percent-encoded (AWS secret keys hold ``/``): the ``/`` ended the URL's authority, the part
of the secret after it became the bucket and path of the table URI every message names
("Delta table at s3://KEY:ab/CD@bucket/..."). Now refused in one line, masked; the encoded
form is taken, its secret in the storage options only."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.targets.lake import LakeError
from engine.targets.lake.location import resolve


def test_an_unencoded_slash_in_the_secret_is_refused_masked(tmp_path: Path) -> None:
    with pytest.raises(LakeError) as caught:
        resolve("s3://AKIAGG:ab/CDsecret@bucket/lake?region=us-east-1", tmp_path)
    assert "CDsecret" not in str(caught.value) and "ab" not in str(caught.value).split("://")[1]
    assert "percent-encoded" in str(caught.value) and "s3://***@bucket/lake" in str(caught.value)


def test_the_encoded_secret_is_in_the_storage_options_only(tmp_path: Path) -> None:
    loc = resolve("s3://AKIAGG:ab%2FCDsecret@bucket/lake?region=us-east-1", tmp_path)
    assert loc.uri == "s3://bucket/lake" and "CDsecret" not in loc.shown
    assert loc.delta_options["AWS_SECRET_ACCESS_KEY"] == "ab/CDsecret"
    assert loc.iceberg_options["s3.secret-access-key"] == "ab/CDsecret"
