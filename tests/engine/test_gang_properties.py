"""Properties of all-or-nothing admission (issue 24) on random queues of gangs and single pods.

A scene is one to three groups with random room (min, max, the node's capacity), Koordinator
gangs of random sizes and minimums (some short of pods, some whose minimum is malformed, some
with a pod in another group) and single pods, each pod waiting behind the gate, admitted a
moment ago and not bound yet (`holding`, with or without its gate still on in the watch),
admitted long ago and not bound (no longer held), or running. Pods are Jobs' as the Job
controller makes them (tests.realistic). Checked through `admissions(snapshot, holding=...)`,
then again after the edge lifts the admitted gates, then after the scheduler binds them:

- a gang none of whose pods is past the gate gets none of its pods or at least its minimum,
  and none at all when its minimum is malformed, it is short of pods, or it is split;
- per group, on each resource its runtime limits, what is admitted plus used plus held never
  exceeds the runtime, and the non-preemptible part never exceeds the min: the room is read
  from the group's status, the requests from the scene, not from the admission code;
- lifting the admitted gates and deciding again admits nobody twice, nor anybody new: the room
  did not grow; the same once the scheduler binds them.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from eq_engine import QuotaEngine
from eq_engine.decisions.admission import Admissions, admissions
from hypothesis import event, given, note
from hypothesis import strategies as st

from tests.manifests import load, node, quota, run
from tests.realistic import job_pod

GATE = "quota.scheduling.koordinator.sh/admission"
QUOTA_LABEL = "quota.scheduling.koordinator.sh/name"
GANG_NAME = "gang.scheduling.koordinator.sh/name"
MIN_AVAILABLE = "gang.scheduling.koordinator.sh/min-available"
NAMESPACE = "jobs"
GROUPS = ("team-a", "team-b", "team-c")
DEFAULT = "koordinator-default-quota"
"""Where a pod without a quota label counts: no max, so nothing to check there."""
MALFORMED = ("0", "-2", "four", "", "2.5", None)
"""Minimums Koordinator (`strconv.ParseInt(s, 10, 32)`) and the engine both refuse or lack
(None: no annotation); an int 1 to 7 is valid to both."""

WAITING, HELD, HELD_GATED, EXPIRED, RUNNING = "waiting", "held", "held-gated", "expired", "running"
"""A pod's state: gated; admitted a moment ago and not bound (in `holding`), its gate lifted or
still on in the watch; admitted long ago and not bound (not held); bound."""
STATES = (WAITING, HELD, HELD_GATED, EXPIRED, RUNNING)


@dataclasses.dataclass(frozen=True, slots=True)
class Member:
    """One pod of the scene, as the test knows it (never read back from the engine)."""

    key: str
    raw: dict[str, Any]
    group: str
    request: Mapping[str, int]
    """Canonical units: cpu in millicores, memory in bytes."""
    preemptible: bool
    gang: str | None
    minimum: str | None
    """The min-available it declares; None: no annotation."""
    created: int
    state: str


@dataclasses.dataclass(frozen=True, slots=True)
class Scene:
    quotas: tuple[dict[str, Any], ...]
    node: dict[str, Any]
    pods: tuple[Member, ...]

    @property
    def holding(self) -> frozenset[str]:
        return frozenset(m.key for m in self.pods if m.state in (HELD, HELD_GATED))

    def gangs(self) -> dict[str, list[Member]]:
        found: dict[str, list[Member]] = {}
        for member in self.pods:
            if member.gang is not None:
                found.setdefault(member.gang, []).append(member)
        return found


def valid(text: str | None) -> int | None:
    """A minimum as Koordinator reads it (ParseInt, base 10, 32 bits) and at least 1."""
    if text is None or not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if 1 <= value < 2**31 else None


def minimum_of(members: Iterable[Member]) -> int | None:
    """The gang's minimum: the first one that reads, oldest pod first (Koordinator's rule)."""
    oldest = sorted(members, key=lambda m: (m.created, m.key))
    return next((found for m in oldest if (found := valid(m.minimum)) is not None), None)


def build(
    job: str,
    attempt: int,
    *,
    group: str,
    cpu: int,
    memory: int,
    preemptible: bool,
    gang: tuple[str, str | None] | None,
    created: int,
    priority: int,
    state: str,
) -> dict[str, Any]:
    """A Job's pod in `state`; `gang`: its name and the min-available it declares."""
    labels = {} if group == DEFAULT else {QUOTA_LABEL: group}
    if not preemptible:
        labels["quota.scheduling.koordinator.sh/preemptible"] = "false"
    annotations: dict[str, str] = {}
    if gang is not None:
        annotations[GANG_NAME] = gang[0]
        if gang[1] is not None:
            annotations[MIN_AVAILABLE] = gang[1]
    requests = {"cpu": f"{cpu}m", **({"memory": f"{memory}Mi"} if memory else {})}
    raw = job_pod(
        NAMESPACE,
        job,
        attempt,
        labels=labels,
        annotations=annotations,
        requests=requests,
        priority=priority,
        node="n1" if state == RUNNING else None,
        gates=[GATE] if state in (WAITING, HELD_GATED) else None,
    )
    raw["metadata"]["creationTimestamp"] = f"2026-03-01T09:{created:02d}:00Z"
    return raw


