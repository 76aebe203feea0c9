"""Where a pump's output trail is written: a :class:`TrailSink`.

The copy loop (:mod:`engine.pump.pump`) writes through a sink and asks it the restart
questions (does the trail still reach my write checkpoint? how many whole transactions follow
it?). :class:`LocalSink` is a :class:`~engine.trail.writer.TrailWriter` on this host (EXTTRAIL,
and the copy loop's own tests); :class:`engine.pump.remote.RemoteSink` is a Collector on the
target host, reached over the network (RMTHOST), which answers the same questions with the
same functions (:func:`transactions_after`, ``write_gap``, ``reaches``) on its host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from engine.home.layout import Home
from engine.trail.files import TrailName
from engine.trail.model import TableDef, TrailPosition
from engine.trail.reader import TrailReader, reaches, write_gap
from engine.trail.recovery import RecoveryMode, RecoveryResult, complete_transactions
from engine.trail.releases import Release, parse_release
from engine.trail.writer import TrailWriter


class TrailSink(Protocol):
    """The output trail as the copy loop sees it."""

    @property
    def recovery(self) -> RecoveryResult | None: ...

    @property
    def release(self) -> Release: ...

    @property
    def position(self) -> TrailPosition: ...

    def gap(self, written: TrailPosition, name: str) -> str | None:
        """None when the trail holds everything up to ``written``, else what is missing."""
        ...

    def reaches(self, at: TrailPosition) -> bool: ...

    def transactions_after(self, at: TrailPosition) -> int:
        """How many whole transactions the trail holds after ``at``."""
        ...

    def set_release(self, release: Release) -> None: ...

    def define_table(self, table: TableDef) -> None: ...

    def append_many(self, records: Iterable[bytes]) -> None: ...

    def sync(self) -> TrailPosition:
        """Everything appended is durable; the position it reaches."""
        ...

    def idle(self) -> None:
        """Nothing to write for a while (a link keeps itself alive)."""
        ...

    def close(self) -> None: ...


def transactions_after(trail: TrailName, at: TrailPosition) -> int:
    """Whole transactions of ``trail`` after ``at`` (a partial one closed by a RestartAbend
    marker does not count)."""
    reader = TrailReader(trail, at)
    try:
        return sum(
            1
            for _ in complete_transactions(
                (entry.position, record) for entry, record in reader.records()
            )
        )
    finally:
        reader.close()


class LocalSink:
    """A trail written on this host."""

    def __init__(self, writer: TrailWriter) -> None:
        self.writer = writer

    @property
    def recovery(self) -> RecoveryResult | None:
        return self.writer.recovery

    @property
    def release(self) -> Release:
        return self.writer.release

    @property
    def position(self) -> TrailPosition:
        return self.writer.position

    def gap(self, written: TrailPosition, name: str) -> str | None:
        return write_gap(self.writer.trail, written, name)

    def reaches(self, at: TrailPosition) -> bool:
        return reaches(self.writer.trail, at)

    def transactions_after(self, at: TrailPosition) -> int:
        return transactions_after(self.writer.trail, at)

    def set_release(self, release: Release) -> None:
        self.writer.set_release(release)

    def define_table(self, table: TableDef) -> None:
        self.writer.define_table(table)

    def append_many(self, records: Iterable[bytes]) -> None:
        self.writer.append_many(records)

    def sync(self) -> TrailPosition:
        return self.writer.sync()

    def idle(self) -> None:
        return None

    def close(self) -> None:
        self.writer.close()


@dataclass(frozen=True)
class TrailSpec:
    """The output trail and how to open it (what a pump tells its Collector in HELLO).
    ``path`` as the parameter file writes it (relative: to the home of the host that
    writes it)."""

    path: str
    group: str
    megabytes: int
    checksum: bool = True
    recovery: str = "APPENDMODE"
    release: str | None = None
    objectdefs: bool = True
    durable: bool = True

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrailSpec:
        release = data.get("release")
        return cls(
            path=str(data["path"]),
            group=str(data["group"]),
            megabytes=int(data["megabytes"]),
            checksum=bool(data.get("checksum", True)),
            recovery=str(data.get("recovery", "APPENDMODE")),
            release=str(release) if release is not None else None,
            objectdefs=bool(data.get("objectdefs", True)),
            durable=bool(data.get("durable", True)),
        )

    def open_writer(self, path: Path) -> TrailWriter:
        """The trail at ``path`` (this spec's path resolved on the writing host), opened
        with append-mode recovery (or RECOVERYOPTIONS OVERWRITEMODE)."""
        return TrailWriter.open(
            path,
            megabytes=self.megabytes,
            header_info={"Producer": "ggsci", "GroupName": self.group},
            durable=self.durable,
            checksum=self.checksum,
            recovery=RecoveryMode.of_option(self.recovery),
            release=parse_release(self.release) if self.release else None,
            objectdefs=self.objectdefs,
        )


def local_opener(home: Home) -> Callable[[TrailSpec], TrailSink]:
    """Opens the trail on this host, relative to ``home``."""

    def opener(spec: TrailSpec) -> TrailSink:
        path = Path(spec.path)
        return LocalSink(spec.open_writer(path if path.is_absolute() else home.root / path))

    return opener


def local_writer(pump: Any) -> TrailWriter:
    """The TrailWriter under a pump's local sink (tests that cut its writes short)."""
    sink = pump.writer
    if not isinstance(sink, LocalSink):
        raise TypeError("the pump does not write its trail on this host")
    return sink.writer
