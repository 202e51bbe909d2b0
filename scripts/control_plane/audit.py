"""The API server's audit log, as the control plane has it kept: what the tests read of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# What the API server's audit log records: the evictions asked for, whoever asked, and every
# request of the product's ServiceAccounts (in the namespace its chart installs into).
PRODUCT_ACCOUNTS = "system:serviceaccounts:koordinator-system"
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "Metadata", "resources": [{"group": "", "resources": ["pods/eviction"]}]},
        {"level": "Metadata", "userGroups": [PRODUCT_ACCOUNTS]},
        {"level": "None"},
    ],
}


def audit_events(audit_log: Path) -> list[dict[str, Any]]:
    """The audit log's events for completed requests (AUDIT_POLICY says which are kept)."""
    if not audit_log.exists():
        return []
    events = [json.loads(line) for line in audit_log.read_text().splitlines() if line]
    return [event for event in events if event.get("stage") == "ResponseComplete"]


def audited(
    audit_log: Path, verb: str, resource: str, subresource: str = "", code: int | None = None
) -> int:
    """How many requests the audit log holds for `verb` on `resource` (/`subresource`),
    answered with `code` if given."""
    count = 0
    for event in audit_events(audit_log):
        reference = event.get("objectRef", {})
        if (
            event.get("verb") == verb
            and reference.get("resource") == resource
            and reference.get("subresource", "") == subresource
            and code in (None, event.get("responseStatus", {}).get("code"))
        ):
            count += 1
    return count
