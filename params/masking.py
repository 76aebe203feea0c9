"""Masking secrets in text that is shown or written: parameter echoes, logs, history.

One function, :func:`mask_secrets`, used by every writer: ``params show``, the GGSCI command
log (OGG-00987 in ``ggserr.log``), the report files and event lines of the group processes,
and the shell's history. It hides

* the value after ``PASSWORD`` (and ``ASMPASSWORD``, ``MININGPASSWORD``), quoted or not:
  ``USERID gg, PASSWORD s3cret`` → ``USERID gg, PASSWORD ********``;
* the password of a ``user/password`` login: ``USERID gg/s3cret@db``;
* the password in a URL's user information: ``postgresql://gg:s3cret@host/db`` (any scheme);
* a ``password=...`` keyword of a connection string or URL query;
* the value of a secret-like setting (:func:`secret_key`): a Spark setting whose name holds
  ``secret``, ``password``, ``token``, ``credential`` or ends in ``.key``/``_key``
  (``SPARKCONF spark.authenticate.secret=...``,
  ``spark.executorEnv.AWS_SECRET_ACCESS_KEY=...``, ``spark.hadoop.fs.s3a.secret.key ...``),
  and any ``NAME=value`` whose name holds ``SECRET`` or ``PASSWORD``.

Secrets themselves live only in the credential store (``dircrd/``, mode 0600).
"""

from __future__ import annotations

import re
from typing import Final

MASK: Final = "********"

_PATTERNS: Final = (
    re.compile(
        r"(?i)(\b(?:PASSWORD|ASMPASSWORD|MININGPASSWORD)\s+)(\"[^\"]*\"|'[^']*'|\S+?)(?=[\s,;]|$)"
    ),
    re.compile(r"(?i)(\bUSERID\s+[^\s,/@]+/)([^\s,@]+)"),
    # (a secret may hold an unencoded "/", as AWS secret keys do)
    re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://[^\s/:@]*:)([^\s@/]*(?:/[^\s@/?#]*)*)(?=@)"),
    re.compile(r"(?i)(\bpassword\s*=\s*)('[^']*'|\"[^\"]*\"|[^\s&;,]+)"),
    re.compile(
        r"(?i)(\bspark\.[\w.\-]*(?:secret|passw|token|credential|[._]key\b)[\w.\-]*"
        r"(?:\s*[=:]\s*|\s+))(\"[^\"]*\"|'[^']*'|\S+)"
    ),
    re.compile(r"(?i)(\b\w*(?:secret|password)\w*\s*=\s*)(\"[^\"]*\"|'[^']*'|[^\s&;,]+)"),
)
#: A setting's name that says its value is a secret (Spark's own redaction regex is alike).
_SECRET_KEY: Final = re.compile(r"(?i)secret|passw|token|credential|[._]key$")


def mask_secrets(text: str) -> str:
    """``text`` with every password in it replaced by :data:`MASK`."""
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + MASK, text)
    return text


def secret_key(name: str) -> bool:
    """Whether a setting named ``name`` (``spark.authenticate.secret``) holds a secret."""
    return bool(_SECRET_KEY.search(name))


def has_secret(text: str) -> bool:
    """Whether ``text`` holds something :func:`mask_secrets` would hide."""
    return mask_secrets(text) != text
