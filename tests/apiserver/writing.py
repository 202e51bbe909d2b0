"""Writes: create (with generateName), update and patch of an object or its status, delete
(graceful for pods on a node, held by finalizers), and a pod's eviction and binding. Each runs
mutating admission (admission.py), the registry's rules (strategies.py) and a custom resource's
schema (schemas.py) in kube-apiserver's order."""

from __future__ import annotations

import copy
import json
import random
from typing import TYPE_CHECKING, Any

from aiohttp import web

from . import patching, responses, strategies
from .admission import Request, User
from .errors import ApiError, already_exists, conflict, internal, invalid, status
from .resources import Resource
from .storage import Stored, key_of

if TYPE_CHECKING:
    from .server import ApiServer

# names.SimpleNameGenerator's alphabet: no vowels, no look-alike digits.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


async def create(
    api: ApiServer,
    user: User,
    resource: Resource,
    namespace: str | None,
    body: Any,
    *,
    validation: str = "",
) -> tuple[Stored, list[str]]:
    if not isinstance(body, dict):
        raise ApiError(400, "the body of the request is not an object")
    given = body.get("apiVersion")
    if given and given != resource.api_version:
        raise ApiError(
            400,
            f"the API version in the data ({given}) does not match the expected API version "
            f"({resource.api_version})",
        )
    if resource.custom and not body.get("kind"):  # a built-in's kind is known from the URL
        raise ApiError(
            400,
            f"the object provided is unrecognized (must be of type {resource.kind}): Object "
            f"'Kind' is missing in '{json.dumps(body, separators=(',', ':'))}'",
            reason="BadRequest",
        )
    obj = {**body, "apiVersion": resource.api_version, "kind": resource.kind}
    obj = strategies.check_namespace(resource, strategies.wipe_for_create(obj), namespace)
    obj, unknown = api.schemas.prune(resource, obj, validation)
    metadata = obj["metadata"]
    if not metadata.get("name") and not metadata.get("generateName"):
        raise invalid(
            resource.kind,
            "",
            ["metadata.name: Required value: name or generateName is required"],
        )
    api.provision(namespace if resource.namespaced else None)
    attrs = Request("CREATE", resource, namespace, metadata.get("name", ""), obj, None, user)
    warnings = unknown + await api.admission.mutate(attrs)
    for attempt in range(8):  # maxNameGenerationCreateAttempts
        candidate = strategies.fill_for_create(resource, copy.deepcopy(attrs.obj or {}))
        meta = candidate["metadata"]
        generated = not meta.get("name")
        if generated:
            base = meta["generateName"][:58]
            meta["name"] = base + "".join(random.choices(_NAME_ALPHABET, k=5))
        strategies.validate_create(resource, candidate)
        api.schemas.validate(resource, candidate)
        if meta.get("resourceVersion"):
            raise internal("resourceVersion should not be set on objects to be created")
        if api.storage.get(resource, namespace, meta["name"]) is None:
            created = api.storage.put(resource, candidate, type="ADDED")
            if resource.plural == "customresourcedefinitions":
                api.install(created.obj)  # Established at once
            return created, warnings
        if not generated:
            raise already_exists(resource.plural, resource.group, meta["name"])
        del attempt
    error = already_exists(resource.plural, resource.group, meta["name"])
    error.body["message"] += ", the server was not able to generate a unique name for the object"
    error.body["details"]["retryAfterSeconds"] = 1
    raise error


