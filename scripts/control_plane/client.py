"""Requests to the control plane's API server as its admin, with no client library."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Client:
    """Requests as the admin (system:masters), with the files `ControlPlane` wrote in `pki`."""

    server: str
    pki: Path

    def context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.pki / "ca.crt"))
        context.load_cert_chain(self.pki / "admin.crt", self.pki / "admin.key")
        return context

    def request(
        self,
        method: str,
        path: str,
        body: object = None,
        *,
        timeout: float = 10.0,
        content_type: str = "application/json",
    ) -> tuple[int, Any]:
        """One request: (status, the decoded body, or its text if it is not JSON)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.server + path,
            data=data,
            method=method,
            headers={"Content-Type": content_type, "Accept": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, context=self.context(), timeout=timeout) as r:
                status, raw = r.status, r.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    def get(self, path: str) -> Any:
        """The object or list at `path`; anything but 200 is an error that says what came."""
        status, body = self.request("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body}")
        return body
