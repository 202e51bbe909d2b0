"""`simulate --explain` and `simulate --what-if`: the engine's reasons, offline (and, through
`kubectl eq`, against the live cluster: the same functions on objects read from the API)."""

from __future__ import annotations

import dataclasses
import time

from eq_engine import EngineConfig, ResourceList
from eq_engine.explaining import Explanation, explain_group, explain_pod, what_if

from .documents import document
from .loading import Objects
from .pools import WhatIfObjects, what_if_roots
from .simulate import Report


def explain(report: Report, what: list[str]) -> Explanation:
    """`pod NAMESPACE/NAME` or `group NAME`; KeyError names what is not there."""
    kind, name = what
    snapshot = report.snapshot
    if kind == "pod":
        return explain_pod(
            snapshot,
            name,
            requeued=report.requeued,
            now=time.time(),
            selectors=report.selectors,
        )
    if name not in {status.name for status in snapshot.statuses()}:
        raise KeyError(f"no group {name}")
    return explain_group(snapshot, name)


def render_explanation(explanation: Explanation, output: str) -> str:
    if output in ("json", "yaml"):
        return document({"subject": explanation.subject, "lines": explanation.lines}, output)
    return f"{explanation}\n"


def render_what_if(
    config: EngineConfig,
    capacity: ResourceList | None,
    cluster: Objects,
    changes: Objects,
    output: str,
    *,
    make_roots: bool,
) -> str:
    """`make_roots`: each ElasticQuotaProfile's root made before and after the changes, as in
    `simulate`; else the roots as the cluster holds them (`kubectl eq`)."""
    if make_roots:
        compared = what_if_roots(cluster, changes)
    else:
        compared = WhatIfObjects(cluster.everything(), changes.everything())
    difference = what_if(config, capacity, compared.cluster, compared.changes)
    if compared.written:  # the operator's writes: only a denial (the root stays) is news
        verdicts = [
            v
            for v in difference.verdicts
            if v.split(" ")[1] not in compared.written or v.split(" ")[2] == "denied:"
        ]
        difference = dataclasses.replace(difference, verdicts=tuple(verdicts))
    if output in ("json", "yaml"):
        return document({"lines": difference.lines()}, output)
    return "".join(f"{line}\n" for line in difference.lines())