async def update(
    api: ApiServer,
    user: User,
    resource: Resource,
    namespace: str | None,
    name: str,
    sub: str,
    body: Any,
    patch: str | None,
    validation: str = "",
) -> web.StreamResponse:
    """PUT (`patch` None) or PATCH (`patch` the media type) of an object or its status."""
    stored = api.stored(resource, namespace, name)
    old = stored.obj
    if patch == patching.MERGE:
        # What is stored was pruned already: only the patch can bring unknown fields, and
        # pruning it alone spares a walk of the whole object on every write.
        body, unknown = api.schemas.prune(resource, body, validation, patch=True)
        new = patching.apply(patch, old, body, custom=resource.custom)
    else:
        new = body if patch is None else patching.apply(patch, old, body, custom=resource.custom)
        new, unknown = api.schemas.prune(resource, new, validation)
    if not isinstance(new, dict):
        raise ApiError(400, "the body of the request is not an object")
    given_name = (new.get("metadata") or {}).get("name")
    if patch is None and given_name != name:
        raise ApiError(
            400,
            f"the name of the object ({given_name}) does not match the name on the URL ({name})",
        )
    new = strategies.check_namespace(resource, new, namespace)
    attrs = Request("UPDATE", resource, namespace, name, new, old, user, sub)
    warnings = unknown + await api.admission.mutate(attrs)
    new = attrs.obj or {}
    rv = (new.get("metadata") or {}).get("resourceVersion")
    if rv and rv != old["metadata"]["resourceVersion"]:
        raise conflict(resource.plural, resource.group, name)
    if not rv and resource.custom:
        raise invalid(
            resource.kind,
            name,
            ["metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"],
            group=resource.group,
        )
    result = strategies.prepare_update(resource, sub, new, old)
    api.schemas.validate(resource, result, old)
    if strategies.same(result, old):
        return responses.raw(stored.raw, 200, warnings)
    metadata = result["metadata"]
    if (
        metadata.get("deletionTimestamp")
        and not metadata.get("finalizers")
        and not metadata.get("deletionGracePeriodSeconds")
    ):
        api.storage.remove(resource, key_of(namespace, name))
        return responses.json(result, 200, warnings=warnings)
    return responses.raw(api.storage.put(resource, result, type="MODIFIED").raw, 200, warnings)


async def delete(
    api: ApiServer,
    user: User,
    resource: Resource,
    namespace: str | None,
    name: str,
    options: dict[str, Any],
    *,
    admit: bool = True,
) -> web.StreamResponse:
    stored = api.stored(resource, namespace, name)
    old = stored.obj
    metadata = old["metadata"]
    preconditions = options.get("preconditions") or {}
    for field, what in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
        wanted = preconditions.get(field)
        if wanted and wanted != metadata.get(field):
            why = {"uid": "deleted and then recreated", "resourceVersion": "modified"}[field]
            raise conflict(
                resource.plural,
                resource.group,
                name,
                f"Precondition failed: {what} in precondition: {wanted}, {what} in object "
                f"meta: {metadata.get(field)}. The object might have been {why}",
            )
    warnings: list[str] = []
    if admit:
        attrs = Request("DELETE", resource, namespace, name, None, old, user)
        warnings = await api.admission.mutate(attrs)
    grace = _grace(api, resource, old, options)
    if grace:
        if metadata.get("deletionTimestamp") and grace >= (
            metadata.get("deletionGracePeriodSeconds") or 0
        ):
            return responses.raw(stored.raw, 200, warnings)
        marked = {
            **metadata,
            "deletionTimestamp": strategies.now(grace),
            "deletionGracePeriodSeconds": grace,
        }
        return responses.raw(
            api.storage.put(resource, {**old, "metadata": marked}, type="MODIFIED").raw,
            200,
            warnings,
        )
    if metadata.get("finalizers"):
        if metadata.get("deletionTimestamp") and not metadata.get("deletionGracePeriodSeconds"):
            return responses.raw(stored.raw, 200, warnings)
        marked = {
            **metadata,
            "deletionTimestamp": metadata.get("deletionTimestamp") or strategies.now(),
            "deletionGracePeriodSeconds": 0,
        }
        if "generation" in metadata:
            marked["generation"] = int(metadata["generation"]) + 1
        return responses.raw(
            api.storage.put(resource, {**old, "metadata": marked}, type="MODIFIED").raw,
            200,
            warnings,
        )
    if resource.plural == "pods":
        # A pod is deleted gracefully even at grace 0: marked (MODIFIED), then removed.
        marked = {
            **metadata,
            "deletionTimestamp": strategies.now(),
            "deletionGracePeriodSeconds": 0,
        }
        api.storage.put(resource, {**old, "metadata": marked}, type="MODIFIED")
        gone = api.storage.remove(resource, key_of(namespace, name))
        return responses.raw(gone.raw, 200, warnings)
    api.storage.remove(resource, key_of(namespace, name))
    details = {"name": name, "kind": resource.plural, "uid": metadata.get("uid")}
    if resource.group:
        details["group"] = resource.group
    return responses.json(status(200, "", details=details, success=True), 200, warnings=warnings)


