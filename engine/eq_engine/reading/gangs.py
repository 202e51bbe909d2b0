"""The operator's record of the gangs it requeued, on each group's ElasticQuota (the annotation
`requeued-gangs`, the operator's own): read by the operator after a restart or a change of
leader, and by `kubectl eq explain`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..model import Requeue, keys
from .lookups import Unsure, moment


def requeued_gangs(annotations: Mapping[str, str]) -> tuple[Requeue, ...]:
    """The requeues an ElasticQuota's annotations record, by gang; what cannot be read (a hand
    edit) counts as no requeue: a gang is then judged as any other."""
    text = annotations.get(keys.REQUEUED_GANGS)
    try:
        value = json.loads(text) if text else {}
    except (ValueError, RecursionError):
        return ()
    if not isinstance(value, dict):
        return ()
    found = []
    for gang, entry in value.items():
        if not isinstance(entry, dict) or type(entry.get("times")) is not int:
            continue
        until = entry.get("until")
        try:
            when = moment(until) if type(until) is str else None
        except Unsure:
            continue
        if when is not None:
            found.append(Requeue(gang, entry["times"], when))
    return tuple(sorted(found, key=lambda requeue: requeue.gang))


def requeued_annotation(requeues: Mapping[str, Requeue]) -> str | None:
    """The annotation's value for these requeues; None: none left (the annotation goes)."""
    if not requeues:
        return None
    return json.dumps(
        {gang: {"times": r.times, "until": r.until_text} for gang, r in sorted(requeues.items())},
        separators=(",", ":"),
    )
