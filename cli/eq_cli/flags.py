"""Flags shared by the long-running commands, each with an environment-variable equivalent.

`--root-name NAME` can also be set as `ELASTIC_QUOTA_ROOT_NAME=NAME`: the Helm chart sets
environment variables, a developer types flags. A flag given on the command line wins.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from eq_engine import EngineConfig, QuantityError, to_canonical

ENV_PREFIX = "ELASTIC_QUOTA_"


def env_name(flag: str) -> str:
    return ENV_PREFIX + flag.lstrip("-").replace("-", "_").upper()


def add(group: Any, flag: str, *, default: Any, help: str, **kwargs: Any) -> None:
    """`group.add_argument` whose default comes from the flag's environment variable."""
    variable = env_name(flag)
    raw = os.environ.get(variable)
    value = default
    if raw is not None:
        convert = kwargs.get("type", str)
        try:
            value = convert(raw)
        except (TypeError, ValueError, argparse.ArgumentTypeError) as error:
            raise SystemExit(f"elastic-quota: error: {variable}={raw!r}: {error}") from None
    if kwargs.get("type") is boolean:  # `--dry-run` alone means true; `--dry-run=false` too
        kwargs.update(nargs="?", const=True, metavar="BOOL")
    shown = "" if default is None else f"; default: {default}"
    group.add_argument(flag, default=value, help=f"{help} (env {variable}{shown})", **kwargs)


def names(text: str) -> frozenset[str]:
    """A comma-separated list, `kube-system,monitoring`."""
    return frozenset(part.strip() for part in text.split(",") if part.strip())


def boolean(text: str) -> bool:
    """`true`/`false` (also yes/no, 1/0, on/off), for flags and their variables alike."""
    value = text.strip().lower()
    if value in ("true", "yes", "1", "on"):
        return True
    if value in ("false", "no", "0", "off"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r}: expected true or false")


def resources(text: str) -> dict[str, int] | None:
    """`cpu=100,memory=512Gi` as a ResourceList; an empty text (`ELASTIC_QUOTA_DEFAULT_MAX=`)
    leaves the setting unset, as if the flag were not given."""
    if not text.strip():
        return None
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


def add_kubeconfig_argument(group: Any) -> None:
    add(
        group,
        "--kubeconfig",
        default=None,
        help="kubeconfig to use outside a cluster (inside: the service account)",
    )


def add_log_arguments(group: Any) -> None:
    add(
        group,
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log verbosity",
    )
    add(
        group,
        "--log-format",
        default="text",
        choices=["text", "json"],
        help="text lines, or one JSON object per line",
    )


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = EngineConfig()
    group = parser.add_argument_group("quota groups")
    add(
        group,
        "--namespace",
        default=defaults.namespace,
        help="namespace of the built-in groups' ElasticQuota objects",
    )
    add(group, "--root-name", default=defaults.root_name, help="name of the root group")
    add(group, "--system-name", default=defaults.system_name, help="name of the system group")
    add(group, "--default-name", default=defaults.default_name, help="name of the default group")
    add(
        group,
        "--system-namespaces",
        default=None,
        help="comma-separated namespaces whose pods belong to the system group: never gated, "
        "evicted or denied (default: kube-system and --namespace, where the product runs)",
    )
    add(
        group,
        "--default-min",
        default=None,
        type=resources,
        help="min of the default group when it has no ElasticQuota, RES=QTY[,RES=QTY...]",
    )
    add(
        group,
        "--default-max",
        default=None,
        type=resources,
        help="max of the default group when it has no ElasticQuota; unset: unlimited",
    )


def engine_config(args: argparse.Namespace, **overrides: Any) -> EngineConfig:
    if args.system_namespaces is not None:  # else EngineConfig's default, which needs --namespace
        overrides["system_namespaces"] = names(args.system_namespaces)
    return EngineConfig(
        default_min=args.default_min or {},
        default_max=args.default_max,
        namespace=args.namespace,
        root_name=args.root_name,
        system_name=args.system_name,
        default_name=args.default_name,
        **overrides,
    )
