"""Runtime: how a parent's total is split among its children (docs/how-it-works.md).

Pure functions over the children of many parents at once. Every (resource, parent) pair is an
independent split, a *run*; `Runs` lays the children out resource-major so that each run is a
contiguous slice of a flat array and one call does a whole level of the tree.

The seed's example, one parent with total 100 (request, min, weight):

    A (5, 10, 40)  B (20, 15, 60)  C (40, 20, 50)  D (70, 15, 80)
    mins first: A 5 (asks less than its min, lends the rest), B 15, C 20, D 15; 45 left
    round 1, 45 by weight 60:50:80 -> 14, 12, 19 (largest remainder); B capped at 20, 9 back
    round 2, 9 by weight 50:80 -> 3, 6                     => A 5, B 20, C 35, D 40
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from .integers import Amounts, estimable, fits_int64, floor_divide_product, largest

Mask = npt.NDArray[np.bool_]
Index = npt.NDArray[np.intp]
_Item = TypeVar("_Item", bound=np.generic)


@dataclass(frozen=True, slots=True)
class Runs:
    """The children of several parents, flattened so that each (resource, parent) is a run.

    Children are rows of (children, resources) matrices; the children of one parent are
    contiguous rows starting at `starts[i]`. Flattening resource-major turns every
    (resource, parent) pair into one contiguous slice.
    """

    rows: int
    columns: int
    starts: Index
    """First flat index of each run."""
    run_of: Index
    """The run of each flat element."""
    longest: int
    """The size of the largest run: bounds every sum over a run."""

    @classmethod
    def of(cls, starts: Index, rows: int, columns: int) -> Runs:
        """Runs for children whose parents' segments begin at `starts` (row offsets)."""
        sizes = np.concatenate((starts[1:], [rows])) - starts
        segment = np.arange(len(starts)).repeat(sizes)
        column = np.arange(columns)[:, None]
        return cls(
            rows=rows,
            columns=columns,
            longest=int(sizes.max()) if len(sizes) else 0,
            starts=(column * rows + starts[None, :]).ravel(),
            run_of=(column * len(starts) + segment[None, :]).ravel(),
        )

    def flat(self, matrix: npt.NDArray[_Item]) -> npt.NDArray[_Item]:
        """A (children or parents, resources) matrix as one resource-major vector."""
        return matrix.T.ravel()

    def per_child(self, values: npt.NDArray[_Item]) -> npt.NDArray[_Item]:
        """A per-child vector repeated for every resource."""
        return values[np.newaxis, :].repeat(self.columns, axis=0).ravel()

    def matrix(self, flat: Amounts) -> Amounts:
        """The inverse of `flat` for children: back to (children, resources)."""
        return flat.reshape(self.columns, self.rows).T

    def sums(self, flat: npt.NDArray[_Item]) -> npt.NDArray[_Item]:
        """The sum of each run."""
        return np.add.reduceat(flat, self.starts) if len(flat) else flat[: len(self.starts)]


def scale_min(*, total: Amounts, scalable: Mask, min_: Amounts, runs: Runs) -> Amounts:
    """Each child's min after scaling (2.8): shrunk in proportion where the mins exceed the total.

    `total` and `scalable` are per run, `min_` per flat child. Where a run's total is below the
    sum of its children's mins, a child's min becomes ⌊total · min / Σmin⌋ (exact integers;
    Koordinator truncates a float64 product). Total 200 over three mins of 100: 66, 66, 66; the
    2 units left are shared as any leftover is.
    """
    min_sum = runs.sums(min_)
    shrink = scalable & (total < min_sum)
    if not shrink.any():
        return min_
    rows = np.flatnonzero(shrink[runs.run_of])
    run = runs.run_of[rows]
    scaled, _ = floor_divide_product(min_[rows], np.maximum(total[run], 0), min_sum[run])
    result = min_.copy()
    result[rows] = scaled
    return result


