"""The stand-in scheduler places pods only on nodes their constraints allow, as kube-scheduler's
NodeAffinity filter: `spec.nodeSelector` and the required node affinity's terms (In, NotIn,
Exists, DoesNotExist, Gt, Lt, matchFields), through the emulated API server; a pod no node
allows stays Pending until a node's labels change to allow it. The rules that the API server
would refuse before any scheduler saw them are checked on `node_affinity.allows` itself."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.apiserver import ApiServer
from tests.apiserver.client import Client
from tests.apiserver.conftest import MERGE, PODS
from tests.apiserver.node_affinity import allows
from tests.apiserver.standins import Scheduler
from tests.realistic import node, pod
from tests.waiting import eventually

PRODUCT, MEMORY = "nvidia.com/gpu.product", "nvidia.com/gpu.memory"  # GPU feature discovery's
A100, V100 = "NVIDIA-A100-SXM4-80GB", "Tesla-V100-SXM2-16GB"
POOL = "example.com/pool"
# By name the CPU node comes first: a scheduler that ignored constraints would bind all there.
NODES = [
    node("cpu-1"),
    node("gpu-a100-1", labels={PRODUCT: A100, MEMORY: "81920"}, extra={"nvidia.com/gpu": "8"}),
    node("gpu-v100-1", labels={PRODUCT: V100, MEMORY: "16384"}, extra={"nvidia.com/gpu": "8"}),
]


def sent(name: str, requests: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """Pod `name` as `kubectl create` sends it, unbound (500m CPU unless `requests`); `spec`:
    more spec fields."""
    created = pod("apps", None, node=None, requests=requests or {"cpu": "500m"}, **spec)
    created["metadata"]["name"] = name
    return created


def requirement(key: str, operator: str, *values: str) -> dict[str, Any]:
    written: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        written["values"] = list(values)
    return written


def labels_term(*requirements: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(requirements)}


def fields_term(*requirements: dict[str, Any]) -> dict[str, Any]:
    return {"matchFields": list(requirements)}


def node_name(operator: str, *names: str) -> dict[str, Any]:
    """A `matchFields` requirement on the node's name."""
    return requirement("metadata.name", operator, *names)


def affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    """Spec fields: a required node affinity of `terms`."""
    selector = {"nodeSelectorTerms": list(terms)}
    return {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}
    }


def on_labels(*requirements: dict[str, Any]) -> dict[str, Any]:
    """Spec fields: a required node affinity of one term, `requirements` on the node's labels."""
    return affinity(labels_term(*requirements))


@pytest_asyncio.fixture()
async def scheduler(api: ApiServer, client: Client) -> AsyncIterator[Scheduler]:
    api.seed(*NODES)
    running = Scheduler(client)
    await running.start()
    yield running
    await running.stop()


Case = tuple[str, dict[str, Any], str | None]  # a pod's name, spec fields, node (None: none)


async def schedule(api: ApiServer, client: Client, cases: list[Case]) -> None:
    """Create the pods of `cases`, those that no node takes first, and check where each lands
    once the others are bound: the pass that binds the last one considered every pod made
    before it (watch events come in order), so the unbound ones had their chance."""
    for pod_name, spec, _ in sorted(cases, key=lambda case: case[2] is not None):
        await client.call("POST", PODS, sent(pod_name, **spec))

    def placed() -> dict[str, str | None]:
        where = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in api.objects("pods")}
        return {pod_name: where.get(pod_name) for pod_name, _, _ in cases}

    bound = [pod_name for pod_name, _, expected in cases if expected is not None]
    await eventually(lambda: all(placed()[n] for n in bound), what=f"{bound} bound", explain=placed)
    assert placed() == {pod_name: expected for pod_name, _, expected in cases}
    assert api.count("create", "pods", "binding") == len(bound)

    def reasons() -> dict[str, str | None]:
        """Each unbound pod's PodScheduled reason, as kube-scheduler leaves it."""
        return {
            p["metadata"]["name"]: next(
                (c.get("reason") for c in p["status"].get("conditions") or ()
                 if c["type"] == "PodScheduled"),
                None,
            )
            for p in api.objects("pods")
            if not p["spec"].get("nodeName")
        }  # fmt: skip

    unbound = {pod_name for pod_name, _, expected in cases if expected is None}
    await eventually(
        lambda: (
            {n: r for n, r in reasons().items() if n in unbound}
            == dict.fromkeys(unbound, "Unschedulable")
        ),
        what="the unbound pods marked Unschedulable",
        explain=reasons,
    )


