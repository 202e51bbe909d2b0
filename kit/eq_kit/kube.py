"""Reading Kubernetes API responses that kubernetes-asyncio hands back unparsed."""

from __future__ import annotations

import json
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException


async def read_json(response: Any) -> dict[str, Any]:
    """The JSON of a response read with `_preload_content=False`, which the client does not
    check: an error status raises `ApiException` here, as a parsed call would."""
    if response.status >= 400:
        raise ApiException(status=response.status, reason=response.reason)
    data: dict[str, Any] = json.loads(await response.read())
    return data
