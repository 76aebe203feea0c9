"""The heartbeat lag history as charts: ``LAG ..., GLOBAL, HISTORY`` draws, per path, the total
lag of every heartbeat received (GG_LAG_HISTORY) and its split per stage: extract, pump
(routing), Replicat read and apply. In the terminal a sparkline per series (the largest lag of
the heartbeats that fall in a column, ``▁`` to ``█`` from zero to the series' largest); on
request an SVG file with a panel per path and a polyline per series.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.heartbeat.lag import duration, through
from engine.heartbeat.names import LAG_HISTORY_VIEW
from engine.heartbeat.store import SqlStore
from engine.pictures.svg import Canvas

STAGES: tuple[tuple[str, str], ...] = (
    ("total", "INCOMING_LAG"),
    ("extract", "INCOMING_EXTRACT_LAG"),
    ("pump", "INCOMING_ROUTING_LAG"),
    ("replicat read", "INCOMING_REPLICAT_READ_LAG"),
    ("replicat apply", "INCOMING_REPLICAT_LAG"),
)
BARS = "▁▂▃▄▅▆▇█"
WIDTH = 48
MAX_SAMPLES = 100_000  # the newest heartbeats a chart reads


@dataclass(frozen=True)
class Sample:
    received: datetime
    lags: tuple[float | None, ...]  # one per :data:`STAGES`


@dataclass(frozen=True)
class PathHistory:
    path: str
    samples: tuple[Sample, ...]  # oldest first

    def series(self, stage: int) -> list[tuple[datetime, float]]:
        return [(s.received, v) for s in self.samples if (v := s.lags[stage]) is not None]


def _when(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def read_samples(store: SqlStore, pattern: str) -> list[PathHistory]:
    """Every heartbeat of GG_LAG_HISTORY on a path through ``pattern``, per path."""
    view = store.dialect.table(store.names, LAG_HISTORY_VIEW)
    cols = ", ".join(c for _, c in STAGES)
    rows = store.rows(
        f"SELECT INCOMING_PATH, HEARTBEAT_RECEIVED_TS, {cols} FROM {view} "
        f"WHERE HEARTBEAT_RECEIVED_TS IS NOT NULL ORDER BY HEARTBEAT_RECEIVED_TS DESC "
        f"LIMIT {MAX_SAMPLES}"
    )
    by_path: dict[str, list[Sample]] = {}
    for path, received, *lags in reversed(rows):
        if path is None or not through(str(path), pattern):
            continue
        values = tuple(None if v is None else float(v) for v in lags)
        by_path.setdefault(str(path), []).append(Sample(_when(received), values))
    return [PathHistory(p, tuple(s)) for p, s in sorted(by_path.items())]


def sparkline(points: Sequence[tuple[datetime, float]], lo: datetime, hi: datetime,
              width: int = WIDTH) -> str:  # fmt: skip
    """One character per column of time between ``lo`` and ``hi``: the largest value of the
    points in it, scaled from 0 to the largest of all (a blank column had no heartbeat)."""
    cells: list[float | None] = [None] * width
    span = max((hi - lo).total_seconds(), 1e-9)
    for when, value in points:
        i = min(int((when - lo).total_seconds() * width / span), width - 1)
        prev = cells[i]
        cells[i] = value if prev is None else max(prev, value)
    top = max((v for v in cells if v is not None), default=0.0)
    out = []
    for v in cells:
        if v is None:
            out.append(" ")
        elif top <= 0 or v <= 0:
            out.append(BARS[0])
        else:
            out.append(BARS[min(len(BARS) - 1, int(v / top * (len(BARS) - 1) + 0.5))])
    return "".join(out)


def chart_lines(histories: Sequence[PathHistory], width: int = WIDTH) -> list[str]:
    out: list[str] = []
    for h in histories:
        if not h.samples:
            continue
        lo, hi = h.samples[0].received, h.samples[-1].received
        n = len(h.samples)
        out += [
            "",
            f"Lag Chart for {h.path} ({n} heartbeat{'' if n == 1 else 's'}, "
            f"{lo:%Y-%m-%d %H:%M:%S} to {hi:%H:%M:%S}; a column is the largest lag in it)",
        ]
        for i, (name, _) in enumerate(STAGES):
            pts = h.series(i)
            if not pts:
                out.append(f"  {name:<15}(not measured)")
                continue
            top = max(v for _, v in pts)
            out.append(
                f"  {name:<15}{sparkline(pts, lo, hi, width)}  "
                f"max {duration(top)}, last {duration(pts[-1][1])}"
            )
    return out


# -- SVG --------------------------------------------------------------------------------------

LEFT = 130
PLOT_W = 640
PANEL_H = 70
GAP = 16
COLOURS = ("#222222", "#4a7ebb", "#e67e22", "#27ae60", "#c0392b")


def to_svg(histories: Sequence[PathHistory]) -> Canvas:
    """A panel (``rect.panel``) per path and stage, each with a ``polyline.series``
    (``data-path``, ``data-stage``). One time scale for the whole picture: the oldest
    heartbeat of any path at the left, the newest at the right, its times on an x axis
    (``text.x-tick``) under each path. One lag scale per path, shared by its stages (so a
    stage's share of the total shows): zero at a panel's bottom, the path's largest lag at
    its top, both on a y axis in seconds (``text.y-tick``); axes are ``line.axis``."""
    shown = [h for h in histories if h.samples]
    panels = sum(len(STAGES) for _ in shown)
    height = 60 + panels * (PANEL_H + GAP) + len(shown) * 60
    c = Canvas(LEFT + PLOT_W + 180, max(height, 80), "Heartbeat lag history")
    c.text("title", 10, 20, "Heartbeat lag history (GG_LAG_HISTORY): lag in seconds "
           "against the time each heartbeat was received")  # fmt: skip
    if not shown:
        return c
    lo = min(h.samples[0].received for h in shown)
    hi = max(h.samples[-1].received for h in shown)
    span = max((hi - lo).total_seconds(), 1e-9)
    y = 40.0
    for h in shown:
        top = max((v for i in range(len(STAGES)) for _, v in h.series(i)), default=0.0)
        top = max(top, 1e-9)
        c.text("path-label", 10, y + 14, f"{h.path}: {len(h.samples)} heartbeats, "
               f"{h.samples[0].received:%Y-%m-%d %H:%M:%S} to "
               f"{h.samples[-1].received:%H:%M:%S}; lag scale 0 to {duration(top)}")  # fmt: skip
        y += 30
        for i, (name, _) in enumerate(STAGES):
            pts = h.series(i)
            c.add("rect", "panel", x=LEFT, y=y, width=PLOT_W, height=PANEL_H, fill="none",
                  stroke="#999999")  # fmt: skip
            c.line("axis", LEFT, y, LEFT, y + PANEL_H, stroke="#000000")
            c.text("y-tick", LEFT - 4, y + 10, f"{duration(top)}", anchor="end")
            c.text("y-tick", LEFT - 4, y + PANEL_H, "0s", anchor="end")
            c.text("stage-label", LEFT - 60, y + PANEL_H / 2, name, anchor="end")
            if pts:
                coords = " ".join(
                    f"{LEFT + (w - lo).total_seconds() * PLOT_W / span:.1f},"
                    f"{y + PANEL_H - max(v, 0.0) * PANEL_H / top:.1f}"
                    for w, v in pts
                )
                c.add("polyline", "series", points=coords, fill="none", stroke=COLOURS[i],
                      stroke_width=1.5, data_path=h.path, data_stage=name)  # fmt: skip
                most = max(v for _, v in pts)
                c.text("stage-max", LEFT + PLOT_W + 8, y + 12, f"max {duration(most)}")
                c.text("stage-last", LEFT + PLOT_W + 8, y + 28, f"last {duration(pts[-1][1])}")
            else:
                c.text("stage-none", LEFT + 8, y + PANEL_H / 2, "not measured")
            y += PANEL_H + GAP
        base = y - GAP  # the x axis under the path's last panel
        c.line("axis", LEFT, base, LEFT + PLOT_W, base, stroke="#000000")
        for k in range(5):
            at = lo + (hi - lo) * (k / 4)
            c.text("x-tick", LEFT + PLOT_W * k / 4, base + 14, f"{at:%H:%M:%S}",
                   anchor="middle")  # fmt: skip
        c.text("x-label", LEFT + PLOT_W / 2, base + 28, "time received (HH:MM:SS)",
               anchor="middle")  # fmt: skip
        y = base + 40
    return c
