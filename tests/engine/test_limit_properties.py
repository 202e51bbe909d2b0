"""The engine's split with lending and borrowing limits equals a plain reference of the rules
(`limits_reference.py`) on random trees, and keeps what the limits promise."""

from __future__ import annotations

from hypothesis import given, note
from hypothesis import strategies as st

from tests.manifests import run

from .limit_trees import every, manifests, trees
from .limits_reference import Group, runtimes


@given(trees(), st.booleans())
def test_the_engine_splits_as_the_plain_reference(tree: tuple[list[Group], int], scaling: bool):
    top, total = tree
    objects = manifests(top, total)
    note(repr(objects))
    engine = run(*objects, capacity={"cpu": f"{total}m"}, min_scaling=scaling)
    got = {g.name: (engine.status(g.name).runtime or {}).get("cpu", 0) for g in every(top)}
    assert got == runtimes(top, total, min_scaling=scaling)
    for g in every(top):
        assert engine.status(g.name).request.get("cpu", 0) == g.request


@given(trees())
def test_a_group_keeps_what_it_may_not_lend_and_borrows_no_more_than_its_limit(tree):
    top, total = tree
    engine = run(*manifests(top, total), capacity={"cpu": f"{total}m"}, min_scaling=False)
    mins_fit = sum(t.min for t in top) <= total  # the top-level groups' mins are all given
    for g in every(top):
        status = engine.status(g.name)
        runtime = (status.runtime or {}).get("cpu", 0)
        if g in top and mins_fit:
            assert runtime >= g.kept  # given at once, whether it asks or not
        assert runtime <= g.cap
        assert status.lent.get("cpu", 0) <= status.lendable.get("cpu", 0)
