"""Server-side printing and discovery as kube-apiserver serves them to kubectl (fact sheet §11,
§12): Tables from the CRD's printer columns and the built-in printers, aggregated discovery
chosen by the Accept header, short names and categories from the CRD. The tests taking `server`
run on the emulator and on the real kube-apiserver."""

from __future__ import annotations

import copy

import orjson
import pytest

from tests.apiserver import ApiServer, Config
from tests.apiserver.jsonpath import MISSING, first, parse
from tests.apiserver.resources import load_crd
from tests.apiserver.servers import Server
from tests.apiserver.table_columns import human_duration
from tests.kubectl import Kubectl, rows
from tests.manifests import pod, quota

TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
    "g=meta.k8s.io,application/json"
)
AGGREGATED = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)
P = "quota.scheduling.koordinator.sh/"


async def get(client, path, accept):
    async with client.session.get(client.url + path, headers={"Accept": accept}) as response:
        return response.status, response.headers["Content-Type"], await response.json()


def test_jsonpath_takes_kubernetes_escapes_indexes_and_filters():
    obj = {
        "metadata": {"labels": {"a.b/c": "x"}},
        "status": {"conditions": [{"type": "A", "s": 1}, {"type": "Ready", "s": True}]},
    }
    assert first(r".metadata.labels.a\.b/c", obj) == "x"
    assert first("{.metadata.labels['a.b/c']}", obj) == "x"
    assert first(".status.conditions[-1].s", obj) is True
    assert first('.status.conditions[?(@.type=="Ready")].s', obj) is True
    assert first(".status.conditions[*].type", obj) == "A"  # only the first result
    assert first(".spec.missing", obj) is MISSING
    with pytest.raises(ValueError):
        parse("..type")


def test_ages_read_as_kubectl_prints_them():
    assert [human_duration(s) for s in (-5, -1, 5, 119, 125, 600, 3 * 3600 + 60)] == [
        "<invalid>",
        "0s",
        "5s",
        "119s",
        "2m5s",
        "10m",
        "3h1m",
    ]
    assert [human_duration(d * 86400) for d in (3, 30, 800)] == ["3d", "30d", "2y70d"]


async def test_a_quota_table_follows_the_crds_printer_columns(server: Server):
    client, quotas = server.client, server.quota_path
    team = quota("team", namespace=server.quotas, min={"cpu": "1"}, max={"cpu": "4"}, parent="dept")
    team["metadata"]["annotations"][P + "runtime"] = '{"cpu":"2"}'
    await server.seed(team)
    code, content_type, table = await get(client, quotas, TABLE)
    assert (code, content_type) == (200, "application/json")  # the body says it is a Table
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == ["Name", "Parent", "Tree", "Min", "Max", "Runtime", "Used", "Waiting", "Age"]
    assert table["columnDefinitions"][0]["format"] == "name"
    (row,) = table["rows"]
    # Maps print as compact JSON, a missing path is a null cell, the date column is an age.
    assert row["cells"][:8] == [
        "team",
        "dept",
        None,
        '{"cpu":"1"}',
        '{"cpu":"4"}',
        '{"cpu":"2"}',
        None,
        None,
    ]
    assert row["cells"][8].endswith("s")
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["namespace"] == server.quotas
    assert table["metadata"]["resourceVersion"]
    _, _, whole = await get(client, quotas + "?includeObject=Object", TABLE)
    assert whole["rows"][0]["object"]["spec"]["max"] == {"cpu": "4"}
    _, _, bare = await get(client, quotas + "?includeObject=None", TABLE)
    assert bare["rows"][0]["object"] is None
    _, _, one = await get(client, quotas + "/team", TABLE)
    assert [r["cells"][0] for r in one["rows"]] == ["team"]
    _, content_type, listed = await get(client, quotas, "application/json")
    assert (content_type, listed["kind"]) == ("application/json", "ElasticQuotaList")


