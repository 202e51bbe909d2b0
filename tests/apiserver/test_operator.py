"""The real operator process (`elastic-quota operator`, started as tests/operator does) runs
against the emulator: it lists and watches with versions, writes the computed annotations, and
does so with Koordinator's CRD (no status subresource) too."""

from __future__ import annotations

import json

import pytest

from tests.apiserver import ApiServer, Config, User
from tests.manifests import node, pod, quota
from tests.operator.conftest import eventually, start_operator

RUNTIME = "quota.scheduling.koordinator.sh/runtime"
OPERATOR = "system:serviceaccount:koordinator-system:elastic-quota-operator"


@pytest.mark.parametrize("status_subresource", [True, False])
async def test_the_operator_writes_a_quotas_runtime(tmp_path, status_subresource):
    async with ApiServer(Config(quota_status_subresource=status_subresource)) as api:
        # tests/operator's kubeconfig carries this token: make it the operator's service account.
        api.users["not-checked"] = User(OPERATOR, ("system:serviceaccounts",))
        api.seed(
            node("n1", cpu="8", memory="16Gi", pods="110"),
            quota("team", min={"cpu": "2"}, max={"cpu": "6"}),
            pod("p1", quota="team", cpu="1"),
        )
        operator = await start_operator(tmp_path, api)
        try:

            def runtime() -> dict | None:
                team = api.get("elasticquotas", "team", "quotas")
                written = (team or {}).get("metadata", {}).get("annotations", {}).get(RUNTIME)
                return None if written is None else json.loads(written)

            await eventually(
                lambda: runtime() is not None, timeout=30, what="the runtime annotation"
            )
            assert runtime().get("cpu") is not None
            assert api.count("watch", "elasticquotas") >= 1 and api.count("list", "pods") >= 1
            # Recorded per component from the User-Agent, as tests/chart/test_rbac.py reads it.
            quotas = "scheduling.sigs.k8s.io", "elasticquotas"
            assert {("operator", *quotas, "watch"), ("operator", *quotas, "patch")} <= api.access
            status_patch = ("operator", quotas[0], "elasticquotas/status", "patch")
            # status.used is written apart from the annotations: wait until it is there
            await eventually(
                lambda: bool((api.get("elasticquotas", "team", "quotas") or {}).get("status")),
                what="status.used written",
            )
            assert (status_patch in api.access) == status_subresource
        finally:
            await operator.stop()
