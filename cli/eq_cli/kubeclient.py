"""The API client the long-running commands share: one place decides how to log in."""

from __future__ import annotations

import os

from kubernetes_asyncio import client, config


async def connect(kubeconfig: str | None) -> client.ApiClient:
    """In a cluster, the pod's service account; elsewhere, the kubeconfig (default: ~/.kube)."""
    if kubeconfig is None and config.incluster_config.SERVICE_HOST_ENV_NAME in os.environ:
        config.load_incluster_config()  # type: ignore[no-untyped-call]
    else:
        await config.load_kube_config(config_file=kubeconfig)
    return client.ApiClient()
