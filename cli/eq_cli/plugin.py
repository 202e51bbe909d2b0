"""`kubectl eq`: the quota tree, its reasons and what-ifs, against the live cluster.

kubectl runs any `kubectl-NAME` on PATH as `kubectl NAME`; the package installs `kubectl-eq`,
and `kubectl_complete-eq`, which kubectl runs to complete `kubectl eq` on the command line.
It reads the cluster once, with the list code the operator's caches use (paginated LISTs of
ElasticQuotas, Pods, Nodes, PodDisruptionBudgets, and the ElasticQuotaProfiles and PodGroups of
the APIs the cluster serves), runs the engine, and prints what `simulate` prints for files. The
trees' roots are those the operator wrote: unlike `simulate`, it does not make them again from
the profiles (it names each tree's profile and reports the profiles' problems).

It takes kubectl's options, anywhere on the line: `-n/--namespace` (the pod's namespace; the
kubeconfig context's by default), `-A`, `--context`, `--kubeconfig`, `--request-timeout`,
`-o json|yaml|wide`. The built-in groups' namespace is `--quota-namespace`, else where the
cluster holds them.

    kubectl eq tree [GROUP] [--tree ID] [-n NS] [-o json|yaml|wide]
    kubectl eq explain pod NAME [-n NS]     (also pod/NAME, NS/NAME; -A: any namespace)
    kubectl eq explain group NAME
    kubectl eq what-if -f CHANGE.yaml
    kubectl eq completion bash|zsh
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import re
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NoReturn

from eq_engine import EngineConfig, ObjectError
from eq_engine.model import POD_GROUP_KINDS, parse_disruption_budget, parse_pod_group
from eq_engine.pools import parse_profile

from . import flags
from .explaining import explain, render_explanation, render_what_if
from .loading import PARSERS, LoadError, Objects, Parser, load
from .output import RENDERERS, as_tree, as_wide
from .parts import in_namespace, only_tree, subtree
from .simulate import Report, simulate
from .targets import TargetError, in_any_namespace, target
from .trees import DEFAULT, find_tree

PROG = "kubectl eq"
OUTPUTS = ("json", "yaml", "wide")
EXAMPLES = {
    "tree": """\
  # every group, with min, max, request, runtime and used
  kubectl eq tree
  # one group and those below it, as YAML
  kubectl eq tree team-a -o yaml
  # the groups of one namespace, every column
  kubectl eq tree -n team-a -o wide""",
    "explain": """\
  # why a pod waits, runs or would be evicted
  kubectl eq explain pod train-x -n team-a
  kubectl eq explain pod/train-x -n team-a
  kubectl eq explain team-a/train-x
  # how a group's runtime is reached, who lends and who borrows
  kubectl eq explain group team-a""",
    "what-if": """\
  # what applying these objects would change
  kubectl eq what-if -f change.yaml""",
    "completion": """\
  # complete kubectl-eq in this bash session (kubectl eq: kubectl's own completion runs
  # kubectl_complete-eq, installed beside it)
  source <(kubectl eq completion bash)""",
}


class _Parser(argparse.ArgumentParser):
    """kubectl's kind of error: one line naming what is wrong, exit code 1."""

    def error(self, message: str) -> NoReturn:
        message = re.sub(r"^unrecognized arguments: ", "unknown flag: ", message)
        self.exit(1, f"error: {message} (see '{self.prog} --help')\n")


def _options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """kubectl's options and the engine's settings: on the main parser with their defaults,
    and on each command without (`suppress`), so that they may come before or after it."""
    unset: Any = argparse.SUPPRESS if suppress else None
    kube = parser.add_argument_group("kubectl's options")
    kube.add_argument(
        "-n",
        "--namespace",
        default=unset,
        help="the namespace of the pod asked about, or of the groups `tree` shows; default: "
        "the kubeconfig context's (`tree`: every namespace)",
    )
    kube.add_argument(
        "-A",
        "--all-namespaces",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="a pod of that name in any namespace; `tree`: every namespace (its default)",
    )
    kube.add_argument("--context", default=unset, help="the kubeconfig context to use")
    flags.add_kubeconfig_argument(kube, suppress=suppress)
    kube.add_argument(
        "--request-timeout",
        type=_duration,
        default=argparse.SUPPRESS if suppress else _duration("0"),
        metavar="DURATION",
        help="how long one request to the API server may take (30s, 2m, 1m30s; 0: no limit)",
    )
    kube.add_argument(
        "-o",
        "--output",
        choices=OUTPUTS,
        default=unset,
        help="json, yaml, or wide (`tree`: a table with every column); default: text",
    )
    flags.add_engine_arguments(parser, renamed=flags.QUOTA_NAMESPACE, suppress=suppress)


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's commands by name (argparse lists them on no public attribute)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
_PART = r"(\d+(?:\.\d+)?)(ms|h|m|s)"