async def test_node_selector_and_required_affinity_choose_the_node(api, client, scheduler):
    await schedule(
        api,
        client,
        [
            ("selected", {
                "nodeSelector": {PRODUCT: A100, "kubernetes.io/os": "linux"}
            }, "gpu-a100-1"),
            ("affine", on_labels(requirement(PRODUCT, "In", V100, "T4")), "gpu-v100-1"),
            ("either-term", affinity(
                labels_term(requirement(PRODUCT, "In", "H100")),
                labels_term(requirement(PRODUCT, "In", A100)),
            ), "gpu-a100-1"),
            ("not-a-gpu", on_labels(requirement(PRODUCT, "NotIn", A100, V100)), "cpu-1"),
            ("no-product", on_labels(requirement(PRODUCT, "DoesNotExist")), "cpu-1"),
            ("both-requirements", on_labels(
                requirement(PRODUCT, "Exists"), requirement(PRODUCT, "NotIn", A100)
            ), "gpu-v100-1"),
            ("anywhere", {}, "cpu-1"),
            ("on-h100", on_labels(requirement(PRODUCT, "In", "H100")), None),
            ("no-requirement", affinity({}, {"matchExpressions": []}), None),
            ("selector-and-affinity-disagree", {
                "nodeSelector": {PRODUCT: A100}, **on_labels(requirement(PRODUCT, "In", V100))
            }, None),
            ("in-a-pool", on_labels(requirement(POOL, "In", "training")), None),
        ],
    )  # fmt: skip
    # `kubectl label node gpu-v100-1 example.com/pool=training`: the node's event wakes it.
    labelled = {"metadata": {"labels": {POOL: "training"}}}
    await client.call("PATCH", "/api/v1/nodes/gpu-v100-1", labelled, content_type=MERGE)
    await eventually(  # bound, then marked running: two writes
        lambda: (
            api.get("pods", "in-a-pool", "apps")["spec"].get("nodeName") == "gpu-v100-1"
            and api.get("pods", "in-a-pool", "apps")["status"]["phase"] == "Running"
        ),
        what="in-a-pool bound and running once a node is in the pool",
    )


async def test_gt_lt_and_match_fields(api, client, scheduler):
    await schedule(
        api,
        client,
        [
            ("large-memory", on_labels(requirement(MEMORY, "Gt", "40000")), "gpu-a100-1"),
            ("small-memory", on_labels(requirement(MEMORY, "Lt", "40000")), "gpu-v100-1"),
            ("within-bounds", on_labels(
                requirement(MEMORY, "Gt", "16383"), requirement(MEMORY, "Lt", "+16385")
            ), "gpu-v100-1"),
            ("named", affinity(fields_term(node_name("In", "gpu-v100-1"))), "gpu-v100-1"),
            ("not-named", affinity(fields_term(node_name("NotIn", "cpu-1"))), "gpu-a100-1"),
            # A name and a label in one term: both must hold; in two terms: either.
            ("named-and-labelled", affinity({
                **fields_term(node_name("In", "gpu-a100-1")),
                **labels_term(requirement(PRODUCT, "In", A100)),
            }), "gpu-a100-1"),
            ("name-or-label", affinity(
                fields_term(node_name("In", "gpu-h100-1")),
                labels_term(requirement(MEMORY, "Lt", "20000")),
            ), "gpu-v100-1"),
            # Gt is strict; a value that is not an integer makes the term match no node.
            ("over-the-largest", on_labels(requirement(MEMORY, "Gt", "81920")), None),
            ("not-an-integer", on_labels(requirement(MEMORY, "Gt", "40Gi")), None),
            ("name-and-label-disagree", affinity({
                **fields_term(node_name("In", "cpu-1")),
                **labels_term(requirement(MEMORY, "Exists")),
            }), None),
            ("unknown-node", affinity(fields_term(node_name("In", "gpu-h100-1"))), None),
        ],
    )  # fmt: skip


