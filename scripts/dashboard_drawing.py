"""The dashboard drawn as Grafana draws it: HTML with an SVG per panel on Grafana's grid (24
columns, 30 px rows, 8 px gaps), its dark theme, classic palette, legend tables on the right and
the panels' units, screenshotted by headless Chromium."""

from __future__ import annotations

import html
import math
import subprocess
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from .dashboard_queries import Line, Scrape

PALETTE = (
    "#73BF69", "#F2CC0C", "#8AB8FF", "#FF780A", "#F2495C", "#5794F2", "#B877D9",
    "#705DA0", "#37872D", "#FADE2A", "#447EBC", "#C15C17", "#890F02", "#0A437C",
)  # fmt: skip
WIDTH, ROW, GAP, HEADER = 1600, 30, 8, 32
TEXT, WEAK, GRID = "#ccccdc", "rgba(204,204,220,0.65)", "rgba(204,204,220,0.12)"


def _scaled(value: float, step: float, suffixes: tuple[str, ...], base: float = 1000) -> str:
    scale = 0
    while abs(value) >= base ** (scale + 1) and scale + 1 < len(suffixes):
        scale += 1
    shown, unit_step = value / base**scale, step / base**scale
    decimals = max(0, min(3, -math.floor(math.log10(unit_step)) if unit_step > 0 else 0))
    return f"{shown:.{decimals}f}{suffixes[scale]}"


def fmt(value: float, step: float, unit: str) -> str:
    """A tick label in the panel's unit, as Grafana writes it."""
    if unit == "s":
        if value == 0:
            return "0 s"
        for factor, name in ((1, " s"), (1e-3, " ms"), (1e-6, " µs")):
            if abs(value) >= factor or factor == 1e-6:
                return _scaled(value / factor, step / factor, (name,))
    if unit == "reqps":
        return _scaled(value, step, (" req/s", "K req/s", "M req/s"))
    return _scaled(value, step, ("", " K", " Mil", " Bil"))


def _ticks(low: float, high: float, count: int) -> tuple[list[float], float]:
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]
    return ticks, step


