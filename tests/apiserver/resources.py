"""The kinds the emulator serves, and the legacy discovery documents the product reads about
them: Kopf scans `/api`, `/apis` and each group version's resources when the operator starts,
and the operator asks whether ElasticQuotas have `/status`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
CRD_FILE = REPO / "crds" / "elasticquotas.scheduling.sigs.k8s.io.yaml"
PROFILE_CRD_FILE = REPO / "crds" / "elasticquotaprofiles.quota.koordinator.sh.yaml"
"""Koordinator's ElasticQuotaProfile CRD, which the chart installs with the ElasticQuota's: the
emulator serves it too unless `Config(profiles=False)`."""
POD_GROUP_CRDS = tuple(
    REPO / "tests" / "crds" / f"podgroups.{group}.yaml"
    for group in ("scheduling.sigs.k8s.io", "scheduling.x-k8s.io", "scheduling.k8s.io")
)
"""The three PodGroup APIs as the emulator serves them (`ApiServer(serving=...)`): Koordinator's,
scheduler-plugins' and Kubernetes 1.36's (a built-in alpha API, served here as a CRD)."""
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    subresources: tuple[str, ...] = ()
    custom: bool = False  # a CR: CR strategies (generation, 422 on unconditional PUT, no SMP)
    field_labels: frozenset[str] = field(default_factory=frozenset)
    qualified: bool = False
    """Named `plural.group` in the emulator's tables (`key`): a CRD served besides the
    ElasticQuota's, whose plural another group may share (two PodGroup APIs)."""

    @property
    def key(self) -> str:
        """The emulator's name for the resource: its storage table, the requests counted and
        the faults injected (`api.get(key, ...)`, `api.count(verb, key)`): the plural, or
        `podgroups.scheduling.x-k8s.io` for a CRD served besides the ElasticQuota's."""
        return f"{self.plural}.{self.group}" if self.qualified else self.plural

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    def prefix(self, namespace: str | None = None) -> str:
        """The URL of the collection: `/api/v1/namespaces/ns/pods`."""
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            root += f"/namespaces/{namespace}"
        return f"{root}/{self.plural}"


_POD_FIELDS = frozenset(
    {
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    }
)
_EVENT_FIELDS = frozenset(
    {f"involvedObject.{f}" for f in ("kind", "namespace", "name", "uid", "apiVersion")}
    | {f"involvedObject.{f}" for f in ("resourceVersion", "fieldPath")}
    | {"reason", "reportingComponent", "source", "type"}
)

BUILTINS = (
    Resource(
        "",
        "v1",
        "pods",
        "Pod",
        True,
        ("status", "eviction", "binding"),
        field_labels=_POD_FIELDS,
    ),
    Resource(
        "",
        "v1",
        "nodes",
        "Node",
        False,
        ("status",),
        field_labels=frozenset({"spec.unschedulable"}),
    ),
    Resource("", "v1", "namespaces", "Namespace", False, ("status",)),
    Resource("", "v1", "events", "Event", True, field_labels=_EVENT_FIELDS),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", True),
    Resource(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        ("status",),
    ),
    # Read by the operator (reclaim skips what a budget would not let go); no disruption
    # controller here: a test writes `status.disruptionsAllowed` itself.
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("status",)),
    # Read by the operator before it evicts a Job's pod (operator/eq_operator/jobs.py); no Job
    # controller here: the real control plane's tests play Jobs.
    Resource("batch", "v1", "jobs", "Job", True, ("status",)),
)


def load_crd(path: Path = CRD_FILE) -> dict[str, Any]:
    crd: dict[str, Any] = yaml.safe_load(path.read_text())
    return crd


def pod_group_crds(*groups: str) -> list[dict[str, Any]]:
    """The PodGroup CRDs of `groups` (all three by default), for `ApiServer(serving=...)`."""
    return [
        load_crd(path)
        for path in POD_GROUP_CRDS
        if not groups or path.name.removeprefix("podgroups.").removesuffix(".yaml") in groups
    ]


