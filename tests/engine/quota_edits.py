"""A realistic ElasticQuota and edits of it, well-formed or not, as hypothesis strategies: what
a watch of one group may bring, for the readers of a group to agree on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eq_engine import ObjectError
from eq_engine.model import keys
from hypothesis import strategies as st

from tests import realistic

OURS = (keys.RUNTIME, keys.REQUEST, keys.USED, keys.WAITING, keys.LAST_RECLAIM)
READ = (keys.NAMESPACES, keys.STRICT_MAX_KEYS, keys.SHARED_WEIGHT, keys.TOTAL_RESOURCE)
QUANTITIES = st.sampled_from(["4", "500m", "8Gi", "1.5", 3, "lots", "-2", None])
ANNOTATION_TEXT = st.sampled_from(
    ['{"cpu":"4"}', '["team-a"]', '["cpu"]', "{not json", "[1]", '{"cpu":"lots"}', ""]
)


def base() -> dict[str, Any]:
    return realistic.elastic_quota(
        "team-a",
        "quotas",
        parent="dept",
        min={"cpu": "4", "memory": "8Gi"},
        max={"cpu": "8", "memory": "16Gi"},
        status={"used": {"cpu": "2", "memory": "1Gi"}},
    )


def annotations_of(body: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(body["metadata"].get("annotations"), dict):
        body["metadata"]["annotations"] = {}
    annotations: dict[str, Any] = body["metadata"]["annotations"]
    return annotations


def edit_annotation(keys_: tuple[str, ...], values: st.SearchStrategy[Any]) -> Any:
    def apply(body: dict[str, Any], key: str, value: Any) -> None:
        if value is None:
            annotations_of(body).pop(key, None)
        else:
            annotations_of(body)[key] = value

    return st.tuples(st.just(apply), st.sampled_from(keys_), values)


def _set_used(body: dict[str, Any], name: str, amount: Any) -> None:
    status = body.get("status")
    used = status.get("used") if isinstance(status, dict) else None
    body["status"] = {"used": {**(used if isinstance(used, dict) else {}), name: amount}}


def _set_status(body: dict[str, Any], _: str, status: Any) -> None:
    body["status"] = status


def _set_min(body: dict[str, Any], name: Any, amount: Any) -> None:
    spec = body["spec"] if isinstance(body.get("spec"), dict) else {}
    lowest = spec.get("min")
    body["spec"] = {**spec, "min": {**(lowest if isinstance(lowest, dict) else {}), name: amount}}


def _set_label(body: dict[str, Any], key: Any, value: Any) -> None:
    labels = body["metadata"].get("labels")
    body["metadata"]["labels"] = {**(labels if isinstance(labels, dict) else {}), key: value}


def _set_meta(body: dict[str, Any], key: str, value: Any) -> None:
    body["metadata"][key] = value


def _set_spec(body: dict[str, Any], key: str, value: Any) -> None:
    if key:
        body["spec"] = {**(body["spec"] if isinstance(body.get("spec"), dict) else {}), key: value}
    else:
        body["spec"] = value


EDITS = st.one_of(
    edit_annotation(OURS, st.sampled_from(['{"cpu":"4"}', "3", None])),
    edit_annotation(READ, st.one_of(ANNOTATION_TEXT, st.none())),
    edit_annotation(("team", "kubectl.kubernetes.io/last-applied-configuration"), st.just("x")),
    edit_annotation(("team",), st.just(5)),  # not a string: only the full reading may judge
    st.tuples(st.just(_set_used), st.sampled_from(["cpu", "memory"]), QUANTITIES),
    st.tuples(st.just(_set_status), st.just(""), st.sampled_from([None, {}, "x", {"used": 4}])),
    st.tuples(st.just(_set_min), st.sampled_from(["cpu", "pods"]), QUANTITIES),
    # YAML (simulate's files), unlike JSON, may key a map with a bool or a number
    st.tuples(st.just(_set_min), st.sampled_from([1, True]), st.sampled_from(["4", 1])),
    st.tuples(st.just(_set_label), st.sampled_from([1, True]), st.just("demand")),
    st.tuples(st.just(_set_min), st.just("cpu"), st.sampled_from([1, True, 0, False])),
    st.tuples(
        st.just(_set_spec),
        st.sampled_from(["max", "extra", ""]),
        st.sampled_from([None, "x", {}, {"cpu": "8"}, {"cpu": 1}, {"cpu": 1.0}, {"cpu": True}]),
    ),
    st.tuples(
        st.just(_set_status), st.just(""), st.sampled_from([{"used": None}, {"used": {"cpu": 1}}])
    ),
    st.tuples(st.just(_set_status), st.just(""), st.just({"used": {"cpu": 1.0}})),
    st.tuples(
        st.just(_set_label),
        st.sampled_from([keys.PARENT, keys.IS_PARENT, "team"]),
        st.sampled_from(["dept", "other", "true"]),
    ),
    st.tuples(
        st.just(_set_meta),
        st.sampled_from(
            ["resourceVersion", "creationTimestamp", "deletionTimestamp", "uid", "generateName"]
        ),
        st.sampled_from(["2026-11-27T03:00:00Z", "yesterday", "42"]),
    ),
    st.tuples(
        st.just(_set_meta),
        st.sampled_from(["annotations", "labels", "ownerReferences", "name", "namespace"]),
        st.sampled_from(
            [None, [], "", 0, False, {}, {"team": 5}, [{"kind": "X", "controller": True}], "b"]
        ),
    ),
)


def outcome(read: Callable[[Any], Any], body: dict[str, Any]) -> tuple[Any, ...]:
    """What `read` makes of `body`: the group with its `status.used`, or the error."""
    try:
        quota = read(body)
    except ObjectError as error:
        return ("unreadable", str(error))
    return ("read", quota, quota.used)
