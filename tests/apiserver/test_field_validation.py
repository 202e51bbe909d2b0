"""Unknown fields on writes, as kube-apiserver handles them: pruned, warned about or refused as
`fieldValidation` says, in creates and merge patches alike. These tests run on the emulator and
on the real kube-apiserver."""

from __future__ import annotations

from tests.apiserver.servers import Server
from tests.manifests import pod, quota


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
