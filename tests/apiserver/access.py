"""What the product's processes asked of the API, as RBAC rules name it: into the server's own
set and the session's record (tests/access.py, which tests/chart/test_rbac.py reads), told apart
by User-Agent."""

from __future__ import annotations

from tests.access import ACCESS, Access

from .resources import Resource


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
