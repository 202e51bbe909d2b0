"""`elastic-quota`: the command line. Parses arguments and dispatches; no rules here."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from eq_operator.settings import OperatorSettings, ReclaimSettings
from eq_webhook.settings import WebhookSettings

from . import flags, logs
from .output import RENDERERS
from .parts import only_tree
from .preflight import PreflightError, certificate
from .simulate import simulate


class _Version(argparse.Action):
    """`--version`, with the installed distribution's metadata read only when asked for: every
    start (the operator's, the webhook's) would pay 25 ms to import `importlib.metadata`."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from importlib import metadata

        print(f"{parser.prog} {metadata.version('elastic-quota')}")  # stdout, as argparse's
        parser.exit()


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="elastic-quota",
        description="Hierarchical elastic quota for Kubernetes (Koordinator's semantics).",
    )
    main.add_argument("--version", action=_Version, help="show the version and exit")
    commands = main.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sim = commands.add_parser(
        "simulate",
        help="compute quotas, labels and reclaim for objects in files, offline",
        description=(
            "Compute every group's request, runtime and used, every pod's capacity label, the "
            "admission gate's decision and the reclaim plan for ElasticQuota, Pod and Node "
            "objects read from files, with the PodGroups (gangs) and PodDisruptionBudgets among "
            "them, exactly as the operator would. Other kinds are ignored."
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
        "-o", "--output", choices=sorted(RENDERERS), default="table", help="default: table"
    )
    flags.add_tree_argument(sim)
    why = sim.add_mutually_exclusive_group()
    why.add_argument(
        "--explain",
        nargs="+",
        metavar="TYPE NAME",
        help="why: `pod NAME` with -n, `pod/NAME` or `NAMESPACE/NAME` (its group, label, wait, "
        "eviction) or `group NAME` (how its runtime is reached, who lends and borrows)",
    )
    sim.add_argument(
        "-n",
        "--namespace",
        default="default",
        help="the namespace of the pod --explain names without one (default: default)",
    )
    why.add_argument(
        "--what-if",
        metavar="PATH",
        action="append",
        help="the difference these objects make, applied over the -f ones (repeatable)",
    )
    flags.add_engine_arguments(sim, renamed=flags.QUOTA_NAMESPACE)
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
    flags.add_fields(run, OperatorSettings, renamed={"namespaces": "watch-namespaces"})
    flags.add_kubeconfig_argument(run)
    flags.add_log_arguments(run)
    reclaim = op.add_argument_group("reclaim")
    renamed = {
        "enabled": "reclaim",
        "interval": "reclaim-interval",
        "delay": "reclaim-delay",
    }
    flags.add_fields(reclaim, ReclaimSettings, renamed=renamed)
    flags.add_engine_arguments(op)


def operator_settings(args: argparse.Namespace) -> OperatorSettings:
    return flags.read(
        OperatorSettings,
        args,
        engine=flags.engine_config(args),
        reclaim=flags.read(ReclaimSettings, args),
    )


def _operator(args: argparse.Namespace) -> int:
    with _collector_paused(freeze=True):
        from eq_operator.main import serve  # imported here: simulate needs no server libraries

    logs.configure(args.log_level, args.log_format)
    if args.kubeconfig:  # Kopf logs in by itself and reads this variable
        os.environ["KUBECONFIG"] = args.kubeconfig
    settings = operator_settings(args)
    _serve(args.kubeconfig, "operator", lambda api: serve(settings, api))
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
    flags.add_fields(server, WebhookSettings)
    flags.add_kubeconfig_argument(server)
    flags.add_log_arguments(server)
    flags.add_engine_arguments(hook, algorithm=False)  # it computes no runtime


def webhook_settings(args: argparse.Namespace) -> WebhookSettings:
    given = flags.values(WebhookSettings, args)
    if not given.get("cert_file") or not given.get("key_file"):
        parser().error("webhook: --cert-file and --key-file are required (TLS is mandatory)")
    return WebhookSettings(**given, engine=flags.engine_config(args))


def _webhook(args: argparse.Namespace) -> int:
    settings = webhook_settings(args)
    certificate(settings.cert_file, settings.key_file)
    with _collector_paused(freeze=True):
        from eq_webhook.main import serve  # imported here: simulate needs no server libraries

    logs.configure(args.log_level, args.log_format)
    _serve(args.kubeconfig, "webhook", lambda api: serve(settings, api))
    return 0


def _serve(kubeconfig: str | None, component: str, run: Callable[[Any], Awaitable[None]]) -> None:
    """Run a server on the servers' event loop (`eq_kit.loops`)."""
    from eq_kit import loops

    loops.run(_with_api(kubeconfig, component, run))


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
    with _collector_paused():
        return _simulate(args)


@contextmanager
def _collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """No cyclic garbage collection while what is made lives until the process ends: the
    server libraries as they are imported (Kopf's import of kubernetes-asyncio alone makes
    thousands of classes), and what simulate builds (the decoded file, every object parsed, the
    engine, the report), where each collection would walk millions of live objects for nothing
    (on 100,000 pods, a third of the run). What is freed meanwhile goes by reference counting
    as usual.

    `freeze`: what was made is then moved out of the collector's sight for good (`gc.freeze`),
    as the server libraries are: otherwise the first collections after their import walk every
    module, class and function made (65 ms each, twice in every operator's and webhook's
    start). The cost: the few cycles the imports left behind (about 0.6 MiB: discarded
    classes, the argument parsers) are never freed."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if enabled:
            gc.enable()


def _simulate(args: argparse.Namespace) -> int:
    # Imported here, not by every command: reading files (YAML) and explaining are simulate's
    # alone, and the operator's and the webhook's starts would pay for them.
    from .explaining import explain, render_explanation, render_what_if
    from .loading import LoadError, load
    from .targets import TargetError, target

    if args.tree is not None and (args.what_if or args.explain):
        parser().error("--tree: shows one tree of the report, not with --explain or --what-if")
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
    config = flags.engine_config(args)
    if args.what_if:
        try:
            changes = load(args.what_if)
        except LoadError as error:
            print(f"elastic-quota: error: {error}", file=sys.stderr)
            return 1
        output = render_what_if(
            config, args.capacity, objects, changes, args.output, make_roots=True
        )
        sys.stdout.write(output)
        return 0
    report = simulate(objects, capacity=args.capacity, config=config)
    if args.explain:
        try:
            wanted = target(args.explain, args.namespace)
        except TargetError as error:
            parser().error(f"--explain: {error}")
        try:
            explanation = explain(report, [wanted.kind, wanted.name])
        except KeyError as error:
            print(f"elastic-quota: error: {error.args[0]}", file=sys.stderr)
            return 1
        sys.stdout.write(render_explanation(explanation, args.output))
        return 0
    if args.tree is not None:
        try:
            report = only_tree(report, args.tree)
        except KeyError as error:
            print(f"elastic-quota: error: --tree: {error.args[0]}", file=sys.stderr)
            return 1
    sys.stdout.write(RENDERERS[args.output](report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
