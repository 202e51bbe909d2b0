"""Who asks (`User`, from the bearer token) and where kube-apiserver runs mutating admission on a
write (`Admission.mutate`). No webhook is called: the chart's webhooks meet the real control
plane (tests/control_plane); a test stands in for one by replacing `api.admission.mutate`
(tests/operator/test_faults.py: a webhook that takes a label off, one that is slow)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .resources import Resource


@dataclass(frozen=True)
class User:
    username: str
    groups: tuple[str, ...] = ("system:authenticated",)


@dataclass
class Request:
    """What admission is asked about (admission.Attributes)."""

    operation: str
    resource: Resource
    namespace: str | None
    name: str
    obj: dict[str, Any] | None
    old: dict[str, Any] | None
    user: User
    subresource: str = ""


class Admission:
    async def mutate(self, request: Request) -> list[str]:
        """Mutating admission: may replace `request.obj`; the warnings for the client."""
        return []
