"""The Bounded Recovery timeline of an Extract (seed 000, "Sample Bounded Recovery Checkpoints").

On a redo-time axis: the BR checkpoints whose files are in BRDIR, every open transaction as a bar
from its start to now (marked with the checkpoint that persisted it, if one did), the restart
position a recovery would use now (the newest checkpoint's: the start of the oldest transaction
it did not persist, else its own position; with no checkpoint, normal recovery from the oldest
open transaction) and when the next checkpoint is due.

:func:`timeline_of` builds the model from the live state (the Extract answers ``SEND EXTRACT g,
BR BRSTATUS`` with :func:`text_lines`, and writes :func:`to_svg` for ``BR BRSTATUS FILE x.svg``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.changes import Position
from engine.extract.br import CP_NAME, BrCheckpoint, BrError, parse_checkpoint
from engine.extract.cache import Txn
from engine.pictures.svg import Canvas
from engine.trail.model import micros_to_datetime

WIDTH = 50  # cells of the terminal's time axis
LABEL = 15


@dataclass(frozen=True)
class CheckpointMark:
    seq: int
    time_us: int
    persisted: tuple[str, ...]  # transaction ids whose state this checkpoint holds


@dataclass(frozen=True)
class TxnBar:
    xid: str
    start_us: int
    start: Position
    persisted_by: int | None  # the oldest checkpoint (of those in BRDIR) that holds it


@dataclass(frozen=True)
class RestartMark:
    time_us: int
    where: str  # "thread 1 SeqNo 3, RBA 5120"
    reason: str


@dataclass(frozen=True)
class BrTimeline:
    group: str
    interval_s: int
    now_us: int
    checkpoints: tuple[CheckpointMark, ...]
    transactions: tuple[TxnBar, ...]
    restart: RestartMark | None
    next_due_us: int | None

    def _events(self) -> tuple[int, int]:
        times = [self.now_us, *(c.time_us for c in self.checkpoints)]
        times += [t.start_us for t in self.transactions]
        if self.restart is not None:
            times.append(self.restart.time_us)
        return min(times), max(times)

    @property
    def next_on_axis(self) -> bool:
        """Whether the next checkpoint is drawn on the axis: not when it is further beyond
        the newest event than the events span (an Extract up for minutes with a 4-hour
        interval would squeeze all it has into the first cells); then an arrow at the
        axis's right end says when it is due."""
        if self.next_due_us is None:
            return False
        lo, hi = self._events()
        return self.next_due_us <= hi + max(hi - lo, 1)

    def bounds(self) -> tuple[int, int]:
        lo, hi = self._events()
        if self.next_due_us is not None and self.next_on_axis:
            hi = max(hi, self.next_due_us)
        return lo, max(hi, lo + 1)


def read_checkpoints(directory: Path) -> list[BrCheckpoint]:
    """The intact checkpoint files of ``directory``, oldest first (a damaged one is left out,
    as recovery leaves it out)."""
    found: list[BrCheckpoint] = []
    if not directory.is_dir():
        return found
    for path in sorted(directory.iterdir()):
        if not CP_NAME.match(path.name):
            continue
        try:
            found.append(parse_checkpoint(path.read_bytes()))
        except (OSError, BrError):
            continue
    return sorted(found, key=lambda c: c.seq)


def _where(positions: dict[int, Position]) -> str:
    return "; ".join(
        f"thread {t} SeqNo {p.sequence}, RBA {p.offset}" for t, p in sorted(positions.items())
    )


def _restart(cps: Sequence[BrCheckpoint], open_txns: Sequence[Txn]) -> RestartMark | None:
    if not cps:
        if not open_txns:
            return None
        oldest = min(open_txns, key=lambda t: t.start_time_us)
        return RestartMark(
            oldest.start_time_us,
            _where({oldest.start.thread: oldest.start}),
            f"no BR checkpoint yet: normal recovery from the start of {oldest.xid}, "
            "the oldest open transaction",
        )
    cp = cps[-1]
    by_start = {t.start: t for t in open_txns}
    starts = [by_start[p] for p in cp.restart.values() if p in by_start]
    if starts:
        first = min(starts, key=lambda t: t.start_time_us)
        return RestartMark(
            first.start_time_us,
            _where(cp.restart),
            f"start of {first.xid}, the oldest transaction CP {cp.seq} did not persist",
        )
    moved = cp.restart != cp.current
    return RestartMark(
        cp.redo_time_us,
        _where(cp.restart),
        f"start of a transaction open at CP {cp.seq} (ended since)"
        if moved
        else f"position of CP {cp.seq} (no transaction to re-read)",
    )


