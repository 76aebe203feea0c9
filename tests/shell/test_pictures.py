"""Issue 15, pictures: the Bounded Recovery timeline and the lag history charts, drawn from a
known state and checked by their content (bars, marks, labels and where they are), not only
that a file exists."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta
from pathlib import Path

from engine.changes import Lcr, Position
from engine.extract import brpicture as brpic
from engine.extract.br import BoundedRecovery
from engine.extract.cache import Txn
from engine.home.layout import Home
from engine.pictures import lag as lagpic
from engine.trail.model import datetime_to_micros

from .conftest import Shell

HOUR = 3600 * 1_000_000
T0 = datetime_to_micros(datetime(2026, 3, 14, 0, 0, 0))
NS = {"s": "http://www.w3.org/2000/svg"}


def txn(xid: str, hour: float, offset: int) -> Txn:
    return Txn(xid, Position(1, 7, offset), 1000 + offset, T0 + int(hour * HOUR), row_count=1)


def seed_state(directory: Path) -> tuple[BoundedRecovery, list[Txn]]:
    """Seed 000's figure: interval 4 hours; at BR checkpoint n (08:00) five open transactions,
    T(27) and T(45) open for longer than the interval (persisted), T(801) the oldest one not
    persisted: the restart position."""
    br = BoundedRecovery(directory, "EXT1", 4 * 3600, keep_stale=True)  # draw n-1 too
    open_txns = [
        txn("T27", 0.5, 100),
        txn("T45", 1.5, 200),
        txn("T801", 5.0, 300),
        txn("T950", 6.0, 400),
        txn("T1024", 7.5, 500),
    ]

    def rows_of(_: Txn) -> list[Lcr]:
        return []

    current = {1: Position(1, 9, 4096)}
    at_n_1 = {1: Position(1, 7, 250)}  # read by 04:00: after T45's start, before T801's
    br.checkpoint(open_txns[:2], rows_of, at_n_1, T0 + 4 * HOUR, 0, (), now_us=T0 + 4 * HOUR)
    br.checkpoint(open_txns, rows_of, current, T0 + 8 * HOUR, 0, (), now_us=T0 + 8 * HOUR)
    return br, open_txns


def test_br_timeline_of_seed_figure(tmp_path: Path) -> None:
    br, open_txns = seed_state(tmp_path / "br" / "EXT1")
    tl = brpic.timeline_of(
        br.directory, "EXT1", br.interval_s, br.next_due_us, open_txns, T0 + 9 * HOUR
    )
    assert [c.seq for c in tl.checkpoints] == [1, 2]
    assert tl.checkpoints[1].persisted == ("T27", "T45")
    assert {t.xid: t.persisted_by for t in tl.transactions} == {
        "T27": 2, "T45": 2, "T801": None, "T950": None, "T1024": None,
    }  # fmt: skip
    assert tl.restart is not None and tl.restart.time_us == T0 + 5 * HOUR
    assert tl.restart.where == "thread 1 SeqNo 7, RBA 300"
    assert "T801" in tl.restart.reason and "CP 2" in tl.restart.reason

    text = brpic.text_lines(tl, width=25)  # 25 cells over 00:30 .. 12:00 (next due)
    rows = {line[2:17].strip(): line for line in text[2:]}
    assert rows["CP 000000002"].endswith("08:00:00; persisted T27, T45")
    assert rows["T801"].endswith("since 05:00:00; not persisted")
    assert rows["T27"].endswith("persisted at CP 2")
    # the restart mark is under the start of T801's bar; the bars end at now
    assert rows["restart"].index("▲") == rows["T801"].index("█")
    assert rows["T27"].index("█") < rows["T45"].index("█") < rows["T801"].index("█")
    assert rows["T27"].rindex("█") == rows["now"].index("│") == rows["T1024"].rindex("█")
    assert rows["CP 000000001"].index("┃") < rows["CP 000000002"].index("┃")
    assert "next CP due" in rows and rows["next CP due"].endswith("12:00:00")

    svg = ET.fromstring(brpic.to_svg(tl).to_bytes())
    bars = svg.findall("s:rect[@class='txn']", NS) + svg.findall(
        "s:rect[@class='txn persisted']", NS
    )
    assert len(bars) == 5
    persisted = [b.get("data-xid") for b in svg.findall("s:rect[@class='txn persisted']", NS)]
    assert persisted == ["T27", "T45"]
    x = {b.get("data-xid"): float(b.get("x", "0")) for b in bars}
    assert x["T27"] < x["T45"] < x["T801"] < x["T950"] < x["T1024"]
    ends = {round(float(b.get("x", "0")) + float(b.get("width", "0"))) for b in bars}
    assert len(ends) == 1  # every bar runs to now
    cps = svg.findall("s:line[@class='checkpoint']", NS)
    assert [c.get("data-seq") for c in cps] == ["1", "2"]
    assert float(cps[0].get("x1", "0")) < float(cps[1].get("x1", "0"))
    (restart,) = svg.findall("s:path[@class='restart']", NS)
    assert restart.get("d", "").startswith(f"M {x['T801']:.1f} ")
    labels = [t.text for t in svg.findall("s:text[@class='txn-label']", NS)]
    assert labels == ["T27", "T45", "T801", "T950", "T1024"]
    (note,) = svg.findall("s:text[@class='restart-label']", NS)
    assert note.text is not None and note.text.startswith("Restart: thread 1 SeqNo 7, RBA 300")


def test_br_timeline_without_checkpoint_is_normal_recovery(tmp_path: Path) -> None:
    open_txns = [txn("T5", 1.0, 50), txn("T6", 2.0, 60)]
    tl = brpic.timeline_of(tmp_path / "none", "EXT1", 4 * 3600, None, open_txns, T0 + 3 * HOUR)
    assert tl.checkpoints == () and tl.restart is not None
    assert tl.restart.time_us == T0 + HOUR and "normal recovery" in tl.restart.reason
    assert any("none yet" in line for line in brpic.text_lines(tl))


def test_br_timeline_of_a_young_extract_is_not_squeezed_by_the_next_checkpoint(
    tmp_path: Path,
) -> None:
    """What a live Extract shows minutes after its start with the default 4-hour interval:
    the events fill the axis; the next checkpoint, hours away, is an arrow at its end."""
    minute = 60 * 1_000_000
    open_txns = [txn("T1", 0.0, 10), txn("T2", 2 / 60, 20)]  # at 00:00 and 00:02
    now = T0 + 4 * minute
    due = T0 + 4 * HOUR
    tl = brpic.timeline_of(tmp_path / "none", "EXT1", 4 * 3600, due, open_txns, now)
    assert not tl.next_on_axis and tl.bounds() == (T0, now)
    rows = {line[2:17].strip(): line for line in brpic.text_lines(tl, width=21)[2:]}
    assert rows["T1"].index("█") == 2 + 15 and rows["T2"].index("█") == 2 + 15 + 10
    assert rows["next CP due"].endswith("→  2026-03-14 04:00:00 (beyond the axis)")
    svg = ET.fromstring(brpic.to_svg(tl).to_bytes())
    assert svg.findall("s:line[@class='next']", NS) == []
    (label,) = svg.findall("s:text[@class='next-label']", NS)
    assert label.text == "next CP at 2026-03-14 04:00:00 →"
    bars = svg.findall("s:rect[@class='txn']", NS)
    assert [round(float(b.get("x", "0"))) for b in bars] == [170, 470]  # 0 and half of 600 px
    # a checkpoint due within the events' span stays on the axis (seed 000's figure)
    near = brpic.timeline_of(tmp_path / "none", "EXT1", 600, now + minute, open_txns, now)
    assert near.next_on_axis and near.bounds() == (T0, now + minute)


def samples(path: str, lags: list[float]) -> lagpic.PathHistory:
    start = datetime(2026, 3, 14, 9, 0, 0)
    return lagpic.PathHistory(
        path,
        tuple(
            lagpic.Sample(start + timedelta(seconds=i), (v, v / 2, None, v / 4, v / 4))
            for i, v in enumerate(lags)
        ),
    )


def test_sparkline_scales_columns_to_the_largest() -> None:
    h = samples("E ==> R", [0.0, 1.0, 2.0, 4.0, 8.0, 4.0, 0.5, 0.0])
    lo, hi = h.samples[0].received, h.samples[-1].received
    # 8 samples over 7 seconds in 8 columns: one per column, 8.0 is the top (█)
    assert lagpic.sparkline(h.series(0), lo, hi, 8) == "▁▂▃▅█▅▁▁"
    # two samples per column (0-1, 2-4, 8-4, 0.5-0): the larger is shown
    assert lagpic.sparkline(h.series(0), lo, hi, 4) == "▂▅█▁"
    lines = lagpic.chart_lines([h], width=8)
    assert lines[1].startswith("Lag Chart for E ==> R (8 heartbeats, 2026-03-14 09:00:00 to")
    assert lines[2] == "  total          ▁▂▃▅█▅▁▁  max 8.00s, last 0.00s"
    assert lines[4] == "  pump           (not measured)"


def test_lag_svg_has_a_series_per_stage_with_every_heartbeat() -> None:
    histories = [samples("E1 ==> R1", [1.0, 3.0, 2.0]), samples("E2 ==> R2", [5.0, 1.0])]
    svg = ET.fromstring(lagpic.to_svg(histories).to_bytes())
    series = svg.findall("s:polyline[@class='series']", NS)
    # pump is not measured on these paths: 4 series each
    assert [(s.get("data-path"), s.get("data-stage")) for s in series][:4] == [
        ("E1 ==> R1", "total"), ("E1 ==> R1", "extract"), ("E1 ==> R1", "replicat read"),
        ("E1 ==> R1", "replicat apply"),
    ]  # fmt: skip
    assert len(series) == 8
    pts = [tuple(map(float, p.split(","))) for p in series[0].get("points", "").split()]
    assert len(pts) == 3
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    assert xs == sorted(xs) and xs[0] == lagpic.LEFT and xs[-1] == lagpic.LEFT + lagpic.PLOT_W
    assert min(ys) == ys[1]  # 3.0 s, the largest, is highest (smallest y)
    panel = float(svg.findall("s:rect[@class='panel']", NS)[0].get("y", "0"))
    assert ys[1] == panel and abs(ys[0] - (panel + lagpic.PANEL_H * (1 - 1 / 3))) < 0.1


COLS = (
    "LOCAL_DATABASE, REMOTE_DATABASE, INCOMING_EXTRACT, INCOMING_ROUTING_PATH, INCOMING_REPLICAT, "
    "INCOMING_HEARTBEAT_TS, INCOMING_EXTRACT_TS, INCOMING_ROUTING_TS, INCOMING_REPLICAT_TS, "
    "HEARTBEAT_RECEIVED_TS"
)


def test_lag_global_history_charts_and_file(home: Home, shell: Shell) -> None:
    sqlite3.connect(home.root / "tgt.db").close()
    shell.run("DBLOGIN USERID gg@./tgt.db")
    shell.run("ADD HEARTBEATTABLE")
    conn = sqlite3.connect(home.root / "tgt.db")
    rows = []
    for i, lag in enumerate([1.0, 2.0, 4.0, 2.0]):
        hb = datetime(2026, 3, 14, 9, 0, 0) + timedelta(seconds=10 * i)
        stamps = [hb + timedelta(seconds=lag * f) for f in (0, 0.25, 0.5, 0.75, 1.0)]
        rows.append(("TGT", "SRC", "EXT1", "PMP1", "REP1", *(f"{t}" for t in stamps)))
    conn.execute(f"INSERT INTO gg_heartbeat ({COLS}) VALUES ({', '.join('?' * 10)})", rows[-1])
    conn.executemany(
        f"INSERT INTO gg_heartbeat_history ({COLS}) VALUES ({', '.join('?' * 10)})", rows
    )
    conn.commit()
    out = shell.run("LAG ext1, GLOBAL, HISTORY, FILE ./dirrpt/lag.svg").splitlines()
    at = out.index("Lag History for EXT1 ==> PMP1 ==> REP1")
    assert out[at + 2].startswith("2026-03-14   1.00s     2.25s     4.00s     4")
    chart = out.index(next(ln for ln in out if ln.startswith("Lag Chart for EXT1")))
    total, extract, pump, read, apply = out[chart + 1 : chart + 6]
    assert total.startswith("  total          ") and total.endswith("max 4.00s, last 2.00s")
    for stage in (extract, pump, read, apply):  # a quarter of the lag each
        assert stage.endswith("max 1.00s, last 0.50s"), stage
    assert out[-1] == "Lag chart written to ./dirrpt/lag.svg."
    svg = ET.parse(home.root / "dirrpt" / "lag.svg").getroot()
    series = svg.findall("s:polyline[@class='series']", NS)
    assert [s.get("data-stage") for s in series] == [name for name, _ in lagpic.STAGES]
    assert all(len(s.get("points", "").split()) == 4 for s in series)
    bad = shell.run("LAG ext1, GLOBAL, HISTORY, FILE lag.png")
    assert bad == "ERROR: FILE lag.png: the chart is written as SVG (name.svg).\n", bad


def test_pictures_are_not_imported_by_the_shell() -> None:
    code = (
        "import sys, ggsci.launch, ggsci.dispatch.table, ggsci.dispatch.heartbeat\n"
        "print(sorted(m for m in sys.modules if m.startswith('engine.pictures')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_lag_svg_has_axes_units_and_one_time_scale() -> None:
    """Issue 29: the chart had no axes and scaled each stage apart. Time: one scale for the
    picture (a path that stopped earlier ends before the right edge); lag: one scale per
    path, its stages on it (extract at half the total reaches half the panel); axes with
    times and seconds."""
    histories = [samples("E1 ==> R1", [1.0, 3.0, 2.0]), samples("E2 ==> R2", [5.0, 1.0])]
    svg = ET.fromstring(lagpic.to_svg(histories).to_bytes())
    series = svg.findall("s:polyline[@class='series']", NS)
    e2_total = next(s for s in series if s.get("data-path") == "E2 ==> R2")
    xs = [float(p.split(",")[0]) for p in e2_total.get("points", "").split()]
    assert xs == [lagpic.LEFT, lagpic.LEFT + lagpic.PLOT_W / 2]  # 1 s of the picture's 2 s
    extract = next(s for s in series if s.get("data-stage") == "extract")
    panels = svg.findall("s:rect[@class='panel']", NS)
    top = float(panels[1].get("y", "0"))
    ys = [float(p.split(",")[1]) for p in extract.get("points", "").split()]
    assert abs(min(ys) - (top + lagpic.PANEL_H / 2)) < 0.1  # 1.5 s of the path's 3 s
    assert len(svg.findall("s:line[@class='axis']", NS)) == len(panels) + 2
    ticks = [t.text for t in svg.findall("s:text[@class='x-tick']", NS)]
    assert ticks[:5] == ["09:00:00", "09:00:00", "09:00:01", "09:00:01", "09:00:02"]
    assert "0s" in [t.text for t in svg.findall("s:text[@class='y-tick']", NS)]
    (label,) = {t.text for t in svg.findall("s:text[@class='x-label']", NS)}
    assert label == "time received (HH:MM:SS)"
