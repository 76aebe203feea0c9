"""Where a new Extract starts reading, and which source database it reads."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path

from engine.checkpoints import ReadCheckpoint
from engine.extract.lcr import Position
from engine.home import Home
from engine.source.logfile import read_records
from engine.source.logs import list_logs
from params.models import ParamFile


class ExtractError(Exception):
    """The run cannot start or go on; ``code`` is the OGG message to abend with."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(f"{code} {text}")
        self.code = code
        self.text = text


def source_root(home: Home, model: ParamFile) -> Path:
    """The embedded source database: SOURCEDB name, else the home's only database."""
    name = model.login.sourcedb
    if name is None:
        dbs = (
            sorted(p for p in home.dirdb.iterdir() if (p / "data.sqlite").exists())
            if home.dirdb.is_dir()
            else []
        )
        if len(dbs) == 1:
            return dbs[0]
        raise ExtractError(
            "OGG-00664",
            "No source database: add SOURCEDB <name> to the parameter file "
            f"({len(dbs)} databases in {home.dirdb}).",
        )
    root = home.dirdb / name.upper()  # database names are upper case, as Oracle's
    if not (root / "data.sqlite").exists():
        raise ExtractError("OGG-00664", f"Source database {name} does not exist in {home.dirdb}.")
    return root


def _first_position(
    redo_dir: Path, thread: int, accept: Callable[[int, datetime], bool]
) -> Position | None:
    for info in list_logs(redo_dir, thread):
        for lr in read_records(info.path):
            if accept(lr.record.scn, lr.record.timestamp):
                return Position(thread, lr.sequence, lr.offset)
    return None


def initial_positions(
    redo_dir: Path, reads: tuple[ReadCheckpoint, ...], threads: int
) -> dict[int, Position]:
    """Where a new Extract starts, per thread: EXTSEQNO/EXTRBA, else the first record at or
    after SCN / BEGIN time, else (no group definition) the start of the logs."""
    out: dict[int, Position] = {}
    logs = list_logs(redo_dir)
    by_thread = {i.thread for i in logs} | set(range(1, threads + 1))
    cur = {r.current.thread: r.current for r in reads}
    for t in sorted(by_thread):
        p = cur.get(t)
        first_seq = min((i.sequence for i in logs if i.thread == t), default=1)
        if p is None:
            out[t] = Position(t, first_seq, 0)
        elif p.seqno:
            out[t] = Position(t, p.seqno, p.rba)
        elif p.scn is not None:
            found = _first_position(redo_dir, t, partial(_scn_at_least, p.scn))
            out[t] = found or _end_of(redo_dir, t)
        elif p.timestamp:
            when = datetime.fromisoformat(p.timestamp)
            found = _first_position(redo_dir, t, partial(_time_at_least, when))
            out[t] = found or _end_of(redo_dir, t)
        else:
            out[t] = Position(t, first_seq, 0)
    return out


def _scn_at_least(scn: int, record_scn: int, _ts: datetime) -> bool:
    return record_scn >= scn


def _time_at_least(when: datetime, _scn: int, ts: datetime) -> bool:
    return ts >= when


def _end_of(redo_dir: Path, thread: int) -> Position:
    logs = list_logs(redo_dir, thread)
    if not logs:
        return Position(thread, 1, 0)
    last = logs[-1]
    return Position(thread, last.sequence, last.size)
