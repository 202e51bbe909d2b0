"""`floor_divide_product` against Python's exact integers: its float fast path over the whole
domain it accepts (b < 2**50, 0 <= a <= c < 2**58), where float64 stops being exact (2**53) and
at the edges of that domain, and the default entry, which picks a path per element, over the
whole contract (0 <= a <= c, b >= 0, int64)."""

from __future__ import annotations

import numpy as np
from eq_engine.numbers.integers import estimable, floor_divide_product
from hypothesis import given
from hypothesis import strategies as st

FAST_B, FAST_C = 2**50, 2**58
"""The fast path's domain: b below the first, c below the second (integers.py)."""
INT64 = 2**63 - 1
EDGES = (2**50, 2**52, 2**53, 2**54, 2**56, 2**58, 2**62, INT64)
"""Where float64 stops being exact (2**53), the domain's own edges and int64's."""

Triple = tuple[int, int, int]


def amount(low: int, high: int) -> st.SearchStrategy[int]:
    """An integer in [low, high], often within a few of an edge (as hypothesis draws its
    bounds, but for the edges inside the range too)."""
    near = st.sampled_from(EDGES).flatmap(lambda edge: st.integers(edge - 3, edge + 3))
    return st.one_of(st.integers(low, high), near.map(lambda v: min(max(v, low), high)))


@st.composite
def triples(draw: st.DrawFn, *, b_below: int, c_below: int) -> Triple:
    """(a, b, c) with 0 <= a <= c, 0 < c < c_below, 0 <= b < b_below."""
    c = draw(amount(1, c_below - 1))
    a = draw(st.one_of(amount(0, c), st.integers(max(0, c - 3), c)))
    b = draw(amount(0, b_below - 1))
    return a, b, c


def columns(drawn: list[Triple]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b, c = zip(*drawn, strict=True)
    return tuple(np.array(column, dtype=np.int64) for column in (a, b, c))  # type: ignore[return-value]


def exact(drawn: list[Triple]) -> list[tuple[int, int]]:
    return [divmod(a * b, c) for a, b, c in drawn]


def results(quotient: np.ndarray, remainder: np.ndarray) -> list[tuple[int, int]]:
    assert quotient.dtype == remainder.dtype == np.int64
    return [(int(q), int(r)) for q, r in zip(quotient, remainder, strict=True)]


def test_the_fast_domain_is_what_estimable_accepts():
    assert estimable(FAST_B - 1, FAST_C - 1)
    assert not estimable(FAST_B, FAST_C - 1)
    assert not estimable(FAST_B - 1, FAST_C)


@given(st.lists(triples(b_below=FAST_B, c_below=FAST_C), min_size=1, max_size=8))
def test_the_float_fast_path_is_exact_over_its_whole_domain(drawn):
    a, b, c = columns(drawn)
    # A bound past 2**62 rules out the int64 product; `fast` skips the per-element checks.
    assert results(*floor_divide_product(a, b, c, bound=2.0**62, fast=True)) == exact(drawn)


@given(
    st.lists(
        st.one_of(
            triples(b_below=FAST_B, c_below=FAST_C),
            triples(b_below=INT64 + 1, c_below=INT64 + 1),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_every_path_is_exact_over_the_whole_contract(drawn):
    """Elements in and out of the fast domain side by side: each takes its own path."""
    a, b, c = columns(drawn)
    assert results(*floor_divide_product(a, b, c)) == exact(drawn)
