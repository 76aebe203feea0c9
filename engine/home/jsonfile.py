"""Durable small JSON files: write to a temporary file, fsync, rename over the target.

Checkpoint, group-definition and process files are replaced whole, so a reader never sees a
half-written file and a crash leaves either the old or the new version.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_json(path: Path, data: Any, mode: int = 0o644) -> None:
    """Atomically replace ``path`` with ``data`` as JSON, durable once this returns."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def read_json(path: Path) -> Any:
    """The parsed content of ``path``; raises ``OSError`` or ``ValueError`` for callers to map."""
    return json.loads(path.read_text())
