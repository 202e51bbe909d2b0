"""`helm lint` and `helm template`: every object valid for a current Kubernetes, with the
defaults and with every optional feature on, and the pieces that must fit together do."""

from __future__ import annotations

import base64
import datetime
import subprocess
from typing import Any

import kubernetes_validate
import pytest
import yaml
from cryptography import x509

from tests.chart.rendering import EVERYTHING, IMAGE, NAMESPACE, RELEASE, env, find, helm, render

CUSTOM_KINDS = {"Certificate", "Issuer", "ServiceMonitor"}  # their schemas are not offline


def test_the_chart_lints_clean_in_strict_mode():
    output = helm.run("lint", "--strict", "--set", IMAGE, str(helm.CHART))
    assert "0 chart(s) failed" in output and "[WARNING]" not in output


@pytest.mark.parametrize("settings", [(), EVERYTHING, ("crds.install=false",)], ids=str)
def test_every_rendered_object_is_valid_for_a_current_kubernetes(settings):
    objects = render(*settings)
    kinds = {o["kind"] for o in objects}
    assert {"Deployment", "ValidatingWebhookConfiguration", "ClusterRole"} <= kinds
    for obj in objects:
        if obj["kind"] not in CUSTOM_KINDS:
            kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)
        namespaced = obj["kind"] not in {
            "CustomResourceDefinition",
            "ClusterRole",
            "ClusterRoleBinding",
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
            "FlowSchema",
            "PriorityLevelConfiguration",
        }
        assert ("namespace" in obj["metadata"]) == namespaced, obj["metadata"]["name"]


def test_two_operators_elect_a_writer_and_two_webhooks_keep_one_up_in_drains():
    objects = render()
    operator = find(objects, "Deployment", f"{RELEASE}-operator")
    assert operator["spec"]["replicas"] == 2
    assert env(operator)["ELASTIC_QUOTA_IDENTITY"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    webhook = find(objects, "Deployment", f"{RELEASE}-webhook")
    assert webhook["spec"]["replicas"] == 2
    budget = find(objects, "PodDisruptionBudget")
    assert budget["spec"]["minAvailable"] == 1
    assert budget["spec"]["selector"]["matchLabels"] == webhook["spec"]["selector"]["matchLabels"]
    service = find(objects, "Service", f"{RELEASE}-webhook")
    assert service["spec"]["selector"] == webhook["spec"]["selector"]["matchLabels"]


def test_the_pods_run_as_non_root_on_a_read_only_root_filesystem():
    for deployment in [o for o in render() if o["kind"] == "Deployment"]:
        pod = deployment["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        (container,) = pod["containers"]
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
        probes = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert int(env(deployment)["ELASTIC_QUOTA_PROBE_PORT"]) == probes["probes"]


def test_the_generated_certificate_is_signed_by_the_ca_bundle_and_names_the_service():
    objects = render()
    secret = find(objects, "Secret", f"{RELEASE}-webhook-tls")
    configuration = find(objects, "ValidatingWebhookConfiguration")
    bundles = {w["clientConfig"]["caBundle"] for w in configuration["webhooks"]}
    assert bundles == {secret["data"]["ca.crt"]}
    ca = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["ca.crt"]))
    served = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    served.verify_directly_issued_by(ca)
    names = served.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    host = f"{RELEASE}-webhook.{NAMESPACE}.svc"  # what the API server calls for the Service
    assert host in names.get_values_for_type(x509.DNSName)
    lifetime = served.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
    assert lifetime > datetime.timedelta(days=3000)
    webhook = find(objects, "Deployment", f"{RELEASE}-webhook")
    volumes = webhook["spec"]["template"]["spec"]["volumes"]
    assert {"name": "tls", "secret": {"secretName": secret["metadata"]["name"]}} in volumes