@st.composite
def scenes(draw: st.DrawFn) -> Scene:
    groups = GROUPS[: draw(st.integers(1, len(GROUPS)))]
    with_memory = draw(st.booleans())
    quotas = []
    for name in groups:
        top = draw(st.integers(0, 16)) * 250
        limits = {"cpu": f"{top}m"}
        floor = {"cpu": f"{draw(st.integers(0, top // 250)) * 250}m"}
        if with_memory and draw(st.booleans()):  # memory limited in this group, or not
            most = draw(st.integers(0, 8)) * 512
            limits["memory"] = f"{most}Mi"
            floor["memory"] = f"{draw(st.integers(0, most // 512)) * 512}Mi"
        quotas.append(quota(name, namespace="quotas", min=floor, max=limits))
    capacity = {"cpu": f"{draw(st.integers(0, 40)) * 250}m", "memory": "64Gi"}
    if with_memory:
        capacity["memory"] = f"{draw(st.integers(0, 16)) * 512}Mi"
    places = (*groups, DEFAULT)
    weights = st.sampled_from([*groups, *groups, *groups, DEFAULT])  # mostly in a group
    pods: list[Member] = []

    def add(job: str, attempt: int, *, gang: str | None, minimum: str | None, **how: Any) -> None:
        cpu = draw(st.sampled_from([0, 250, 500, 750, 1000, 1500]))
        memory = draw(st.sampled_from([0, 256, 1024])) if with_memory else 0
        preemptible = draw(st.sampled_from([True, True, True, False]))
        created = draw(st.integers(0, 30))
        raw = build(
            job,
            attempt,
            cpu=cpu,
            memory=memory,
            preemptible=preemptible,
            gang=None if gang is None else (gang, minimum),
            created=created,
            priority=draw(st.integers(0, 2)),
            **how,
        )
        request = {"cpu": cpu, "memory": memory * 2**20}
        key = f"{NAMESPACE}/{raw['metadata']['name']}"
        pods.append(
            Member(
                key, raw, how["group"], request, preemptible, gang, minimum, created, how["state"]
            )
        )

    for g in range(draw(st.integers(0, 5))):
        job = f"train-{g}"
        size = draw(st.integers(1, 6))
        declared = draw(
            st.one_of(st.integers(1, 8).map(str), st.sampled_from(MALFORMED))
            if draw(st.booleans())
            else st.integers(1, size).map(str)  # half the gangs: a minimum they can meet
        )
        group = draw(weights)
        stray = draw(st.integers(-1, size - 1)) if draw(st.integers(0, 4)) == 0 else -1
        fresh = draw(st.integers(0, 3)) > 0  # mostly a gang nobody admitted yet
        for i in range(size):
            own = declared if draw(st.integers(0, 5)) else draw(st.sampled_from(MALFORMED))
            where = draw(st.sampled_from(places)) if i == stray else group
            state = WAITING if fresh else draw(st.sampled_from(STATES))
            add(job, i, gang=job, minimum=own, group=where, state=state)
    for s in range(draw(st.integers(0, 5))):
        add(
            f"solo-{s}",
            0,
            gang=None,
            minimum=None,
            group=draw(weights),
            state=draw(st.sampled_from([WAITING, WAITING, *STATES])),
        )
    return Scene(tuple(quotas), node("n1", **capacity), tuple(pods))


def engine_of(scene: Scene) -> QuotaEngine:
    return run(*scene.quotas, scene.node, *(m.raw for m in scene.pods))


