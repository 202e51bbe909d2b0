"""The root, system and default groups exist as ElasticQuota objects: created if missing,
never deleted, never changed once there."""

from __future__ import annotations

from typing import Any

from eq_engine import EngineConfig, format_resource_list, keys
from eq_kit.caching import QUOTAS
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from .logs import logger


def builtin_objects(config: EngineConfig) -> list[dict[str, Any]]:
    def group(name: str, labels: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": QUOTAS.api_version,
            "kind": "ElasticQuota",
            "metadata": {"name": name, "namespace": config.namespace, "labels": labels},
            "spec": spec,
        }

    default_spec: dict[str, Any] = {}
    if config.default_min:
        default_spec["min"] = format_resource_list(config.default_min)
    if config.default_max is not None:
        default_spec["max"] = format_resource_list(config.default_max)
    return [
        group(config.root_name, {keys.IS_PARENT: "true"}, {}),
        group(config.system_name, {keys.PARENT: config.root_name}, {}),
        group(config.default_name, {keys.PARENT: config.root_name}, default_spec),
    ]


async def ensure_builtins(api: client.ApiClient, config: EngineConfig) -> None:
    custom = client.CustomObjectsApi(api)
    for body in builtin_objects(config):
        name = body["metadata"]["name"]
        try:
            await custom.create_namespaced_custom_object(
                QUOTAS.group, QUOTAS.version, config.namespace, QUOTAS.plural, body
            )
            logger.info("created the built-in group %s/%s", config.namespace, name)
        except ApiException as error:
            if error.status != 409:  # 409: it exists already, as it should
                raise
