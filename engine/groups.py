"""Group definitions: what ``ADD EXTRACT`` / ``ADD REPLICAT`` / ``ADD EXTTRAIL`` record.

One JSON file per group, ``dirchk/<GROUP>.grp``, holding a :class:`GroupDef`. The definition is
what the group *is* (kind, data source, begin point, files, trails it owns); where it has got to
lives in the checkpoint file (:mod:`engine.checkpoints`). Group names are case-insensitive and
stored upper-case, at most eight characters.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from engine.home import Home
from engine.jsonfile import read_json, write_json

GROUP_SUFFIX = ".grp"
MAX_GROUP_NAME = 8
GROUP_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,7}$")
DEFAULT_MEGABYTES = 500


class GroupKind(StrEnum):
    EXTRACT = "EXTRACT"
    REPLICAT = "REPLICAT"


class SourceType(StrEnum):
    """Where a group reads from (the ADD EXTRACT / ADD REPLICAT data-source option)."""

    TRANLOG = "TRANLOG"
    SOURCEISTABLE = "SOURCEISTABLE"
    EXTTRAILSOURCE = "EXTTRAILSOURCE"
    EXTFILESOURCE = "EXTFILESOURCE"
    EXTTRAIL = "EXTTRAIL"
    SPECIALRUN = "SPECIALRUN"


class TrailKind(StrEnum):
    EXTTRAIL = "EXTTRAIL"
    RMTTRAIL = "RMTTRAIL"


@dataclass(frozen=True)
class TrailDef:
    """An output trail of one Extract: path prefix (``dirdat/lt``), kind, size, first seqno."""

    path: str
    kind: TrailKind
    megabytes: int = DEFAULT_MEGABYTES
    seqno: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind.value,
            "megabytes": self.megabytes,
            "seqno": self.seqno,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrailDef:
        return cls(
            path=str(data["path"]),
            kind=TrailKind(data["kind"]),
            megabytes=int(data["megabytes"]),
            seqno=int(data["seqno"]),
        )


@dataclass(frozen=True)
class GroupDef:
    """One Extract or Replicat group as defined by ADD/ALTER.

    ``source_path`` is the input trail for a pump (EXTTRAILSOURCE) or a Replicat (EXTTRAIL).
    ``begin`` is ``YYYY-MM-DD HH:MM:SS`` (NOW is resolved when the command runs), ``None`` when
    the group starts from a sequence/RBA or SCN instead. ``created`` is when ADD ran.
    """

    kind: GroupKind
    name: str
    source: SourceType
    created: str
    source_path: str | None = None
    begin: str | None = None
    scn: int | None = None
    extseqno: int | None = None
    extrba: int | None = None
    threads: int = 1
    params: str | None = None
    report: str | None = None
    desc: str | None = None
    checkpoint_table: str | None = None
    trails: tuple[TrailDef, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "name": self.name,
            "source": self.source.value,
            "created": self.created,
            "source_path": self.source_path,
            "begin": self.begin,
            "scn": self.scn,
            "extseqno": self.extseqno,
            "extrba": self.extrba,
            "threads": self.threads,
            "params": self.params,
            "report": self.report,
            "desc": self.desc,
            "checkpoint_table": self.checkpoint_table,
            "trails": [t.to_json() for t in self.trails],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GroupDef:
        def opt_int(key: str) -> int | None:
            value = data.get(key)
            return None if value is None else int(value)

        return cls(
            kind=GroupKind(data["kind"]),
            name=str(data["name"]),
            source=SourceType(data["source"]),
            created=str(data["created"]),
            source_path=data.get("source_path"),
            begin=data.get("begin"),
            scn=opt_int("scn"),
            extseqno=opt_int("extseqno"),
            extrba=opt_int("extrba"),
            threads=int(data.get("threads", 1)),
            params=data.get("params"),
            report=data.get("report"),
            desc=data.get("desc"),
            checkpoint_table=data.get("checkpoint_table"),
            trails=tuple(TrailDef.from_json(t) for t in data.get("trails", [])),
        )

    def param_file(self, home: Home) -> Path:
        """``PARAMS`` if given, else ``dirprm/<group>.prm`` (lower case, as GGSCI names it)."""
        return (
            _in_home(home, self.params) if self.params else home.dirprm / f"{self.name.lower()}.prm"
        )

    def report_file(self, home: Home) -> Path:
        return _in_home(home, self.report) if self.report else home.dirrpt / f"{self.name}.rpt"

    def with_trail(self, trail: TrailDef) -> GroupDef:
        others = tuple(t for t in self.trails if t.path != trail.path)
        return replace(self, trails=(*others, trail))

    def without_trail(self, path: str) -> GroupDef:
        return replace(self, trails=tuple(t for t in self.trails if t.path != path))


def _in_home(home: Home, path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else home.root / p


def valid_group_name(name: str) -> bool:
    return bool(GROUP_NAME_RE.match(name))


class GroupStore:
    """The group definitions of one home (``dirchk/*.grp``)."""

    def __init__(self, home: Home) -> None:
        self.home = home

    def path(self, name: str) -> Path:
        return self.home.dirchk / f"{name.upper()}{GROUP_SUFFIX}"

    def get(self, name: str) -> GroupDef | None:
        path = self.path(name)
        if not path.exists():
            return None
        return GroupDef.from_json(read_json(path))

    def save(self, group: GroupDef) -> None:
        self.home.dirchk.mkdir(parents=True, exist_ok=True)
        write_json(self.path(group.name), group.to_json())

    def delete(self, name: str) -> None:
        self.path(name).unlink(missing_ok=True)

    def all(self) -> list[GroupDef]:
        """Every group, Extracts first, then by name (the INFO ALL order)."""
        if not self.home.dirchk.is_dir():
            return []
        groups = [
            GroupDef.from_json(read_json(p)) for p in self.home.dirchk.glob(f"*{GROUP_SUFFIX}")
        ]
        return sorted(groups, key=lambda g: (g.kind != GroupKind.EXTRACT, g.name))

    def match(self, pattern: str, kind: GroupKind | None = None) -> list[GroupDef]:
        """Groups whose name matches ``pattern`` (``*`` wildcards, case-insensitive)."""
        pat = pattern.upper()
        return [
            g
            for g in self.all()
            if (kind is None or g.kind == kind) and fnmatch.fnmatchcase(g.name, pat)
        ]

    def trail_owner(self, path: str) -> GroupDef | None:
        """The Extract that writes trail ``path``, if any."""
        norm = normalize_trail(path)
        for group in self.all():
            if any(normalize_trail(t.path) == norm for t in group.trails):
                return group
        return None


def normalize_trail(path: str) -> str:
    """Compare trail names the way GGSCI does: ``./dirdat/lt`` and ``dirdat/lt`` are the same."""
    return path[2:] if path.startswith("./") else path
