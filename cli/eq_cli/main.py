"""`elastic-quota`: the command line. Parses arguments and dispatches; no rules here."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from importlib import metadata
from typing import Any

from . import flags, logs
from .explaining import explain, render_explanation, render_what_if
from .loading import LoadError, load
from .output import RENDERERS
from .preflight import PreflightError, certificate
from .simulate import simulate


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="elastic-quota",
        description="Hierarchical elastic quota for Kubernetes (Koordinator's semantics).",
    )
    main.add_argument(
        "--version", action="version", version=f"%(prog)s {metadata.version('elastic-quota')}"
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
        type=flags.resources,
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
    why = sim.add_mutually_exclusive_group()
    why.add_argument(
        "--explain",
        nargs=2,
        metavar=("pod|group", "NAME"),
        help="why: `pod NAMESPACE/NAME` (its group, label, wait, eviction) or `group NAME` "
        "(how its runtime is reached, who lends and borrows)",
    )
    why.add_argument(
        "--what-if",
        metavar="PATH",
        action="append",
        help="the difference these objects make, applied over the -f ones (repeatable)",
    )
    flags.add_engine_arguments(sim)
    _webhook_parser(commands)
    _operator_parser(commands)
    return main


def _operator_parser(commands: Any) -> None:
    op = commands.add_parser(
        "operator",
        help="run the operator: quota numbers, pod labels, admission gates and reclaim",
        description=(
            "Keep every ElasticQuota's runtime/request/used and every scheduled pod's capacity "
            "label true, lift the admission gate of waiting pods whose group has room, and "
            "evict borrowed pods when their owners need the capacity back. Several replicas "
            "may run: the holder of a Lease writes, lifts gates and evicts."
        ),
    )
    run = op.add_argument_group("running")
    flags.add(
        run,
        "--watch-namespaces",
        default="",
        help="comma-separated namespaces to watch; empty: all of them",
        type=flags.names,
    )
    flags.add(
        run,
        "--batch-interval",
        default=0.5,
        type=float,
        help="seconds between recomputes (a burst of events costs one)",
    )
    flags.add(
        run,
        "--probe-port",
        default=8080,
        type=int,
        help="HTTP port of /healthz, /readyz and /metrics",
    )
    flags.add(
        run,
        "--lease-name",
        default="elastic-quota-operator",
        help="the Lease, in the built-in groups' namespace, that elects the writer",
    )
    flags.add(
        run,
        "--lease-duration",
        default=15.0,
        type=float,
        help="seconds a stand-by waits after it last saw the Lease change before it takes "
        "over; the leader renews every 2/15 of it and gives up after 2/3 without renewal",
    )
    flags.add(run, "--identity", default="", help="this replica's name in the Lease (the pod's)")
    flags.add(
        run,
        "--api-qps",
        default=50.0,
        type=float,
        help="writes per second to the API server after a burst (client-side token bucket, as "
        "client-go's); 0: no limit",
    )
    flags.add(
        run,
        "--api-burst",
        default=100,
        type=int,
        help="writes that may go at once before --api-qps paces them",
    )
    flags.add(
        run,
        "--write-workers",
        default=16,
        type=int,
        help="writes in flight at once (a quarter take ElasticQuota writes first, the rest "
        "pod labels first)",
    )
    flags.add_kubeconfig_argument(run)
    flags.add_log_arguments(run)
    flags.add(
        run,
        "--admission-hold",
        default=60.0,
        type=float,
        help="seconds a pod admitted through the gate holds its group's budget while the "
        "scheduler has not bound it; then it counts only once bound",
    )
    reclaim = op.add_argument_group("reclaim")
    flags.add(
        reclaim,
        "--reclaim",
        default=True,
        type=flags.boolean,
        help="evict borrowed pods when a group's used stays above its runtime",
    )
    flags.add(
        reclaim,
        "--reclaim-interval",
        default=1.0,
        type=float,
        help="seconds between looks at every group",
    )
    flags.add(
        reclaim,
        "--reclaim-delay",
        default=120.0,
        type=float,
        help="seconds a group must stay above its runtime before a round of evictions; each "
        "round starts a new window, so a group loses at most --max-evictions pods per delay",
    )
    flags.add(
        reclaim,
        "--max-evictions",
        default=5,
        type=int,
        help="pods evicted per group per round (one round per --reclaim-delay) at most",
    )
    flags.add(
        reclaim,
        "--dry-run",
        default=False,
        type=flags.boolean,
        help="only report (Events, logs, metrics) what would be evicted",
    )
    flags.add_engine_arguments(op)
    groups = op.add_argument_group("algorithm")
    flags.add(
        groups,
        "--min-scaling",
        default=True,
        type=flags.boolean,
        help="scale children's mins down when their parent's total cannot cover them",
    )


def _operator(args: argparse.Namespace) -> int:
    from eq_operator.main import serve  # imported here: simulate needs no server libraries
    from eq_operator.settings import OperatorSettings, ReclaimSettings

    logs.configure(args.log_level, args.log_format)
    if args.kubeconfig:  # Kopf logs in by itself and reads this variable
        os.environ["KUBECONFIG"] = args.kubeconfig
    settings = OperatorSettings(
        engine=flags.engine_config(args, min_scaling=args.min_scaling),
        reclaim=ReclaimSettings(
            enabled=args.reclaim,
            interval=args.reclaim_interval,
            delay=args.reclaim_delay,
            max_evictions=args.max_evictions,
            dry_run=args.dry_run,
        ),
        namespaces=tuple(sorted(args.watch_namespaces)),
        admission_hold=args.admission_hold,
        batch_interval=args.batch_interval,
        probe_port=args.probe_port,
        lease_name=args.lease_name,
        lease_duration=args.lease_duration,
        identity=args.identity,
        api_qps=args.api_qps,
        api_burst=args.api_burst,
        write_workers=args.write_workers,
    )

    asyncio.run(_with_api(args.kubeconfig, "operator", lambda api: serve(settings, api)))
    return 0


def _webhook_parser(commands: Any) -> None:
    hook = commands.add_parser(
        "webhook",
        help="serve the admission webhook: validate ElasticQuota and Pod objects, gate new pods",
        description=(
            "Validate ElasticQuota and Pod admissions (AdmissionReview v1) over HTTPS against the "
            "cluster's quota tree, which it watches, and mutate new pods of limited groups: put "
            "them behind the admission gate that the operator lifts when their group has room. "
            "Health and metrics on a plain HTTP port."
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
        "--gate-pods",
        default=True,
        type=flags.boolean,
        help="add the admission gate to new pods of limited groups at /mutate/pods (false: "
        "that endpoint lets every pod through unchanged)",
    )
    flags.add_kubeconfig_argument(server)
    flags.add_log_arguments(server)
    flags.add_engine_arguments(hook)


def _webhook(args: argparse.Namespace) -> int:
    if not args.cert_file or not args.key_file:
        parser().error("webhook: --cert-file and --key-file are required (TLS is mandatory)")
    certificate(args.cert_file, args.key_file)
    from eq_webhook.main import serve  # imported here: simulate needs no server libraries
    from eq_webhook.settings import WebhookSettings

    logs.configure(args.log_level, args.log_format)
    settings = WebhookSettings(
        cert_file=args.cert_file,
        key_file=args.key_file,
        address=args.address,
        port=args.port,
        probe_port=args.probe_port,
        cert_check_interval=args.cert_check_interval,
        gate_pods=args.gate_pods,
        engine=flags.engine_config(args),
    )

    asyncio.run(_with_api(args.kubeconfig, "webhook", lambda api: serve(settings, api)))
    return 0


async def _with_api(
    kubeconfig: str | None, component: str, run: Callable[[Any], Awaitable[None]]
) -> None:
    """Run a server with an API client that is closed when it stops."""
    from .kubeclient import connect

    api = await connect(kubeconfig, component)
    try:
        await run(api)
    finally:
        await api.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "webhook":
            return _webhook(args)
        if args.command == "operator":
            return _operator(args)
    except PreflightError as error:
        print(f"elastic-quota {args.command}: error: {error}", file=sys.stderr)
        return 1
    return _simulate(args)


def _simulate(args: argparse.Namespace) -> int:
    try:
        objects = load(args.files)
    except LoadError as error:
        print(f"elastic-quota: error: {error}", file=sys.stderr)
        return 1
    for kind, count in sorted(objects.skipped.items()):
        print(f"elastic-quota: note: ignored {count} object(s) of kind {kind}", file=sys.stderr)
    if not objects.nodes and args.capacity is None:
        print(
            "elastic-quota: warning: no Nodes and no --capacity: the cluster's capacity is taken "
            "as 0, so runtimes are 0 and reclaim plans to evict running pods; give --capacity "
            "(e.g. cpu=100,memory=512Gi) or include the Nodes",
            file=sys.stderr,
        )
    config = flags.engine_config(args, min_scaling=args.min_scaling)
    if args.what_if:
        try:
            changes = load(args.what_if)
        except LoadError as error:
            print(f"elastic-quota: error: {error}", file=sys.stderr)
            return 1
        output = render_what_if(config, args.capacity, objects, changes, args.output)
        sys.stdout.write(output)
        return 0
    report = simulate(objects, capacity=args.capacity, config=config)
    if args.explain:
        kind = args.explain[0]
        if kind not in ("pod", "group"):
            parser().error(f"--explain: expected pod or group, not {kind!r}")
        try:
            explanation = explain(report.engine, args.explain)
        except KeyError as error:
            print(f"elastic-quota: error: {error.args[0]}", file=sys.stderr)
            return 1
        sys.stdout.write(render_explanation(explanation, args.output))
        return 0
    sys.stdout.write(RENDERERS[args.output](report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
