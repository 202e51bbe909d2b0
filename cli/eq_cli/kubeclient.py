"""The API client the long-running commands share: one place decides how to log in."""

from __future__ import annotations

import os
from importlib import metadata
from typing import Any

import yaml
from kubernetes_asyncio import client, config

from .preflight import PreflightError, credentials


async def connect(
    kubeconfig: str | None, component: str, *, context: str | None = None
) -> client.ApiClient:
    """In a cluster, the pod's service account; elsewhere, the kubeconfig (default: ~/.kube).

    Requests carry `User-Agent: elastic-quota/VERSION (COMPONENT)`, so that audit logs and API
    priority and fairness can tell the operator's calls from the webhook's."""
    credentials(kubeconfig)
    try:
        if kubeconfig is None and config.incluster_config.SERVICE_HOST_ENV_NAME in os.environ:
            config.load_incluster_config()  # type: ignore[no-untyped-call]
        else:
            await config.load_kube_config(config_file=kubeconfig, context=context)
    # a file that is there but is no usable kubeconfig: a wrong key, no YAML, empty (TypeError)
    except (config.ConfigException, yaml.YAMLError, TypeError) as error:
        where = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
        message = "empty, or not a mapping" if isinstance(error, TypeError) else str(error)
        message = " ".join(message.split())
        raise PreflightError(f"kubeconfig {where}: {message}") from None
    api = client.ApiClient()
    api.user_agent = f"elastic-quota/{metadata.version('elastic-quota')} ({component})"
    return api


def contexts(kubeconfig: str | None) -> tuple[list[dict[str, Any]], dict[str, Any] | None] | None:
    """The kubeconfig's contexts and its current one; None where there is no kubeconfig to
    read (connecting says what is wrong with the file)."""
    try:
        listed, current = config.list_kube_config_contexts(config_file=kubeconfig)
    except (config.ConfigException, yaml.YAMLError, TypeError, OSError):
        return None
    return list(listed), current


def context_namespace(kubeconfig: str | None, context: str | None) -> str:
    """The namespace of the kubeconfig's context (`context`, else the current one), as kubectl
    defaults `-n` to it; `default` where it names none or there is no kubeconfig to read."""
    found = contexts(kubeconfig)
    if found is None:
        return "default"
    listed, current = found
    chosen = next((c for c in listed if c.get("name") == context), None) if context else current
    if context and chosen is None:
        raise PreflightError(f'context "{context}" does not exist')
    return str(((chosen or {}).get("context") or {}).get("namespace") or "default")
