"""Render the chart's Grafana dashboard to docs/dashboard.png, with data from a real run.

    python scripts/dashboard_preview.py [--seconds 85] [--out docs/dashboard.png]

1. Data: the emulated API server (tests/apiserver) with the chart installed as
   tests/installation.py installs it (the webhook and the operator as processes, helm-rendered
   settings, reclaim delay cut to 10 s), the scheduler and Deployment stand-ins, one 4-CPU node,
   and the quick start's story from examples/quickstart: the department and its two teams;
   team-a borrows team-b's idle guarantee; team-b comes back, team-a's runtime drops and a
   borrowed pod is reclaimed, its replacement waits behind the gate; team-b leaves and the
   replacement is admitted; the same once more. Both processes' /metrics are scraped every
   second into memory; the run stops after `--seconds` and stops every process it started.
2. Queries: each panel's PromQL is evaluated at every scrape by a small evaluator of the subset
   the dashboard uses: selectors with `=`, `!=`, `=~`, `!~`; `rate` and `increase`;
   `sum by (...)`; `histogram_quantile` (Prometheus's bucket interpolation). Unlike Prometheus:
   `[5m]` windows are evaluated over the last `--window` seconds (the run is shorter than five
   minutes), and rate is the counter's rise (resets handled) between the window's first and last
   samples over their time distance, without extrapolation to the window's edges. Variables:
   $resource=cpu, $group=All (every value of label_values(elastic_quota_group_runtime, group),
   as Grafana expands All). A query without series shows "No data", as in Grafana.
3. Drawing: HTML with an SVG per panel on Grafana's grid (24 columns, 30 px rows, 8 px gaps),
   its dark theme, classic palette, legend tables on the right and the panels' units;
   screenshotted by headless Chromium (`--chromium`, default /usr/bin/chromium).
"""

from __future__ import annotations

import argparse
import asyncio
import html
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.paths import PYTHONPATH  # noqa: E402

sys.path[1:1] = PYTHONPATH.split(os.pathsep)
from tests.apiserver import ApiServer  # noqa: E402
from tests.apiserver.client import Client  # noqa: E402
from tests.apiserver.standins import Deployments, Scheduler  # noqa: E402
from tests.installation import installed  # noqa: E402
from tests.manifests import node  # noqa: E402

DASHBOARD = REPO / "manifests" / "elastic-quota" / "files" / "dashboard.json"
EXAMPLES = REPO / "examples" / "quickstart"
SETTINGS = ("image.repository=registry.example.com/elastic-quota", "operator.reclaim.delay=10")

Labels = tuple[tuple[str, str], ...]  # sorted, `__name__` included
Vector = dict[Labels, float]


# 1. Data.


@dataclass
class Scrape:
    at: float
    samples: Vector


def _parse(text: str) -> Vector:
    samples: Vector = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = {**sample.labels, "__name__": sample.name}
            samples[tuple(sorted(labels.items()))] = sample.value
    return samples


def _path(obj: dict[str, Any]) -> str:
    kind, namespace = obj["kind"], obj["metadata"].get("namespace")
    if kind == "Namespace":
        return "/api/v1/namespaces"
    if kind == "ElasticQuota":
        return f"/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/{namespace}/elasticquotas"
    if kind == "Deployment":
        return f"/apis/apps/v1/namespaces/{namespace}/deployments"
    raise ValueError(f"no path for {kind}")


async def _apply(client: Client, name: str) -> None:
    for obj in yaml.safe_load_all((EXAMPLES / name).read_text()):
        await client.call("POST", _path(obj), obj)


async def _delete(client: Client, name: str) -> None:
    for obj in yaml.safe_load_all((EXAMPLES / name).read_text()):
        await client.call("DELETE", f"{_path(obj)}/{obj['metadata']['name']}")


# (second from the start, what happens): the quick start's story, played twice over.
STORY = (
    (2, "apply", "tree.yaml"),
    (6, "apply", "borrow.yaml"),
    (20, "apply", "reclaim.yaml"),
    (44, "delete", "reclaim.yaml"),
    (54, "apply", "reclaim.yaml"),
    (76, "delete", "reclaim.yaml"),
)


async def _play(client: Client, started: float) -> None:
    for at, verb, name in STORY:
        await asyncio.sleep(max(0.0, started + at - time.monotonic()))
        print(f"{at:>4} s  {verb} {name}", flush=True)
        await (_apply if verb == "apply" else _delete)(client, name)