async def test_a_crd_without_printer_columns_gets_name_and_age(tmp_path):
    crd = copy.deepcopy(load_crd())
    for version in crd["spec"]["versions"]:
        version.pop("additionalPrinterColumns", None)
    async with ApiServer(Config(), crd=crd) as api:
        api.seed(quota("team"))
        kubectl = Kubectl(api, tmp_path)
        result = await kubectl.run("kubectl get eq -A")
        assert list(rows(result.out)[0]) == ["NAMESPACE", "NAME", "AGE"]


async def test_pod_tables_say_gated_running_and_terminating(server: Server):
    client, ns = server.client, server.apps
    await server.seed(pod("waiting", namespace=ns, node=None))
    await client.call("POST", server.pods, pod("gated", namespace=ns, node=None, gated=True))
    running = pod("running", namespace=ns)
    running["status"] = {
        "phase": "Running",
        "containerStatuses": [
            {"name": "c", "ready": True, "restartCount": 2, "state": {"running": {}}}
        ],
    }
    await server.seed(running)
    _, _, table = await get(client, server.pods, TABLE)
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names[:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert [c["priority"] for c in table["columnDefinitions"]][5:] == [1, 1, 1, 1]
    cells = {r["cells"][0]: r["cells"] for r in table["rows"]}
    assert cells["gated"][1:4] == ["0/1", "SchedulingGated", "0"]
    assert cells["waiting"][1:3] == ["0/1", "Pending"]
    assert cells["running"][1:4] == ["1/1", "Running", "2"]
    assert cells["running"][6] == "node-1" and cells["gated"][6] == "<none>"


async def test_a_table_watch_sends_column_definitions_once(server: Server):
    client, ns = server.client, server.quotas
    await server.seed(quota("a", namespace=ns))
    listed = await client.call("GET", server.quota_path)
    rv = listed["metadata"]["resourceVersion"]
    await server.seed(quota("b", namespace=ns), quota("c", namespace=ns))
    params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1"}
    headers = {"Accept": TABLE}
    url = client.url + server.quota_path
    async with client.session.get(url, params=params, headers=headers) as r:
        events = [orjson.loads(line) async for line in r.content if line.strip()]
    assert [e["object"]["rows"][0]["cells"][0] for e in events] == ["b", "c"]
    assert [bool(e["object"]["columnDefinitions"]) for e in events] == [True, False]


async def test_aggregated_discovery_is_chosen_by_the_accept_header(server: Server):
    client = server.client
    _, content_type, apis = await get(client, "/apis", AGGREGATED)
    assert content_type == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    groups = {item["metadata"]["name"]: item for item in apis["items"]}
    (version,) = groups["scheduling.sigs.k8s.io"]["versions"]
    (quotas,) = [r for r in version["resources"] if r["resource"] == "elasticquotas"]
    assert quotas["shortNames"] == ["eq", "eqs"] and quotas["scope"] == "Namespaced"
    assert quotas["subresources"][0]["subresource"] == "status"
    _, _, core = await get(client, "/api", AGGREGATED)
    (item,) = core["items"]
    assert item["metadata"] == {}  # the core group's name is empty
    pods = next(r for r in item["versions"][0]["resources"] if r["resource"] == "pods")
    assert pods["categories"] == ["all"]
    # The ones the product uses (the real server serves more: log, exec, resize, ...).
    assert {"status", "eviction", "binding"} <= {s["subresource"] for s in pods["subresources"]}
    _, content_type, legacy = await get(client, "/apis", "application/json")
    assert content_type == "application/json" and legacy["kind"] == "APIGroupList"


async def test_kubectl_resolves_the_crds_short_names_and_categories(tmp_path):
    crd = copy.deepcopy(load_crd())
    crd["spec"]["names"]["categories"] = ["quotas"]
    async with ApiServer(Config(), crd=crd) as api:
        api.seed(quota("team"), pod("web"))
        kubectl = Kubectl(api, tmp_path)
        for command in ("kubectl get eq -A", "kubectl get eqs -A", "kubectl get quotas -A"):
            assert [r["NAME"] for r in rows((await kubectl.run(command)).out)] == ["team"]
        everything = await kubectl.run("kubectl get all -n apps")
        assert "pod/web" in everything.out and "team" not in everything.out
