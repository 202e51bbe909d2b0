from eq_engine import EngineConfig, parse_quota

from tests.manifests import P, pod, quota, run

ROOT = EngineConfig().root_name
DEFAULT = EngineConfig().default_name
SYSTEM = EngineConfig().system_name


def groups_of(engine):
    return {p.key: group for p, group, _ in engine.pods()}


def problems(engine):
    return [str(p) for p in engine.problems]


def test_builtin_groups_always_exist():
    engine = run()
    names = [s.name for s in engine.statuses()]
    assert names == [ROOT, SYSTEM, DEFAULT]
    assert all(s.namespace == "koordinator-system" for s in engine.statuses())


def test_builtin_names_and_namespace_are_configurable():
    engine = run(root_name="r", system_name="s", default_name="d", namespace="quota-system")
    assert [(s.name, s.namespace) for s in engine.statuses()] == [
        ("r", "quota-system"),
        ("s", "quota-system"),
        ("d", "quota-system"),
    ]


def test_pod_to_group_follows_the_documented_order():
    engine = run(
        quota("labelled", namespace="q"),
        quota("team-a", namespace="team-a"),  # named like its namespace
        quota("other", namespace="team-a"),
        quota("shared", namespace="q", namespaces=["ns-1", "ns-2"]),
        quota("alone", namespace="solo"),  # the only ElasticQuota in its namespace
        quota("one", namespace="two-quotas"),
        quota("two", namespace="two-quotas"),
        pod("by-label", namespace="team-a", quota="labelled"),
        pod("by-seed-label", namespace="team-a", labels={P + "quota-name": "labelled"}),
        pod("by-name", namespace="team-a"),
        pod("by-annotation", namespace="ns-2"),
        pod("by-only-one", namespace="solo"),
        pod("ambiguous", namespace="two-quotas"),
        pod("nothing", namespace="elsewhere"),
        pod("dns", namespace="kube-system", quota="labelled"),
    )
    assert groups_of(engine) == {
        "team-a/by-label": "labelled",
        "team-a/by-seed-label": "labelled",
        "team-a/by-name": "team-a",
        "ns-2/by-annotation": "shared",
        "solo/by-only-one": "alone",
        "two-quotas/ambiguous": DEFAULT,
        "elsewhere/nothing": DEFAULT,
        "kube-system/dns": SYSTEM,  # system namespaces win over labels
    }
    assert problems(engine) == []


def test_system_namespaces_are_configurable():
    engine = run(
        pod("agent", namespace="monitoring"),
        pod("dns", namespace="kube-system"),
        system_namespaces=frozenset({"monitoring"}),
    )
    assert groups_of(engine) == {"monitoring/agent": SYSTEM, "kube-system/dns": DEFAULT}


def test_pod_label_naming_no_group_goes_to_default_and_is_reported():
    engine = run(pod("p", namespace="shop", quota="ghost"))
    assert groups_of(engine) == {"shop/p": DEFAULT}
    assert problems(engine) == [
        f"Pod shop/p: metadata.labels[{P}name]: names no ElasticQuota ('ghost'); "
        "the default group is used"
    ]


def test_pod_labels_that_disagree_use_koordinators_spelling_and_are_reported():
    engine = run(quota("a"), quota("b"), pod("p", quota="a", labels={P + "quota-name": "b"}))
    assert groups_of(engine) == {"apps/p": "a"}
    assert "disagrees with" in problems(engine)[0]


def test_pod_in_a_parent_group_counts_there_and_is_reported():
    engine = run(
        quota("dept", is_parent=True, min={"cpu": 4}, max={"cpu": 8}),
        quota("team", parent="dept", min={"cpu": 2}, max={"cpu": 8}),
        pod("stray", quota="dept", cpu="1"),
        pod("ok", quota="team", cpu="1"),
        capacity={"cpu": 10},
    )
    assert engine.status("dept").request == {"cpu": 2000}
    assert problems(engine) == [
        f"Pod apps/stray: metadata.labels[{P}name]: names a parent group ('dept'); "
        "pods belong in leaves"
    ]


def test_pods_alike_are_placed_alike_each_reported_and_placed_anew_on_a_new_tree():
    """Pods of one namespace with the same labels go to one group (asked once per tree), but
    a misleading label is reported for each pod, and a new tree places them all again."""
    alike = {P + "name": "ghost"}
    engine = run(
        quota("dept", is_parent=True, min={"cpu": 4}, max={"cpu": 8}),
        pod("stray-0", quota="dept"),
        pod("stray-1", quota="dept"),
        pod("lost-0", labels=alike),
        pod("lost-1", labels=alike),
    )
    assert groups_of(engine) == {
        "apps/stray-0": "dept",
        "apps/stray-1": "dept",
        "apps/lost-0": DEFAULT,
        "apps/lost-1": DEFAULT,
    }
    assert sorted(p.split(":")[0] for p in problems(engine)) == [
        "Pod apps/lost-0",
        "Pod apps/lost-1",
        "Pod apps/stray-0",
        "Pod apps/stray-1",
    ]
    engine.set_quota(parse_quota(quota("ghost", max={"cpu": 8})))
    engine.recompute()
    assert groups_of(engine)["apps/lost-0"] == groups_of(engine)["apps/lost-1"] == "ghost"
    assert sorted(p.split(":")[0] for p in problems(engine)) == [
        "Pod apps/stray-0",
        "Pod apps/stray-1",
    ]


