"""ElasticQuotaProfile (quota.koordinator.sh/v1alpha1): one quota tree per node pool.

A profile names its tree's root ElasticQuota (`spec.quotaName`, in the profile's namespace) and
the nodes of its pool (`spec.nodeSelector`); `profile_roots.py` works out what that root
should hold.
Read as Koordinator's profile controller reads it (pkg/quota-controller/profile at a7a1b76):

- the tree id is the profile's `tree-id` label, else the decimal FNV-64a hash of
  `namespace/name` (Koordinator then writes it on the profile as that label; the operator
  writes nothing on a profile: the same hash gives the same id wherever it is needed);
- `spec.resourceRatio` scales the pool's totals, when it is a number (Go's `ParseFloat`) greater
  than 0 and at most 1; anything else is ratio 1;
- the `resource-keys` annotation (a JSON list) names the resources of the root's min and max;
  cpu and memory when absent or not a JSON list of strings. JSON `null` and `[]` are no
  resource at all, as Go decodes them.

Where Koordinator ignores a malformed ratio or keys, so does this, but the profile keeps a
`Problem` saying what was written, what is used instead and what is expected. A profile that
Koordinator cannot use at all (no `quotaName`, a malformed or missing `nodeSelector`: the CRD
requires both) raises `ObjectError`. One difference, for a text no one means: a list with a
non-string (`[1, "gpu"]`) is cpu and memory here, where Go's decoder leaves a mix of those
defaults and the strings it could read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from ..model import LabelSelector, ObjectError, Problem, keys, parse_selector

KIND: Final = "ElasticQuotaProfile"
DEFAULT_KEYS: Final = ("cpu", "memory")

_FNV_OFFSET: Final = 0xCBF29CE484222325
_FNV_PRIME: Final = 0x100000001B3
_MASK: Final = (1 << 64) - 1

# Go's strconv.ParseFloat: a decimal number, or a hexadecimal one with a binary exponent; an
# underscore may stand between two digits, or between the prefix 0x and a digit. Its Inf and
# NaN spellings need no rule: they are never a ratio in (0, 1].
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEXADECIMAL = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+"
)
_MISPLACED = re.compile(r"(?<![0-9])_|_(?![0-9])")
_MISPLACED_HEXADECIMAL = re.compile(r"(?<![0-9a-fA-F])(?<!^0[xX])(?<!^[+-]0[xX])_|_(?![0-9a-fA-F])")


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    namespace: str
    quota_name: str
    """The root ElasticQuota's name, in the profile's namespace."""
    node_selector: LabelSelector
    quota_labels: tuple[tuple[str, str], ...] = ()
    """`spec.quotaLabels`, by key: put on the root (after the `profile` label, which one of them
    may replace; `tree-id` and `is-root` replace them, as in Koordinator)."""
    ratio: float | None = None
    """What scales the pool's totals: None without `resourceRatio`, 1.0 when it is malformed."""
    resource_keys: tuple[str, ...] = DEFAULT_KEYS
    tree_label: str = ""
    """The `tree-id` label as written; "": none, the tree id is the hash."""
    created: float | None = None
    """`metadata.creationTimestamp`, seconds since the epoch: the older profile wins a node."""
    uid: str = field(default="", compare=False)
    problems: tuple[Problem, ...] = ()
    """What Koordinator ignores: a malformed `resourceRatio` or `resource-keys`."""

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def root_ref(self) -> str:
        """`namespace/quotaName`: the root ElasticQuota."""
        return f"{self.namespace}/{self.quota_name}"

    @property
    def tree_id(self) -> str:
        return self.tree_label or tree_hash(self.namespace, self.name)

    @property
    def age(self) -> tuple[bool, float, str, str]:
        """Sorts the oldest first: by creation, then `namespace/name` (undated ones last)."""
        return (self.created is None, self.created or 0.0, self.namespace, self.name)


def tree_hash(namespace: str, name: str) -> str:
    """Koordinator's tree id for a profile without the `tree-id` label: FNV-64a of
    `namespace/name`, in decimal."""
    value = _FNV_OFFSET
    for byte in f"{namespace}/{name}".encode():
        value = ((value ^ byte) * _FNV_PRIME) & _MASK
    return str(value)


def profile_of_tree(profiles: Iterable[Profile], tree_id: str) -> Profile | None:
    """The profile that made tree `tree_id` (the oldest, should several name it), whose node
    selector keeps the tree's pods on its pool; None for the default tree ("") or no profile.
    Koordinator's pod webhook takes the first profile labelled with the tree id."""
    if not tree_id:
        return None
    return min((p for p in profiles if p.tree_id == tree_id), key=lambda p: p.age, default=None)


