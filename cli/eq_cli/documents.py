"""A simulation report as a document for programs: `-o json` (the documented shape, one line per
group, pod and problem) and `-o yaml`, as kubectl's `-o yaml` is its `-o json`."""

from __future__ import annotations

import json
from typing import Any

from eq_engine import ResourceList, format_resource_list

from .simulate import GangResult, Report
from .trees import pooled


def as_json(report: Report) -> str:
    """The documented shape; quantities are canonical Kubernetes quantity strings."""

    def quantities(values: ResourceList | None) -> dict[str, str] | None:
        return None if values is None else format_resource_list(values)

    trees = pooled(report.trees)  # each group says its tree once there are node pools
    document = {
        "capacity": format_resource_list(report.capacity),
        "groups": {
            g.name: {
                "namespace": g.namespace,
                "parent": g.parent,
                "isParent": g.is_parent,
                "min": quantities(g.min),
                "max": quantities(g.max),
                "sharedWeight": quantities(g.shared_weight),
                "request": quantities(g.request),
                "runtime": quantities(g.runtime),
                "used": quantities(g.used),
                "lendable": quantities(g.lendable),
                "lent": quantities(g.lent),
                "borrowed": quantities(g.borrowed),
                "borrowingLimit": quantities(g.borrowing_limit),
                **({"tree": g.tree} if trees else {}),
            }
            for g in report.groups
        },
        "pods": {
            p.key: {
                "group": p.group,
                "capacity": p.capacity,
                **({"gang": p.gang} if p.gang else {}),
            }
            for p in report.pods
        },
        "waiting": {
            name: {"pods": w.pods, "gangs": w.gangs, "gangPods": w.gang_pods}
            for name, w in report.waiting.items()
        },
        "gangs": {g.view.key: _gang(g) for g in report.gangs},
        "pools": report.placed,
        "reclaim": report.reclaim,
        "preemption": {
            group: {
                "for": list(planned.preemptor),
                "priority": planned.priority,
                "evicted": [key for c in planned.victims() for key in c.keys],
                **({"refused": planned.refusal} if planned.refusal else {}),
            }
            for group, planned in report.preemption.items()
        },
        "problems": [str(problem) for problem in report.problems],
    }
    return _entry_per_line(document)


def _gang(gang: GangResult) -> dict[str, Any]:
    view = gang.view
    return {
        "name": view.name,
        "source": view.source,
        "groups": list(view.groups),
        "minimum": view.minimum,
        "pods": len(view.pods),
        "gated": len(view.gated),
        "admitted": gang.admitted,
        "bound": view.bound,
        "request": format_resource_list(view.request),
        "waiting": gang.waiting,
        "problem": view.problem,
    }


def _entry_per_line(document: dict[str, Any]) -> str:
    """JSON with one line per group, pod or problem: readable, diffable and quick to write
    (the C encoder does each line; an indented dump of 100,000 pods takes seconds)."""
    lines = ["{"]
    for i, (key, value) in enumerate(document.items()):
        comma = "," if i < len(document) - 1 else ""
        if isinstance(value, dict) and value:
            lines.append(f"  {json.dumps(key)}: {{")
            items = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
            lines.append(",\n".join(items))
            lines.append(f"  }}{comma}")
        elif isinstance(value, list) and value:
            lines.append(f"  {json.dumps(key)}: [")
            lines.append(",\n".join(f"    {json.dumps(v)}" for v in value))
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def as_yaml(report: Report) -> str:
    """The JSON document as YAML, as kubectl's `-o yaml` is its `-o json`."""
    return document(json.loads(as_json(report)), "yaml")


def document(value: Any, output: str) -> str:
    """A command's answer as `-o json` or `-o yaml` prints it."""
    if output == "yaml":
        import yaml  # only where asked for: every command's start would pay for it

        return str(yaml.safe_dump(value, sort_keys=False))
    return json.dumps(value) + "\n"