async def collect(seconds: float, interval: float) -> list[Scrape]:
    """Scrape the webhook and the operator every `interval` for `seconds` while the story plays."""
    scrapes: list[Scrape] = []
    async with ApiServer() as api:
        api.seed(node("node-1", cpu="4", memory="16Gi", pods="110"))
        client = Client(str(api.url))
        scheduler, deployments = Scheduler(client), Deployments(client)
        try:
            with tempfile.TemporaryDirectory() as scratch:
                async with (
                    installed(api, Path(scratch), *SETTINGS) as processes,
                    aiohttp.ClientSession() as session,
                ):
                    await scheduler.start()
                    await deployments.start()
                    started = time.monotonic()
                    story = asyncio.create_task(_play(client, started))
                    for tick in range(int(seconds / interval) + 1):
                        await asyncio.sleep(max(0.0, started + tick * interval - time.monotonic()))
                        samples: Vector = {}
                        for process in processes:
                            async with session.get(process.probes + "/metrics") as response:
                                samples.update(_parse(await response.text()))
                        scrapes.append(Scrape(time.time(), samples))
                    story.cancel()  # when --seconds is shorter than the story
                    await asyncio.gather(story, return_exceptions=True)
        finally:
            await deployments.stop()
            await scheduler.stop()
            await client.close()
    return scrapes


# 2. Queries.


@dataclass
class Selector:
    name: str
    matchers: list[tuple[str, str, str]]
    window: float | None = None


@dataclass
class Call:
    function: str
    args: list[Any]


@dataclass
class Sum:
    by: list[str]
    expr: Any


_TOKEN = re.compile(r'\s*(=~|!=|!~|"(?:[^"\\]|\\.)*"|[A-Za-z_:][A-Za-z0-9_:]*|[0-9.]+[smhd]?|.)')