def panel_svg(panel: dict[str, Any], lines: list[Line], width: int, height: int) -> str:
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short")
    title = html.escape(panel["title"])
    parts = [
        f'<div class="panel" style="width:{width}px;height:{height}px">'
        f'<div class="title">{title}</div>'
    ]
    values = [v for line in lines for _, v in line.points if v is not None]
    if not values:
        parts.append('<div class="nodata">No data</div></div>')
        return "".join(parts)
    body = height - HEADER - 8
    names = [html.escape(line.name) for line in lines]
    legend = min(int(width * 0.4), 40 + 7 * max(len(n) for n in names))
    plot_w, plot_h = width - legend - 16, body
    low, high = min(0.0, min(values)), max(values)
    if high <= low:
        high = low + 1
    ticks, step = _ticks(low, high, max(2, plot_h // 45))
    low, high = min(low, ticks[0]), max(high, ticks[-1])
    labels = [fmt(t, step, unit) for t in ticks]
    left = 12 + 7 * max(len(label) for label in labels)
    x0, x1, y0, y1 = left, plot_w - 28, 6, plot_h - 22  # room for the last time label
    t0, t1 = lines[0].points[0][0], lines[0].points[-1][0]

    def x(t: float) -> float:
        return x0 + (t - t0) / (t1 - t0) * (x1 - x0)

    def y(v: float) -> float:
        return y1 - (v - low) / (high - low) * (y1 - y0)

    svg = [f'<svg width="{plot_w}" height="{plot_h}">']
    for tick, label in zip(ticks, labels, strict=True):
        svg.append(f'<line x1="{x0}" x2="{x1}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" class="g"/>')
        svg.append(f'<text x="{x0 - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{label}</text>')
    every = next(s for s in (5, 10, 15, 20, 30, 60, 120) if (x1 - x0) / ((t1 - t0) / s) >= 70)
    tick_t = math.ceil(t0 / every) * every
    while tick_t <= t1:
        text = datetime.fromtimestamp(tick_t).strftime("%H:%M:%S")
        svg.append(
            f'<line x1="{x(tick_t):.1f}" x2="{x(tick_t):.1f}" y1="{y0}" y2="{y1}" class="g"/>'
        )
        svg.append(f'<text x="{x(tick_t):.1f}" y="{y1 + 16}" text-anchor="middle">{text}</text>')
        tick_t += every
    for i, line in enumerate(lines):
        color = PALETTE[i % len(PALETTE)]
        runs: list[list[str]] = []
        run: list[str] = []
        for t, v in line.points:
            if v is None:
                runs, run = [*runs, run] if run else runs, []
            else:
                run.append(f"{x(t):.1f},{y(v):.1f}")
        for points in [*runs, run]:
            if points:
                svg.append(f'<polyline points="{" ".join(points)}" stroke="{color}"/>')
    svg.append("</svg>")
    rows = "".join(
        f'<div class="item"><span style="background:{PALETTE[i % len(PALETTE)]}"></span>{name}'
        "</div>"
        for i, name in enumerate(names)
    )
    parts.append(
        f'<div class="body">{"".join(svg)}'
        f'<div class="legend" style="width:{legend}px;max-height:{body}px">{rows}</div></div></div>'
    )
    return "".join(parts)


CSS = f"""
body {{ margin: 0; background: #111217; color: {TEXT};
  font-family: Inter, "Liberation Sans", Arial, sans-serif; font-size: 12px; }}
.bar {{ height: 40px; display: flex; align-items: center; padding: 0 16px; gap: 12px;
  border-bottom: 1px solid #2c3235; background: #181b1f; font-size: 14px; }}
.bar .weak {{ color: {WEAK}; }}
.vars {{ display: flex; gap: 8px; padding: 10px 16px; align-items: center; }}
.var {{ display: flex; border: 1px solid #2c3235; border-radius: 2px; }}
.var b {{ font-weight: 500; padding: 6px 8px; background: #22252b; }}
.var i {{ font-style: normal; padding: 6px 10px; background: #111217; }}
.range {{ margin-left: auto; color: {WEAK}; }}
.grid {{ position: relative; margin: 0 16px 16px; }}
.slot {{ position: absolute; }}
.panel {{ background: #181b1f; border: 1px solid #2c3235; border-radius: 2px;
  box-sizing: border-box; overflow: hidden; }}
.title {{ height: {HEADER}px; line-height: {HEADER}px; padding: 0 8px; font-size: 14px;
  font-weight: 500; }}
.body {{ display: flex; padding: 0 8px; gap: 8px; }}
.nodata {{ color: {WEAK}; font-size: 14px; text-align: center; margin-top: 20%; }}
svg text {{ fill: {WEAK}; font-size: 11px; }}
svg .g {{ stroke: {GRID}; stroke-width: 1; }}
svg polyline {{ fill: none; stroke-width: 1.5; }}
.legend {{ overflow: hidden; font-size: 12px; }}
.item {{ white-space: nowrap; line-height: 20px; }}
.item span {{ display: inline-block; width: 14px; height: 4px; border-radius: 2px;
  margin: 0 8px 3px 0; vertical-align: middle; }}
"""


def page(
    dashboard: dict[str, Any], scrapes: list[Scrape], lines: list[list[Line]]
) -> tuple[str, int]:
    """The dashboard as HTML (`lines`: each panel's), and its height in pixels."""
    inner = WIDTH - 32
    column = (inner - GAP * 23) / 24
    slots, bottom = [], 0
    for panel, found in zip(dashboard["panels"], lines, strict=True):
        g = panel["gridPos"]
        left, top = round(g["x"] * (column + GAP)), g["y"] * (ROW + GAP)
        width, height = (
            round(g["w"] * column + (g["w"] - 1) * GAP),
            g["h"] * ROW + (g["h"] - 1) * GAP,
        )
        bottom = max(bottom, top + height)
        svg = panel_svg(panel, found, width, height)
        slots.append(f'<div class="slot" style="left:{left}px;top:{top}px">{svg}</div>')
    start, end = (
        datetime.fromtimestamp(s.at).strftime("%H:%M:%S") for s in (scrapes[0], scrapes[-1])
    )
    variables = "".join(  # as the dashboard opens: its variables' current values
        f'<div class="var"><b>{html.escape(label)}</b><i>{html.escape(value)}</i></div>'
        for label, value in (
            (v["label"], "Prometheus" if v["type"] == "datasource" else v["current"]["text"])
            for v in dashboard["templating"]["list"]
        )
    )
    text = (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>"
        f'<div class="bar"><span class="weak">Dashboards &rsaquo;</span>'
        f"{html.escape(dashboard['title'])}</div>"
        f'<div class="vars">{variables}<span class="range">{start} to {end}</span></div>'
        f'<div class="grid" style="height:{bottom}px">{"".join(slots)}</div></body></html>'
    )
    return text, bottom + 40 + 52 + 16


def screenshot(text: str, height: int, out: Path, chromium: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "dashboard.html"
        source.write_text(text)
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={scratch}/profile",
                f"--screenshot={out.resolve()}",
                f"--window-size={WIDTH},{height}",
                source.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
