"""What a user names for `explain`, in kubectl's forms: `pod NAME -n NS`, `pod/NAME`,
`NS/NAME`, `group NAME`, `group/NAME` (and the kinds' other spellings, as kubectl takes
`po`, `pods`, `eq`, `elasticquota`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

POD_KINDS = frozenset({"pod", "pods", "po"})
GROUP_KINDS = frozenset({"group", "groups", "elasticquota", "elasticquotas", "eq"})


class TargetError(ValueError):
    """A name that does not say which pod or group, in words kubectl would use."""


@dataclass(frozen=True)
class Target:
    kind: str  # "pod" or "group"
    name: str  # a pod's NAMESPACE/NAME, a group's name


def target(words: list[str], namespace: str | None, *, everywhere: bool = False) -> Target:
    """The pod or group `words` name (`explain`'s positional words); a pod's namespace is its
    `NS/` prefix, else `namespace`. With `everywhere` (`-A`) a pod's namespace is left
    empty, for `in_any_namespace` to find."""
    if not words or len(words) > 2:
        raise TargetError(
            "expected `pod NAME`, `pod/NAME`, `NAMESPACE/NAME` or `group NAME`, "
            f"got {' '.join(words) or 'nothing'}"
        )
    if len(words) == 2:
        kind, name = words
    else:
        kind, _, name = words[0].partition("/")
        if kind.lower() not in POD_KINDS | GROUP_KINDS:  # NAMESPACE/NAME: a pod
            kind, name = "pod", words[0]
    kind = kind.lower()
    if not name:
        raise TargetError(f"{kind}: a name is required")
    if kind in GROUP_KINDS:
        return Target("group", name)
    if kind not in POD_KINDS:
        raise TargetError(f'unknown kind "{kind}": expected pod or group')
    if "/" in name:
        return Target("pod", name)
    if everywhere:
        return Target("pod", f"/{name}")
    return Target("pod", f"{namespace or 'default'}/{name}")


def in_any_namespace(wanted: Target, keys: Iterable[str]) -> Target:
    """A pod named with `-A`: the one pod of that name, whatever its namespace."""
    if wanted.kind != "pod" or not wanted.name.startswith("/"):
        return wanted
    name = wanted.name[1:]
    found = sorted(key for key in keys if key.split("/", 1)[1] == name)
    if not found:
        raise KeyError(f'pods "{name}" not found in any namespace')
    if len(found) > 1:
        raise KeyError(f'pods "{name}": one in each of {", ".join(found)}: name one with -n')
    return Target("pod", found[0])