def pool_profiles(profiles: Iterable[Profile]) -> dict[str, Profile]:
    """The profile of each node pool, by tree id (`profile_of_tree`): its node selector keeps
    the pool's pods on its nodes."""
    profiles = list(profiles)
    return {
        tree_id: profile
        for tree_id in {p.tree_id for p in profiles}
        if (profile := profile_of_tree(profiles, tree_id)) is not None
    }


def parse_profile(raw: Mapping[str, Any]) -> Profile:
    """A profile from its Kubernetes dict; `ObjectError` names the field Koordinator could not
    use."""
    metadata = _mapping(raw.get("metadata"))
    namespace, name = str(metadata.get("namespace") or ""), str(metadata.get("name") or "")
    ref = f"{namespace}/{name}"

    def fail(where: str, message: str) -> ObjectError:
        return ObjectError(KIND, ref, where, message)

    spec = raw.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        raise fail("spec", "expected an object")
    spec = spec or {}
    quota_name = spec.get("quotaName")
    if not isinstance(quota_name, str) or not quota_name:
        raise fail("spec.quotaName", "required: the name of the tree's root ElasticQuota")
    selector = parse_selector(spec.get("nodeSelector"), kind=KIND, ref=ref, field=_SELECTOR)
    if selector is None:
        raise fail(_SELECTOR, "required: the nodes of the pool ({} for every node)")
    labels = _strings(metadata, "labels", fail)
    problems: list[Problem] = []
    return Profile(
        name=name,
        namespace=namespace,
        quota_name=quota_name,
        node_selector=selector,
        quota_labels=tuple(sorted(_strings(spec, "quotaLabels", fail, "spec.").items())),
        ratio=_ratio(spec.get("resourceRatio"), ref, problems, fail),
        resource_keys=_resource_keys(_strings(metadata, "annotations", fail), ref, problems),
        tree_label=labels.get(keys.TREE_ID, ""),
        created=_created(metadata.get("creationTimestamp"), fail),
        uid=str(metadata.get("uid") or ""),
        problems=tuple(problems),
    )


_SELECTOR: Final = "spec.nodeSelector"
_Fail = Callable[[str, str], ObjectError]


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _strings(
    holder: Mapping[str, Any], key: str, fail: _Fail, at: str = "metadata."
) -> dict[str, str]:
    """A map of strings (labels, annotations, quotaLabels); null: empty."""
    value = holder.get(key) or {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise fail(at + key, "expected a map of strings to strings")
    return dict(value)


def _created(value: object, fail: _Fail) -> float | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        raise fail("metadata.creationTimestamp", f"{value!r}: expected an RFC 3339 time") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def go_float(text: str) -> float | None:
    """`text` as Go's `strconv.ParseFloat(text, 64)` reads it; None where Go fails."""
    if "_" in text:
        hexadecimal = text.lstrip("+-")[:2].lower() == "0x"
        if (_MISPLACED_HEXADECIMAL if hexadecimal else _MISPLACED).search(text):
            return None
        text = text.replace("_", "")
    if _DECIMAL.fullmatch(text):
        return float(text)
    if _HEXADECIMAL.fullmatch(text):
        return float.fromhex(text)
    return None


def _ratio(value: object, ref: str, problems: list[Problem], fail: _Fail) -> float | None:
    if value is None:
        return None
    if not isinstance(value, str):  # the CRD's type is string: Koordinator could not read it
        raise fail("spec.resourceRatio", f'{value!r}: expected a string, e.g. "0.9"')
    number = go_float(value)
    if number is not None and 0 < number <= 1:
        return number
    problems.append(
        Problem(
            KIND,
            ref,
            "spec.resourceRatio",
            f"{value!r} is not a number greater than 0 and at most 1: the pool's whole "
            'total is used (ratio 1), as Koordinator does; expected e.g. "0.9"',
        )
    )
    return 1.0


def _resource_keys(
    annotations: Mapping[str, str], ref: str, problems: list[Problem]
) -> tuple[str, ...]:
    text = annotations.get(keys.RESOURCE_KEYS)
    if text is None:
        return DEFAULT_KEYS
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        pass  # reported below
    else:
        if value is None:  # Go decodes null into an empty list
            return ()
        if isinstance(value, list) and all(isinstance(key, str) for key in value):
            return tuple(dict.fromkeys(value))
    problems.append(
        Problem(
            KIND,
            ref,
            f"metadata.annotations[{keys.RESOURCE_KEYS}]",
            f"{text!r} is not a JSON list of resource names: the root's min and max hold cpu "
            'and memory, as Koordinator does; expected e.g. ["cpu","memory","nvidia.com/gpu"]',
        )
    )
    return DEFAULT_KEYS
