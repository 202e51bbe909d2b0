"""Properties of the runtime split, labels, reclaim and incremental updates on random clusters."""

from __future__ import annotations

import json
from typing import Any

from eq_engine import EngineConfig, QuotaEngine, parse_pod
from eq_engine.decisions.reclaim import reclaim_plan
from hypothesis import given, note
from hypothesis import strategies as st

from tests.manifests import P, load, node, pod, quota

RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
CONFIG = EngineConfig()


@st.composite
def clusters(draw: st.DrawFn, *, positive_weights: bool = False, valid: bool = True) -> list[dict]:
    """A random tree (up to 3 levels), pods in its leaves and elsewhere, and nodes."""
    keys = draw(st.lists(st.sampled_from(RESOURCES), min_size=1, max_size=3, unique=True))
    amount = st.integers(min_value=0, max_value=40)
    objects: list[dict[str, Any]] = []
    names: list[tuple[str, int]] = []  # (name, depth)
    parents: list[str] = []
    trees: dict[str, str] = {}
    rooted: set[str] = set()
    for i in range(draw(st.integers(min_value=1, max_value=10))):
        depth_ok = [p for p, d in names if d < 3 and p in parents]
        parent = draw(st.sampled_from([None, *depth_ok])) if depth_ok else None
        is_parent = draw(st.booleans())
        name = f"g{i}"
        maximum = {k: draw(amount) for k in keys}
        minimum = {
            k: draw(st.integers(0, maximum[k] if valid else 40))
            for k in keys
            if draw(st.booleans())
        }
        weight = None
        if positive_weights:
            weight = {k: draw(st.integers(1, 9)) for k in keys}
        elif draw(st.booleans()):
            weight = {k: draw(st.integers(0, 9)) for k in keys}
        # a top-level group may be in a node pool's tree, and be its root; children follow
        tree_id = trees[parent] if parent else draw(st.sampled_from(["", "", "p1", "p2"]))
        trees[name] = tree_id
        labels = {P + "tree-id": tree_id} if tree_id else {}
        total = None
        if tree_id and not parent and tree_id not in rooted and draw(st.booleans()):
            rooted.add(tree_id)
            labels[P + "is-root"] = "true"
            total = json.dumps({k: draw(st.integers(0, 60)) for k in keys})
        objects.append(
            quota(
                name,
                parent=parent,
                is_parent=is_parent,
                lend=draw(st.booleans()),
                min=minimum,
                max=maximum,
                weight=weight,
                namespace=f"ns-{name}",
                labels=labels,
            )
        )
        if total is not None:
            objects[-1]["metadata"]["annotations"][P + "total-resource"] = total
        depth = 1 + next((d for p, d in names if p == parent), 0)
        names.append((name, depth))
        if is_parent:
            parents.append(name)
    leaves = [n for n, _ in names if n not in parents]
    for j in range(draw(st.integers(min_value=0, max_value=25))):
        target = draw(st.sampled_from([*leaves, None, "kube-system"]))
        requests = {k.replace(".com/", "_com_"): draw(st.integers(0, 15)) for k in keys}
        objects.append(
            pod(
                f"p{j}",
                quota=target if target in leaves else None,
                namespace="kube-system" if target == "kube-system" else "apps",
                node=draw(st.sampled_from(["node-1", None])),
                priority=draw(st.integers(0, 3)),
                preemptible=draw(st.booleans()),
                start=f"2026-01-01T00:{draw(st.integers(0, 59)):02d}:00Z",
                **requests,
            )
        )
    for k in range(draw(st.integers(min_value=1, max_value=3))):
        objects.append(
            node(f"n{k}", **{r.replace(".com/", "_com_"): draw(st.integers(0, 60)) for r in keys})
        )
    return objects


def computed(objects: list[dict], **config: Any) -> QuotaEngine:
    engine = QuotaEngine(EngineConfig(**config))
    load(engine, *objects)
    engine.recompute()
    return engine


def snapshot(engine: QuotaEngine) -> tuple[dict, dict]:
    groups = {s.name: s for s in engine.statuses()}
    labels = {p.key: (group, label) for p, group, label in engine.pods()}
    return groups, labels


def limited(status) -> dict[str, int]:
    return {
        k: min(v, status.max[k]) if status.max and k in status.max else v
        for k, v in status.request.items()
    }


@given(clusters(positive_weights=True))
def test_a_split_creates_and_loses_no_unit(objects):
    engine = computed(objects)
    statuses = list(engine.statuses())
    for parent in statuses:
        children = [s for s in statuses[3:] if s.parent == parent.name]
        if not children or parent.runtime is None:
            continue
        for resource, total in parent.runtime.items():
            mins = sum(c.effective_min.get(resource, 0) for c in children)
            if mins > total:
                continue
            given_out = sum(c.runtime.get(resource, 0) for c in children)
            wanted = sum(limited(c).get(resource, 0) for c in children)
            note(f"{parent.name} {resource}: total {total}, wanted {wanted}")
            assert given_out == min(total, wanted)


