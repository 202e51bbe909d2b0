"""`kubectl eq`: the quota tree, its reasons and what-ifs, against the live cluster.

kubectl runs any `kubectl-NAME` on PATH as `kubectl NAME`; the package installs `kubectl-eq`.
It reads the cluster once, with the list code the operator's caches use (paginated LISTs of
ElasticQuotas, Pods, Nodes, PodDisruptionBudgets, and the ElasticQuotaProfiles and PodGroups of
the APIs the cluster serves), runs the engine, and prints what `simulate` prints for files. The
trees' roots are those the operator wrote: unlike `simulate`, it does not make them again from
the profiles (it names each tree's profile and reports the profiles' problems).

    kubectl eq tree [GROUP] [--tree ID] [-o text|json|yaml]
    kubectl eq explain pod NAMESPACE/NAME
    kubectl eq explain group NAME
    kubectl eq what-if -f CHANGE.yaml
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import yaml
from eq_engine import ObjectError
from eq_engine.model import POD_GROUP_KINDS, parse_disruption_budget, parse_pod_group
from eq_engine.pools import parse_profile

from . import flags
from .explaining import explain, render_explanation, render_what_if
from .loading import PARSERS, LoadError, Objects, Parser, load
from .output import as_json, as_tree
from .parts import only_tree, subtree
from .simulate import Report, simulate
from .trees import DEFAULT, find_tree


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="kubectl eq",
        description="Hierarchical elastic quota in the live cluster: the tree, why a pod or "
        "group is where it is, and what a change would do. Reads the cluster once (the "
        "kubeconfig of kubectl: KUBECONFIG or ~/.kube/config) and computes as the operator does.",
    )
    flags.add_kubeconfig_argument(main)
    flags.add_engine_arguments(main)
    commands = main.add_subparsers(dest="command", required=True, metavar="COMMAND")
    tree = commands.add_parser("tree", help="the groups with min, max, request, runtime, used")
    tree.add_argument("group", nargs="?", help="only this group and the groups below it")
    tree.add_argument("-o", "--output", choices=["text", "json", "yaml"], default="text")
    flags.add_tree_argument(tree)
    why = commands.add_parser("explain", help="why a pod or a group is where it is")
    why.add_argument("kind", choices=["pod", "group"])
    why.add_argument("name", help="NAMESPACE/NAME of a pod, or a group's name")
    why.add_argument("-o", "--output", choices=["text", "json"], default="text")
    change = commands.add_parser("what-if", help="the difference these objects would make")
    change.add_argument(
        "-f", "--filename", dest="files", action="append", required=True, metavar="PATH"
    )
    change.add_argument("-o", "--output", choices=["text", "json"], default="text")
    return main


async def read_cluster(kubeconfig: str | None) -> Objects:
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
    api = await connect(kubeconfig, "kubectl-eq")
    objects = Objects()
    try:
        for kind, parse in kinds:
            try:
                decoding = Decoding(SCHEMAS.get(kind.name))  # pods, nodes: the fields read
                reader = _Reader(objects, parse)
                await Reflector(Http(api), kind, reader, decoding=decoding).snapshot()
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


def _shown(report: Report, group: str | None, tree: str | None) -> Report:
    """What `kubectl eq tree [GROUP] [--tree ID]` shows; KeyError names what is not there."""
    if tree is not None:
        chosen = find_tree(report.trees, tree)
        status = next((g for g in report.groups if g.name == group), None)
        if status is not None and status.tree != chosen.id:
            raise KeyError(f"group {group} is in tree {status.tree or DEFAULT}, not {chosen.name}")
        report = only_tree(report, tree)
    return report if group is None else subtree(report, group)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    config = flags.engine_config(args)
    try:
        cluster = asyncio.run(read_cluster(args.kubeconfig))
    except Exception as error:  # no cluster to read: one line, not a traceback
        print(f"kubectl eq: error: cannot read the cluster: {error}", file=sys.stderr)
        return 1
    if args.command == "what-if":
        try:
            changes = load(args.files)
        except LoadError as error:
            print(f"kubectl eq: error: {error}", file=sys.stderr)
            return 1
        what = render_what_if(config, None, cluster, changes, args.output, make_roots=False)
        sys.stdout.write(what)
        return 0
    report = simulate(cluster, capacity=None, config=config, make_roots=False)
    try:
        if args.command == "explain":
            explanation = explain(report, [args.kind, args.name])
            sys.stdout.write(render_explanation(explanation, args.output))
            return 0
        report = _shown(report, args.group, args.tree)
    except KeyError as error:
        print(f"kubectl eq: error: {error.args[0]}", file=sys.stderr)
        return 1
    if args.output == "text":
        sys.stdout.write(as_tree(report))
    elif args.output == "json":
        sys.stdout.write(as_json(report))
    else:
        sys.stdout.write(yaml.safe_dump(json.loads(as_json(report)), sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
