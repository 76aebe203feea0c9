"""The handler's ``location`` as each library wants it.

A plain path (relative to the home) or ``file://`` is a local directory. An ``s3://`` URL
is written as the storage layer (:mod:`engine.storage`) spells it: credentials in the user
part or the AWS environment variables, and ``endpoint_override``, ``scheme`` and ``region``
in the query for an S3-protocol server other than AWS.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from engine.storage import describe, join
from engine.targets.lake import LakeError


@dataclass(frozen=True, slots=True)
class Location:
    """``uri``: where tables live (no credentials); ``delta_options``: delta-rs storage
    options; ``iceberg_options``: pyiceberg FileIO properties; ``shown``: for messages."""

    uri: str
    shown: str
    local: Path | None = None
    storage: str = ""  # as engine.storage names it (credentials in it: never shown)
    delta_options: dict[str, str] = field(default_factory=dict)
    iceberg_options: dict[str, str] = field(default_factory=dict)

    def storage_of(self, *parts: str) -> str:
        """A file under the location as :mod:`engine.storage` names it."""
        return join(self.storage, *parts)

    def table_uri(self, *parts: str) -> str:
        if self.local is not None:
            return str(self.local.joinpath(*parts))
        return "/".join([self.uri.rstrip("/"), *parts])


def resolve(text: str, home: Path) -> Location:
    parts = urlsplit(text)
    if parts.scheme in ("", "file"):
        path = Path(unquote(parts.path) if parts.scheme == "file" else text).expanduser()
        path = path if path.is_absolute() else home / path
        return Location(str(path), str(path), path, storage=str(path))
    if parts.scheme not in ("s3", "s3a"):
        raise LakeError(
            f"gg.handler location {describe(text)}: only a directory or an s3:// URL is supported",
            "OGG-00664",
        )
    if "@" not in parts.netloc and describe(text) != text:  # "KEY:ab/cd@bucket": the "/"
        raise LakeError(  # ended the authority; the secret would be taken for the bucket
            f"gg.handler location {describe(text)}: the secret in the URL must be "
            "percent-encoded ('/' as %2F)",
            "OGG-00664",
        )
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    user, _, host = parts.netloc.rpartition("@")
    key, _, secret = user.partition(":")
    key = unquote(key) or os.environ.get("AWS_ACCESS_KEY_ID", "")
    secret = unquote(secret) or os.environ.get("AWS_SECRET_ACCESS_KEY", "")
    region = query.get("region") or os.environ.get("AWS_REGION", "us-east-1")
    uri = f"s3://{host}{parts.path.rstrip('/')}"
    delta = {"AWS_REGION": region, "AWS_S3_ALLOW_UNSAFE_RENAME": "true"}
    iceberg = {"s3.region": region}
    if key:
        delta |= {"AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret}
        iceberg |= {"s3.access-key-id": key, "s3.secret-access-key": secret}
    endpoint = query.get("endpoint_override")
    if endpoint:
        scheme = query.get("scheme", "https")
        url = endpoint if "://" in endpoint else f"{scheme}://{endpoint}"
        delta |= {"AWS_ENDPOINT_URL": url, "AWS_ALLOW_HTTP": str(scheme == "http").lower()}
        iceberg |= {"s3.endpoint": url}
    return Location(uri, describe(text), None, text, delta, iceberg)