def timeline_of(
    directory: Path,
    group: str,
    interval_s: int,
    next_due_us: int | None,
    open_txns: Sequence[Txn],
    now_us: int,
) -> BrTimeline:
    cps = read_checkpoints(directory)
    marks = tuple(
        CheckpointMark(c.seq, c.redo_time_us, tuple(o.xid for o in c.objects)) for c in cps
    )
    bars = tuple(
        TxnBar(
            t.xid,
            t.start_time_us,
            t.start,
            next((m.seq for m in marks if t.xid in m.persisted), None),
        )
        for t in sorted(open_txns, key=lambda t: (t.start_time_us, t.start))
    )
    return BrTimeline(group, interval_s, now_us, marks, bars, _restart(cps, open_txns), next_due_us)


# -- terminal ---------------------------------------------------------------------------------


def _clock(us: int) -> str:
    return f"{micros_to_datetime(us):%H:%M:%S}"


def _stamp(us: int) -> str:
    return f"{micros_to_datetime(us):%Y-%m-%d %H:%M:%S}"


def text_lines(tl: BrTimeline, width: int = WIDTH) -> list[str]:
    """The timeline in monospace text: one row per checkpoint, open transaction, the restart
    position, now and the next checkpoint; a column is (hi - lo) / width of redo time."""
    lo, hi = tl.bounds()

    def col(us: int) -> int:
        return round((us - lo) * (width - 1) / (hi - lo))

    def row(label: str, cells: str, note: str) -> str:
        return f"  {label:<{LABEL}}{cells}  {note}".rstrip()

    def mark(us: int, glyph: str, fill: str = "·") -> str:
        cells = [fill] * width
        cells[col(us)] = glyph
        return "".join(cells)

    hours, rest = divmod(tl.interval_s, 3600)
    out = [
        f"Bounded Recovery timeline of EXTRACT {tl.group} (redo time, interval "
        f"{hours}H{rest // 60:02d}M):",
        " " * (2 + LABEL) + _stamp(lo).ljust(width - 19) + _stamp(hi).rjust(19),
    ]
    for c in tl.checkpoints:
        kept = f"; persisted {', '.join(c.persisted)}" if c.persisted else ""
        out.append(row(f"CP {c.seq:09d}", mark(c.time_us, "┃"), _clock(c.time_us) + kept))
    if not tl.checkpoints:
        out.append(row("checkpoints", "·" * width, "none yet"))
    for t in tl.transactions:
        start = col(t.start_us)
        cells = " " * start + "█" * (col(tl.now_us) - start + 1)
        how = f"persisted at CP {t.persisted_by}" if t.persisted_by else "not persisted"
        out.append(row(t.xid, cells.ljust(width), f"since {_clock(t.start_us)}; {how}"))
    if not tl.transactions:
        out.append(row("open txns", " " * width, "none"))
    if tl.restart is not None:
        r = tl.restart
        out.append(row("restart", mark(r.time_us, "▲", " "), f"{r.where}: {r.reason}"))
    else:
        out.append(row("restart", " " * width, "at the current read position (nothing open)"))
    out.append(row("now", mark(tl.now_us, "│", " "), _clock(tl.now_us)))
    if tl.next_due_us is not None and tl.next_on_axis:
        out.append(row("next CP due", mark(tl.next_due_us, "┆", " "), _clock(tl.next_due_us)))
    elif tl.next_due_us is not None:  # far beyond the events: an arrow, not a squeezed axis
        note = f"{_stamp(tl.next_due_us)} (beyond the axis)"
        out.append(row("next CP due", " " * (width - 1) + "→", note))
    return out


# -- SVG --------------------------------------------------------------------------------------

SVG_LEFT = 170
SVG_PLOT = 600
ROW = 22


