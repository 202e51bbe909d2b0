"""What the servers need before they start: credentials for the API server, and (the webhook)
its certificate. Checked first, so that a missing piece is one line naming it and how to give
it, instead of a traceback from deep inside a client or TLS library."""

from __future__ import annotations

import os
import ssl

# kubernetes-asyncio's in-cluster login reads these (not imported: simulate loads this module
# and needs no client library)
SERVICE_HOST = "KUBERNETES_SERVICE_HOST"
SERVICE_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"


class PreflightError(Exception):
    """Something a server needs is missing or unreadable; the message is one line."""


def credentials(kubeconfig: str | None) -> None:
    """In a cluster: the service account's token; elsewhere: a kubeconfig file that exists."""
    if kubeconfig is not None:
        if not os.path.exists(kubeconfig):
            raise PreflightError(f"--kubeconfig {kubeconfig}: no such file")
        return
    host, token = SERVICE_HOST, SERVICE_TOKEN
    if host in os.environ:
        if not os.path.isfile(token):
            raise PreflightError(
                f"in a cluster ({host} is set) but the service account token {token} is "
                "missing: mount it (automountServiceAccountToken) or give --kubeconfig"
            )
        return
    # kubernetes-asyncio's default: $KUBECONFIG (a path list), else ~/.kube/config
    listed = os.environ.get("KUBECONFIG") or "~/.kube/config"
    paths = [os.path.expanduser(p) for p in listed.split(os.pathsep) if p]
    if not any(os.path.isfile(p) for p in paths):
        raise PreflightError(
            f"no Kubernetes credentials: not in a cluster ({host} is unset) and no kubeconfig "
            f"at {', '.join(paths)}; give one with --kubeconfig or KUBECONFIG"
        )


def certificate(cert_file: str, key_file: str) -> None:
    """Both files exist and hold a PEM certificate and its private key."""
    for flag, path in (("--cert-file", cert_file), ("--key-file", key_file)):
        if not os.path.exists(path):
            raise PreflightError(
                f"{flag} {path}: no such file (the serving certificate and its key, PEM; the "
                "chart mounts them from its Secret)"
            )
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert_file, key_file)
    except (ssl.SSLError, OSError) as error:
        raise PreflightError(
            f"--cert-file {cert_file}, --key-file {key_file}: not a PEM certificate and its "
            f"private key ({getattr(error, 'reason', None) or error})"
        ) from None
