"""TCPERRS: how a pump answers a failed link, GoldenGate's file in the home (``tcperrs``).

One rule a line: ``error  response  delay  max_retries`` (``--`` and ``#`` comments), where
``error`` is an errno name (ECONNREFUSED ...), ``response`` RETRY or ABEND, ``delay`` the wait
before a retry in centiseconds, and ``max_retries`` how many retries in a row. Without the file,
or for an error it does not list, the defaults below apply (GoldenGate's shipped file, plus
this engine's own conditions of the Collector: ENOSPC, a full disk on the target; ETRAILBUSY,
the trail still held by a Collector whose link was lost; EDECRYPT and EACCES abend, as no retry
can mend a wrong key or a refusal). A bad line is one error naming its line, and the pump abends
with it at start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "tcperrs"


@dataclass(frozen=True)
class TcpRule:
    error: str
    retry: bool
    delay_seconds: float
    max_retries: int


def _rule(error: str, response: str, centis: int, retries: int) -> TcpRule:
    return TcpRule(error, response == "RETRY", centis / 100.0, retries)


DEFAULTS: dict[str, TcpRule] = {
    r.error: r
    for r in (
        _rule("ECONNABORTED", "RETRY", 1000, 10),
        _rule("ECONNREFUSED", "RETRY", 1000, 12),
        _rule("ECONNRESET", "RETRY", 500, 10),
        _rule("ENETDOWN", "RETRY", 3000, 50),
        _rule("ENETRESET", "RETRY", 1000, 10),
        _rule("ENOBUFS", "RETRY", 100, 60),
        _rule("ENOTCONN", "RETRY", 100, 10),
        _rule("EPIPE", "RETRY", 500, 10),
        _rule("ESHUTDOWN", "RETRY", 1000, 10),
        _rule("ETIMEDOUT", "RETRY", 1000, 10),
        _rule("EHOSTUNREACH", "RETRY", 1000, 10),
        _rule("ENETUNREACH", "RETRY", 1000, 10),
        _rule("NODYNPORTS", "RETRY", 100, 10),
        _rule("ENOSPC", "RETRY", 1000, 30),
        _rule("ETRAILBUSY", "RETRY", 100, 60),
        _rule("EDECRYPT", "ABEND", 0, 0),
        _rule("EACCES", "ABEND", 0, 0),
        _rule("ENOKEY", "ABEND", 0, 0),
        _rule("EPROTO", "ABEND", 0, 0),
    )
}
FALLBACK = _rule("*", "RETRY", 1000, 10)
_LINE = re.compile(r"^(\S+)\s+(RETRY|ABEND)\s+(\d+)\s+(\d+)\s*$", re.IGNORECASE)


class TcpErrsError(ValueError):
    """A line of the tcperrs file that is not ``error RETRY|ABEND delay retries``."""


@dataclass(frozen=True)
class TcpErrs:
    rules: dict[str, TcpRule]

    def rule(self, error: str) -> TcpRule:
        return self.rules.get(error.upper()) or DEFAULTS.get(error.upper()) or FALLBACK


def parse_tcperrs(text: str, name: str = FILE_NAME) -> TcpErrs:
    rules: dict[str, TcpRule] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("--", 1)[0].split("#", 1)[0].strip()
        if not line:
            continue
        match = _LINE.match(line)
        if match is None:
            raise TcpErrsError(
                f"{name}:{number}: expected 'error RETRY|ABEND delay max_retries', got {line!r}"
            )
        error, response, delay, retries = match.groups()
        rules[error.upper()] = _rule(error.upper(), response.upper(), int(delay), int(retries))
    return TcpErrs(rules)


def load_tcperrs(home_root: Path) -> TcpErrs:
    path = home_root / FILE_NAME
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return TcpErrs({})
    except OSError as exc:
        raise TcpErrsError(f"{FILE_NAME}: cannot read: {exc.strerror or exc}") from exc
    return parse_tcperrs(text)