def _duration(text: str) -> float:
    """kubectl's `--request-timeout`: seconds (`30`), or a Go duration (`30s`, `2m`, `1m30s`)."""
    text = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if not re.fullmatch(f"(?:{_PART})+", text):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a duration such as 30s, 2m or 0")
    return sum(float(amount) * _UNITS[unit] for amount, unit in re.findall(_PART, text))


def parser() -> argparse.ArgumentParser:
    main = _Parser(
        prog=PROG,
        description="Hierarchical elastic quota in the live cluster: the tree, why a pod or "
        "group is where it is, and what a change would do. Reads the cluster once (the "
        "kubeconfig of kubectl: KUBECONFIG or ~/.kube/config) and computes as the operator does.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:\n" + "\n".join(EXAMPLES.values()),
    )
    _options(main, suppress=False)
    commands = main.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str) -> argparse.ArgumentParser:
        made: argparse.ArgumentParser = commands.add_parser(
            name,
            help=summary,
            description=summary,
            epilog=f"Examples:\n{EXAMPLES[name]}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        return made

    tree = command("tree", "the groups with min, max, request, runtime, used")
    tree.add_argument("group", nargs="?", help="only this group and the groups below it")
    flags.add_tree_argument(tree)
    why = command("explain", "why a pod or a group is where it is")
    why.add_argument(
        "what",
        nargs="+",
        metavar="TYPE NAME",
        help="pod NAME, pod/NAME, NAMESPACE/NAME, group NAME or group/NAME",
    )
    change = command("what-if", "the difference these objects would make")
    change.add_argument(
        "-f", "--filename", dest="files", action="append", required=True, metavar="PATH"
    )
    shell = command("completion", "a shell script that completes kubectl-eq (bash, zsh)")
    shell.add_argument("shell", choices=["bash", "zsh"])
    for made in (tree, why, change, shell):
        _options(made, suppress=True)
    return main


async def read_cluster(
    kubeconfig: str | None, context: str | None = None, timeout: float = 0.0
) -> Objects:
    """Every ElasticQuota, Pod, Node and PodDisruptionBudget, listed once as the operator's
    caches list them, and the ElasticQuotaProfiles and the PodGroups of each API where the
    cluster serves it (the kit's optional kinds: a LIST answered 404, a CRD not installed, is
    none). A 403 on the budgets, the profiles or the PodGroups is a note, not a failure: the
    engine judges without them."""
    from eq_engine.reading import SCHEMAS
    from eq_kit.caching import (
        DISRUPTION_BUDGETS,
        NODES,
        PODS,
        PROFILES,
        QUOTAS,
        Kind,
        Reflector,
        pod_groups,
    )
    from eq_kit.decoding import Decoding
    from eq_kit.kube import ApiError, Http

    from .kubeclient import connect

    required = (QUOTAS, PODS, NODES)
    kinds: list[tuple[Kind, Parser]] = [(kind, PARSERS[kind.name]) for kind in required]
    kinds.append((DISRUPTION_BUDGETS, parse_disruption_budget))
    kinds.append((PROFILES, parse_profile))
    for form in POD_GROUP_KINDS:
        kind = pod_groups(form.group, form.version)
        kinds.append((kind, functools.partial(parse_pod_group, form)))
    api = await connect(kubeconfig, "kubectl-eq", context=context)
    objects = Objects()
    try:
        for kind, parse in kinds:
            try:
                decoding = Decoding(SCHEMAS.get(kind.name))  # pods, nodes: the fields read
                reader = _Reader(objects, parse)
                http = Http(api, read_timeout=timeout)
                await Reflector(http, kind, reader, decoding=decoding).snapshot()
            except ApiError as error:
                if kind in required or error.status != 403:
                    raise
                print(
                    f"kubectl eq: note: cannot list {kind.plural}.{kind.group} ({error}); "
                    "computing without them",
                    file=sys.stderr,
                )
    finally:
        await api.close()
    return objects


class _Reader:
    """A cache's sink that parses what one listing delivers into `objects`."""

    def __init__(self, objects: Objects, parse: Callable[[Mapping[str, Any]], Any]) -> None:
        self._objects, self._parse = objects, parse

    def upsert(self, key: str, obj: Mapping[str, Any]) -> None:
        """The cluster holds what the API server accepted; what the engine cannot read is
        left out with a note, as the operator leaves it out with an Event."""
        try:
            self._objects.add(self._parse(obj), obj)
        except ObjectError as error:
            print(f"kubectl eq: note: ignoring {error}", file=sys.stderr)

    def delete(self, key: str) -> None:  # a single listing delivers no deletions
        raise AssertionError(key)

    def held(self) -> Collection[str]:
        return ()  # nothing before the listing to replace


def _shown(report: Report, args: argparse.Namespace, namespace_given: bool) -> Report:
    """What `kubectl eq tree [GROUP] [--tree ID] [-n NS]` shows; KeyError names what is not
    there."""
    group, tree = args.group, args.tree
    if tree is not None:
        chosen = find_tree(report.trees, tree)
        status = next((g for g in report.groups if g.name == group), None)
        if status is not None and status.tree != chosen.id:
            raise KeyError(f"group {group} is in tree {status.tree or DEFAULT}, not {chosen.name}")
        report = only_tree(report, tree)
    if namespace_given and not args.all_namespaces:
        report = in_namespace(report, args.namespace)
    return report if group is None else subtree(report, group)


def _settings(args: argparse.Namespace, arguments: list[str], cluster: Objects) -> EngineConfig:
    """The engine's settings from the flags; the built-in groups' namespace, unless given (on
    the line or in its variable), where the cluster holds them (the chart's release
    namespace)."""
    config = flags.engine_config(args)
    flag = "--" + flags.QUOTA_NAMESPACE["namespace"]
    given = any(a == flag or a.startswith(flag + "=") for a in arguments)
    if given or flags.env_name(flag) in os.environ:
        return config
    found = {q.namespace for q in cluster.quotas if q.name == config.root_name}
    if len(found) == 1:
        return EngineConfig(**{**flags.values(EngineConfig, args), "namespace": found.pop()})
    return config


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["__complete"]:
        from .completion import complete

        return complete(arguments[1:])
    made = parser()
    args, unknown = made.parse_known_args(arguments)
    if unknown:  # said by the command's parser, whose help lists its options
        commands(made)[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command == "completion":
        from .completion import script

        sys.stdout.write(script(args.shell))
        return 0
    if args.output == "wide" and args.command != "tree":
        return _fail(f"-o wide: {args.command} has no table; use -o json or -o yaml")
    from .kubeclient import context_namespace
    from .preflight import PreflightError

    namespace_given = args.namespace is not None
    try:
        in_context = context_namespace(args.kubeconfig, args.context)  # also checks --context
        args.namespace = args.namespace if namespace_given else in_context
        cluster = asyncio.run(read_cluster(args.kubeconfig, args.context, args.request_timeout))
    except PreflightError as error:
        return _fail(str(error))
    except Exception as error:  # no cluster to read: one line, not a traceback
        return _fail(f"cannot read the cluster: {error}")
    config = _settings(args, arguments, cluster)
    if args.command == "what-if":
        try:
            changes = load(args.files)
        except LoadError as error:
            return _fail(str(error))
        output = args.output or "text"
        sys.stdout.write(render_what_if(config, None, cluster, changes, output, make_roots=False))
        return 0
    report = simulate(cluster, capacity=None, config=config, make_roots=False)
    try:
        if args.command == "explain":
            wanted = target(args.what, args.namespace, everywhere=args.all_namespaces)
            wanted = in_any_namespace(wanted, (p.key for p in report.pods))
            explanation = explain(report, [wanted.kind, wanted.name])
            sys.stdout.write(render_explanation(explanation, args.output or "text"))
            return 0
        report = _shown(report, args, namespace_given)
    except (KeyError, TargetError) as error:
        return _fail(str(error.args[0]))
    if args.output is None:
        sys.stdout.write(as_tree(report))
    elif args.output == "wide":
        sys.stdout.write(as_wide(report))
    else:
        sys.stdout.write(RENDERERS[args.output](report))
    return 0


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
