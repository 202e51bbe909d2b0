"""The emulator's HTTP answers: JSON bodies with kube-apiserver's Warning headers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson
from aiohttp import web
from multidict import CIMultiDict


def _headers(warnings: Iterable[str]) -> CIMultiDict[str]:
    headers: CIMultiDict[str] = CIMultiDict({"Content-Type": "application/json"})
    for text in dict.fromkeys(warnings):  # identical warnings are sent once
        headers.add("Warning", '299 - "' + text.replace('"', '\\"') + '"')
    return headers


def raw(body: bytes, code: int = 200, warnings: Iterable[str] = ()) -> web.Response:
    """An answer whose JSON is encoded already (as storage keeps each object)."""
    return web.Response(body=body, status=code, headers=_headers(warnings))


def json(
    obj: Any, code: int = 200, headers: dict[str, str] | None = None, warnings: Iterable[str] = ()
) -> web.Response:
    response = raw(orjson.dumps(obj), code, warnings)
    response.headers.update(headers or {})
    return response
