"""The fast path of pod reading gives the Pod the full validation gives, or steps aside."""

from __future__ import annotations

from typing import Any

import hypothesis
import pytest
from eq_engine import ObjectError, parse_pod
from eq_engine.model import keys
from eq_engine.reading.parsing import pod_fields
from eq_engine.reading.pods import _build, fast_pod_fields
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import realistic
from tests.engine.readings import fast_reading, full_reading
from tests.manifests import pod


def full(raw: Any, namespace: str = "") -> Any:
    """The Pod through the pydantic models only, or the error they raise."""
    return full_reading(lambda raw: _build(pod_fields(raw), namespace), raw)


def fast(raw: Any, namespace: str = "") -> Any:
    """The Pod through the fast path when it is sure, or the error building it raises; None
    when it steps aside."""
    fields = fast_reading(fast_pod_fields, raw)
    return (
        None if fields is None else full_reading(lambda fields: _build(fields, namespace), fields)
    )


def strategies(odd: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Pods as the API server serves them, and, where `odd` draws something, with values of
    the wrong type or shape, for which the fast path must step aside."""
    text = st.one_of(st.sampled_from(["", "a", "web-0", "false", "true", "Always"]), odd)
    quantity = st.one_of(
        st.sampled_from(["1", "500m", "2Gi", "1.5", "0", "1e3", "100Mi", "1Ki", "2k"]),
        st.integers(0, 10**6),
        odd.flatmap(lambda _: st.sampled_from(["lots", "-1", "", None, 1.5, [1]])),
    )
    resources = st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "pods", "hugepages-2Mi"])
    timestamp = st.one_of(
        st.sampled_from(
            [
                "2025-06-02T08:15:00Z",
                "2025-06-02T08:15:00.5Z",
                "2025-06-02T08:15:00.123456Z",
                "2025-06-02T08:15:00+02:00",
                "2025-06-02T08:15:00-07:30",
            ]
        ),
        odd.flatmap(
            lambda _: st.sampled_from(
                [
                    "2025-06-02T08:15:00",
                    "2025-06-02 08:15:00Z",
                    "2025-06-02",
                    "2025-13-02T08:15:00Z",
                    "2025-06-02T24:00:00Z",
                    "2025-06-02T08:15:60Z",
                    "2025-06-02T08:15:00.1234567Z",
                    "yesterday",
                    1700000000,
                ]
            )
        ),
    )
    amounts = st.one_of(st.dictionaries(resources, quantity, max_size=3), odd)
    label_keys = st.sampled_from(
        [keys.POD_QUOTA, keys.POD_QUOTA_SEED, keys.PREEMPTIBLE, keys.GATE_OPT_OUT, "app"]
    )

    def optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(strategy, odd)

    block = st.fixed_dictionaries({}, optional={"requests": amounts, "limits": amounts})
    containers = st.lists(
        optional(
            st.fixed_dictionaries(
                {}, optional={"resources": optional(block), "restartPolicy": text, "name": text}
            )
        ),
        max_size=3,
    )
    owner = st.fixed_dictionaries(
        {},
        optional={
            "kind": st.sampled_from(["DaemonSet", "ReplicaSet"]),
            "controller": st.one_of(st.booleans(), odd),
        },
    )
    metadata = st.fixed_dictionaries(
        {},
        optional={
            "name": text,
            "generateName": text,
            "namespace": text,
            "uid": st.one_of(text, st.uuids().map(str), st.uuids().map(lambda u: str(u).upper())),
            "labels": optional(st.dictionaries(label_keys, text, max_size=4)),
            "annotations": optional(
                st.dictionaries(st.sampled_from([keys.MIRROR, "x"]), text, max_size=2)
            ),
            "creationTimestamp": timestamp,
            "deletionTimestamp": timestamp,
            "ownerReferences": optional(st.lists(optional(owner), max_size=2)),
        },
    )
    requirement = st.fixed_dictionaries(
        {},
        optional={
            "key": text,
            "operator": st.one_of(st.sampled_from(["In", "NotIn", "Exists", "Gt"]), odd),
            "values": optional(st.lists(text, max_size=2)),
        },
    )
    term = st.fixed_dictionaries(
        {}, optional={"matchExpressions": optional(st.lists(optional(requirement), max_size=2))}
    )
    required = st.fixed_dictionaries(
        {}, optional={"nodeSelectorTerms": optional(st.lists(optional(term), max_size=2))}
    )
    affinity = st.fixed_dictionaries(
        {},
        optional={
            "nodeAffinity": optional(
                st.fixed_dictionaries(
                    {},
                    optional={"requiredDuringSchedulingIgnoredDuringExecution": optional(required)},
                )
            )
        },
    )
    spec = st.fixed_dictionaries(
        {},
        optional={
            "nodeName": text,
            "priority": st.one_of(st.integers(-(2**31), 2**31), odd),
            "schedulingGates": optional(
                st.lists(optional(st.fixed_dictionaries({"name": text})), max_size=2)
            ),
            "containers": optional(containers),
            "initContainers": optional(containers),
            "overhead": amounts,
            "resources": optional(block),
            "schedulingGroup": optional(st.fixed_dictionaries({}, optional={"podGroupName": text})),
            "nodeSelector": optional(st.dictionaries(label_keys, text, max_size=2)),
            "affinity": optional(affinity),
        },
    )
    status = st.fixed_dictionaries({}, optional={"phase": text, "startTime": timestamp})
    return st.fixed_dictionaries(
        {"metadata": optional(metadata)},
        optional={"spec": optional(spec), "status": optional(status)},
    )


ODD = st.one_of(
    st.none(), st.integers(-3, 3), st.booleans(), st.just([]), st.just({}), st.just("x")
)
WELL_FORMED = strategies(st.nothing())
ANY = strategies(ODD)


@settings(max_examples=1500)
@given(st.one_of(WELL_FORMED, ANY), st.sampled_from(["", "from-request"]))
def test_the_fast_path_agrees_with_the_full_validation(raw, namespace):
    quick = fast(raw, namespace)
    if quick is not None:
        hypothesis.event("fast path")
        assert quick == full(raw, namespace)
    assert full_reading(lambda raw: parse_pod(raw, namespace=namespace), raw) == full(
        raw, namespace
    )


REALISTIC = [
    realistic.deployment_pod("shop", "web", 2, requests={"cpu": "500m", "memory": "256Mi"}),
    realistic.deployment_pod("shop", "web", created=False, requests={"cpu": "1"}),
    realistic.job_pod("etl", "load", phase="Succeeded", requests={"cpu": "2"}),
    realistic.cronjob_pod("etl", "nightly", requests={"memory": "1Gi"}),
    realistic.statefulset_pod("db", "pg", 1, requests={"cpu": "4"}, limits={"cpu": "8"}),
    realistic.daemonset_pod("kube-system", "fluentd", requests={"cpu": "100m"}),
    realistic.static_mirror_pod(requests={"cpu": "250m"}),
    realistic.pod("ml", "train", gates=[keys.ADMISSION_GATE], node=None, requests={"cpu": "3"}),
    realistic.pod("ml", "evicted", evicted=True, phase="Failed", requests={"cpu": "1"}),
    realistic.pod("ml", "leaving", terminating=True, priority=1000, requests={"cpu": "1"}),
    realistic.pod(
        "ml", "sized", pod_requests={"cpu": "2"}, overhead={"cpu": "100m"}, limits={"cpu": "1"}
    ),
    realistic.pod("ml", None, generate_name="web-", node=None, requests={"cpu": "1"}),
]


@pytest.mark.parametrize("raw", REALISTIC, ids=lambda raw: raw["metadata"].get("name", "new"))
def test_realistic_pods_take_the_fast_path_and_agree(raw):
    quick = fast(raw)
    assert quick is not None, "a pod as the API server serves it should not need pydantic"
    assert quick == full(raw)


@settings(max_examples=200)
@given(
    builder=st.sampled_from(
        [
            lambda **o: realistic.deployment_pod("shop", "web", 3, **o),
            lambda **o: realistic.job_pod("etl", "load", **o),
            lambda **o: realistic.statefulset_pod("db", "pg", 1, **o),
            lambda **o: realistic.pod("ml", "train", **o),
        ]
    ),
    requests=st.dictionaries(
        st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]),
        st.sampled_from(["100m", "1", "2Gi", "3"]),
        max_size=3,
    ),
    phase=st.sampled_from([None, "Pending", "Running", "Succeeded", "Failed"]),
    priority=st.integers(-10, 10**6),
    terminating=st.booleans(),
    labels=st.dictionaries(
        st.sampled_from([keys.POD_QUOTA, keys.PREEMPTIBLE, keys.GATE_OPT_OUT]),
        st.sampled_from(["team-a", "false", "true"]),
    ),
)
def test_realistic_pods_of_any_shape_agree(builder, requests, phase, priority, terminating, labels):
    raw = builder(
        requests=requests or None,
        phase=phase,
        priority=priority,
        terminating=terminating,
        labels=labels,
    )
    quick = fast(raw)
    assert quick is not None
    assert quick == full(raw)


def test_replicas_share_one_labels_dict_without_the_capacity_label() -> None:
    """The engine holds every pod: pods labelled alike hold one dict of their labels, the
    operator's capacity label (which it writes and which differs from pod to pod) left out."""
    alike = {"app": "worker", "pod-template-hash": "5d8f7c9b6d"}
    labelled = parse_pod(pod("w-1", labels={**alike, keys.CAPACITY: "over-quota"}))
    unlabelled = parse_pod(pod("w-2", labels=dict(alike)))
    assert labelled.labels == unlabelled.labels
    assert labelled.labels is unlabelled.labels
    assert keys.CAPACITY not in labelled.labels and labelled.labels["app"] == "worker"


def test_a_bool_quantity_is_refused_even_after_the_number_it_equals() -> None:
    """`True == 1` to the caches keyed by quantities: the pod read first must not decide."""
    for amount in (1, True):
        raw = realistic.pod("ml", "train", requests={"cpu": amount})
        try:
            parse_pod(raw)
            outcome = "read"
        except ObjectError as error:
            outcome = str(error)
    assert outcome == (
        "Pod ml/train: spec.containers[0].resources.requests: True: expected a quantity string "
        "or a number (resource cpu)"
    )


@pytest.mark.parametrize("policy, cpu", [("Always", 3000), (None, 2000)])
def test_a_sidecar_runs_beside_the_containers_on_both_paths(policy: str | None, cpu: int) -> None:
    """An init container with `restartPolicy: Always` is a sidecar (Kubernetes 1.29+): it runs
    beside the containers, so its request adds to theirs; a plain init container runs before
    them, and only raises the pod's request to its own."""
    init: dict[str, Any] = {  # as `kubectl get pod -o json` shows an init container
        "name": "proxy",
        "image": "registry.example.com/proxy:2.1.0",
        "imagePullPolicy": "IfNotPresent",
        "resources": {"requests": {"cpu": "1"}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    if policy is not None:
        init["restartPolicy"] = policy
    raw = realistic.pod("web", "web-7d4b9c6f5-x2x8q", requests={"cpu": "2"}, initContainers=[init])
    assert raw["spec"]["initContainers"] == [init] and fast(raw) is not None
    assert fast(raw) == full(raw)
    assert parse_pod(raw).request == {"cpu": cpu}
