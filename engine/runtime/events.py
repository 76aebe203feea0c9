"""The event log (``ggserr.log``) and report-file lines in OGG's message format.

A line reads ``2014-09-10 02:24:19  INFO    OGG-01635  <component>, <grp>.prm:  <text>``: the
local time, the severity left-justified in seven characters, the code, the component (with the
parameter file for a group process) and the text. Every writer in the home goes through
:func:`log_event`, so GGSCI, the Manager and the group processes produce one consistent log.
Appends are single ``write`` calls on an ``O_APPEND`` descriptor, which keeps lines whole when
several processes log at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from params.masking import mask_secrets

Clock = Callable[[], datetime]

GGSCI_COMPONENT = "Oracle GoldenGate Command Interpreter for Oracle"
MANAGER_COMPONENT = "Oracle GoldenGate Manager for Oracle"
CAPTURE_COMPONENT = "Oracle GoldenGate Capture for Oracle"
DELIVERY_COMPONENT = "Oracle GoldenGate Delivery for Oracle"


class Severity(StrEnum):
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"


@dataclass(frozen=True)
class Event:
    """One message: a stable code, its severity and the already formatted text."""

    code: str
    severity: Severity
    text: str
    component: str
    prm: str | None = None

    def format(self, when: datetime) -> str:
        where = f"{self.component}, {self.prm}" if self.prm else self.component
        return (
            f"{when:%Y-%m-%d %H:%M:%S}  {self.severity.value:<7} {self.code}  {where}:  {self.text}"
        )


def ggsci_command(user: str, command: str) -> Event:
    """OGG-00987: every GGSCI command is logged with the OS user who typed it."""
    return Event("OGG-00987", Severity.INFO, f"GGSCI command ({user}): {command}.", GGSCI_COMPONENT)


_FRAME = re.compile(r"^(?:at |\.\.\. \d+ more|File \")")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def one_line(text: str) -> str:
    """``text`` as one ggserr.log line (control characters as ``?``). Of a multi-line message,
    a Py4J/Java or Python traceback, what says what went wrong is kept: the first line, plus
    the Java exception line after Py4J's "An error occurred while calling ...", or a Python
    traceback's last line; then how many lines were left out (the report has them all)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) <= 1:
        return _CONTROL.sub("?", text)
    if lines[0].startswith("Traceback (most recent call last)"):
        kept = [lines[-1]]
    else:
        kept = [lines[0]]
        if "An error occurred while calling" in lines[0] and not _FRAME.match(lines[1]):
            kept.append(lines[1].lstrip(": "))
    summary = " ".join(kept)
    return _CONTROL.sub("?", f"{summary} [{len(lines) - len(kept)} more line(s)]")


def log_event(log: Path, event: Event, clock: Clock = datetime.now) -> str:
    """Append ``event`` to the log file ``log`` (created if needed) as one line (see
    :func:`one_line`); return the line written."""
    line = mask_secrets(replace(event, text=one_line(event.text)).format(clock()))
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode(errors="replace"))
    finally:
        os.close(fd)
    return line


def current_user() -> str:
    """The OS user name as GGSCI logs it; falls back to the uid when there is no passwd entry."""
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, ImportError):
        return str(os.getuid())
