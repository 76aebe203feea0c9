"""Trail file names: ``<dir>/<2-char prefix><9-digit seqno>`` (``dirdat/aa000000000``)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from engine.trail.errors import TrailIOError
from engine.trail.layout import MAX_TRAIL_SEQNO, TRAIL_PREFIX_LENGTH, TRAIL_SEQNO_DIGITS

_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9]")


@dataclass(frozen=True, slots=True)
class TrailName:
    """A trail as GGSCI names it (``./dirdat/aa``): a directory and a 2-char prefix."""

    directory: Path
    prefix: str

    @classmethod
    def parse(cls, trail: str | os.PathLike[str]) -> TrailName:
        path = Path(trail)
        prefix = path.name
        if len(prefix) != TRAIL_PREFIX_LENGTH or not _PREFIX.fullmatch(prefix):
            raise TrailIOError(f"trail name {str(trail)!r} must end in 2 characters (e.g. aa)")
        return cls(path.parent, prefix)

    @classmethod
    def of_file(cls, path: str | os.PathLike[str]) -> tuple[TrailName, int]:
        """The trail and sequence number of a trail file path."""
        p = Path(path)
        name = p.name
        width = TRAIL_PREFIX_LENGTH + TRAIL_SEQNO_DIGITS
        if len(name) != width or not name[TRAIL_PREFIX_LENGTH:].isdigit():
            raise TrailIOError(f"{str(path)!r} is not a trail file name (aa000000000)")
        return cls.parse(p.parent / name[:TRAIL_PREFIX_LENGTH]), int(name[TRAIL_PREFIX_LENGTH:])

    def file(self, seqno: int) -> Path:
        if not 0 <= seqno <= MAX_TRAIL_SEQNO:
            raise TrailIOError(f"trail sequence number {seqno} out of range")
        return self.directory / f"{self.prefix}{seqno:0{TRAIL_SEQNO_DIGITS}d}"

    def seqnos(self) -> list[int]:
        """Sequence numbers of the files present, ascending."""
        if not self.directory.is_dir():
            return []
        width = TRAIL_PREFIX_LENGTH + TRAIL_SEQNO_DIGITS
        found = []
        for entry in os.listdir(self.directory):
            if (
                len(entry) == width
                and entry.startswith(self.prefix)
                and entry[TRAIL_PREFIX_LENGTH:].isdigit()
            ):
                found.append(int(entry[TRAIL_PREFIX_LENGTH:]))
        return sorted(found)

    def __str__(self) -> str:
        return str(self.directory / self.prefix)


def fsync_directory(directory: Path) -> None:
    """Make a file creation, rename or removal in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
