"""Trail format releases: what ``FORMAT RELEASE m.n`` (EXTTRAIL, RMTTRAIL, ADD EXTTRAIL,
ADD RMTTRAIL) selects, as one table.

GoldenGate maps a release to a trail *compatibility level*, the file header's
Compatibility token; a reader refuses a file whose level is above its own (seed 003,
"Trail File Header Record"). What differs between the releases we write
(docs/trail_format.md, "Format releases"):

* the Compatibility level in each file header (11.2 = 3 and 12.2 = 5 are GoldenGate's:
  an 11.2 trail's Logdump dump shows ``0003``, the 12.2 Logdump reference gives the
  values 0 to 5; the levels after 12.2 are **ours**, one per release, in order);
* 12.2 and later write DDR/TDR metadata records (IOType 170) before the first record of
  each table in each file ("self-describing trails", the 12.2 default); earlier
  releases write none, so readers get no column names from the trail;
* before 12.1, three-part object names (``CDB.OWNER.TABLE``) are not supported;
* 21.1 adds the DbUniqueName file header token.

ggsci's own first trail format (before releases existed here) wrote level 1 and a
Metadata record of its own; readers still read it (``LEGACY_LEVEL``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from engine.trail.errors import ReleaseError
from engine.trail.layout import COMPATIBILITY_LEVEL


@dataclass(frozen=True, slots=True, order=True)
class Release:
    """One trail format release; ordered by compatibility level."""

    level: int
    name: str
    metadata: bool  # writes DDR/TDR metadata records (12.2+)
    three_part_names: bool  # CDB.OWNER.TABLE names allowed (12.1+)
    db_unique_name: bool  # file header carries DbUniqueName (21.1+)

    def __str__(self) -> str:
        return self.name


RELEASES: Final[dict[str, Release]] = {
    r.name: r
    for r in (
        Release(3, "11.2", metadata=False, three_part_names=False, db_unique_name=False),
        Release(4, "12.1", metadata=False, three_part_names=True, db_unique_name=False),
        Release(5, "12.2", metadata=True, three_part_names=True, db_unique_name=False),
        Release(6, "12.3", metadata=True, three_part_names=True, db_unique_name=False),
        Release(7, "18.1", metadata=True, three_part_names=True, db_unique_name=False),
        Release(8, "19.1", metadata=True, three_part_names=True, db_unique_name=False),
        Release(9, "21.1", metadata=True, three_part_names=True, db_unique_name=True),
    )
}
_BY_LEVEL: Final = {r.level: r for r in RELEASES.values()}

#: What a writer writes without FORMAT RELEASE: the newest release ggsci writes.
DEFAULT_RELEASE: Final = RELEASES["21.1"]
#: The newest level a reader here accepts (tests hold it to the newest release's).
NEWEST_LEVEL: Final = COMPATIBILITY_LEVEL
#: ggsci's first trail format (Compatibility 1): one Metadata record of its own per table.
LEGACY_LEVEL: Final = 1

_RELEASE_TEXT = re.compile(r"(\d{1,2})\.(\d{1,2})(?:\.\d+)*")


def known_releases() -> str:
    return ", ".join(RELEASES)


def parse_release(text: str) -> Release:
    """``12.2`` (or ``12.2.0.1``: the first two parts count) to its Release."""
    match = _RELEASE_TEXT.fullmatch(text.strip())
    if match is None:
        raise ReleaseError(
            f"FORMAT RELEASE {text}: a release is major.minor, like 12.2 "
            f"(known: {known_releases()})"
        )
    name = f"{int(match.group(1))}.{int(match.group(2))}"
    release = RELEASES.get(name)
    if release is None:
        raise ReleaseError(
            f"FORMAT RELEASE {text} is not a trail format release this writer knows "
            f"(known: {known_releases()})"
        )
    return release


def release_of_level(level: int) -> Release | None:
    """The release that writes Compatibility ``level``; None for the legacy level and
    levels no release here writes."""
    return _BY_LEVEL.get(level)


def level_name(level: int) -> str:
    """How Logdump names a Compatibility level: ``5 (FORMAT RELEASE 12.2)``."""
    release = _BY_LEVEL.get(level)
    if release is not None:
        return f"{level} (FORMAT RELEASE {release.name})"
    if level == LEGACY_LEVEL:
        return f"{level} (ggsci format before releases)"
    return str(level)


def check_table_name(release: Release, table: str) -> None:
    """Refuse a three-part object name in a release before 12.1 (GoldenGate: "RELEASE
    prior to 12.1 does not support three-part object names")."""
    if not release.three_part_names and table.count(".") >= 2:
        raise ReleaseError(
            f"table {table} has a three-part name, which trail format release "
            f"{release.name} cannot hold (12.1 and later can)"
        )
