"""Where a deployment lives: the GoldenGate-style home directory and its layout.

Which home: ``--home``, else ``$GGHOME``, else the current directory when it has
``dirprm/``, else a platformdirs user data directory. The layout mirrors a classic
GoldenGate installation (``CREATE SUBDIRS``) plus ``dirdb/`` for the embedded source
databases that stand in for Oracle.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

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


class HomeError(ValueError):
    """``--home`` or ``$GGHOME`` names what cannot be a home; the text is one line for the user."""


def named_home(name: str | os.PathLike[str], source: str = "--home") -> Home:
    """The home a user named: an existing directory, else :class:`HomeError`.

    A missing directory is refused rather than made (a typo would otherwise start a new, empty
    deployment beside the real one); so is a file, or a name the system cannot look up. A
    directory that cannot be examined passes here: the owner check says why it is refused."""
    root = Path(name).expanduser().resolve()
    try:
        mode = root.stat().st_mode
    except FileNotFoundError:
        raise HomeError(
            f"ERROR: Home {root} ({source}) does not exist; make the directory, then run "
            "CREATE SUBDIRS in it."
        ) from None
    except PermissionError:
        return Home(root)
    except OSError as exc:
        raise HomeError(f"ERROR: Home {root} ({source}) cannot be used: {exc.strerror}.") from None
    if not stat.S_ISDIR(mode):
        raise HomeError(f"ERROR: Home {root} ({source}) is not a directory.")
    return Home(root)


def resolve_home(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Home:
    """Pick the home by the documented precedence (explicit, $GGHOME, cwd, user data dir).

    Raises :class:`HomeError` when ``explicit`` or ``$GGHOME`` is not an existing directory."""
    if explicit:
        return named_home(explicit)
    env = os.environ.get("GGHOME")
    if env:
        return named_home(env, "$GGHOME")
    here = (cwd or Path.cwd()).resolve()
    if (here / "dirprm").is_dir():
        return Home(here)
    import platformdirs  # the shell's dependency; a Spark task never resolves a home

    return Home(Path(platformdirs.user_data_dir("ggsci", appauthor=False)) / "home")


def in_home(home: Home, path: str | Path) -> Path:
    """A path a parameter or group file names: relative ones are relative to the home."""
    p = Path(path)
    return p if p.is_absolute() else home.root / p
