"""Storage locations for a command line: the key alone there, the secret on standard input.

``ggsci`` refuses a secret in an argument (``/proc/PID/cmdline`` is readable by every local
user, ggsci.secretin); a test gives ``s3://KEY@...`` and the secret with ``--password-stdin``.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def key_alone(location: str) -> tuple[str, str]:
    """(``location`` without its secret, the secret)."""
    parts = urlsplit(location)
    userinfo, _, host = parts.netloc.rpartition("@")
    key, _, secret = userinfo.partition(":")
    assert key and secret, "a location with KEY:SECRET@"
    return urlunsplit(parts._replace(netloc=f"{key}@{host}")), secret


def stdin_args(location: str) -> tuple[list[str], str]:
    """([location without its secret, ``--password-stdin``], the input to give)."""
    bare, secret = key_alone(location)
    return [bare, "--password-stdin"], secret + "\n"
