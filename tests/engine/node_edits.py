"""A realistic Node with its read fields edited, well-formed or not, as a hypothesis strategy:
what a watch of the nodes may bring, for every reading of a node to agree on."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.realistic import node

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=5,
)
"""Any JSON value, small."""

FIELDS = {
    ("metadata", "name"): st.text(max_size=8) | JSON,
    ("metadata", "labels"): st.dictionaries(st.text(max_size=5), st.text(max_size=5)) | JSON,
    ("metadata", "creationTimestamp"): st.sampled_from(
        ["2026-01-02T08:15:00Z", "2026-01-02 08:15", "2026-13-02T08:15:00Z"]
    )
    | JSON,
    ("spec", "unschedulable"): st.booleans() | JSON,
    ("status", "allocatable"): st.dictionaries(st.sampled_from(["cpu", "memory"]), JSON)
    | st.dictionaries(st.sampled_from(["cpu", "pods"]), st.sampled_from(["4", "500m", "1Gi"])),
    ("status", "conditions"): st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(["Ready", "DiskPressure"]) | JSON},
            optional={"status": st.sampled_from(["True", "False", "Unknown"]) | JSON},
        )
    )
    | JSON,
}


def base() -> dict[str, Any]:
    return node("n1", cpu="16", extra={"nvidia.com/gpu": "4"})


def _edited(edits: dict[tuple[str, str], Any]) -> dict[str, Any]:
    raw = base()
    for (part, field), value in edits.items():
        raw.setdefault(part, {})[field] = value
    return raw


NODES = (
    st.dictionaries(st.sampled_from(sorted(FIELDS)), st.none())
    .flatmap(lambda chosen: st.fixed_dictionaries({path: FIELDS[path] for path in chosen}))
    .map(_edited)
)
"""The realistic node with some of its read fields set to other values."""
