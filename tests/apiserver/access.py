"""What the product's processes asked of the API, as RBAC rules name it: the same record as
tests/kube.py keeps (one shared set, which tests/chart/test_rbac.py reads through
ELASTIC_QUOTA_TESTS_ACCESS_LOG), told apart by User-Agent."""

from __future__ import annotations

from tests.kube import ACCESS

from .resources import Resource

Access = tuple[str, str, str, str]  # (component, API group, resource[/subresource], verb)


def component(agent: str) -> str | None:
    """Kopf's requests are the operator's; the kit's client names its component."""
    if agent.startswith("kopf/"):
        return "operator"
    if agent.startswith("elastic-quota/"):
        return agent.rsplit("(", 1)[-1].rstrip(")")
    return None  # the test itself, acting as a user


def record_access(
    into: set[Access], agent: str, resource: Resource, subresource: str, verb: str
) -> None:
    who = component(agent)
    if who is None:
        return
    name = f"{resource.plural}/{subresource}" if subresource else resource.plural
    entry = (who, resource.group, name, verb)
    into.add(entry)
    ACCESS.add(entry)
