"""Helpers of the trust tests: run Python code as another local user (``nobody``).

CI runs as root. The interpreter lives under /root (not searchable by ``nobody``), so the code is
started as root, imports what it needs, and only then drops to ``nobody`` with setgid/setuid:
everything after the drop runs with nobody's rights, as a process of another user would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from engine.home.layout import Home

NOBODY = 65534


def as_nobody(imports: str, body: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """Run ``imports`` as root, then ``body`` as uid/gid 65534; the finished process."""
    if os.geteuid() != 0:
        pytest.fail("these tests drop privileges and must run as root (CI does)")
    drop = f"os.setgroups([])\nos.setgid({NOBODY})\nos.setuid({NOBODY})\n"
    code = f"import os, sys, encodings.idna\n{imports}\n{drop}"
    code += body
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd="/",
        env={**os.environ, "HOME": "/nonexistent"},
    )


def open_home() -> Home:
    """A home in a directory every user may search (pytest's tmp_path is root-only): another
    user then meets our checks, not a closed directory on the way."""
    base = Path(tempfile.mkdtemp(prefix="ggtrust-", dir="/tmp"))
    base.chmod(0o755)
    home = Home(base / "gghome")
    home.create_subdirs()
    home.root.chmod(0o755)
    return home
