"""Flags generated from the settings dataclasses, each with an environment-variable equivalent.

Every field of a settings dataclass (`EngineConfig`, `OperatorSettings`, `ReclaimSettings`,
`WebhookSettings`) is one flag, with one source for all it shows: the field `batch_interval:
float = 0.5` is `--batch-interval` (unless renamed), its type converts the text, its default is
the flag's, the first paragraph of its docstring is the help, and `ELASTIC_QUOTA_BATCH_INTERVAL`
sets it too: the Helm chart sets environment variables, a developer types flags, and a flag
given on the command line wins. A boolean is a pair: `--dry-run` alone or `--dry-run=true` sets
it, `--dry-run=false` or `--no-dry-run` clears it.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import os
import re
import textwrap
import types
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from eq_engine import EngineConfig, QuantityError, format_quantity, to_canonical

ENV_PREFIX = "ELASTIC_QUOTA_"
T = TypeVar("T")


def env_name(flag: str) -> str:
    return ENV_PREFIX + flag.lstrip("-").replace("-", "_").upper()


def add(
    group: Any,
    flag: str,
    *,
    default: Any,
    help: str,
    type: Callable[[str], Any] = str,
    suppress: bool = False,
    **kwargs: Any,
) -> None:
    """`group.add_argument` whose default comes from the flag's environment variable; with
    `suppress`, no default: a command's copy of an option the main parser has, which must not
    overwrite what the main parser read (`kubectl eq -n NS explain ...`)."""
    variable = env_name(flag)
    value = default
    raw = os.environ.get(variable)
    if raw is not None:
        try:
            value = type(raw)
        except (TypeError, ValueError, argparse.ArgumentTypeError) as error:
            raise SystemExit(f"elastic-quota: error: {variable}={raw!r}: {error}") from None
    shown = "" if default is None else f"; default: {_text(default)}"
    help = f"{help} (env {variable}{shown})"
    if "dest" in kwargs:  # not the dest's name, `EngineConfig.root_name`, in --help
        kwargs.setdefault("metavar", variable.removeprefix(ENV_PREFIX))
    if type is boolean:  # `--dry-run` alone means true; `--dry-run=false` too; `--no-dry-run`
        kwargs.update(nargs="?", const=True, metavar="BOOL")
    if suppress:
        value = argparse.SUPPRESS
    action = group.add_argument(flag, default=value, type=type, help=help, **kwargs)
    if type is boolean:
        off = "--no-" + flag.removeprefix("--")
        group.add_argument(
            off, dest=action.dest, default=value, action="store_false", help=f"same as {flag}=false"
        )


def add_fields(
    group: Any,
    settings: type[Any],
    *,
    renamed: Mapping[str, str] | None = None,
    only: Collection[str] | None = None,
    suppress: bool = False,
) -> None:
    """One flag per field of the dataclass `settings` (but nested settings, and only `only`):
    `--` and the field's name with dashes, or its name in `renamed` (field -> flag, no dashes).
    `read` gives the values back by field, whatever the flags are called."""
    renamed = renamed or {}
    hints = get_type_hints(settings)
    docs = _docstrings(settings)
    fields = [
        f for f in dataclasses.fields(settings) if not dataclasses.is_dataclass(hints[f.name])
    ]
    flags = {f.name: "--" + renamed.get(f.name, f.name.replace("_", "-")) for f in fields}

    def flag_of(match: re.Match[str]) -> str:  # `max_evictions` in a docstring: --max-evictions
        return flags.get(match[1], match[0])

    for field in fields:
        if only is not None and field.name not in only:
            continue
        convert, metavar = _converter(hints[field.name])
        summary = docs.get(field.name, "").split("\n\n")[0]
        text = re.sub(r"`(\w+)`", flag_of, " ".join(summary.split())).replace("%", "%%")
        add(
            group,
            flags[field.name],
            default=_default(field),
            help=text,
            type=convert,
            suppress=suppress,
            dest=_dest(settings, field.name),
            **({"metavar": metavar} if metavar else {}),
        )


def values(settings: type[Any], args: argparse.Namespace) -> dict[str, Any]:
    """The fields of `settings` that `add_fields` made flags of and that are set (not None: a
    field left unset keeps the dataclass's default)."""
    found = {}
    for field in dataclasses.fields(settings):
        value = getattr(args, _dest(settings, field.name), None)
        if value is not None:
            found[field.name] = value
    return found


def read(settings: type[T], args: argparse.Namespace, **nested: Any) -> T:
    """`settings` from the parsed flags, with its nested settings given."""
    return settings(**values(settings, args), **nested)


def add_engine_arguments(
    parser: argparse.ArgumentParser,
    *,
    algorithm: bool = True,
    renamed: Mapping[str, str] | None = None,
    suppress: bool = False,
) -> None:
    """The built-in groups' flags and, if the command computes runtimes, the algorithm's."""
    groups = parser.add_argument_group("quota groups")
    add_fields(groups, EngineConfig, only=_BUILT_IN_GROUPS, renamed=renamed, suppress=suppress)
    if algorithm:
        algorithms = parser.add_argument_group("algorithm")
        add_fields(algorithms, EngineConfig, only=_ALGORITHM, suppress=suppress)


QUOTA_NAMESPACE = {"namespace": "quota-namespace"}
"""`renamed` for the commands whose `-n/--namespace` is, as in kubectl, the namespace of the
objects asked about (`simulate`, `kubectl eq`): there the built-in groups' is
`--quota-namespace`."""


def engine_config(args: argparse.Namespace) -> EngineConfig:
    return read(EngineConfig, args)


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


def add_kubeconfig_argument(group: Any, *, suppress: bool = False) -> None:
    add(
        group,
        "--kubeconfig",
        default=None,
        help="kubeconfig to use outside a cluster (inside: the service account)",
        suppress=suppress,
    )


def add_tree_argument(group: Any, *, suppress: bool = False) -> None:
    """`--tree ID`: `simulate`'s and `kubectl eq tree`'s choice of one quota tree to show (what
    to print, not a setting: no environment variable)."""
    group.add_argument(
        "--tree",
        metavar="ID",
        default=argparse.SUPPRESS if suppress else None,
        help='only this quota tree: a node pool\'s tree id, or `default` (or "") for the '
        "default tree; default: every tree",
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


_ALGORITHM = frozenset({"min_scaling", "reclaim_min_runtime", "reclaim_min_runtime_hard"})
_BUILT_IN_GROUPS = frozenset(f.name for f in dataclasses.fields(EngineConfig)) - _ALGORITHM
RESOURCES = "RES=QTY[,RES=QTY...]"


def _dest(settings: type[Any], field: str) -> str:
    """Where argparse keeps a field's value: by class and field, so that two settings classes
    may have fields of the same name and a renamed flag is still read by its field."""
    return f"{settings.__name__}.{field}"


def _converter(hint: Any) -> tuple[Callable[[str], Any], str | None]:
    """The function from a flag's text to the field's type, and the flag's metavar if the
    default one (the flag's name) does not show the format."""
    origin, arguments = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):  # `X | None`: None is the unset flag
        (hint,) = [a for a in arguments if a is not type(None)]
        origin, arguments = get_origin(hint), get_args(hint)
    if hint is bool:
        return boolean, None
    if hint in (int, float, str):
        return hint, None
    if origin is frozenset and arguments == (str,):
        return names, "NAME[,NAME...]"
    if origin is tuple and arguments == (str, ...):
        return _sorted_names, "NAME[,NAME...]"
    if origin is Mapping and arguments == (str, int):
        return resources, RESOURCES
    raise TypeError(f"no flag for a setting of type {hint}")


def _sorted_names(text: str) -> tuple[str, ...]:
    return tuple(sorted(names(text)))


def _default(field: dataclasses.Field[Any]) -> Any:
    """The field's default as the flag shows and takes it; None if it has none to show."""
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None


def _text(value: Any) -> str:
    """A default as one would type it: `true`, `0.5`, `kube-system,monitoring`, `cpu=4`."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Mapping):
        value = [f"{name}={format_quantity(name, amount)}" for name, amount in value.items()]
    if isinstance(value, frozenset | tuple | list):
        value = ",".join(sorted(value))
    return str(value) if value != "" else '""'


def _docstrings(settings: type[Any]) -> dict[str, str]:
    """The docstring under each field of a dataclass, read from its source (empty if the
    source is not installed: the flags still work, with no help)."""
    try:
        source = textwrap.dedent(inspect.getsource(settings))
    except (OSError, TypeError):
        return {}
    (definition,) = ast.parse(source).body
    assert isinstance(definition, ast.ClassDef)
    found = {}
    for node, after in zip(definition.body, definition.body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            found[node.target.id] = inspect.cleandoc(after.value.value)
    return found
