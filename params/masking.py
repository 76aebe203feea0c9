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
    # (and a space, which libpq refuses but a user may type: "u:my secret@h")
    re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://[^\s/:@]*:)([^@/'\"\r\n]*(?:/[^\s@/?#]*)*)(?=@)"),
    # (unquoted, to the next key= : "password=my secret host=h" is one malformed value)
    re.compile(
        r"(?i)(\bpassword\s*=\s*)('[^']*'|\"[^\"]*\"|[^\s&;,]+(?:[ \t]+(?![A-Za-z_]\w*\s*=)"
        r"[^\s&;,'\"]+)*)"
    ),
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


#: libpq's ``password=`` in a connection string, to the next ``key=`` (or the end): what a
#: malformed string makes libpq quote piece by piece (``missing "=" after "secret"``).
_CONNINFO_PASSWORD: Final = re.compile(
    r"(?i)\bpassword\s*=\s*('(?:\\.|[^'\\])*'?|.*?)(?=\s+[A-Za-z_]\w*\s*=|$)", re.S
)


def _conn_secrets(target: str, password: str | None) -> set[str]:
    """The password ``target`` (a URL or libpq string) and ``password`` carry, whole and in
    its whitespace-separated pieces (with and without their quotes)."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    whole: set[str] = {password} if password else set()
    if "://" in target:
        parts = urlsplit(target)
        userinfo = parts.netloc.rpartition("@")[0]
        if ":" in userinfo:
            raw = userinfo.partition(":")[2]
            whole |= {raw, unquote(raw)}
        whole |= {v for k, v in parse_qsl(parts.query) if k.lower() == "password"}
    whole |= {m.group(1) for m in _CONNINFO_PASSWORD.finditer(target)}
    found: set[str] = set()
    for secret in whole:
        for piece in (secret, *secret.split()):
            found |= {piece, piece.strip("'\"")}
    return {s for s in found if s}


def mask_conn_error(message: str, target: str, password: str | None = None) -> str:
    """A PostgreSQL connection error (libpq's, psycopg's, or a line quoting ``target``) with
    the password ``target`` or ``password`` carries masked, in whole or in the pieces a
    malformed connection string makes libpq quote. A piece shorter than 4 characters is
    masked only where the message quotes it (``"ab"``): unquoted it could be any word."""
    for secret in sorted(_conn_secrets(target, password), key=len, reverse=True):
        if len(secret) >= 4:
            message = message.replace(secret, MASK)
        else:
            message = message.replace(f'"{secret}"', f'"{MASK}"')
    # libpq's own phrases stay whole (the word after "password" is no secret there: the
    # passwords the connection carries are masked above, in whole and in pieces)
    parts = _LIBPQ_PHRASES.split(message)
    return "".join(p if i % 2 else mask_secrets(p) for i, p in enumerate(parts))


#: libpq's lines in which "password" is followed by a word of its own, not a secret.
_LIBPQ_PHRASES: Final = re.compile(r"(?i)\b(no password supplied|password authentication failed)\b")
