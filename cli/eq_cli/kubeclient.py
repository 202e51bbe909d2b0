"""The API client the long-running commands share: one place decides how to log in."""

from __future__ import annotations

import os
from importlib import metadata

from kubernetes_asyncio import client, config


async def connect(kubeconfig: str | None, component: str) -> client.ApiClient:
    """In a cluster, the pod's service account; elsewhere, the kubeconfig (default: ~/.kube).

    Requests carry `User-Agent: elastic-quota/VERSION (COMPONENT)`, so that audit logs and API
    priority and fairness can tell the operator's calls from the webhook's."""
    if kubeconfig is None and config.incluster_config.SERVICE_HOST_ENV_NAME in os.environ:
        config.load_incluster_config()  # type: ignore[no-untyped-call]
    else:
        await config.load_kube_config(config_file=kubeconfig)
    api = client.ApiClient()
    api.user_agent = f"elastic-quota/{metadata.version('elastic-quota')} ({component})"
    return api
