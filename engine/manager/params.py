"""The Manager's parameter file ``dirprm/mgr.prm``: the few parameters it acts on.

PORT n; AUTOSTART [ER|EXTRACT|REPLICAT] group; AUTORESTART [ER|EXTRACT|REPLICAT] group
[, RETRIES n] [, WAITMINUTES n] [, RESETMINUTES n]; PURGEOLDEXTRACTS trail [, USECHECKPOINTS |
NOUSECHECKPOINTS] [, MINKEEPHOURS n | MINKEEPDAYS n] [, MINKEEPFILES n]; CHECKMINUTES n;
ACCESSRULE [, PROG p] [, IPADDR a] [, PRI n] {, ALLOW | DENY} (checked by
:func:`params.access.build_access_rule`, as ``params check`` checks it). Other Manager
parameters (DYNAMICPORTLIST, LAGREPORT..., PURGEDDLHISTORY...) are accepted and listed in
:attr:`ManagerParams.ignored`. Lines follow the parameter-file rules: ``--`` and
COMMENT lines, ``&`` continuation, case-insensitive keywords, optional commas.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

from params.access import LOGIN_OPTIONS, OPTIONS, AccessRule, RuleOption, build_access_rule

DEFAULT_PORT = 7809


class ManagerParamError(ValueError):
    """A line of mgr.prm the Manager cannot use; carries the line number."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"mgr.prm:{line}: {message}")
        self.line = line


@dataclass(frozen=True)
class GroupPattern:
    """ER / EXTRACT / REPLICAT plus a wildcard name, as AUTOSTART and AUTORESTART take it."""

    kind: str | None
    pattern: str

    def matches(self, kind: str, name: str) -> bool:
        return (self.kind is None or self.kind == kind) and fnmatch.fnmatchcase(
            name.upper(), self.pattern.upper()
        )


@dataclass(frozen=True)
class AutoRestart:
    target: GroupPattern
    retries: int = 2
    wait_minutes: float = 2.0
    reset_minutes: float = 20.0


@dataclass(frozen=True)
class PurgeRule:
    trail: str
    use_checkpoints: bool = True
    min_keep_hours: float = 0.0
    min_keep_files: int = 1


@dataclass(frozen=True)
class ManagerParams:
    port: int = DEFAULT_PORT
    autostart: tuple[GroupPattern, ...] = ()
    autorestart: tuple[AutoRestart, ...] = ()
    purge: tuple[PurgeRule, ...] = ()
    check_minutes: float = 10.0
    ignored: tuple[str, ...] = field(default_factory=tuple)
    access_rules: tuple[AccessRule, ...] = ()


KIND_WORDS = {
    "ER": None,
    "EXTRACT": "EXTRACT",
    "EXT": "EXTRACT",
    "REPLICAT": "REPLICAT",
    "REP": "REPLICAT",
}


def _logical_lines(text: str) -> list[tuple[int, list[str]]]:
    out: list[tuple[int, list[str]]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("--", 1)[0].strip()
        if not line or line.upper().startswith("COMMENT"):
            continue
        if not pending:
            start = number
        cont = line.endswith("&")
        pending.append(line.rstrip("&"))
        if not cont:
            out.append((start, " ".join(pending).replace(",", " ").split()))
            pending = []
    if pending:
        out.append((start, " ".join(pending).replace(",", " ").split()))
    return out


def _number(line: int, words: list[str], i: int, name: str) -> float:
    try:
        return float(words[i + 1])
    except (IndexError, ValueError):
        raise ManagerParamError(line, f"{name} needs a number") from None


def _target(line: int, words: list[str]) -> tuple[GroupPattern, int]:
    if not words:
        raise ManagerParamError(line, "a group name is missing")
    kind_word = words[0].upper()
    if kind_word in KIND_WORDS:
        if len(words) < 2:
            raise ManagerParamError(line, f"{words[0]} needs a group name")
        return GroupPattern(KIND_WORDS[kind_word], words[1]), 2
    return GroupPattern(None, words[0]), 1


def _access_rule(line: int, rest: list[str], order: int) -> AccessRule:
    options: list[RuleOption] = []
    i = 0
    while i < len(rest):
        name = rest[i].upper()
        takes_value = name in OPTIONS + LOGIN_OPTIONS and name not in ("ALLOW", "DENY")
        value = rest[i + 1] if takes_value and i + 1 < len(rest) else None
        options.append(RuleOption(name, value, i))
        i += 2 if takes_value else 1
    rule, errors = build_access_rule(options, order, len(rest))
    if rule is None:
        raise ManagerParamError(line, errors[0][0])
    return rule


def parse_manager_params(text: str) -> ManagerParams:
    port = DEFAULT_PORT
    autostart: list[GroupPattern] = []
    autorestart: list[AutoRestart] = []
    purge: list[PurgeRule] = []
    check_minutes = 10.0
    ignored: list[str] = []
    access: list[AccessRule] = []
    for line, words in _logical_lines(text):
        key, rest = words[0].upper(), words[1:]
        if key == "PORT":
            port = int(_number(line, words, 0, "PORT"))
        elif key == "CHECKMINUTES":
            check_minutes = _number(line, words, 0, "CHECKMINUTES")
        elif key == "AUTOSTART":
            autostart.append(_target(line, rest)[0])
        elif key == "AUTORESTART":
            target, used = _target(line, rest)
            opts = {"RETRIES": 2.0, "WAITMINUTES": 2.0, "RESETMINUTES": 20.0}
            i = used
            while i < len(rest):
                name = rest[i].upper()
                if name not in opts:
                    raise ManagerParamError(line, f"unknown AUTORESTART option {rest[i]}")
                opts[name] = _number(line, rest, i, name)
                i += 2
            autorestart.append(
                AutoRestart(target, int(opts["RETRIES"]), opts["WAITMINUTES"], opts["RESETMINUTES"])
            )
        elif key == "PURGEOLDEXTRACTS":
            if not rest:
                raise ManagerParamError(line, "PURGEOLDEXTRACTS needs a trail name")
            use_cp, hours, files = True, 0.0, 1
            i = 1
            while i < len(rest):
                name = rest[i].upper()
                if name == "USECHECKPOINTS":
                    use_cp, i = True, i + 1
                elif name == "NOUSECHECKPOINTS":
                    use_cp, i = False, i + 1
                elif name == "MINKEEPHOURS":
                    hours, i = _number(line, rest, i, name), i + 2
                elif name == "MINKEEPDAYS":
                    hours, i = 24 * _number(line, rest, i, name), i + 2
                elif name == "MINKEEPFILES":
                    files, i = int(_number(line, rest, i, name)), i + 2
                else:
                    raise ManagerParamError(line, f"unknown PURGEOLDEXTRACTS option {rest[i]}")
            purge.append(PurgeRule(rest[0], use_cp, hours, files))
        elif key == "ACCESSRULE":
            access.append(_access_rule(line, rest, len(access)))
        else:
            ignored.append(key)
    return ManagerParams(
        port,
        tuple(autostart),
        tuple(autorestart),
        tuple(purge),
        check_minutes,
        tuple(ignored),
        tuple(access),
    )


def load_manager_params(path: Path) -> ManagerParams:
    """mgr.prm's settings; defaults when the file does not exist."""
    if not path.exists():
        return ManagerParams()
    return parse_manager_params(path.read_text(errors="replace"))  # any bytes, as params/