def test_missing_parent_puts_the_group_under_the_root_and_reports_it():
    engine = run(
        quota("team", namespace="t", parent="ghost", min={"cpu": 1}, max={"cpu": 2}),
        capacity={"cpu": 10},
    )
    assert engine.status("team").parent == ROOT
    assert problems(engine) == [
        f"ElasticQuota t/team: metadata.labels[{P}parent]: parent 'ghost' does not exist; "
        "the group is placed under the root"
    ]


def test_parent_cycle_is_broken_at_the_smallest_name_and_reported():
    engine = run(
        quota("c", parent="a", is_parent=True, max={"cpu": 4}),
        quota("a", parent="b", is_parent=True, max={"cpu": 4}),
        quota("b", parent="c", is_parent=True, max={"cpu": 4}),
        quota("leaf", parent="b", max={"cpu": 4}),
        pod("p", quota="leaf", cpu="1"),
        capacity={"cpu": 10},
    )
    parents = {s.name: s.parent for s in engine.statuses()}
    assert parents["a"] == ROOT and parents["b"] == "c" and parents["c"] == "a"
    assert parents["leaf"] == "b"
    assert engine.status("a").used == {"cpu": 1000}  # the pod's use still reaches the top
    assert problems(engine) == [
        f"ElasticQuota quotas/a: metadata.labels[{P}parent]: parent cycle a -> b -> c -> a; "
        "'a' is placed under the root"
    ]


def test_self_parent_is_a_cycle():
    engine = run(quota("me", parent="me", is_parent=True))
    assert engine.status("me").parent == ROOT
    assert "parent cycle me -> me" in problems(engine)[0]


def test_child_of_a_non_parent_is_kept_and_reported():
    engine = run(quota("a", max={"cpu": 4}), quota("b", parent="a", max={"cpu": 4}))
    assert engine.status("b").parent == "a"
    assert problems(engine) == [
        f"ElasticQuota quotas/b: metadata.labels[{P}parent]: parent 'a' is not a parent group "
        f'({P}is-parent is not "true")'
    ]


def test_builtin_group_as_parent_is_reported():
    engine = run(quota("t", parent=DEFAULT))
    assert engine.status("t").parent == ROOT
    assert "is a built-in group that cannot have children" in problems(engine)[0]


def test_root_parent_spellings():
    engine = run(quota("a", parent=""), quota("b", parent="root"), quota("c", parent=ROOT))
    assert {engine.status(n).parent for n in "abc"} == {ROOT}
    assert problems(engine) == []


def test_parent_labels_that_disagree_are_reported():
    engine = run(
        quota("dept", is_parent=True),
        quota("x", is_parent=True),
        quota("t", parent="dept", labels={P + "parent-quota-name": "x"}),
    )
    assert engine.status("t").parent == "dept"
    assert "disagrees with" in problems(engine)[0]


def test_duplicate_names_keep_the_first_namespace():
    engine = run(
        quota("team", namespace="b", max={"cpu": 1}), quota("team", namespace="a", max={"cpu": 2})
    )
    assert engine.status("team").namespace == "a"
    assert "names are unique cluster-wide" in problems(engine)[0]


def test_namespace_bound_twice_is_reported_and_first_name_wins():
    engine = run(
        quota("x", namespaces=["shared"]),
        quota("y", namespaces=["shared"]),
        pod("p", namespace="shared"),
    )
    assert groups_of(engine) == {"shared/p": "x"}
    assert "namespace 'shared' is already bound to 'x'" in problems(engine)[0]


def test_negative_amounts_count_as_zero_and_are_reported():
    engine = run(
        quota("t", min={"cpu": "-1"}, max={"cpu": 4}, weight={"cpu": "-2"}),
        pod("p", quota="t", node=None, cpu="2"),
        capacity={"cpu": 4},
    )
    assert engine.status("t").effective_min == {"cpu": 0}
    assert problems(engine) == [
        "ElasticQuota quotas/t: spec.min.cpu: -1 is negative",
        f"ElasticQuota quotas/t: metadata.annotations[{P}shared-weight]: cpu -2 is negative",
    ]


def test_default_group_settings_come_from_its_object():
    engine = run(
        quota(DEFAULT, namespace="koordinator-system", min={"cpu": 1}, max={"cpu": 2}),
        pod("p", namespace="x", cpu="1"),
        pod("q", namespace="x", cpu="1"),
        capacity={"cpu": 10},
    )
    status = engine.status(DEFAULT)
    assert (status.min, status.max, status.runtime) == ({"cpu": 1000}, {"cpu": 2000}, {"cpu": 2000})
    labels = sorted(label for _, _, label in engine.pods())
    assert labels == ["in-quota", "over-quota"]