async def test_a_pod_waits_for_room_on_the_nodes_it_allows(api, client, scheduler):
    """Room is looked for on the allowed nodes only: cpu-1 has room, the A100 node has not."""
    api.seed(pod("apps", "resident", node="gpu-a100-1", requests={"nvidia.com/gpu": "8"}))
    one_gpu = {"cpu": "500m", "nvidia.com/gpu": "1"}
    await schedule(
        api,
        client,
        [
            ("on-a100", {"requests": one_gpu, "nodeSelector": {PRODUCT: A100}}, None),
            ("anywhere", {}, "cpu-1"),
        ],
    )
    await client.call("DELETE", PODS + "/resident")
    await eventually(
        lambda: api.get("pods", "on-a100", "apps")["spec"].get("nodeName") == "gpu-a100-1",
        what="on-a100 bound once the resident is gone",
    )


# Rules on what the API server refuses at create (`ValidateNodeSelector`), so that no scheduler
# meets it there, and on label values as the scheduler reads them: on `allows` itself.
CPU, A100_NODE = NODES[0], NODES[1]
# fmt: off
CASES = [
    ("no constraint", {}, True, True),
    ("an empty nodeSelector", {"nodeSelector": {}}, True, True),
    ("nodeSelector on a missing label", {"nodeSelector": {PRODUCT: ""}}, False, False),
    ("no required affinity", {"affinity": {"nodeAffinity": {}}}, True, True),
    ("a null required affinity", {"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": None}}}, True, True),
    ("no terms", affinity(), False, False),
    ("a term without requirements", affinity({}), False, False),
    ("NotIn on a missing label", on_labels(requirement(PRODUCT, "NotIn", A100)), True, False),
    ("In without values", on_labels(requirement(PRODUCT, "In")), False, False),
    ("Exists with values", on_labels(requirement(PRODUCT, "Exists", A100)), False, False),
    ("an unknown operator", on_labels(requirement(PRODUCT, "Equals", A100)), False, False),
    ("a refused term beside one that matches", affinity(
        labels_term(requirement(PRODUCT, "In")), labels_term(requirement(PRODUCT, "Exists")),
    ), False, True),
    ("a refused requirement in a term", on_labels(
        requirement(PRODUCT, "Exists"), requirement(MEMORY, "Gt", "1", "2")), False, False),
    ("Gt with two values", on_labels(requirement(MEMORY, "Gt", "1", "2")), False, False),
    ("Lt beyond int64", on_labels(requirement(MEMORY, "Lt", str(2**63))), False, False),
    ("Gt the least int64", on_labels(requirement(MEMORY, "Gt", str(-(2**63)))), False, True),
    ("Gt with a space", on_labels(requirement(MEMORY, "Gt", " 1")), False, False),
    ("matchFields In two names", affinity(fields_term(node_name("In", "cpu-1", "x"))),
        False, False),
    ("matchFields Exists", affinity(fields_term(node_name("Exists"))), False, False),
    ("matchFields on another field", affinity(fields_term(
        requirement("spec.x", "NotIn", "y"))), True, True),
]
# fmt: on


@pytest.mark.parametrize(("case", "spec", "on_cpu", "on_a100"), CASES, ids=[c[0] for c in CASES])
def test_what_the_filter_allows(case: str, spec: dict[str, Any], on_cpu: bool, on_a100: bool):
    pod_ = {"spec": spec}
    assert (allows(pod_, CPU), allows(pod_, A100_NODE)) == (on_cpu, on_a100), case


@pytest.mark.parametrize(
    ("value", "above_zero"),
    [("16384", True), ("+16384", True), ("-1", False), ("16Gi", False), ("1_6384", False)],
)
def test_gt_and_lt_read_the_label_as_a_base_10_integer(value: str, above_zero: bool):
    pod_ = {"spec": on_labels(requirement(MEMORY, "Gt", "0"))}
    assert allows(pod_, node("gpu-1", labels={MEMORY: value})) is above_zero
