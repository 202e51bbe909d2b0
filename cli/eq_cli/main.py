"""`elastic-quota`: the command line. Parses arguments and dispatches; no rules here."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from typing import Any

from eq_engine import QuantityError, to_canonical

from . import flags
from .loading import LoadError, load
from .output import RENDERERS
from .simulate import simulate


def _capacity(text: str) -> dict[str, int]:
    """`cpu=100,memory=512Gi` as a ResourceList."""
    capacity: dict[str, int] = {}
    for item in text.split(","):
        name, sep, quantity = item.partition("=")
        if not sep or not name.strip():
            raise argparse.ArgumentTypeError(f"{item!r}: expected RESOURCE=QUANTITY")
        try:
            capacity[name.strip()] = to_canonical(name.strip(), quantity.strip())
        except QuantityError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    return capacity


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="elastic-quota",
        description="Hierarchical elastic quota for Kubernetes (Koordinator's semantics).",
    )
    commands = main.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sim = commands.add_parser(
        "simulate",
        help="compute quotas, labels and reclaim for objects in files, offline",
        description=(
            "Compute every group's request, runtime and used, every pod's capacity label and "
            "the reclaim plan for ElasticQuota, Pod and Node objects read from files, exactly "
            "as the operator would. Other kinds are ignored."
        ),
    )
    sim.add_argument(
        "-f",
        "--filename",
        dest="files",
        action="append",
        required=True,
        metavar="PATH",
        help="YAML or JSON file of objects (kind: List included), or a directory of them; "
        "'-' reads standard input; repeatable",
    )
    sim.add_argument(
        "--capacity",
        type=_capacity,
        metavar="RES=QTY[,RES=QTY...]",
        help="the cluster's total; default: the sum of the Nodes' status.allocatable",
    )
    sim.add_argument(
        "--no-min-scaling",
        dest="min_scaling",
        action="store_false",
        help="keep every min as written even when the parent's total cannot cover them",
    )
    sim.add_argument(
        "-o", "--output", choices=sorted(RENDERERS), default="table", help="default: table"
    )
    _webhook_parser(commands)
    return main


def _webhook_parser(commands: Any) -> None:
    hook = commands.add_parser(
        "webhook",
        help="serve the validating admission webhook for ElasticQuota and Pod objects",
        description=(
            "Validate ElasticQuota and Pod admissions (AdmissionReview v1) over HTTPS against the "
            "cluster's quota tree, which it watches. Health and metrics on a plain HTTP port."
        ),
    )
    server = hook.add_argument_group("server")
    flags.add(
        server,
        "--cert-file",
        default=None,
        required=False,
        help="PEM serving certificate, re-read when it changes",
    )
    flags.add(server, "--key-file", default=None, help="PEM private key of the certificate")
    flags.add(server, "--address", default="0.0.0.0", help="address to listen on")
    flags.add(server, "--port", default=9443, type=int, help="HTTPS port of the admissions")
    flags.add(
        server,
        "--probe-port",
        default=8080,
        type=int,
        help="HTTP port of /healthz, /readyz and /metrics",
    )
    flags.add(
        server,
        "--cert-check-interval",
        default=10.0,
        type=float,
        help="seconds between checks of the certificate files",
    )
    flags.add(
        server,
        "--kubeconfig",
        default=None,
        help="kubeconfig to use outside a cluster (inside: the service account)",
    )
    flags.add(
        server,
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log verbosity",
    )
    flags.add_engine_arguments(hook)


def _webhook(args: argparse.Namespace) -> int:
    if not args.cert_file or not args.key_file:
        parser().error("webhook: --cert-file and --key-file are required (TLS is mandatory)")
    from eq_webhook.main import serve  # imported here: simulate needs no server libraries
    from eq_webhook.settings import WebhookSettings

    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    settings = WebhookSettings(
        cert_file=args.cert_file,
        key_file=args.key_file,
        address=args.address,
        port=args.port,
        probe_port=args.probe_port,
        cert_check_interval=args.cert_check_interval,
        kubeconfig=args.kubeconfig,
        engine=flags.engine_config(args),
    )
    asyncio.run(serve(settings))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "webhook":
        return _webhook(args)
    return _simulate(args)


def _simulate(args: argparse.Namespace) -> int:
    try:
        objects = load(args.files)
    except LoadError as error:
        print(f"elastic-quota: error: {error}", file=sys.stderr)
        return 1
    for kind, count in sorted(objects.skipped.items()):
        print(f"elastic-quota: note: ignored {count} object(s) of kind {kind}", file=sys.stderr)
    report = simulate(objects, capacity=args.capacity, min_scaling=args.min_scaling)
    sys.stdout.write(RENDERERS[args.output](report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
