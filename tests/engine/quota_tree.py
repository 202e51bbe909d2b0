"""A small quota tree as `kubectl get -o json` shows it (`tests/realistic/`), for the unit
tests of the checks, the reviews and gating: the webhook's test cluster (tests/webhook), without
the HTTPS round trip.

    koordinator-root-quota
    ├── dept-a      parent, min cpu 100 memory 100Gi      ml (min cpu 80 memory 60Gi), web (10)
    ├── dept-b      parent, min cpu 50, namespace dept-b-ns    nlp (20), shared (20, shared-1)
    ├── solo        min cpu 10
    └── empty       parent, no children
    koordinator-system-quota, koordinator-default-quota (Koordinator's, without a practical max)

`pool()` adds a second tree, as Koordinator's profile controller makes one for a node pool:

    koordinator-root-quota
    └── a100        parent, is-root, tree a100, min cpu 100 memory 100Gi   vision (40), speech (20)
"""

from __future__ import annotations

import copy
import json
from typing import Any

from eq_engine import EngineConfig, Pod, Quota, parse_pod, parse_quota
from eq_engine.tree.catalog import Catalog, build_catalog

from tests import realistic
from tests.realistic import P

RES = {"cpu": "200", "memory": "200Gi"}
ROOT, SYSTEM, DEFAULT = (
    "koordinator-root-quota",
    "koordinator-system-quota",
    "koordinator-default-quota",
)
BUILTIN_NS = "koordinator-system"
PARENT_LABEL = f"metadata.labels[{P}parent]"
IS_PARENT_LABEL = f"metadata.labels[{P}is-parent]"
NAMESPACES = f"metadata.annotations[{P}namespaces]"
TREE_LABEL = f"metadata.labels[{P}tree-id]"


def group(
    name: str,
    namespace: str = "quotas",
    *,
    parent: str | None = None,
    is_parent: bool = False,
    min: dict[str, Any] | None = None,
    max: dict[str, Any] | None = RES,
    weight: dict[str, Any] | None = None,
    namespaces: list[str] | None = None,
    strict: list[str] | None = None,
    used: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """An ElasticQuota as `kubectl apply` leaves it (uid, resourceVersion, managedFields, the
    last-applied annotation); `used`: the status the operator wrote."""
    annotations = dict(annotations or {})
    if weight is not None:
        annotations[P + "shared-weight"] = json.dumps(weight)
    if namespaces is not None:
        annotations[P + "namespaces"] = json.dumps(namespaces)
    if strict is not None:
        annotations[P + "max-strict-check-resource-keys"] = json.dumps(strict)
    return realistic.elastic_quota(
        name,
        namespace,
        parent=parent,
        is_parent=is_parent,
        min=min,
        max=max,
        labels=labels,
        annotations=annotations,
        status=None if used is None else {"used": used},
    )


def tree() -> list[dict[str, Any]]:
    """The ElasticQuota objects of the tree above, fresh copies."""
    return [
        *realistic.koordinator_builtins(),
        group("dept-a", is_parent=True, min={"cpu": "100", "memory": "100Gi"}),
        group("ml", "team-ml", parent="dept-a", min={"cpu": "80", "memory": "60Gi"}),
        group("web", "web", parent="dept-a", min={"cpu": "10"}),
        group("dept-b", is_parent=True, min={"cpu": "50"}, namespaces=["dept-b-ns"]),
        group("nlp", "nlp", parent="dept-b", min={"cpu": "20"}),
        group("shared", parent="dept-b", min={"cpu": "20"}, namespaces=["shared-1"]),
        group("solo", min={"cpu": "10"}),
        group("empty", is_parent=True),
    ]


def in_tree(tree_id: str, **labels: str) -> dict[str, str]:
    """The labels of a group of tree `tree_id`, and `labels`."""
    return {P + "tree-id": tree_id, **labels}


def pool() -> list[dict[str, Any]]:
    """The second tree above (tree id a100), fresh copies. Its root's total (cpu 200) is a
    pool outside the nodes of the first tree's total (`ignore-default-tree`)."""
    root = group(
        "a100",
        is_parent=True,
        min={"cpu": "100", "memory": "100Gi"},
        labels=in_tree("a100", **{P + "is-root": "true", P + "ignore-default-tree": "true"}),
    )
    root["metadata"]["annotations"][P + "total-resource"] = '{"cpu":"200","memory":"200Gi"}'
    return [
        root,
        group("vision", "vision", parent="a100", min={"cpu": "40"}, labels=in_tree("a100")),
        group("speech", "speech", parent="a100", min={"cpu": "20"}, labels=in_tree("a100")),
    ]


def existing(name: str) -> dict[str, Any]:
    """A copy of an object of the tree or the pool, as the API server sends it as
    `oldObject`."""
    return copy.deepcopy(next(o for o in [*tree(), *pool()] if o["metadata"]["name"] == name))


def edited(
    name_or_object: str | dict[str, Any],
    *,
    labels: dict[str, str | None] | None = None,
    annotations: dict[str, str | None] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """An object of the tree (by name) or a copy of `name_or_object` with labels and annotations
    set (None removes) and spec fields replaced, as `kubectl edit` sends it: the same uid, the
    next resourceVersion."""
    if isinstance(name_or_object, str):
        obj = existing(name_or_object)
    else:
        obj = copy.deepcopy(name_or_object)
    metadata = obj["metadata"]
    for field, changes in (("labels", labels), ("annotations", annotations)):
        for key, value in (changes or {}).items():
            if value is None:
                metadata.setdefault(field, {}).pop(key, None)
            else:
                metadata.setdefault(field, {})[key] = value
    metadata["resourceVersion"] = str(int(metadata["resourceVersion"]) + 1)
    obj["spec"].update(spec)
    return obj


def quota(raw: dict[str, Any]) -> Quota:
    return parse_quota(raw)


def catalog(*objects: dict[str, Any]) -> Catalog:
    """The catalog of `objects`, or of the tree above when none are given."""
    return build_catalog([parse_quota(o) for o in objects or tree()], EngineConfig())


def pods(*raws: dict[str, Any]) -> list[Pod]:
    return [parse_pod(raw) for raw in raws]


def bound_pods() -> list[dict[str, Any]]:
    """Five pods labelled into solo, one pod of namespace nlp, one labelled into ml."""
    solo = {P + "name": "solo", "app": "batch"}
    return [
        *(
            realistic.deployment_pod("apps", "batch", i, labels=solo, requests={"cpu": "1"})
            for i in range(5)
        ),
        realistic.statefulset_pod("nlp", "tagger", requests={"cpu": "1"}),
        realistic.deployment_pod(
            "team-ml", "trainer", labels={P + "name": "ml"}, requests={"cpu": "1"}
        ),
    ]