def test_with_cert_manager_the_certificate_is_issued_and_its_ca_injected():
    objects = render(*EVERYTHING)
    assert not [o for o in objects if o["kind"] == "Secret"]  # no private key in the manifests
    certificate = find(objects, "Certificate")
    issuer = find(objects, "Issuer")
    assert issuer["spec"] == {"selfSigned": {}}
    assert certificate["spec"]["issuerRef"] == {
        "kind": "Issuer",
        "name": issuer["metadata"]["name"],
    }
    assert f"{RELEASE}-webhook.{NAMESPACE}.svc" in certificate["spec"]["dnsNames"]
    configuration = find(objects, "ValidatingWebhookConfiguration")
    injected = configuration["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
    assert injected == f"{NAMESPACE}/{certificate['metadata']['name']}"
    assert all("caBundle" not in w["clientConfig"] for w in configuration["webhooks"])
    webhook = find(objects, "Deployment", f"{RELEASE}-webhook")
    volumes = webhook["spec"]["template"]["spec"]["volumes"]
    assert {"name": "tls", "secret": {"secretName": certificate["spec"]["secretName"]}} in volumes


def test_an_existing_issuer_can_sign_instead():
    objects = render(
        "certManager.enabled=true",
        "certManager.issuerRef.kind=ClusterIssuer",
        "certManager.issuerRef.name=internal-ca",
    )
    assert not [o for o in objects if o["kind"] == "Issuer"]
    issuer = find(objects, "Certificate")["spec"]["issuerRef"]
    assert issuer == {"kind": "ClusterIssuer", "name": "internal-ca"}


def test_the_webhook_cannot_lock_the_cluster():
    objects = render()
    configuration = find(objects, "ValidatingWebhookConfiguration")
    hooks = {w["clientConfig"]["service"]["path"]: w for w in configuration["webhooks"]}
    for hook in hooks.values():
        assert hook["sideEffects"] == "None"
        assert hook["timeoutSeconds"] <= 5
        operator = f"system:serviceaccount:{NAMESPACE}:{RELEASE}-operator"
        assert hook["matchConditions"] == [
            {"name": "not-the-operator", "expression": f'request.userInfo.username != "{operator}"'}
        ]
    assert hooks["/validate/pods"]["failurePolicy"] == "Ignore"
    assert hooks["/validate/jobs"]["failurePolicy"] == "Ignore"  # warnings only
    assert hooks["/validate/elasticquotas"]["failurePolicy"] == "Fail"
    (excluded,) = hooks["/validate/pods"]["namespaceSelector"]["matchExpressions"]
    assert excluded["key"] == "kubernetes.io/metadata.name" and excluded["operator"] == "NotIn"
    assert set(excluded["values"]) == {"kube-system", NAMESPACE}


def test_the_service_monitor_scrapes_both_metrics_services_and_only_them():
    objects = render(*EVERYTHING)
    monitor = find(objects, "ServiceMonitor")
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    wanted = monitor["spec"]["selector"]["matchLabels"]
    (endpoint,) = monitor["spec"]["endpoints"]
    scraped = [
        service["metadata"]["name"]
        for service in objects
        if service["kind"] == "Service"
        and wanted.items() <= service["metadata"]["labels"].items()
        and endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    ]
    assert sorted(scraped) == [f"{RELEASE}-operator-metrics", f"{RELEASE}-webhook-metrics"]
    deployments = [o for o in objects if o["kind"] == "Deployment"]
    for name in scraped:
        selector = find(objects, "Service", name)["spec"]["selector"]
        (target,) = [d for d in deployments if selector == d["spec"]["selector"]["matchLabels"]]
        assert target


def shipped_crds() -> dict[str, dict[str, Any]]:
    """The CRDs of crds/ by name: the ElasticQuota's and Koordinator's ElasticQuotaProfile."""
    crds = [yaml.safe_load(path.read_text()) for path in (helm.REPO / "crds").glob("*.yaml")]
    return {crd["metadata"]["name"]: crd for crd in crds}


def test_the_crds_are_the_ones_in_crds_kept_on_uninstall():
    shipped = shipped_crds()
    assert set(shipped) == {
        "elasticquotas.scheduling.sigs.k8s.io",
        "elasticquotaprofiles.quota.koordinator.sh",
    }
    rendered = [o for o in render() if o["kind"] == "CustomResourceDefinition"]
    assert sorted(o["metadata"]["name"] for o in rendered) == sorted(shipped)
    for crd in rendered:
        wanted = shipped[crd["metadata"]["name"]]
        assert crd["metadata"]["annotations"].pop("helm.sh/resource-policy") == "keep"
        assert crd["spec"] == wanted["spec"]
        assert crd["metadata"]["annotations"] == wanted["metadata"]["annotations"]
        assert crd["metadata"]["labels"]["app.kubernetes.io/component"] == "crd"
    assert not [o for o in render("crds.install=false") if o["kind"] == "CustomResourceDefinition"]


def test_without_an_image_helm_stops_and_says_how_to_give_one():
    done = subprocess.run(
        [str(helm.helm()), "template", "eq", str(helm.CHART)], capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "image.repository is required: no elastic-quota image is published" in done.stderr


def test_the_plain_manifests_install_what_the_readme_says():
    """The file users `kubectl apply`, read on its own: valid objects in koordinator-system, the
    webhook's certificate from cert-manager (no private key in a shared file), the README's
    example image to replace, the CRDs from crds/."""
    text = helm.RENDERED.read_text()
    objects = [o for o in yaml.safe_load_all(text) if o]
    for obj in objects:
        if obj["kind"] not in CUSTOM_KINDS:
            kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)
        assert obj["metadata"].get("namespace", "koordinator-system") == "koordinator-system"
    assert "Certificate" in {o["kind"] for o in objects}
    assert not [o for o in objects if o["kind"] == "Secret"]
    images = {
        c["image"]
        for o in objects
        if o["kind"] == "Deployment"
        for c in o["spec"]["template"]["spec"]["containers"]
    }
    assert images == {"registry.example.com/elastic-quota:0.1.0"}
    assert "registry.example.com/elastic-quota" in text.split("\n---", 1)[0]  # said at the top
    for name, crd in shipped_crds().items():
        assert find(tuple(objects), "CustomResourceDefinition", name)["spec"] == crd["spec"]


def test_the_plain_manifests_are_up_to_date_with_the_chart():
    """The file is generated; this only says to regenerate it after a chart change (what it
    installs is checked above, on the file itself)."""
    fresh = helm.run(
        "template",
        "elastic-quota",
        str(helm.CHART),
        "--namespace",
        "koordinator-system",
        "--set",
        "certManager.enabled=true",
        "--set",
        "image.repository=registry.example.com/elastic-quota",
    )
    shipped = helm.RENDERED.read_text().split("\n---", 1)[1]
    assert shipped.strip() == fresh.split("---", 1)[1].strip(), "run: python scripts/helm.py render"


def test_helm_refuses_a_cluster_older_than_admission_match_conditions():
    done = subprocess.run(
        [str(helm.helm()), "template", "eq", str(helm.CHART), "--kube-version", "1.29.0"],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "kubeVersion" in done.stderr


def test_new_groups_and_pods_go_through_mutating_webhooks_that_fail_open():
    objects = render()
    secret = find(objects, "Secret", f"{RELEASE}-webhook-tls")
    groups, pods = find(objects, "MutatingWebhookConfiguration")["webhooks"]
    paths = [hook["clientConfig"]["service"]["path"] for hook in (groups, pods)]
    assert paths == ["/mutate/elasticquotas", "/mutate/pods"]
    for hook in groups, pods:
        assert hook["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]
        assert hook["failurePolicy"] == "Ignore" and hook["sideEffects"] == "None"
        assert [rule["operations"] for rule in hook["rules"]] == [["CREATE"]]
    # The tree id a new group inherits (its parent's): never for the operator's own groups.
    assert groups["rules"][0]["apiGroups"] == ["scheduling.sigs.k8s.io"]
    (skipped,) = groups["matchConditions"]
    assert skipped["expression"] == (
        f'request.userInfo.username != "system:serviceaccount:{NAMESPACE}:{RELEASE}-operator"'
    )
    assert "objectSelector" not in pods  # a pod that opts out of the gate keeps its pool
    (excluded,) = pods["namespaceSelector"]["matchExpressions"]
    assert set(excluded["values"]) == {"kube-system", NAMESPACE}
    webhook = find(objects, "Deployment", f"{RELEASE}-webhook")
    assert env(webhook)["ELASTIC_QUOTA_GATE_PODS"] == "true"
    assert env(webhook)["ELASTIC_QUOTA_POOL_AFFINITY"] == "true"
    injected = find(render(*EVERYTHING), "MutatingWebhookConfiguration")["metadata"]["annotations"]
    assert injected["cert-manager.io/inject-ca-from"] == f"{NAMESPACE}/{RELEASE}-webhook"


def test_with_pool_affinity_off_opted_out_pods_are_not_even_sent():
    _, hook = find(render("pools.nodeAffinity=false"), "MutatingWebhookConfiguration")["webhooks"]
    (opt_out,) = hook["objectSelector"]["matchExpressions"]
    assert opt_out == {
        "key": "quota.scheduling.koordinator.sh/gate",
        "operator": "NotIn",
        "values": ["false"],
    }


def test_with_gating_off_the_mutating_webhook_keeps_pods_in_their_pool():
    objects = render("gating.enabled=false")
    _, hook = find(objects, "MutatingWebhookConfiguration")["webhooks"]
    assert hook["clientConfig"]["service"]["path"] == "/mutate/pods"
    webhook = find(objects, "Deployment", f"{RELEASE}-webhook")
    assert env(webhook)["ELASTIC_QUOTA_GATE_PODS"] == "false"
    assert env(webhook)["ELASTIC_QUOTA_POOL_AFFINITY"] == "true"


def test_with_gating_and_pool_affinity_off_pods_are_not_sent_to_a_mutating_webhook():
    objects = render("gating.enabled=false", "pools.nodeAffinity=false")
    (hook,) = find(objects, "MutatingWebhookConfiguration")["webhooks"]
    assert [rule["resources"] for rule in hook["rules"]] == [["elasticquotas"]]


def test_a_network_policy_opens_the_webhooks_ports_and_only_them():
    deployment = find(render(), "Deployment", f"{RELEASE}-webhook")
    policy = find(render(), "NetworkPolicy", f"{RELEASE}-webhook")
    selected = policy["spec"]["podSelector"]["matchLabels"]
    assert selected.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    ports = sorted(p["containerPort"] for p in container["ports"])
    opened = sorted(port["port"] for rule in policy["spec"]["ingress"] for port in rule["ports"])
    assert opened == ports
    admission, probes = policy["spec"]["ingress"]
    assert "from" not in admission  # by default the API server may come from anywhere
    assert probes["from"] == [{"namespaceSelector": {}}]
    limited = find(
        render("webhook.networkPolicy.apiServerCIDRs={10.0.0.10/32}"),
        "NetworkPolicy",
        f"{RELEASE}-webhook",
    )
    assert limited["spec"]["ingress"][0]["from"] == [{"ipBlock": {"cidr": "10.0.0.10/32"}}]
    assert not [
        o for o in render("webhook.networkPolicy.enabled=false") if o["kind"] == "NetworkPolicy"
    ]