@given(clusters())
def test_runtime_stays_within_max_for_lending_groups(objects):
    engine = computed(objects)
    lending = {
        o["metadata"]["name"]
        for o in objects
        if o["kind"] == "ElasticQuota"
        and o["metadata"]["labels"].get("quota.scheduling.koordinator.sh/allow-lent-resource")
        != "false"
    }
    for status in list(engine.statuses())[3:]:
        if status.name in lending:
            for resource, amount in status.runtime.items():
                assert amount <= status.max[resource]


@given(clusters())
def test_runtime_covers_the_smaller_of_request_and_min_without_scaling(objects):
    engine = computed(objects, min_scaling=False)
    for status in list(engine.statuses())[3:]:
        for resource, amount in status.runtime.items():
            floor = min(limited(status).get(resource, 0), status.min.get(resource, 0))
            assert amount >= floor


@given(clusters(), st.data())
def test_reclaim_never_takes_an_in_quota_pod_also_when_evictions_are_refused(objects, data):
    engine = computed(objects)
    labels = {p.key: label for p, _, label in engine.pods()}
    refused: set[str] = set()
    for _ in range(3):  # the edge re-plans after each round of refusals (PDBs, errors)
        plans = reclaim_plan(engine.recompute(), keep=refused)
        for victims in plans.values():
            for key in victims:
                assert labels[key] == "over-quota"
                assert key not in refused
        planned = sorted(key for victims in plans.values() for key in victims)
        if not planned:
            break
        refused |= set(data.draw(st.lists(st.sampled_from(planned), unique=True)))


@given(clusters(), st.data())
def test_incremental_updates_equal_a_full_recompute(objects, data):
    """Apply random pod and node events one by one; compare with a fresh engine each time."""
    engine = computed(objects)
    mirror_groups, mirror_labels = snapshot(engine)
    current = {
        (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects
    }
    pods = [key for key in current if key[0] == "Pod"]
    quota_names = [key[2] for key in current if key[0] == "ElasticQuota"]
    for step in range(data.draw(st.integers(1, 8))):
        action = data.draw(st.sampled_from(["add", "update", "remove", "node", "quota"]))
        if action == "add" or (action in ("update", "remove") and not pods):
            raw = pod(
                f"new{step}",
                quota=data.draw(st.sampled_from(quota_names)),
                node=data.draw(st.sampled_from([None, "n"])),
                cpu=data.draw(st.integers(0, 9)),
                memory=data.draw(st.integers(0, 9)),
            )
            key = ("Pod", "apps", raw["metadata"]["name"])
            pods.append(key)
            current[key] = raw
            engine.set_pod(parse_pod(raw))
        elif action == "update":
            key = data.draw(st.sampled_from(pods))
            raw = current[key]
            raw["spec"]["nodeName"] = data.draw(st.sampled_from(["", "n"]))
            raw["spec"]["priority"] = data.draw(st.integers(0, 3))
            raw["status"]["phase"] = data.draw(st.sampled_from(["Running", "Pending", "Succeeded"]))
            engine.set_pod(parse_pod(raw))
        elif action == "remove":
            key = data.draw(st.sampled_from(pods))
            pods.remove(key)
            del current[key]
            engine.remove_pod(f"{key[1]}/{key[2]}")
        elif action == "node":
            raw = node(
                "n-extra", cpu=data.draw(st.integers(0, 30)), memory=data.draw(st.integers(0, 30))
            )
            current[("Node", None, "n-extra")] = raw
            load(engine, raw)
        else:  # a group's numbers: its min, its max's amounts, or a pool root's total
            name = data.draw(st.sampled_from(quota_names))
            raw = next(o for k, o in current.items() if k[0] == "ElasticQuota" and k[2] == name)
            field = data.draw(st.sampled_from(["min", "max", "total"]))
            annotations = raw["metadata"]["annotations"]
            if field == "min":
                raw["spec"]["min"] = {"cpu": data.draw(st.integers(0, 20))}
            elif field == "max":
                raw["spec"]["max"] = {k: data.draw(st.integers(0, 40)) for k in raw["spec"]["max"]}
            elif P + "total-resource" in annotations:
                total = json.loads(annotations[P + "total-resource"])
                annotations[P + "total-resource"] = json.dumps(
                    {k: data.draw(st.integers(0, 60)) for k in total}
                )
            load(engine, raw)
        changes = engine.recompute().changes
        for status in changes.groups:
            mirror_groups[status.name] = status
        for name in changes.removed_groups:
            del mirror_groups[name]
        for key, label in changes.pod_labels.items():
            mirror_labels[key] = (mirror_labels.get(key, (None,))[0], label)
        fresh_groups, fresh_labels = snapshot(computed(list(current.values())))
        assert snapshot(engine)[0] == fresh_groups
        assert snapshot(engine)[1] == fresh_labels
        # what `recompute` reported, applied in order, gives the same state
        assert mirror_groups == fresh_groups
        assert {
            k: label
            for k, (_, label) in mirror_labels.items()
            if k in fresh_labels and label is not None
        } == {k: lb for k, (_, lb) in fresh_labels.items() if lb is not None}
