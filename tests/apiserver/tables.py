"""Server-side printing: the `meta.k8s.io/v1` Table that `kubectl get` asks for with
`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, rendered from each kind's columns and
cells (table_printers.py: a CRD's printer columns, the built-in printers; table_columns.py: what
they are built of). Rows carry a `PartialObjectMetadata` unless `includeObject=Object` (the
whole object) or null (`None`). In a watch, only the first event's Table carries column
definitions (the others: null).
"""

from __future__ import annotations

import datetime

from .resources import Resource
from .table_columns import JSON
from .table_printers import Printing, builtin_printing, crd_columns, crd_printing


def wanted(accept: str) -> str | None:
    """The Table version (`v1` or `v1beta1`) `accept` asks for first, or None for plain JSON."""
    for clause in accept.split(","):
        params = dict(part.strip().split("=", 1) for part in clause.split(";")[1:] if "=" in part)
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io":
            if params.get("v") in ("v1", "v1beta1"):
                return params["v"]
        elif clause.split(";")[0].strip() in ("application/json", "*/*"):
            return None
    return None


class Printer:
    """Tables for every served kind: built-in printers, and CRD columns for custom resources
    (`custom`: resource key -> the served version of its CRD)."""

    def __init__(self, custom: dict[str, JSON]) -> None:
        self._custom = {key: crd_columns(version) for key, version in custom.items()}

    def add(self, key: str, version: JSON) -> None:
        """The columns of a CRD installed while the server runs."""
        self._custom[key] = crd_columns(version)

    def _printing(self, resource: Resource) -> Printing:
        if resource.key in self._custom:
            return crd_printing(self._custom[resource.key])
        return builtin_printing(resource.plural)

    def table(
        self,
        resource: Resource,
        objects: list[JSON],
        *,
        version: str = "v1",
        metadata: JSON | None = None,
        include: str = "Metadata",
        headers: bool = True,
    ) -> JSON:
        columns, cells = self._printing(resource)
        now = datetime.datetime.now(datetime.UTC)
        rows = []
        for obj in objects:
            row: JSON = {"cells": cells(obj, now)}
            if include == "Object":
                row["object"] = obj
            elif include == "None":
                row["object"] = None
            else:
                row["object"] = {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": f"meta.k8s.io/{version}",
                    "metadata": obj["metadata"],
                }
            rows.append(row)
        table: JSON = {
            "kind": "Table",
            "apiVersion": f"meta.k8s.io/{version}",
            "metadata": metadata or {},
        }
        table["columnDefinitions"] = [c.definition() for c in columns] if headers else None
        table["rows"] = rows
        return table
