"""Whether a Job asks that the pods the quota takes from it count as its failures.

Kubernetes counts every pod of a Job that is deleted before it finished as a failure: toward
`backoffLimit`, and in the failure backoff that holds the replacement back (10 s, doubling per
failure; the Job controller's `isPodFailed`, 1.36). A `podFailurePolicy` rule `Ignore` on the
`DisruptionTarget` condition, which the Eviction API sets, spares the `backoffLimit` but not the
backoff, and is refused with `restartPolicy: OnFailure`. What the Job controller never counts is
a pod without its tracking finalizer (`TRACKING_FINALIZER`): it takes that finalizer off first
whenever it deletes a pod itself (a suspended Job, a smaller parallelism). The operator does the
same before it evicts a Job's pod (docs/how-it-works.md, "Reclaim and the Job controller"),
unless the Job asks otherwise: that is what `counted_evictions` reads, for the operator before
an eviction and for the webhook's warning when such a Job (or a CronJob making them) is
created.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import keys

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
"""The Job controller's finalizer on each pod of a Job it has not counted yet."""
DISRUPTION = "DisruptionTarget"
"""The pod condition the Eviction API (and a scheduler's preemption) sets."""


def counted_evictions(job: Mapping[str, Any]) -> str | None:
    """Why a Job (or a CronJob's `jobTemplate`) has the pods reclaim evicts counted as its
    failures, or None: they are taken without counting. The reasons, in this order:
    the annotation `spare-job: "false"`; the first `spec.podFailurePolicy` rule on the
    `DisruptionTarget` condition, unless its action is `Ignore`.

    >>> counted_evictions({"spec": {"podFailurePolicy": {"rules": [
    ...     {"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget"}]}]}}})
    'spec.podFailurePolicy.rules[0]: action FailJob on the DisruptionTarget condition'
    """
    annotations = _mapping(_mapping(job.get("metadata")).get("annotations"))
    if annotations.get(keys.SPARE_JOB) == "false":
        return f'metadata.annotations[{keys.SPARE_JOB}]: "false"'
    policy = _mapping(_mapping(job.get("spec")).get("podFailurePolicy"))
    rules = policy.get("rules")
    for index, rule in enumerate(rules if isinstance(rules, list) else ()):
        rule = _mapping(rule)
        conditions = rule.get("onPodConditions")
        if not isinstance(conditions, list) or not any(map(_is_disruption, conditions)):
            continue
        action = rule.get("action")
        if action == "Ignore":
            return None
        return (
            f"spec.podFailurePolicy.rules[{index}]: action {action} on the {DISRUPTION} condition"
        )
    return None


def _is_disruption(condition: Any) -> bool:
    condition = _mapping(condition)
    return bool(condition.get("type") == DISRUPTION and condition.get("status", "True") == "True")


def _mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is a JSON object, else an empty one: the API server validated the Job, and
    what it let through is read as far as it goes."""
    return value if isinstance(value, Mapping) else {}