def split(
    *,
    total: Amounts,
    request: Amounts,
    min_: Amounts,
    weight: Amounts,
    kept: Amounts,
    tie_rank: Index,
    runs: Runs,
) -> Amounts:
    """Each child's runtime (2.4), per flat child.

    total:    per run, what the parent has to give
    request:  the child's request, limited by its max
    min_:     the child's effective min (after scaling)
    weight:   the child's shared weight
    kept:     what of its min the child never lends (its request is already raised to it; a
              request clipped to a max below the min is not)
    tie_rank: the order of the children's names, for ties in rounding
    """
    most_weight, most_total = largest(weight), largest(total)
    if not _sums_fit(runs, most_total, most_weight, request, min_, weight):
        # sums could overflow int64: the same steps on Python integers
        total, request, min_, weight = (a.astype(object) for a in (total, request, min_, weight))
    bound = most_weight * most_total  # no share's product is larger
    fast = estimable(most_total, most_weight * runs.longest)  # leftovers, pool weights
    small = total.dtype != object and most_total < 2.0**52
    given = np.minimum(np.maximum(request, kept), min_)
    leftover = total - runs.sums(given)
    pool = (request > min_) & (weight > 0)
    while True:
        pool_weight = runs.sums(np.where(pool, weight, 0))
        active = (leftover > 0) & (pool_weight > 0)
        if not active.any():
            break
        take = np.flatnonzero(pool & active[runs.run_of])
        run = runs.run_of[take]
        share, remainder = floor_divide_product(
            weight[take], leftover[run], pool_weight[run], bound=bound, fast=fast
        )
        short = (leftover - _per_run(share, run, len(leftover), small))[run]
        amount = given[take] + share + _largest_remainders(run, remainder, short, tie_rank[take])
        limit = request[take]
        kept = np.minimum(amount, limit)  # a child never gets more than it asks for...
        given[take] = kept
        pool[take[amount >= limit]] = False
        leftover = _per_run(amount - kept, run, len(leftover), small)  # ...goes round again
    return given.astype(np.int64) if given.dtype == object else given


def _per_run(values: Amounts, run: Index, runs: int, small: bool) -> Amounts:
    """The sum of `values` for each of `runs` runs (`run`: each value's run).

    `small`: every sum stays below 2**52, so float64 `bincount` adds them exactly, and faster
    than the exact `add.at`."""
    if small:
        return np.bincount(run, weights=values, minlength=runs).astype(np.int64)
    sums = np.zeros(runs, dtype=values.dtype)
    np.add.at(sums, run, values)
    return sums


def _sums_fit(
    runs: Runs,
    most_total: float,
    most_weight: float,
    request: Amounts,
    min_: Amounts,
    weight: Amounts,
) -> bool:
    """Whether no sum over a run (of requests, mins, 4 x weights) can leave int64."""
    largest_value = max(largest(request), largest(min_), 4 * most_weight)
    if most_total < 2.0**62 and largest_value * runs.longest < 2.0**62:
        return True  # the cheap bound settles the usual case
    return most_total < 2.0**62 and fits_int64(
        runs.sums(np.maximum(request, min_).astype(np.float64)),
        runs.sums(weight.astype(np.float64)) * 4,
    )


def _largest_remainders(run: Index, remainder: Amounts, short: Amounts, tie_rank: Index) -> Amounts:
    """One more unit for the `short` members of each run with the largest remainders (2.5).

    `run` is sorted. Within a run: the larger remainder first, then the smaller name.
    """
    bonus = np.zeros(len(run), dtype=np.int64)
    if not (short > 0).any():
        return bonus
    order = np.lexsort((tie_rank, -remainder, run))  # keeps the (sorted) runs in place
    place = np.arange(len(run)) - np.searchsorted(run, run)  # rank within the run
    bonus[order] = place < short  # short is the same across a run
    return bonus