class Parser:
    """The PromQL the dashboard uses: selectors, function calls, `sum by (...) (...)`."""

    def __init__(self, text: str) -> None:
        self.tokens: list[str] = [t for t in _TOKEN.findall(text) if t.strip()]
        self.at = 0

    def parse(self) -> Any:
        expr = self._expr()
        if self.at != len(self.tokens):
            raise ValueError(f"unexpected {self.tokens[self.at]!r}")
        return expr

    def _next(self, expected: str | None = None) -> str:
        token = self.tokens[self.at]
        if expected is not None and token != expected:
            raise ValueError(f"expected {expected!r}, got {token!r}")
        self.at += 1
        return token

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _expr(self) -> Any:
        token = self._next()
        if re.fullmatch(r"[0-9.]+", token):
            return float(token)
        if token == "sum":
            by: list[str] = []
            if self._peek() == "by":
                self._next()
                by = self._names()
            self._next("(")
            expr = self._expr()
            self._next(")")
            return Sum(by, expr)
        if self._peek() == "(":
            self._next()
            args = [self._expr()]
            while self._peek() == ",":
                self._next()
                args.append(self._expr())
            self._next(")")
            return Call(token, args)
        selector = Selector(token, [])
        if self._peek() == "{":
            self._next()
            while self._peek() != "}":
                label, op, value = self._next(), self._next(), self._next()
                selector.matchers.append((label, op, re.sub(r"\\(.)", r"\1", value[1:-1])))
                if self._peek() == ",":
                    self._next()
            self._next("}")
        if self._peek() == "[":
            self._next()
            duration = self._next()
            self._next("]")
            selector.window = (
                float(duration[:-1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[duration[-1]]
            )
        return selector

    def _names(self) -> list[str]:
        self._next("(")
        names = []
        while self._peek() != ")":
            names.append(self._next())
            if self._peek() == ",":
                self._next()
        self._next(")")
        return names


def _matches(labels: Labels, selector: Selector) -> bool:
    found = dict(labels)
    if found.get("__name__") != selector.name:
        return False
    for label, op, value in selector.matchers:
        have = found.get(label, "")
        ok = {
            "=": have == value,
            "!=": have != value,
            "=~": re.fullmatch(value, have) is not None,
            "!~": re.fullmatch(value, have) is None,
        }[op]
        if not ok:
            return False
    return True


def _without(labels: Labels, *names: str) -> Labels:
    return tuple((k, v) for k, v in labels if k not in names)


def _quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """Prometheus's histogram_quantile over (upper bound, cumulative count) pairs."""
    buckets.sort()
    if len(buckets) < 2 or not math.isinf(buckets[-1][0]) or buckets[-1][1] <= 0:
        return math.nan
    rank = q * buckets[-1][1]
    for i, (bound, count) in enumerate(buckets):
        if count >= rank:
            if math.isinf(bound):
                return buckets[-2][0]
            lower, below = (0.0, 0.0) if i == 0 else buckets[i - 1]
            return lower + (bound - lower) * (rank - below) / max(count - below, 1e-12)
    return math.nan


class Evaluator:
    """Evaluates parsed queries at the time of scrape `index`."""

    def __init__(self, scrapes: list[Scrape], window: float) -> None:
        self.scrapes, self.window = scrapes, window

    def eval(self, expr: Any, index: int) -> Any:
        if isinstance(expr, float):
            return expr
        if isinstance(expr, Selector):
            samples = self.scrapes[index].samples
            return {k: v for k, v in samples.items() if _matches(k, expr)}
        if isinstance(expr, Sum):
            total: Vector = {}
            for labels, value in self.eval(expr.expr, index).items():
                key = tuple((k, v) for k, v in labels if k in expr.by)
                total[key] = total.get(key, 0.0) + value
            return total
        if expr.function in ("rate", "increase"):
            (selector,) = expr.args
            return self._rate(selector, index, per_second=expr.function == "rate")
        if expr.function == "histogram_quantile":
            q, vector = self.eval(expr.args[0], index), self.eval(expr.args[1], index)
            groups: dict[Labels, list[tuple[float, float]]] = {}
            for labels, value in vector.items():
                bound = float(dict(labels)["le"])
                groups.setdefault(_without(labels, "le", "__name__"), []).append((bound, value))
            found = {k: _quantile(q, b) for k, b in groups.items()}
            return {k: v for k, v in found.items() if not math.isnan(v)}
        raise ValueError(f"unsupported function {expr.function}")

    def _rate(self, selector: Selector, index: int, *, per_second: bool) -> Vector:
        now = self.scrapes[index].at
        points: dict[Labels, list[tuple[float, float]]] = {}
        for scrape in self.scrapes[: index + 1]:
            if scrape.at > now - self.window:
                for labels, value in scrape.samples.items():
                    if _matches(labels, selector):
                        points.setdefault(_without(labels, "__name__"), []).append(
                            (scrape.at, value)
                        )
        found: Vector = {}
        for labels, series in points.items():
            if len(series) < 2:
                continue
            rise = sum(b - a if b >= a else b for (_, a), (_, b) in itertools.pairwise(series))
            rate = rise / (series[-1][0] - series[0][0])
            found[labels] = rate if per_second else rate * self.window
        return found


@dataclass
class Line:
    name: str
    points: list[tuple[float, float | None]]


def _variables(scrapes: list[Scrape]) -> dict[str, str]:
    groups = sorted(
        {
            dict(labels)["group"]
            for scrape in scrapes
            for labels in scrape.samples
            if dict(labels)["__name__"] == "elastic_quota_group_runtime"
        }
    )
    # Grafana's regex escaping for Prometheus, doubled for the PromQL string.
    escaped = (re.sub(r"[$^*{}\[\]'+?.()|]", r"\\\\\g<0>", g) for g in groups)
    return {"resource": "cpu", "group": "(" + "|".join(escaped) + ")"}


def panel_lines(panel: dict[str, Any], scrapes: list[Scrape], window: float) -> list[Line]:
    """The panel's series over the run, in Grafana's order (target, then series)."""
    evaluator, variables = Evaluator(scrapes, window), _variables(scrapes)
    lines: list[Line] = []
    for target in panel["targets"]:
        expr = re.sub(r"\$(\w+)", lambda m: variables[m[1]], target["expr"])
        parsed = Parser(expr).parse()
        series: dict[Labels, dict[int, float]] = {}
        for index in range(len(scrapes)):
            for labels, value in evaluator.eval(parsed, index).items():
                series.setdefault(labels, {})[index] = value
        for labels in sorted(series):
            found = dict(labels)
            name = re.sub(
                r"\{\{\s*(\w+)\s*\}\}",
                lambda m, found=found: found.get(m[1], ""),
                target.get("legendFormat") or "",
            )
            points = [(s.at, series[labels].get(i)) for i, s in enumerate(scrapes)]
            lines.append(Line(name.strip() or str(dict(labels)), points))
    return lines


# 3. Drawing.

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
    variables = "".join(
        f'<div class="var"><b>{label}</b><i>{value}</i></div>'
        for label, value in (("Data source", "Prometheus"), ("Resource", "cpu"), ("Group", "All"))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=85, help="length of the run")
    parser.add_argument("--interval", type=float, default=1, help="seconds between scrapes")
    parser.add_argument("--window", type=float, default=10, help="seconds that stand for [5m]")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "dashboard.png")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    scrapes = asyncio.run(collect(args.seconds, args.interval))
    dashboard = json.loads(DASHBOARD.read_text())
    lines = [panel_lines(panel, scrapes, args.window) for panel in dashboard["panels"]]
    text, height = page(dashboard, scrapes, lines)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    screenshot(text, height, args.out, args.chromium)
    for panel, found in zip(dashboard["panels"], lines, strict=True):
        print(f"{len(found):>3} series  {panel['title']}")
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB)")
    evicted = sum(
        v
        for k, v in scrapes[-1].samples.items()
        if ("__name__", "elastic_quota_evictions_total") in k and ("result", "evicted") in k
    )
    print(f"{evicted:.0f} pods reclaimed (the story expects 2)")


if __name__ == "__main__":
    main()
