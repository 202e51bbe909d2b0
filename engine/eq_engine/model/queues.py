"""How a group's gate lets its waiting pods go: Koordinator's job queue keys (koord-queue, the
successor of seed 003's kube-queue), written on the ElasticQuota itself.

- label `koord-queue/queue-policy`: `Block`, nothing passes the head of the queue while it does
  not fit (the gate's own order, and its default here, so that a large pod is never starved by
  smaller ones behind it); `Priority`, a pod or gang that does not fit lets a later one that fits
  pass (koord-queue's default);
- annotation `koord-queue/wait-for-pods-running`: `"true"`, what the gate admitted must be
  Running before it lets the next go;
- annotation `koord-queue/enable-queueunit-preemption`: `"true"` or `"false"`, the group's
  preemption on or off, whatever `--preemption` says;
- annotation `koord-queue/max-depth`: how many places of the queue the gate looks at, a whole
  number from 1, or -1 for all (the default).

A value the gate cannot read keeps the default and is named in `problems` (the webhook warns of
it): objects written for Koordinator load unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

PREFIX: Final = "koord-queue/"
POLICY: Final = PREFIX + "queue-policy"
WAIT_FOR_PODS_RUNNING: Final = PREFIX + "wait-for-pods-running"
PREEMPTION: Final = PREFIX + "enable-queueunit-preemption"
MAX_DEPTH: Final = PREFIX + "max-depth"


@dataclass(frozen=True, slots=True)
class QueuePolicy:
    block: bool = True
    """Nothing passes the head of the queue while it does not fit (`Block`); False:
    `Priority`."""
    wait_for_running: bool = False
    preemption: bool | None = None
    """The group's preemption; None: the cluster's (`--preemption`)."""
    max_depth: int = -1
    """Places of the queue looked at; -1: all."""
    problems: tuple[str, ...] = ()
    """`field: why`, of each value that could not be read (its default is used)."""


DEFAULT: Final = QueuePolicy()


def queue_policy(labels: Mapping[str, str], annotations: Mapping[str, str]) -> QueuePolicy:
    """The queue keys of a group's labels and annotations."""
    if not any(key.startswith(PREFIX) for key in (*labels, *annotations)):
        return DEFAULT
    problems: list[str] = []
    policy = labels.get(POLICY, "Block")
    if policy not in ("Block", "Priority"):
        problems.append(
            f"metadata.labels[{POLICY}]: {policy!r} is not read here (Block or Priority): the "
            "gate keeps Block"
        )
    wait = _boolean(annotations, WAIT_FOR_PODS_RUNNING, problems)
    preemption = _boolean(annotations, PREEMPTION, problems)
    depth = annotations.get(MAX_DEPTH, "-1")
    max_depth = int(depth) if depth.strip().lstrip("-").isdigit() else 0
    if max_depth == 0 or max_depth < -1:
        problems.append(
            f"metadata.annotations[{MAX_DEPTH}]: {depth!r} is not a whole number from 1, or -1 "
            "for the whole queue: the gate looks at the whole queue"
        )
        max_depth = -1
    return QueuePolicy(policy != "Priority", bool(wait), preemption, max_depth, tuple(problems))


def _boolean(annotations: Mapping[str, str], key: str, problems: list[str]) -> bool | None:
    """ "true" or "false"; None when absent or unreadable (then named in `problems`)."""
    value = annotations.get(key)
    if value is None or value in ("true", "false"):
        return None if value is None else value == "true"
    problems.append(f'metadata.annotations[{key}]: {value!r} is not "true" or "false": ignored')
    return None