def to_svg(tl: BrTimeline) -> Canvas:
    """The same picture as an SVG: ``line.checkpoint`` per checkpoint, ``rect.txn`` per open
    transaction (``rect.txn.persisted`` when a checkpoint holds it), ``path.restart`` (a
    triangle under the axis), ``line.now`` and ``line.next``; ``text`` labels."""
    lo, hi = tl.bounds()
    rows = len(tl.transactions) or 1
    top = 60
    bottom = top + rows * ROW + 10
    height = bottom + 40 + 18 * len(tl.checkpoints) + 60
    width = SVG_LEFT + SVG_PLOT + 200

    def x(us: int) -> float:
        return SVG_LEFT + (us - lo) * SVG_PLOT / (hi - lo)

    hours, rest = divmod(tl.interval_s, 3600)
    c = Canvas(width, height, f"Bounded Recovery timeline of EXTRACT {tl.group}")
    c.text(
        "title",
        10,
        20,
        f"Bounded Recovery timeline of EXTRACT {tl.group} "
        f"(redo time, interval {hours}H{rest // 60:02d}M)",
    )
    c.line("axis", SVG_LEFT, bottom, SVG_LEFT + SVG_PLOT, bottom, stroke="black")
    c.text("axis-label", SVG_LEFT, bottom + 16, _stamp(lo))
    c.text("axis-label", SVG_LEFT + SVG_PLOT, bottom + 16, _stamp(hi), anchor="end")
    for i, t in enumerate(tl.transactions):
        y = top + i * ROW
        cls = "txn persisted" if t.persisted_by else "txn"
        c.add(
            "rect",
            cls,
            x=x(t.start_us),
            y=y,
            width=max(x(tl.now_us) - x(t.start_us), 1.0),
            height=ROW - 6,
            fill="#4a7ebb" if t.persisted_by else "#bbbbbb",
            data_xid=t.xid,
        )
        c.text("txn-label", SVG_LEFT - 8, y + 12, t.xid, anchor="end")
        how = f"persisted at CP {t.persisted_by}" if t.persisted_by else "not persisted"
        c.text("txn-note", SVG_LEFT + SVG_PLOT + 8, y + 12, how)
    for cp in tl.checkpoints:
        cx = x(cp.time_us)
        c.line("checkpoint", cx, top - 14, cx, bottom, stroke="#c0392b", stroke_width=2,
               data_seq=cp.seq)  # fmt: skip
        c.text("checkpoint-label", cx, top - 18, f"CP {cp.seq}", anchor="middle")
    c.line("now", x(tl.now_us), top - 14, x(tl.now_us), bottom, stroke="black",
           stroke_dasharray="2,2")  # fmt: skip
    c.text("now-label", x(tl.now_us), bottom + 28, "now", anchor="middle")
    if tl.next_due_us is not None and tl.next_on_axis:
        nx = x(tl.next_due_us)
        c.line("next", nx, top - 14, nx, bottom, stroke="#c0392b", stroke_dasharray="6,4")
        c.text("next-label", nx, top - 30, "next CP", anchor="middle")
    elif tl.next_due_us is not None:
        end = SVG_LEFT + SVG_PLOT
        c.text("next-label", end, top - 30, f"next CP at {_stamp(tl.next_due_us)} →", anchor="end")
    y = bottom + 50
    if tl.restart is not None:
        rx = x(tl.restart.time_us)
        c.add("path", "restart", d=f"M {rx:.1f} {bottom:.1f} l -7 14 l 14 0 z", fill="#27ae60",
              data_time_us=tl.restart.time_us)  # fmt: skip
        c.text("restart-mark", rx, bottom + 28, "restart", anchor="middle")
        c.text("restart-label", 10, y, f"Restart: {tl.restart.where}: {tl.restart.reason}")
    else:
        c.text("restart-label", 10, y, "Restart: at the current read position (nothing open)")
    c.text("legend", 10, height - 12, "Bars: open transactions from their start to now; "
           "blue: persisted at a BR checkpoint, grey: not persisted.")  # fmt: skip
    for i, cp in enumerate(tl.checkpoints):
        kept = ", ".join(cp.persisted) or "nothing"
        c.text("checkpoint-note", 10, y + 18 * (i + 1),
               f"CP {cp.seq} at {_stamp(cp.time_us)}: persisted {kept}")  # fmt: skip
    return c
