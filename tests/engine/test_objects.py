import uuid

import pytest
from eq_engine import ObjectError, parse_node, parse_pod, parse_quota
from hypothesis import given
from hypothesis import strategies as st

from tests.manifests import P, node, pod, quota


def test_unknown_fields_are_ignored():
    raw = quota("team", min={"cpu": "1"}, max={"cpu": "2"})
    raw["spec"]["futureField"] = {"x": 1}
    raw["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    raw["status"] = {"used": {"cpu": "1"}, "other": True}
    parsed = parse_quota(raw)
    assert (parsed.min, parsed.max) == ({"cpu": 1000}, {"cpu": 2000})


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            quota("ml", namespace="team-a", min={"cpu": "lots"}),
            "ElasticQuota team-a/ml: spec.min: 'lots': not a Kubernetes quantity (resource cpu)",
        ),
        (
            quota("ml", namespace="team-a", max={"memory": "1 Gi"}),
            "ElasticQuota team-a/ml: spec.max: '1 Gi': not a Kubernetes quantity (resource memory)",
        ),
        (
            quota("ml", namespace="team-a", weight="{not json"),
            f"ElasticQuota team-a/ml: metadata.annotations[{P}shared-weight]: not valid JSON",
        ),
        (
            quota("ml", namespace="team-a", weight='["cpu"]'),
            f"metadata.annotations[{P}shared-weight]: expected a JSON resource list",
        ),
        (
            quota("ml", namespace="team-a", weight={"cpu": "x"}),
            f"metadata.annotations[{P}shared-weight]: 'x': not a Kubernetes quantity",
        ),
        (
            {
                **quota("ml"),
                "metadata": {
                    "name": "ml",
                    "namespace": "n",
                    "annotations": {P + "namespaces": '"ns-a"'},
                },
            },
            f"metadata.annotations[{P}namespaces]: expected a JSON list of namespace names",
        ),
        (
            {"kind": "ElasticQuota", "metadata": {"namespace": "x"}},
            "ElasticQuota x/: metadata.name",
        ),
        ({**quota("ml"), "spec": {"min": ["cpu"]}}, "ElasticQuota quotas/ml: spec.min"),
    ],
)
def test_malformed_quota_fields_name_object_and_field(raw, message):
    with pytest.raises(ObjectError) as error:
        parse_quota(raw)
    assert message in str(error.value)


def test_malformed_pod_request_names_the_container_path():
    raw = pod("web-0", namespace="shop", cpu="two")
    with pytest.raises(ObjectError) as error:
        parse_pod(raw)
    assert str(error.value).startswith(
        "Pod shop/web-0: spec.containers[0].resources.requests: 'two'"
    )


def test_malformed_priority_and_node_allocatable_are_errors():
    with pytest.raises(ObjectError, match=r"Pod apps/p: spec.priority"):
        parse_pod({**pod("p"), "spec": {"priority": "high"}})
    with pytest.raises(ObjectError, match=r"Node n1: status.allocatable: 'x'"):
        parse_node(node("n1", cpu="x"))


def test_parent_label_either_spelling_and_defaults():
    seed = parse_quota(quota("t", labels={P + "parent-quota-name": "dept"}))
    current = parse_quota(quota("t", parent="dept"))
    plain = parse_quota(quota("t"))
    assert (seed.parent, current.parent, plain.parent) == ("dept", "dept", "")
    assert plain.allow_lent and not plain.is_parent
    assert not parse_quota(quota("t", lend=False)).allow_lent
    # anything but the exact string "true" is not a parent; anything but "false" lends
    odd = parse_quota(quota("t", labels={P + "is-parent": "True", P + "allow-lent-resource": "no"}))
    assert not odd.is_parent and odd.allow_lent


def request(**kwargs):
    return dict(parse_pod(pod("p", **kwargs)).request)


def test_pod_request_sums_containers_and_defaults_requests_to_limits():
    raw = pod("p", cpu="1")
    raw["spec"]["containers"].append(
        {"name": "side", "resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "1Gi"}}}
    )
    assert parse_pod(raw).request == {"cpu": 1500, "memory": 2**30}


def test_pod_request_takes_the_larger_of_init_and_regular_containers():
    init = [{"name": "setup", "resources": {"requests": {"cpu": "4", "memory": "1Gi"}}}]
    assert request(cpu="1", memory="2Gi", init=init) == {"cpu": 4000, "memory": 2 * 2**30}


def test_sidecars_run_beside_containers_and_later_init_containers():
    init = [
        {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
        {"name": "migrate", "resources": {"requests": {"cpu": "3"}}},
    ]
    # running: 2 + sidecar 1 = 3; the init phase: sidecar 1 + migrate 3 = 4
    assert request(cpu="2", init=init) == {"cpu": 4000}


def test_pod_overhead_is_added():
    assert request(cpu="1", overhead={"cpu": "250m", "memory": "120Mi"}) == {
        "cpu": 1250,
        "memory": 120 * 2**20,
    }


def test_pod_phases():
    pending = parse_pod(pod("p", node=None))
    running = parse_pod(pod("p"))
    done = parse_pod(pod("p", phase="Succeeded"))
    assert (pending.scheduled, running.scheduled, done.scheduled) == (False, True, False)
    assert done.terminal and not running.terminal


@given(
    st.one_of(
        st.uuids().map(str),
        st.uuids().map(lambda u: str(u).upper()),
        st.uuids().map(lambda u: u.hex),
        st.text(max_size=40),
        # what int(text, 16) would take and not give back: signs, "_", spaces, uppercase
        st.text(alphabet="0123456789abcdefA- _+", min_size=36, max_size=36),
    )
)
def test_a_pods_uid_reads_back_exactly_as_written(uid):
    raw = pod("p0")
    raw["metadata"]["uid"] = uid
    parsed = parse_pod(raw)
    assert parsed.uid == uid
    canonical = str(uuid.UUID(uid)) == uid if _uuid_like(uid) else False
    assert isinstance(parsed.packed_uid, int) == canonical  # the API server's: a number


def _uuid_like(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True
