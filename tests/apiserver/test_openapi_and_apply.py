"""What `kubectl apply` needs (fact sheet §12, §2): `/openapi/v3` with one document per group
version, PATCH operations that take `fieldValidation`, strategic merge for built-ins only;
unknown fields pruned, warned about or refused as `fieldValidation` says; the patch types kubectl
sends, and label and field selectors, all through real kubectl. The tests taking `server` run on
the emulator and on the real kube-apiserver."""

from __future__ import annotations

from tests.apiserver.servers import Server
from tests.kubectl import Kubectl, rows
from tests.manifests import pod, quota
from tests.waiting import eventually

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - {name: main, image: pause, resources: {requests: {cpu: CPU}}}
        - {name: side, image: pause}
"""


def deployment(tmp_path, replicas=2, cpu="100m", extra=""):
    path = tmp_path / "deployment.yaml"
    text = DEPLOYMENT.replace("REPLICAS", str(replicas)).replace("CPU", cpu)
    path.write_text(text + extra)
    return str(path)


async def test_openapi_v3_names_a_document_per_group_version(server: Server):
    client = server.client
    wanted = {"api/v1", "apis/apps/v1", "apis/scheduling.sigs.k8s.io/v1alpha1"}
    paths: dict[str, dict[str, str]] = {}

    async def published() -> bool:  # a new CRD's document comes a moment after it is served
        paths.update((await client.call("GET", "/openapi/v3"))["paths"])
        return wanted <= set(paths)

    await eventually(published, what="the OpenAPI documents of the three group versions")
    document = await client.call(
        "GET", paths["apis/scheduling.sigs.k8s.io/v1alpha1"]["serverRelativeURL"]
    )
    patch = document["paths"][
        "/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/{namespace}/elasticquotas/{name}"
    ]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "scheduling.sigs.k8s.io",
        "version": "v1alpha1",
        "kind": "ElasticQuota",
    }
    assert "fieldValidation" in [p["name"] for p in patch["parameters"] if p["in"] == "query"]
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]
    schema = document["components"]["schemas"]["io.k8s.sigs.scheduling.v1alpha1.ElasticQuota"]
    assert set(schema["properties"]["spec"]["properties"]) == {"min", "max"}
    core = await client.call("GET", paths["api/v1"]["serverRelativeURL"])
    pod_patch = core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" in pod_patch["requestBody"]["content"]
    containers = core["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"][
        "containers"
    ]
    assert containers["x-kubernetes-patch-merge-key"] == "name"


async def test_unknown_fields_are_pruned_warned_about_or_refused(server: Server):
    client, quotas, pods = server.client, server.quota_path, server.pods
    typo = quota("team", namespace=server.quotas)
    typo["spec"]["mni"] = {"cpu": "1"}
    status, body, _ = await client.request("POST", quotas + "?fieldValidation=Strict", typo)
    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == (
        'ElasticQuota in version "v1alpha1" cannot be handled as a ElasticQuota: strict decoding '
        'error: unknown field "spec.mni"'
    )
    status, body, response = await client.request("POST", quotas, typo)
    assert status == 201 and "mni" not in body["spec"]
    assert response.headers.getall("Warning") == ['299 - "unknown field \\"spec.mni\\""']
    odd = pod("odd", namespace=server.apps)
    odd["spec"]["containers"][0]["resourcez"] = {}
    status, body, response = await client.request("POST", pods + "?fieldValidation=Ignore", odd)
    assert status == 201 and "resourcez" not in body["spec"]["containers"][0]
    assert "Warning" not in response.headers
    status, body, _ = await client.request(
        "POST", pods + "?fieldValidation=Strict", {**odd, "metadata": {"name": "odd2"}}
    )
    assert 'unknown field "spec.containers[0].resourcez"' in body["message"]


async def test_merge_patches_are_pruned_and_seeded_objects_hold_no_unknown_fields(
    server: Server,
):
    client = server.client
    seeded = pod("seeded", namespace=server.apps)
    seeded["spec"]["containers"][0]["resourcez"] = {}
    await server.seed(seeded)
    stored = await server.get("pods", "seeded", server.apps)
    assert stored is not None and "resourcez" not in stored["spec"]["containers"][0]
    merge = "application/merge-patch+json"
    url = server.pods + "/seeded?fieldValidation=Strict"
    typo = {"metadata": {"labelz": {"a": "b"}}}
    status, body, _ = await client.request("PATCH", url, typo, content_type=merge)
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"].endswith('strict decoding error: unknown field "metadata.labelz"')
    # A null removes a key: known or not, it brings no field, so even Strict lets it through.
    gone = {"metadata": {"labelz": None, "labels": {"a": "b"}}}
    status, body, response = await client.request("PATCH", url, gone, content_type=merge)
    assert status == 200 and body["metadata"]["labels"] == {"a": "b"}
    assert "Warning" not in response.headers


async def test_kubectl_apply_creates_then_patches_as_kubectl_does(api, tmp_path):
    kubectl = Kubectl(api, tmp_path / "home")
    created = await kubectl.run(f"kubectl apply -f {deployment(tmp_path)}")
    assert created.out.strip() == "deployment.apps/web created" and not created.err
    # A second apply sends a strategic merge patch (containers merged by name).
    changed = await kubectl.run(f"kubectl apply -f {deployment(tmp_path, 3, '200m')} -v=6")
    assert "deployment.apps/web configured" in changed.out
    assert "PATCH" in changed.err and "warning" not in changed.err.lower()
    stored = api.get("deployments", "web", "apps")
    assert stored["spec"]["replicas"] == 3
    assert [c["name"] for c in stored["spec"]["template"]["spec"]["containers"]] == ["main", "side"]
    assert stored["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "200m"
    }
    typo = await kubectl.run(
        f"kubectl apply -f {deployment(tmp_path, extra='  replicaz: 1')}", ok=False
    )
    assert typo.code == 1
    assert 'strict decoding error: unknown field "spec.replicaz"' in typo.err


async def test_kubectl_patch_label_and_annotate_send_the_patch_types_the_server_takes(
    api, tmp_path
):
    api.seed(quota("team", labels={"team": "a"}), pod("web-1"))  # JSON patch adds to the map
    kubectl = Kubectl(api, tmp_path)
    await kubectl.run('kubectl patch pod web-1 -n apps -p \'{"metadata":{"labels":{"a":"b"}}}\'')
    refused = await kubectl.run(
        'kubectl patch eq team -n quotas -p \'{"metadata":{"labels":{"a":"b"}}}\'', ok=False
    )
    assert (
        "application/strategic-merge-patch+json is not supported by scheduling.sigs.k8s.io/"
        "v1alpha1, Kind=ElasticQuota: the body of the request was in an unknown format - "
        "accepted media types include: application/json-patch+json, "
        "application/merge-patch+json, application/apply-patch+yaml"
    ) in refused.err
    await kubectl.run(
        'kubectl patch eq team -n quotas --type merge -p \'{"spec":{"max":{"cpu":"2"}}}\''
    )
    add = '[{"op":"add","path":"/metadata/labels/j","value":"1"}]'
    await kubectl.run(f"kubectl patch eq team -n quotas --type json -p '{add}'")
    await kubectl.run("kubectl label eq team -n quotas tier=gold")
    await kubectl.run("kubectl annotate pod web-1 -n apps note=hi")
    team = api.get("elasticquotas", "team", "quotas")
    assert team["spec"]["max"] == {"cpu": "2"}
    assert team["metadata"]["labels"] == {"team": "a", "j": "1", "tier": "gold"}
    web = api.get("pods", "web-1", "apps")
    assert web["metadata"]["labels"]["a"] == "b" and web["metadata"]["annotations"]["note"] == "hi"


async def test_kubectl_selectors_filter_on_the_server(api, tmp_path):
    api.seed(
        pod("a", labels={"tier": "web"}, phase="Running"),
        pod("b", labels={"tier": "db"}, node=None),
        pod("c", namespace="other", labels={"tier": "web"}),
    )
    kubectl = Kubectl(api, tmp_path)

    async def names(command):
        return sorted(r["NAME"] for r in rows((await kubectl.run(command)).out))

    assert await names("kubectl get pods -A -l tier=web") == ["a", "c"]
    assert await names("kubectl get pods -A -l 'tier in (db),tier!=web'") == ["b"]
    assert await names("kubectl get pods -n apps --field-selector spec.nodeName=node-1") == ["a"]
    assert await names("kubectl get pods -A --field-selector metadata.namespace!=apps") == ["c"]
    refused = await kubectl.run("kubectl get pods --field-selector spec.image=x", ok=False)
    assert "field label not supported: spec.image" in refused.err
