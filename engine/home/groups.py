"""Group definitions: what ``ADD EXTRACT`` / ``ADD REPLICAT`` / ``ADD EXTTRAIL`` record.

One JSON file per group, ``dirchk/<GROUP>.grp``, holding a :class:`GroupDef`. The definition is
what the group *is* (kind, data source, begin point, files, trails it owns); where it has got to
lives in the checkpoint file (:mod:`engine.home.checkpoints`). Group names are case-insensitive and
stored upper-case, at most eight characters.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from engine.home.checkpoints import Checkpoints, checkpoint_path
from engine.home.jsonfile import write_json
from engine.home.layout import Home
from engine.home.names import MAX_GROUP_NAME, check_group_name, valid_group_name
from engine.home.trust import BadFile, read_trusted_json, shape_error

__all__ = ["MAX_GROUP_NAME", "valid_group_name"]  # re-exported: GGSCI imports them from here

GROUP_SUFFIX = ".grp"
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
    format_release: str | None = None  # ADD ...TRAIL ..., FORMAT RELEASE m.n

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "kind": self.kind.value,
            "megabytes": self.megabytes,
            "seqno": self.seqno,
        }
        if self.format_release is not None:
            out["format_release"] = self.format_release
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrailDef:
        return cls(
            path=str(data["path"]),
            kind=TrailKind(data["kind"]),
            megabytes=int(data["megabytes"]),
            seqno=int(data["seqno"]),
            format_release=data.get("format_release"),
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


class GroupStore:
    """The group definitions of one home (``dirchk/*.grp``).

    A group file is used only if the home's owner wrote it (:mod:`engine.home.trust`) and
    it parses into a definition of the group its name says; otherwise :meth:`get` raises
    :class:`engine.home.trust.BadFile` naming it, and :meth:`scan` lists it apart from the good
    ones.
    """

    def __init__(self, home: Home) -> None:
        self.home = home

    def path(self, name: str) -> Path:
        """The group file of ``name``; :class:`~engine.home.names.InvalidGroupName` if bad."""
        return self.home.dirchk / f"{check_group_name(name)}{GROUP_SUFFIX}"

    def get(self, name: str) -> GroupDef | None:
        """The group ``name`` defines; ``None`` when there is none (or ``name`` is not a group
        name, so there can be none); :class:`BadFile` when its file is unusable."""
        if not valid_group_name(name):
            return None
        path = self.path(name)
        try:
            return self._load(path)
        except FileNotFoundError:
            return None

    def _load(self, path: Path) -> GroupDef:
        data = read_trusted_json(path, self.home, "Group file")
        try:
            group = GroupDef.from_json(data)
        except (KeyError, ValueError, TypeError, AttributeError, RecursionError) as exc:
            raise shape_error(path, self.home, exc, "Group file") from None
        if group.name.upper() != path.stem.upper() or not valid_group_name(group.name):
            raise BadFile(
                path, self.home, f"is corrupt (it defines group {group.name!r})", "Group file"
            )
        return group

    def save(self, group: GroupDef) -> None:
        self.home.dirchk.mkdir(parents=True, exist_ok=True)
        write_json(self.path(group.name), group.to_json())

    def delete(self, name: str) -> None:
        self.path(name).unlink(missing_ok=True)

    def scan(self) -> tuple[list[GroupDef], list[BadFile]]:
        """Every usable group (Extracts first, then by name) and every group file that is not
        usable, each with its one-line reason. Files whose name is not a group name are not
        group files and are left alone."""
        if not self.home.dirchk.is_dir():
            return [], []
        groups: list[GroupDef] = []
        bad: list[BadFile] = []
        for path in sorted(self.home.dirchk.glob(f"*{GROUP_SUFFIX}")):
            if not valid_group_name(path.stem):
                continue
            try:
                groups.append(self._load(path))
            except BadFile as exc:
                bad.append(exc)
            except FileNotFoundError:
                continue
        groups.sort(key=lambda g: (g.kind != GroupKind.EXTRACT, g.name))
        return groups, bad

    def all(self) -> list[GroupDef]:
        """Every usable group, Extracts first, then by name (the INFO ALL order)."""
        return self.scan()[0]

    def unusable(self, pattern: str) -> list[BadFile]:
        """The unusable group files whose group name matches ``pattern``."""
        pat = pattern.upper()
        return [b for b in self.scan()[1] if fnmatch.fnmatchcase(b.path.stem.upper(), pat)]

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


def checked_checkpoints(home: Home, kind: str, name: str) -> Checkpoints | None:
    """The group's checkpoints (``None`` when it has no file yet); :class:`BadFile` naming the
    file when the home's owner did not write it or it cannot be read."""
    path = checkpoint_path(home, kind, name)
    try:
        data = read_trusted_json(path, home, "Checkpoint file")
    except FileNotFoundError:
        return None
    try:
        return Checkpoints.from_json(data)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise shape_error(path, home, exc, "Checkpoint file") from None


def normalize_trail(path: str) -> str:
    """The one way trail names are compared: as GGSCI does, ``./dirdat/lt``, ``dirdat//lt`` and
    ``dirdat/lt`` are the same; an absolute name stays absolute (``/x/dirdat/lt`` is not
    ``x/dirdat/lt``)."""
    return posixpath.normpath(path.replace(os.sep, "/")) if path else path
