"""Runtime: how a parent's total is split among its children (koordinator-semantics.md 2.4-2.8).

Pure functions over the children of many parents at once. Rows are children, columns are
resources; the children of one parent are contiguous rows, a *segment*, starting at
`starts[i]`. Each (segment, resource) is an independent split, so one call does a whole level
of the tree.

The seed's example, one parent with total 100 (request, min, weight):

    A (5, 10, 40)  B (20, 15, 60)  C (40, 20, 50)  D (70, 15, 80)
    mins first: A 5 (asks less than its min, lends the rest), B 15, C 20, D 15; 45 left
    round 1, 45 by weight 60:50:80 -> 14, 12, 19 (largest remainder); B capped at 20, 9 back
    round 2, 9 by weight 50:80 -> 3, 6                     => A 5, B 20, C 35, D 40
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .integers import Amounts, fits_int64, floor_divide_product

Mask = npt.NDArray[np.bool_]
Index = npt.NDArray[np.intp]


def segment_ids(starts: Index, rows: int) -> Index:
    """The segment of each row: `segment_ids([0, 2], 5) == [0, 0, 1, 1, 1]`."""
    return np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, rows]))


def _sums(values: Amounts, starts: Index) -> Amounts:
    return np.add.reduceat(values, starts, axis=0) if len(values) else values[: len(starts)]


def scale_min(*, total: Amounts, scalable: Mask, min_: Amounts, starts: Index) -> Amounts:
    """Each child's min after scaling (2.8): shrunk in proportion where the mins exceed the total.

    Where a segment's total is below the sum of its children's mins, a child's min becomes
    ⌊total · min / Σmin⌋ (exact integers; Koordinator truncates a float64 product). Total 200
    over three mins of 100: 66, 66, 66; the 2 units left are shared as any leftover is.
    """
    seg = segment_ids(starts, len(min_))
    min_sum = _sums(min_, starts)
    shrink = scalable & (total < min_sum)
    if not shrink.any():
        return min_
    rows = shrink[seg]
    scaled, _ = floor_divide_product(
        np.where(rows, min_, 0), np.maximum(total, 0)[seg], np.where(rows, min_sum[seg], 1)
    )
    return np.where(rows, scaled, min_)


def split(
    *,
    total: Amounts,
    request: Amounts,
    min_: Amounts,
    weight: Amounts,
    lend: Mask,
    tie_rank: Index,
    starts: Index,
) -> Amounts:
    """Each child's runtime (2.4).

    total:    (segments, resources) what the parent has to give
    request:  (children, resources) the child's request, limited by its max
    min_:     (children, resources) the child's effective min (after scaling)
    weight:   (children, resources) shared weight
    lend:     (children,) whether the child lends its unused min
    tie_rank: (children,) order of the children's names, for ties in rounding
    """
    if not len(request):
        return request
    seg = segment_ids(starts, len(request))
    exact = not fits_int64(
        _sums(np.maximum(request, min_).astype(np.float64), starts),
        _sums(weight.astype(np.float64), starts) * 4,
        total.astype(np.float64),
    )
    if exact:  # sums could overflow int64: the same steps on Python integers
        total, request, min_, weight = (a.astype(object) for a in (total, request, min_, weight))
    hungry = request > min_
    given = np.where(lend[:, None], np.minimum(request, min_), min_)
    leftover = total - _sums(given, starts)
    pool = hungry & (weight > 0)
    while True:
        pool_weight = _sums(np.where(pool, weight, 0), starts)
        active = (leftover > 0) & (pool_weight > 0)
        if not active.any():
            break
        take = pool & active[seg]
        share, remainder = floor_divide_product(
            np.where(take, weight, 0), np.where(take, leftover[seg], 0),
            np.where(take, pool_weight[seg], 1),
        )
        short = leftover - _sums(share, starts)
        given = given + share + _largest_remainders(take, remainder, short, seg, tie_rank)
        excess = np.where(take, np.maximum(given - request, 0), 0)
        given = given - excess
        pool &= ~(take & (given >= request))
        leftover = np.where(active, _sums(excess, starts), 0)
    return given.astype(np.int64) if exact else given


def _largest_remainders(
    take: Mask, remainder: Amounts, short: Amounts, seg: Index, tie_rank: Index
) -> Amounts:
    """One more unit for the `short` children with the largest remainders (2.5).

    Within a (segment, resource), larger remainder first, then the smaller name.
    """
    bonus = np.zeros(take.shape, dtype=np.int64)
    rows, cols = np.nonzero(take & (short[seg] > 0))
    if not len(rows):
        return bonus
    group = seg[rows] * take.shape[1] + cols
    order = np.lexsort((tie_rank[rows], -remainder[rows, cols], group))
    group = group[order]
    first = np.r_[True, group[1:] != group[:-1]]
    place = np.arange(len(group)) - np.maximum.accumulate(np.where(first, np.arange(len(group)), 0))
    wins = place < short.reshape(-1)[group]
    bonus[rows[order][wins], cols[order][wins]] = 1
    return bonus
