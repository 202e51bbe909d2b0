"""What the case tables of the checks' and the reviews' tests share: the cluster they are
reckoned against, the tree-id rules' wording, problems as strings, and the ElasticQuota
operations (`Admission`, built with `create`, `update`, `delete`) and what the review says of
one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eq_engine.decisions.verdicts import Operation, review_quota

from tests.engine.quota_tree import catalog, edited, existing, pods, quota, tree

CREATE, UPDATE, DELETE = Operation.CREATE, Operation.UPDATE, Operation.DELETE
CAPACITY = {"cpu": 200_000, "memory": 400 * 2**30}  # 200 cores in millicores, 400Gi
IN_ITS_PARENTS_TREE = "a group is in its parent's tree"
STAYS = "a group stays in the tree it was made in"


def problems(found: Any) -> list[str]:
    return [str(problem) for problem in found]


@dataclass(frozen=True)
class Admission:
    """One ElasticQuota operation against the tree (or `objects`) and what the review says:
    `denied`, the verdict's message ("" when allowed), and the warnings."""

    case: str
    operation: Operation
    new: dict[str, Any] | None = None
    old: dict[str, Any] | None = None
    denied: str = ""
    warnings: tuple[str, ...] = ()
    pods: list[dict[str, Any]] = field(default_factory=list)
    all_pods: bool = True
    objects: list[dict[str, Any]] = field(default_factory=tree)

    @property
    def expected(self) -> tuple[bool, str, tuple[str, ...]]:
        """What the review should say, as `reviewed` puts it."""
        return not self.denied, self.denied, self.warnings


def create(case: str, new: dict[str, Any], **outcome: Any) -> Admission:
    return Admission(case, CREATE, new=new, **outcome)


def update(case: str, name: str, changes: dict[str, Any], **outcome: Any) -> Admission:
    """An UPDATE of the tree's object `name` with `edited(name, **changes)`."""
    return Admission(case, UPDATE, new=edited(name, **changes), old=existing(name), **outcome)


def delete(case: str, old: dict[str, Any], **outcome: Any) -> Admission:
    return Admission(case, DELETE, old=old, **outcome)


def reviewed(admission: Admission) -> tuple[bool, str, tuple[str, ...]]:
    """What the review of `admission` says: allowed, the message, the warnings."""
    verdict = review_quota(
        admission.operation,
        new=None if admission.new is None else quota(admission.new),
        old=None if admission.old is None else quota(admission.old),
        catalog=catalog(*admission.objects),
        capacity=CAPACITY,
        pods=pods(*admission.pods),
        all_pods=admission.all_pods,
    )
    return verdict.allowed, verdict.message, verdict.warnings
