"""`elastic-quota`: the command line. Parses arguments and dispatches; no rules here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from eq_engine import QuantityError, to_canonical

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
    return main


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
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
