"""A plain reference of the runtime rules with lending and borrowing limits, for one resource.

Written as docs/how-it-works.md states the rules, group by group on Python integers, with none
of the engine's arrays, runs or incremental sweeps: the property test holds the engine to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Group:
    name: str
    min: int
    max: int
    weight: int
    lends: bool = True
    lending_limit: int | None = None
    borrowing_limit: int | None = None
    pods: int = 0
    """What its own pods ask for."""
    children: list[Group] = field(default_factory=list)

    @property
    def kept(self) -> int:
        """What of its min it never lends."""
        if not self.lends:
            return self.min
        return 0 if self.lending_limit is None else max(0, self.min - self.lending_limit)

    @property
    def cap(self) -> int:
        """What its request is clipped to."""
        if self.borrowing_limit is None:
            return self.max
        return min(self.max, self.min + self.borrowing_limit)

    @property
    def request(self) -> int:
        asked = self.pods + sum(child.passed_up for child in self.children)
        return max(asked, self.kept)

    @property
    def passed_up(self) -> int:
        return min(self.request, self.cap)


def runtimes(top: list[Group], total: int, *, min_scaling: bool) -> dict[str, int]:
    """Every group's runtime, the top-level groups sharing `total`."""
    found: dict[str, int] = {}
    _split(top, total, min_scaling, found)
    return found


def _split(children: list[Group], total: int, min_scaling: bool, found: dict[str, int]) -> None:
    if not children:
        return
    children = sorted(children, key=lambda c: c.name)  # ties in rounding go by name
    mins = [c.min for c in children]
    if min_scaling and total < sum(mins):
        mins = [max(total, 0) * m // sum(mins) for m in mins]
    asks = [c.passed_up for c in children]
    given = [min(max(ask, c.kept), m) for c, ask, m in zip(children, asks, mins, strict=True)]
    left = total - sum(given)
    hungry = [i for i, c in enumerate(children) if asks[i] > mins[i] and c.weight > 0]
    while left > 0 and hungry:
        weights = sum(children[i].weight for i in hungry)
        shares = {i: children[i].weight * left // weights for i in hungry}
        remainders = {i: children[i].weight * left % weights for i in hungry}
        short = left - sum(shares.values())
        by_remainder = sorted(hungry, key=lambda i: -remainders[i])  # stable: names next
        for i in by_remainder[:short]:
            shares[i] += 1
        left = 0
        for i in list(hungry):
            amount = given[i] + shares[i]
            given[i] = min(amount, asks[i])
            left += amount - given[i]
            if amount >= asks[i]:
                hungry.remove(i)
    for child, runtime in zip(children, given, strict=True):
        found[child.name] = runtime
        _split(child.children, runtime, min_scaling, found)