def _grace(api: ApiServer, resource: Resource, pod: dict[str, Any], options: dict[str, Any]) -> int:
    """Seconds a pod is kept terminating (podStrategy.CheckGracefulDelete); 0: delete now."""
    if resource.plural != "pods" or not api.config.graceful_pods:
        return 0
    spec = pod.get("spec") or {}
    phase = (pod.get("status") or {}).get("phase")
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
        return 0
    grace = options.get("gracePeriodSeconds")
    if grace is None:
        grace = spec.get("terminationGracePeriodSeconds", 30)
    return 1 if int(grace) < 0 else int(grace)


async def evict(
    api: ApiServer, user: User, resource: Resource, namespace: str | None, name: str, body: Any
) -> web.StreamResponse:
    if not isinstance(body, dict) or (body.get("metadata") or {}).get("name") != name:
        raise ApiError(400, "name in URL does not match name in Eviction object")
    await api.admission.mutate(
        Request("CREATE", resource, namespace, name, body, None, user, "eviction")
    )
    pod = api.stored(resource, namespace, name).obj
    refusal = api.evictions(pod)
    if refusal is not None:
        raise refusal
    conditions = [
        c
        for c in (pod.get("status") or {}).get("conditions") or ()
        if c.get("type") != "DisruptionTarget"
    ]
    conditions.append(
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "EvictionByEvictionAPI",
            "message": "Eviction API: evicting",
            "lastTransitionTime": strategies.now(),
        }
    )
    api.storage.put(
        resource,
        {**pod, "status": {**(pod.get("status") or {}), "conditions": conditions}},
        type="MODIFIED",
    )
    await delete(api, user, resource, namespace, name, body.get("deleteOptions") or {}, admit=False)
    return responses.json(status(201, "", success=True), 201)


async def bind(
    api: ApiServer, user: User, resource: Resource, namespace: str | None, name: str, body: Any
) -> web.StreamResponse:
    if not isinstance(body, dict) or not (body.get("target") or {}).get("name"):
        raise invalid("Binding", name, ["target.name: Required value"])
    await api.admission.mutate(
        Request("CREATE", resource, namespace, name, body, None, user, "binding")
    )
    pod = api.stored(resource, namespace, name).obj
    spec = pod.get("spec") or {}
    node = body["target"]["name"]
    if spec.get("schedulingGates"):
        raise conflict("pods/binding", "", name, f"pod {name} has non-empty .spec.schedulingGates")
    if pod["metadata"].get("deletionTimestamp"):
        raise conflict(
            "pods/binding",
            "",
            name,
            f"pod {name} is being deleted, cannot be assigned to a host",
        )
    if spec.get("nodeName"):
        raise conflict(
            "pods/binding",
            "",
            name,
            f'pod {name} is already assigned to node "{spec["nodeName"]}"',
        )
    status_ = dict(pod.get("status") or {})
    conditions = [c for c in status_.get("conditions") or () if c.get("type") != "PodScheduled"]
    conditions.append(
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": strategies.now()}
    )
    bound = {
        **pod,
        "spec": {**spec, "nodeName": node},
        "status": {**status_, "conditions": conditions},
    }
    api.storage.put(resource, bound, type="MODIFIED")
    return responses.json(status(201, "", success=True), 201)