def served_version(crd: dict[str, Any]) -> dict[str, Any]:
    """The CRD's served storage version (the one the emulator serves)."""
    (version,) = [v for v in crd["spec"]["versions"] if v.get("served", True) and v.get("storage")]
    found: dict[str, Any] = version
    return found


def from_crd(
    crd: dict[str, Any], *, status_subresource: bool | None = None, qualified: bool = False
) -> Resource:
    """The served version of a CRD as a Resource. `status_subresource=False` serves it as if the
    CRD declared none (Koordinator's CRD has none), `True` as if it did, None as it says;
    `qualified`: known as `plural.group` (see `Resource.qualified`)."""
    spec = crd["spec"]
    version = served_version(crd)
    declared = "status" in (version.get("subresources") or {})
    has_status = declared if status_subresource is None else status_subresource
    names = spec["names"]
    return Resource(
        spec["group"],
        version["name"],
        names["plural"],
        names["kind"],
        spec["scope"] == "Namespaced",
        ("status",) if has_status else (),
        custom=True,
        qualified=qualified,
    )


def crd_as_served(crd: dict[str, Any], resource: Resource) -> dict[str, Any]:
    """The CRD object as stored, agreeing with what is served (status subresource or not)."""
    versions = []
    for version in crd["spec"]["versions"]:
        subresources = dict(version.get("subresources") or {})
        if resource.has_status:
            subresources["status"] = {}
        else:
            subresources.pop("status", None)
        versions.append({**version, "subresources": subresources})
    return {**crd, "spec": {**crd["spec"], "versions": versions}}


class Catalog:
    """Resources by (group, version, plural) and by kind, and their discovery documents."""

    def __init__(self, resources: tuple[Resource, ...]) -> None:
        self.all: tuple[Resource, ...] = ()
        self._by_path: dict[tuple[str, str, str], Resource] = {}
        self.by_kind: dict[tuple[str, str], Resource] = {}
        for resource in resources:
            self.add(resource)

    def add(self, resource: Resource) -> None:
        """Serve one more resource (a CRD installed while the server runs)."""
        self.all = (*self.all, resource)
        self._by_path[resource.group, resource.version, resource.plural] = resource
        self.by_kind[resource.api_version, resource.kind] = resource

    def find(self, group: str, version: str, plural: str) -> Resource | None:
        return self._by_path.get((group, version, plural))

    def named(self, key: str) -> Resource:
        """The resource by its `key` (`pods`, `podgroups.scheduling.x-k8s.io`)."""
        (found,) = [r for r in self.all if r.key == key]
        return found

    def api_versions(self, address: str) -> dict[str, Any]:
        """`/api`: the core group's one version."""
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
        }

    def api_group_list(self) -> dict[str, Any]:
        """`/apis`: the other groups and their versions, the first one preferred."""
        versions: dict[str, list[str]] = {}
        for r in self.all:
            if r.group and r.version not in versions.setdefault(r.group, []):
                versions[r.group].append(r.version)
        groups = []
        for group, names in versions.items():
            listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in names]
            groups.append({"name": group, "versions": listed, "preferredVersion": listed[0]})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        """`/api/v1`, `/apis/GROUP/VERSION`: the resources and subresources served there."""
        served = [r for r in self.all if (r.group, r.version) == (group, version)]
        if not served:
            return None
        entries: list[dict[str, Any]] = []
        for r in served:
            entries.append(
                {
                    "name": r.plural,
                    "singularName": r.kind.lower(),
                    "namespaced": r.namespaced,
                    "kind": r.kind,
                    "verbs": VERBS,
                }
            )
            for sub in r.subresources:
                kind, verbs = _SUBRESOURCE_KINDS.get(sub, (r.kind, ["get", "patch", "update"]))
                entries.append(
                    {
                        "name": f"{r.plural}/{sub}",
                        "singularName": "",
                        "namespaced": r.namespaced,
                        "kind": kind,
                        "verbs": verbs,
                    }
                )
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": served[0].api_version,
            "resources": entries,
        }


_SUBRESOURCE_KINDS = {"eviction": ("Eviction", ["create"]), "binding": ("Binding", ["create"])}
