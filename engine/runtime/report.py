"""Report files ``dirrpt/<GROUP>.rpt``: aged on each start, opened with the OGG banner.

On start the previous reports shift (``GROUP.rpt`` → ``GROUP0.rpt`` → … → ``GROUP9.rpt``, the
oldest dropped), then the new report begins with the banner and the parameter file echoed under
"Running with the following parameters". Messages are appended in the ggserr.log format.

A report is written with mode 0600 (the home's owner only), and every line of it — the
parameter echo, events, free lines — goes through :func:`params.masking.mask_secrets`:
``PASSWORD`` values and the passwords of URLs never reach it.
"""

from __future__ import annotations

import os
import platform
from datetime import datetime
from importlib import metadata
from pathlib import Path

from engine.runtime.events import Clock, Event
from params.masking import mask_secrets

AGED_REPORTS = 10
STARS = "*" * 71
REPORT_MODE = 0o600


def age_reports(report: Path) -> None:
    """Shift ``X.rpt`` to ``X0.rpt`` and the aged ones up by one, keeping ten."""
    stem, suffix = report.stem, report.suffix
    aged = [report.with_name(f"{stem}{i}{suffix}") for i in range(AGED_REPORTS)]
    aged[-1].unlink(missing_ok=True)
    for older, newer in zip(reversed(aged[1:]), reversed(aged[:-1]), strict=True):
        if newer.exists():
            newer.replace(older)
    if report.exists():
        report.replace(aged[0])
    for old in aged:  # reports of older versions were 0644
        if old.exists():
            old.chmod(REPORT_MODE)


def banner(component: str, started: datetime, pid: int, desc: str | None) -> list[str]:
    uname = platform.uname()
    version = f"ggsci {package_version()} (a re-creation; Python {platform.python_version()})"
    return [
        STARS,
        f"{component:^71}".rstrip(),
        f"{version:^71}".rstrip(),
        f"{uname.system + ', ' + uname.machine:^71}".rstrip(),
        "",
        f"{'Starting at ' + started.strftime('%Y-%m-%d %H:%M:%S'):^71}".rstrip(),
        STARS,
        "",
        "Operating System Version:",
        f"{uname.system}",
        f"Version {uname.version}, Release {uname.release}",
        f"Node: {uname.node}",
        f"Machine: {uname.machine}",
        "",
        f"Process id: {pid}",
        "",
        "Description: " + (desc or ""),
        "",
        STARS,
        "**" + "Running with the following parameters".center(67) + "**",
        STARS,
        "",
    ]


def package_version() -> str:
    try:
        return metadata.version("ggsci")
    except metadata.PackageNotFoundError:
        return "unknown"


class ReportWriter:
    """Appends lines to one report file; every line is flushed so VIEW REPORT sees it at once."""

    def __init__(self, path: Path, clock: Clock = datetime.now) -> None:
        self.path = path
        self.clock = clock

    def start(self, component: str, desc: str | None, param_lines: list[str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        age_reports(self.path)
        lines = banner(component, self.clock(), os.getpid(), desc)
        lines += param_lines
        lines.append("")
        self._append("\n".join(lines) + "\n", truncate=True)

    def rollover(self) -> None:
        """REPORTROLLOVER: this report becomes ``<G>0.rpt`` (the older ones aged) and a new
        one begins, saying so."""
        age_reports(self.path)
        self.line(
            f"{self.clock():%Y-%m-%d %H:%M:%S}  Report rolled over (REPORTROLLOVER); the "
            f"previous report is {self.path.stem}0{self.path.suffix}."
        )

    def line(self, text: str) -> None:
        self._append(text + "\n")

    def _append(self, text: str, truncate: bool = False) -> None:
        flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if truncate else os.O_APPEND)
        fd = os.open(self.path, flags, REPORT_MODE)
        try:
            os.fchmod(fd, REPORT_MODE)
            os.write(fd, mask_secrets(text).encode())
        finally:
            os.close(fd)

    def event(self, event: Event) -> None:
        self.line(event.format(self.clock()))