def check(engine: QuotaEngine, scene: Scene, decided: Admissions) -> None:
    """(a) all or nothing per gang, (b) the room of each group, on one decision."""
    admitted = set(decided.admitted)
    holding = scene.holding
    waiting = {m.key for m in scene.pods if m.state in (WAITING, HELD_GATED)}
    assert len(admitted) == len(decided.admitted), "a pod admitted twice in one decision"
    assert admitted <= waiting - holding, "admitted a pod not behind the gate, or held"
    for gang, members in scene.gangs().items():
        if any(m.state != WAITING for m in members):
            continue  # past the gate: its other pods go as single pods
        taken = sum(m.key in admitted for m in members)
        minimum = minimum_of(members)
        split = len({m.group for m in members}) > 1
        note(f"gang {gang}: {len(members)} pods, minimum {minimum}, split {split}: {taken}")
        if minimum is None or len(members) < minimum or split:
            event("gang: cannot be judged")
            assert taken == 0, f"gang {gang}: {taken} admitted, it cannot be judged"
        else:
            event(f"gang: {'admitted' if taken else 'waits'}")
            assert taken == 0 or taken >= minimum, f"gang {gang}: {taken} of {minimum} admitted"
    for name in {m.group for m in scene.pods} - {DEFAULT}:
        status = engine.status(name)
        assert status.runtime is not None
        mine = [m for m in scene.pods if m.group == name]
        held = [m for m in mine if m.key in holding and m.state != RUNNING]
        admitting = [m for m in mine if m.key in admitted]
        for resource, runtime in status.runtime.items():
            added = _sum(admitting, resource)
            total = status.used.get(resource, 0) + _sum(held, resource) + added
            assert added == 0 or total <= runtime, f"{name} {resource}: {total} > {runtime}"
            if added and total == runtime:
                event("room: filled to the unit")
            added = _sum(admitting, resource, fixed=True)
            total = (
                status.non_preemptible_used.get(resource, 0)
                + _sum(held, resource, fixed=True)
                + added
            )
            floor = status.effective_min.get(resource, 0)
            assert added == 0 or total <= floor, f"{name} {resource} non-preemptible: {total}"


def _sum(members: Iterable[Member], resource: str, *, fixed: bool = False) -> int:
    return sum(m.request.get(resource, 0) for m in members if not (fixed and m.preemptible))


def moved(scene: Scene, keys: Collection[str], state: str, *, lag: Collection[str] = ()) -> Scene:
    """The scene once `keys` are in `state` (HELD: gates lifted, but those in `lag` still show
    theirs in the watch; RUNNING: bound to n1)."""
    pods = []
    for member in scene.pods:
        if member.key in keys:
            raw = copy.deepcopy(member.raw)
            now = HELD_GATED if member.key in lag else state
            if now != HELD_GATED:
                raw["spec"].pop("schedulingGates", None)
            if now == RUNNING:
                raw["spec"]["nodeName"] = "n1"
                raw["status"]["phase"] = "Running"
            member = dataclasses.replace(member, raw=raw, state=now)
        pods.append(member)
    return Scene(scene.quotas, scene.node, tuple(pods))


def decide(engine: QuotaEngine, scene: Scene) -> Admissions:
    decided = admissions(engine.recompute(), holding=scene.holding)
    note(f"holding {sorted(scene.holding)}; admitted {sorted(decided.admitted)}")
    check(engine, scene, decided)
    return decided


@given(scenes(), st.data())
def test_gangs_are_admitted_whole_within_the_room_and_once(scene: Scene, data: st.DataObject):
    engine = engine_of(scene)
    first = decide(engine, scene)
    # The edge lifts the gates; the watch shows some of them still on.
    admitted = set(first.admitted)
    lag = data.draw(st.sets(st.sampled_from(sorted(admitted))) if admitted else st.just(set()))
    lifted = moved(scene, admitted, HELD, lag=lag)
    load(engine, *(m.raw for m in lifted.pods if m.key in admitted))
    engine.recompute()
    again = decide(engine, lifted)
    assert not admitted & set(again.admitted), "admitted twice"
    assert again.admitted == (), "the room did not grow, yet more was admitted"
    # The scheduler binds some of them: they leave `holding` and count in used instead.
    bound = data.draw(st.sets(st.sampled_from(sorted(admitted))) if admitted else st.just(set()))
    placed = moved(lifted, bound, RUNNING)
    load(engine, *(m.raw for m in placed.pods if m.key in bound))
    engine.recompute()
    last = decide(engine, placed)
    assert last.admitted == (), "binding moved budget from held to used, yet more was admitted"
