"""What the webhook's endpoints answer: a parsed AdmissionReview in, its response out.

`validate` judges ElasticQuota and Pod writes; `default_quota` gives a new group its parent's
tree id, as Koordinator's pipeline does before its validator; `gate` puts new pods behind the
quota's scheduling gate; `warn_jobs` warns of a Job (or CronJob) whose pods reclaim takes will
count as its failures. ("Admission" alone, in this project, is quota admission: lifting that gate,
`eq_engine.decisions.admission` and the operator's `admitting.py`.)

Glue only: objects are parsed by the engine, judged by `eq_engine.decisions.verdicts`, and the pods
a rule needs are fetched through `Lookups.pods` (the API server, at that moment).

An ElasticQuota write is judged on the webhook's watched copy of the tree, which may lag a
moment behind the API server: `kubectl apply` of a whole tree sends a child right after the
parent it names. So a denial is never sent on the watched copy alone: the write is judged
again on the ElasticQuotas as the API server holds them now (`Lookups.quotas`), and that
judgment is the answer. Denials are rare; an allowed write costs no read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from eq_engine import ObjectError, Pod, Quota, parse_pod, parse_quota
from eq_engine.decisions import (
    BoundPodQuery,
    Verdict,
    bound_pod_query,
    gate_exemption,
    inherited_tree_id,
    needs_bound_pods,
    review_pod,
    review_quota,
)
from eq_engine.model import keys
from eq_engine.pools import pool_affinity
from eq_engine.reading import RawElasticQuota, RawPod, counted_evictions
from eq_engine.tree import Catalog, build_catalog, quota_problem
from eq_kit.kube import pointer

from .logs import logger
from .reviews import BadReview, CreateReview, DeleteReview, Review, UpdateReview, response
from .state import ClusterState


@dataclass(frozen=True, slots=True)
class PodListing:
    pods: list[Pod]
    complete: bool
    """False: the listing stopped once it had enough pods to name in a denial."""


PodLister = Callable[[BoundPodQuery], Awaitable[PodListing]]
QuotaLister = Callable[[], Awaitable[list[Quota]]]
T = TypeVar("T")
KINDS = ("ElasticQuota", "Pod")
JOB_KINDS = ("Job", "CronJob")


class LookupFailed(Exception):
    """The API server could not answer a lookup."""


@dataclass(frozen=True, slots=True)
class Lookups:
    """What the webhook asks the API server, at the moment of a review."""

    pods: PodLister
    """The pods bound to a group (the rules that need them)."""
    quotas: QuotaLister
    """Every readable ElasticQuota (to confirm a denial: see the module's docstring)."""


async def validate(
    review: Review, *, kind: str, state: ClusterState, lookups: Lookups
) -> dict[str, Any]:
    """The response to `review`, sent to the endpoint that validates `kind`."""
    if review.kind != kind:
        raise BadReview(f"request.kind.kind: this endpoint validates {kind}, not {review.kind}")
    if not state.ready:
        return response(
            review.uid,
            allowed=False,
            message=(
                "the webhook is starting and has not loaded the cluster's ElasticQuota objects "
                "yet; try again in a few seconds"
            ),
        )
    try:
        if kind == "ElasticQuota":
            verdict = await _review_quota(review, state, lookups)
        else:
            verdict = _review_pod(review, state)
    except ObjectError as error:
        return response(review.uid, allowed=False, message=str(error))
    return response(
        review.uid, allowed=verdict.allowed, message=verdict.message, warnings=verdict.warnings
    )


def _stored(parse: Callable[[Any], T], review: Review) -> T | None:
    """The object as stored (an UPDATE's or a DELETE's), or None: a CREATE has none, and the
    cluster's copy may be unreadable (then the new object is judged on its own)."""
    if isinstance(review, CreateReview):
        return None
    try:
        return parse(review.old_object)
    except ObjectError:
        return None


async def _review_quota(review: Review, state: ClusterState, lookups: Lookups) -> Verdict:
    old = _stored(parse_quota, review)
    new: Quota | None
    if isinstance(review, DeleteReview):
        if old is None:
            return Verdict()  # an unreadable object: nothing can depend on it
        new, subject = None, old
    else:
        new = subject = parse_quota(cast(RawElasticQuota, review.object))
    verdict = await _judge_quota(review, new, old, subject, state.catalog, state, lookups)
    if verdict.allowed:
        return verdict
    held = await _held(state, lookups, instead="denying")
    if held is None:
        return verdict
    return await _judge_quota(review, new, old, subject, held, state, lookups)


async def _held(state: ClusterState, lookups: Lookups, *, instead: str) -> Catalog | None:
    """The tree as the API server holds it now (the watched copy may lag: see the module), or
    None when it cannot answer; `instead`: what is then done on the watched copy, for the log."""
    try:
        return build_catalog(await lookups.quotas(), state.config)
    except LookupFailed as error:
        logger.warning("%s on the watched tree: cannot read it again: %s", instead, error)
        return None


async def _judge_quota(
    review: Review,
    new: Quota | None,
    old: Quota | None,
    subject: Quota,
    catalog: Catalog,
    state: ClusterState,
    lookups: Lookups,
) -> Verdict:
    """The verdict on `review` in the tree `catalog`, warnings named by the object."""
    listing = PodListing([], complete=True)
    if needs_bound_pods(review.operation, new, old):
        try:
            listing = await lookups.pods(bound_pod_query(subject, catalog))
        except LookupFailed as error:
            why = f"cannot tell which pods are bound to the group ({error}); try again"
            return Verdict((quota_problem(subject, "metadata.name", why),))
    verdict = review_quota(
        review.operation,
        new=new,
        old=old,
        catalog=catalog,
        capacity=state.capacity(),
        pods=listing.pods,
        all_pods=listing.complete,
    )
    return Verdict(
        verdict.denials, tuple(f"ElasticQuota {subject.ref}: {w}" for w in verdict.warnings)
    )


async def default_quota(
    review: Review, *, state: ClusterState, lookups: Lookups
) -> tuple[dict[str, Any], str]:
    """The response to an ElasticQuota CREATE sent to the mutating endpoint, and its result for
    the metrics: a group created without a tree id under a parent that has one is given the
    parent's (`defaulted`), so that objects written for Koordinator load unchanged. A parent
    the watched tree does not hold yet (`kubectl apply` of a whole tree) is looked for among the
    ElasticQuotas the API server holds. Never a denial: the validating endpoint judges the
    group; one that cannot be read, or a webhook that has not loaded the tree yet, goes
    through unchanged."""
    if review.kind != "ElasticQuota":
        raise BadReview(
            f"request.kind.kind: this endpoint defaults ElasticQuota, not {review.kind}"
        )
    if not isinstance(review, CreateReview) or not state.ready:
        return response(review.uid, allowed=True), "allowed"
    try:
        new = parse_quota(cast(RawElasticQuota, review.object))
    except ObjectError:
        return response(review.uid, allowed=True), "unreadable"
    catalog = state.catalog
    if not new.tree_id and catalog.parent_of(new) not in catalog.quotas:
        held = await _held(state, lookups, instead="defaulting")
        catalog = catalog if held is None else held
    tree_id = inherited_tree_id(new, catalog)
    if tree_id is None:
        return response(review.uid, allowed=True), "allowed"
    # A group with a parent has labels: the parent is named by one.
    patch = {"op": "add", "path": "/metadata/labels/" + pointer(keys.TREE_ID), "value": tree_id}
    return response(review.uid, allowed=True, patch=[patch]), "defaulted"


def _review_pod(review: Review, state: ClusterState) -> Verdict:
    if isinstance(review, DeleteReview):
        return Verdict()
    new = parse_pod(cast(RawPod, review.object), namespace=review.namespace)
    old = _stored(parse_pod, review)
    return review_pod(review.operation, new=new, old=old, catalog=state.catalog)


def gate(
    review: Review, *, state: ClusterState, enabled: bool, pools: bool
) -> tuple[dict[str, Any], str]:
    """The response to a pod CREATE sent to the mutating endpoint, and its result for the
    metrics: the admission gate added (`gated`) unless `gating.gate_exemption` exempts the pod
    (`allowed`); with `pools`, the node affinity of its quota tree's pool added too
    (`pool_affinity`), with a warning when the pod's own constraints exclude that pool.

    The pod is read as kube-apiserver sends it to mutating admission: often with
    `generateName` and no name yet, and the namespace in the request. Never a denial: the
    validating endpoint judges the pod. A pod that cannot be read, or a webhook that has not
    loaded the tree yet, lets the pod through unchanged, as the failure policy would; an
    unreadable pod is logged with the reason and counted (`unreadable`)."""
    if review.kind != "Pod":
        raise BadReview(f"request.kind.kind: this endpoint gates Pod, not {review.kind}")
    if not (enabled or pools) or not isinstance(review, CreateReview) or not state.ready:
        return response(review.uid, allowed=True), "allowed"
    try:
        pod = parse_pod(cast(RawPod, review.object), namespace=review.namespace)
        gated = enabled and gate_exemption(pod, state.catalog) is None
        patch, warnings = (
            _pool_affinity(review.object, pod, state, gated=gated) if pools else ([], [])
        )
    except ObjectError as error:
        logger.warning("letting a pod through unchanged: cannot read it: %s", error)
        return response(review.uid, allowed=True), "unreadable"
    result = "allowed"
    if gated:
        result = "gated"
        entry = {"name": keys.ADMISSION_GATE}
        patch.append(
            {"op": "add", "path": "/spec/schedulingGates/-", "value": entry}
            if pod.scheduling_gates
            else {"op": "add", "path": "/spec/schedulingGates", "value": [entry]}
        )
    message = response(review.uid, allowed=True, patch=patch, warnings=warnings)
    return message, result


def _pool_affinity(
    raw: Mapping[str, Any], pod: Pod, state: ClusterState, *, gated: bool
) -> tuple[list[dict[str, Any]], list[str]]:
    """The patch and warnings that keep a pod of a node pool's quota tree on that pool's
    nodes; none for a pod of the default tree, or of a tree no profile makes, nor for a pod
    placed already (`spec.nodeName`) or made for one node (a DaemonSet's, a mirror): the
    kubelet refuses a pod whose node affinity excludes its own node. Nor, when the pod is
    `gated`, for a pod whose group lists `pools` before the gate chose one of them
    (`decisions.placing`); ungated (gating off, or the pod opts out), such a pod keeps to the
    first, where it counts."""
    if pod.node_name or pod.node_pinned:
        return [], []
    catalog = state.catalog
    if gated and catalog.open_pools(pod)[1]:
        return [], []  # it may use several pools: the operator narrows it to one, once chosen
    quota = catalog.quotas.get(catalog.membership(pod).group)
    if quota is None or not quota.tree_id:
        return [], []
    profile = state.pool(quota.tree_id)
    if profile is None:
        return [], []
    pool = f"ElasticQuotaProfile {profile.ref}"
    affinity = pool_affinity(raw, profile.node_selector, pool=pool)
    warnings = [
        f"Pod of group {quota.name}, quota tree {quota.tree_id!r}: {w}" for w in affinity.warnings
    ]
    return affinity.patch, warnings


def warn_jobs(review: Review) -> dict[str, Any]:
    """The response to a Job or CronJob write: always allowed, with a warning when the Job (a
    CronJob's `jobTemplate`) asks for the pods reclaim takes to count as its failures
    (`counted_evictions`): as Kubernetes counts an eviction, which the operator spares other
    Jobs. An UPDATE warns only when it makes the Job ask so."""
    if review.kind not in JOB_KINDS:
        raise BadReview(
            f"request.kind.kind: this endpoint warns of Job and CronJob, not {review.kind}"
        )
    if isinstance(review, DeleteReview):
        return response(review.uid, allowed=True)
    reason = _counted(review.kind, review.object)
    if reason is None or (
        isinstance(review, UpdateReview) and _counted(review.kind, review.old_object) == reason
    ):
        return response(review.uid, allowed=True)
    metadata = review.object.get("metadata") or {}
    name = metadata.get("name") or metadata.get("generateName") or ""
    warning = (
        f"{review.kind} {review.namespace}/{name}: {reason}: the pods that elastic-quota takes "
        "back for other groups (reclaim) will count as failures of "
        + ("each Job it makes" if review.kind == "CronJob" else "this Job")
        + ", toward its backoffLimit and its failure backoff"
    )
    return response(review.uid, allowed=True, warnings=[warning])


def _counted(kind: str, obj: Mapping[str, Any]) -> str | None:
    """`counted_evictions` of a Job, or of a CronJob's jobTemplate (its field named so)."""
    if kind == "Job":
        return counted_evictions(obj)
    template = (obj.get("spec") or {}).get("jobTemplate")
    reason = counted_evictions(template if isinstance(template, Mapping) else {})
    return None if reason is None else f"spec.jobTemplate.{reason}"
