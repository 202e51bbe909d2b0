"""Exact integer helpers for numpy arrays of canonical amounts.

Amounts are int64, kept within `[0, LIMIT]` (`model.quantities`), so that sums of thousands of
amounts stay inside int64. Where a product or sum could still overflow, callers
switch to `dtype=object` arrays of Python ints, with which every helper here is exact too.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..model import LIMIT, clamp

Amounts = npt.NDArray[np.int64]
"""Canonical amounts, int64 (or object arrays of Python ints on the exact path)."""

# `floor_divide_product` takes its fast path when the float estimate of a*b/c is within ±2 of the
# truth (b < 2**50) and 3*c cannot overflow the exact remainder arithmetic (c < 2**58).
_FAST_B = 2**50
_FAST_C = 2**58


def amount_rows(rows: Sequence[Mapping[str, int] | None], names: Sequence[str]) -> Amounts:
    """A row of amounts for `names` per resource list (None: all 0), 0 where a name is
    missing, clamped to `[0, LIMIT]`: a tree's groups in one array, made at once."""
    table = [[0] * len(names) if row is None else [row.get(n, 0) for n in names] for row in rows]
    try:
        matrix = np.array(table, dtype=np.int64)
    except OverflowError:  # an amount beyond int64: each clamped as a Python int, exactly
        matrix = np.array([[clamp(value) for value in row] for row in table], dtype=np.int64)
    return np.clip(matrix.reshape(len(rows), len(names)), 0, LIMIT)


def amounts(resources: Mapping[str, int] | None, names: Sequence[str]) -> Amounts:
    """One resource list's row of `amount_rows`."""
    row: Amounts = amount_rows([resources], names)[0]
    return row


def present_rows(
    rows: Sequence[Collection[str] | None], names: Sequence[str]
) -> npt.NDArray[np.bool_]:
    """Which of `names` are keys of each resource list (all of them for None), one row each."""
    table = [[True] * len(names) if row is None else [n in row for n in names] for row in rows]
    return np.array(table, dtype=bool).reshape(len(rows), len(names))


def present(resources: Collection[str] | None, names: Sequence[str]) -> npt.NDArray[np.bool_]:
    """One resource list's row of `present_rows`."""
    row: npt.NDArray[np.bool_] = present_rows([resources], names)[0]
    return row


def largest(values: npt.NDArray[Any]) -> float:
    """The largest value as a float (0 for an empty array): for overflow checks."""
    return float(values.max()) if len(values) else 0.0


def fits_int64(*estimates: npt.NDArray[np.float64]) -> bool:
    """Whether values whose float magnitudes are `estimates` stay well inside int64."""
    return all(largest(e) < 2.0**62 for e in estimates)


def estimable(largest_b: float, largest_c: float) -> bool:
    """Whether `floor_divide_product` may take its float estimate for every element."""
    return largest_b < _FAST_B and largest_c < _FAST_C


def floor_divide_product(
    a: Amounts, b: Amounts, c: Amounts, *, bound: float | None = None, fast: bool = False
) -> tuple[Amounts, Amounts]:
    """`(a*b // c, a*b % c)` elementwise, exactly, for `0 <= a <= c`, `b >= 0`, `c > 0`.

    `bound`, if given, is an upper bound of every a*b that the caller already knows; `fast`,
    that the caller knows `estimable(max b, max c)`.
    int64 products overflow (2**40 * 2**40 wraps to 0), so where they might, the quotient is
    first estimated in float64 and then corrected: with b < 2**50 the estimate is off by at
    most 2, so the true remainder a*b - q*c lies within 3*c, which wrapping int64 arithmetic
    gets exactly. Elements outside that range are computed with Python integers.
    """
    if bound is None:
        bound = largest(a) * largest(b)
    if a.dtype == object or bound < 2.0**62:
        product = a * b  # exact: Python integers, or int64 products known not to overflow
        return product // c, product % c
    if fast or estimable(largest(b), largest(c)):  # the usual case: every element is fast
        estimate = (a.astype(np.float64) / c.astype(np.float64) * b.astype(np.float64)).astype(
            np.int64
        )  # truncation is the floor: nothing here is negative
        remainder = a * b - estimate * c  # exact modulo 2**64, and the true value is small
        correction = remainder // c
        return estimate + correction, remainder - correction * c
    each = (b < _FAST_B) & (c < _FAST_C)
    estimate = np.floor(a.astype(np.float64) / c.astype(np.float64) * b.astype(np.float64))
    quotient = np.where(each, estimate, 0).astype(np.int64)
    remainder = a * b - quotient * c  # exact modulo 2**64, and the true value is small
    correction = remainder // np.where(each, c, 1)
    quotient += correction
    remainder -= correction * c
    if not each.all():
        slow = ~each
        product = a[slow].astype(object) * b[slow].astype(object)
        quotient[slow] = (product // c[slow].astype(object)).astype(np.int64)
        remainder[slow] = (product % c[slow].astype(object)).astype(np.int64)
    return quotient, remainder
