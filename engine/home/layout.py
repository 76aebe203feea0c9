"""Where a deployment lives: the GoldenGate-style home directory and its layout.

Which home: ``--home``, else ``$GGHOME``, else the current directory when it has
``dirprm/``, else a platformdirs user data directory. The layout mirrors a classic
GoldenGate installation (``CREATE SUBDIRS``) plus ``dirdb/`` for the embedded source
databases that stand in for Oracle.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

SUBDIRS: tuple[str, ...] = (
    "dirprm",
    "dirrpt",
    "dirchk",
    "dirdat",
    "dirtmp",
    "dirpcs",
    "dirdef",
    "dirsql",
    "dirout",
    "dircrd",
    "dirdb",
    "BR",
)


@dataclass(frozen=True)
class Home:
    """A home directory; all paths of a deployment are derived from it."""

    root: Path

    def sub(self, name: str) -> Path:
        return self.root / name

    @property
    def dirprm(self) -> Path:
        return self.root / "dirprm"

    @property
    def dirrpt(self) -> Path:
        return self.root / "dirrpt"

    @property
    def dirchk(self) -> Path:
        return self.root / "dirchk"

    @property
    def dirdat(self) -> Path:
        return self.root / "dirdat"

    @property
    def dirtmp(self) -> Path:
        return self.root / "dirtmp"

    @property
    def dirpcs(self) -> Path:
        return self.root / "dirpcs"

    @property
    def dirdb(self) -> Path:
        """Embedded source databases, one sub-directory each."""
        return self.root / "dirdb"

    @property
    def ggserr_log(self) -> Path:
        return self.root / "ggserr.log"

    @property
    def globals_file(self) -> Path:
        return self.root / "GLOBALS"

    def create_subdirs(self) -> list[tuple[Path, bool]]:
        """Make the layout; return each directory with whether it was created."""
        made: list[tuple[Path, bool]] = []
        for name in SUBDIRS:
            path = self.root / name
            existed = path.is_dir()
            path.mkdir(parents=True, exist_ok=True)
            made.append((path, not existed))
        return made


def resolve_home(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Home:
    """Pick the home by the documented precedence (explicit, $GGHOME, cwd, user data dir)."""
    if explicit:
        return Home(Path(explicit).expanduser().resolve())
    env = os.environ.get("GGHOME")
    if env:
        return Home(Path(env).expanduser().resolve())
    here = (cwd or Path.cwd()).resolve()
    if (here / "dirprm").is_dir():
        return Home(here)
    return Home(Path(platformdirs.user_data_dir("ggsci", appauthor=False)) / "home")


def in_home(home: Home, path: str | Path) -> Path:
    """A path a parameter or group file names: relative ones are relative to the home."""
    p = Path(path)
    return p if p.is_absolute() else home.root / p
