"""The PromQL the Grafana dashboard uses, evaluated over scrapes held in memory: selectors with
`=`, `!=`, `=~`, `!~`; `rate` and `increase`; `sum by (...)`; `histogram_quantile`
(Prometheus's bucket interpolation). Unlike Prometheus: a `[5m]` window is evaluated over the
last `window` seconds, and rate is the counter's rise (resets handled) between the window's
first and last samples over their time distance, without extrapolation to the window's edges.
Variables: $resource=cpu, $tree=All (the variable's allValue `.*`, which also takes the default
tree's groups, whose empty tree label Prometheus drops), $group=All (every value of
label_values(elastic_quota_group_runtime, group), as Grafana expands All)."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

Labels = tuple[tuple[str, str], ...]  # sorted, `__name__` included
Vector = dict[Labels, float]


@dataclass
class Scrape:
    at: float
    samples: Vector


def parse_scrape(text: str) -> Vector:
    """The samples of a /metrics page."""
    samples: Vector = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = {**sample.labels, "__name__": sample.name}
            samples[tuple(sorted(labels.items()))] = sample.value
    return samples


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
    return {"resource": "cpu", "tree": ".*", "group": "(" + "|".join(escaped) + ")"}


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
