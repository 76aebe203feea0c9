"""Group names: GoldenGate's rule, checked wherever a name enters (GGSCI, Manager, processes).

A group name is 1 to 8 characters: a letter, then letters, digits or ``_``. Names are
case-insensitive and stored upper-case. The rule is what keeps a name from naming a path:
``../../X/EVIL`` is refused before any file is built from it. A pattern (INFO, DELETE, START
with wildcards) may also hold ``*`` and ``?``.
"""

from __future__ import annotations

import re
from typing import Final

MAX_GROUP_NAME = 8
GROUP_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,7}$")
GROUP_PATTERN_RE = re.compile(r"^[A-Za-z0-9_*?]{1,64}$")
RULE = "a group name is 1 to 8 characters, a letter then letters, digits or _"


class InvalidGroupName(ValueError):
    """A name that breaks the rule; the message is one line that says the rule."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Invalid group name {name}: {RULE}.")
        self.name = name


def valid_group_name(name: str) -> bool:
    return bool(GROUP_NAME_RE.match(name))


def check_group_name(name: str) -> str:
    """``name`` upper-cased; :class:`InvalidGroupName` when it breaks the rule."""
    if not valid_group_name(name):
        raise InvalidGroupName(name)
    return name.upper()


def valid_group_pattern(pattern: str) -> bool:
    """A name, or a wildcard pattern of name characters with ``*`` / ``?``."""
    if "*" in pattern or "?" in pattern:
        return bool(GROUP_PATTERN_RE.match(pattern))
    return valid_group_name(pattern)


_DATABASE_NAME_OK: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$#")


def database_name(name: str) -> str | None:
    """A source database's name (embedded or attached) in upper case, as Oracle's names go:
    1 to 30 of letters, digits, ``_``, ``$``, ``#``; None when ``name`` is not one."""
    if not name.isascii():  # upper() folds some letters into names: "ß" is "SS"
        return None
    up = name.upper()
    if not up or not set(up) <= _DATABASE_NAME_OK or len(up) > 30:
        return None
    return up
