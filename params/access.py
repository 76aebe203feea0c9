"""ACCESSRULE (Manager): the rule as data, checked once for ``params check`` and the Manager.

``ACCESSRULE[, PROG program][, IPADDR address][, PRI n][, login_ID]{, ALLOW | DENY}`` as in
GoldenGate. Pure: no I/O. :func:`build_access_rule` takes the options as parsed (name, value,
position) and returns the rule or positioned messages; both the parameter checker
(:mod:`params.handlers_manager`) and the Manager (:mod:`engine.manager.params`) use it, so they
accept and refuse the same lines. Which request a rule governs is
:mod:`engine.manager.access`'s job.

login_ID (``USER``, ``PASSWORD``, ``ENCRYPTKEY``) is refused: this Manager's port takes no
login, so such a rule could never match, and a DENY that silently never applies is worse than
an error.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass

#: PROG values → the program a rule names (MGR and MANAGER are one; COLLECTOR and SERVER too).
PROGRAMS: dict[str, str] = {
    "GGSCI": "GGSCI",
    "GUI": "GUI",
    "MGR": "MANAGER",
    "MANAGER": "MANAGER",
    "REPLICAT": "REPLICAT",
    "COLLECTOR": "COLLECTOR",
    "SERVER": "COLLECTOR",
}
OPTIONS = ("PROG", "IPADDR", "PRI", "ALLOW", "DENY")
LOGIN_OPTIONS = ("USER", "PASSWORD", "ENCRYPTKEY")
_IP_PATTERN = re.compile(r"^[0-9A-Fa-f:.*?]+$")


@dataclass(frozen=True)
class AccessRule:
    """One rule: ``programs`` are canonical names (all of :data:`PROGRAMS`'s values for ``*``),
    ``ipaddr`` a wildcard pattern or ``None`` for any address, ``order`` its place in the file."""

    allow: bool
    programs: frozenset[str]
    ipaddr: str | None = None
    pri: int | None = None
    order: int = 0

    @property
    def rank(self) -> tuple[int, int]:
        """Rules are tried by PRI (1 first); rules without PRI after them, in file order."""
        return (self.pri if self.pri is not None else 100, self.order)

    def matches(self, program: str, address: str) -> bool:
        return program in self.programs and (
            self.ipaddr is None or fnmatch.fnmatchcase(address, self.ipaddr)
        )


@dataclass(frozen=True)
class RuleOption:
    """An option as parsed: upper-case name, its value (``None`` for ALLOW/DENY), the value's
    position (``loc``) and the name's (``name_loc``, the same when not given)."""

    name: str
    value: str | None
    loc: int
    name_loc: int | None = None

    @property
    def at(self) -> int:
        return self.loc if self.name_loc is None else self.name_loc


def _programs(value: str) -> frozenset[str] | None:
    word = value.upper()
    if word in PROGRAMS:
        return frozenset({PROGRAMS[word]})
    if "*" in word or "?" in word:
        found = {canon for name, canon in PROGRAMS.items() if fnmatch.fnmatchcase(name, word)}
        return frozenset(found) or None
    return None


def _address_ok(value: str) -> bool:
    if not _IP_PATTERN.match(value):
        return False
    if "*" in value or "?" in value:
        return True
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def build_access_rule(
    options: Sequence[RuleOption], order: int, end: int
) -> tuple[AccessRule | None, list[tuple[str, int]]]:
    """The rule the options make, or ``None`` and ``(message, position)`` pairs; ``end`` is the
    position reported for what is missing (the end of the statement)."""
    errors: list[tuple[str, int]] = []
    programs: frozenset[str] | None = None
    ipaddr: str | None = None
    pri: int | None = None
    verdicts: list[RuleOption] = []
    seen: set[str] = set()
    for opt in options:
        if opt.name in seen and opt.name not in ("ALLOW", "DENY"):
            errors.append((f"ACCESSRULE takes {opt.name} once", opt.at))
            continue
        seen.add(opt.name)
        if opt.name in LOGIN_OPTIONS:
            if seen & set(LOGIN_OPTIONS) - {opt.name}:
                continue  # one message per rule
            errors.append(
                (
                    f"ACCESSRULE {opt.name} (a login ID) is not supported: this Manager's port "
                    "takes no login, so the rule could never apply",
                    opt.at,
                )
            )
        elif opt.name not in OPTIONS:
            errors.append(
                (f"unknown ACCESSRULE option {opt.name} (valid: {', '.join(OPTIONS)})", opt.at)
            )
        elif opt.name in ("ALLOW", "DENY"):
            verdicts.append(opt)
        elif opt.value is None:
            errors.append((f"{opt.name} needs a value", opt.at))
        elif opt.name == "PROG":
            programs = _programs(opt.value)
            if programs is None:
                errors.append(
                    (
                        f"PROG {opt.value} is not a program (GGSCI, GUI, MGR, MANAGER, REPLICAT, "
                        "COLLECTOR, SERVER or a wildcard)",
                        opt.loc,
                    )
                )
        elif opt.name == "IPADDR":
            if _address_ok(opt.value):
                ipaddr = opt.value
            else:
                errors.append(
                    (f"IPADDR {opt.value} is not an IP address (wildcards * ? allowed)", opt.loc)
                )
        elif opt.name == "PRI":
            if opt.value.isdigit() and 1 <= int(opt.value) <= 99:
                pri = int(opt.value)
            else:
                errors.append((f"PRI {opt.value} must be a whole number from 1 to 99", opt.loc))
    if len(verdicts) > 1:
        errors.append(("ACCESSRULE takes one of ALLOW or DENY, not both", verdicts[1].at))
    elif not verdicts:
        errors.append(("ACCESSRULE needs ALLOW or DENY", end))
    if "PROG" not in seen and "IPADDR" not in seen and not errors:
        errors.append(("ACCESSRULE needs PROG or IPADDR", end))
    if errors:
        return None, errors
    return (
        AccessRule(
            allow=verdicts[0].name == "ALLOW",
            programs=programs if programs is not None else frozenset(PROGRAMS.values()),
            ipaddr=ipaddr,
            pri=pri,
            order=order,
        ),
        [],
    )
