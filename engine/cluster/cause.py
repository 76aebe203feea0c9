"""One line for a Spark failure: the cause, not the 56–114 lines of its traceback.

A session that cannot be built (``spark.cores.max=abc``, ``yarn`` without
``HADOOP_CONF_DIR``, an unreachable ``k8s://`` API server) fails in the JVM: py4j hands
Python the Java exception, whose innermost cause says what is wrong; a JVM that exits before
py4j connects leaves its reason only in its standard error, which ggsci sends to the
driver's Spark log. :func:`cause` finds that line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

#: A Java exception line: ``pkg.Class: message`` (or ``Exception in thread "main" ...``).
_JAVA: Final = re.compile(
    r"(?:Exception in thread \"[^\"]*\" )?((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error))"
    r"(?::\s*(.*))?"
)
_MAX: Final = 400


def _clean(kind: str, message: str) -> str:
    short = kind.rsplit(".", 1)[-1]
    message = " ".join(message.split())
    if len(message) > _MAX:
        message = message[: _MAX - 3] + "..."
    return f"{short}: {message}" if message else short


def java_cause(exc: BaseException) -> str | None:
    """The innermost cause of a py4j Java exception, as ``Class: message``."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return None
    try:
        inner = java
        for _ in range(20):
            nxt = inner.getCause()
            if nxt is None:
                break
            inner = nxt
        return _clean(str(inner.getClass().getName()), str(inner.getMessage() or ""))
    except Exception:  # the JVM is gone: read the text instead
        return None


def text_cause(text: str) -> str | None:
    """The last Java exception line in ``text`` (a traceback, a log), as ``Class: message``;
    ``Caused by:`` lines count, so the innermost cause wins."""
    found: str | None = None
    for raw in text.splitlines():
        line = raw.strip().removeprefix("Caused by: ")
        m = _JAVA.search(line)
        if m and (m.start() == 0 or line.startswith("Exception in thread")):
            found = _clean(m.group(1), m.group(2) or "")
    return found


def log_cause(log_file: Path | None, since: int = 0) -> str | None:
    """The cause in the Spark log's lines written after offset ``since``."""
    if log_file is None:
        return None
    try:
        with open(log_file, "rb") as f:
            f.seek(since)
            text = f.read(4 << 20).decode(errors="replace")
    except OSError:
        return None
    return text_cause(text)


def cause(exc: BaseException, log_file: Path | None = None, since: int = 0) -> str:
    """One line saying why a Spark call failed."""
    got = java_cause(exc) or text_cause(str(exc)) or log_cause(log_file, since)
    if got:
        return got
    first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
    return _clean(type(exc).__name__, first)
