"""Lending and borrowing limits on the real control plane, as a user sets them with kubectl.

Each story has a department of 10 CPUs with a lender (min 6) and a borrower (min 4, max 10), as
test_reclaim.py's do, and runs beside the other on one control plane with the chart installed.

- A lending limit of 2 on the lender: of the borrower's five 2-CPU pods the gate lets three run
  (its min 4 and the 2 lent) and holds two, while the lender runs nothing; `kubectl eq tree -o
  wide` and the operator's metrics say what is lendable, lent and borrowed. When the lender's
  6-CPU pod comes, reclaim evicts one pod only (the 2 it lent), and the two held stay held.
- A borrowing limit of 1 on the borrower: of its eight 1-CPU pods five run (min 4 + 1), though
  the lender leaves all of its 6 idle; the user removes the limit and the other three run.
- The webhook, called by the real API server, refuses what makes no sense, with the object, the
  field and the numbers, and kubectl prints it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from eq_engine.model import keys

from scripts.control_plane.build import Built
from tests.control_plane.product import Process, installed
from tests.control_plane.test_gating import ACT, listed, pod, priority_class
from tests.control_plane.test_kubectl_eq import BIN
from tests.control_plane.test_quickstart import DENIED, RealKubectl
from tests.control_plane.test_reclaim import CRDS, DELAY, Department, side_by_side
from tests.kubectl import rows
from tests.manifests import BORROWING_LIMIT, LENDING_LIMIT
from tests.waiting import consistently, eventually


async def annotate(department: Department, who: str, key: str, value: str | None) -> str:
    """`kubectl annotate eq` on the lender or the borrower (`value` None: removes the key);
    kubectl's stderr when the API server refuses it."""
    team = getattr(department, who)
    setting = f"{key}-" if value is None else f"{key}='{value}'"
    result = await team.kubectl.run(
        f"kubectl annotate eq {team.name} -n {team.namespace} --overwrite {setting}", ok=False
    )
    return result.err.strip() if result.code else ""


def cpu(department: Department, who: str, key: str) -> str | None:
    value = getattr(department, who).annotation(key)
    return None if value is None else json.loads(value).get("cpu")


async def a_lending_limit_keeps_the_rest_of_the_lenders_min(
    department: Department, operator: Process
) -> None:
    lender, borrower = department.lender, department.borrower
    refused = await annotate(department, "lender", LENDING_LIMIT, '{"cpu": "8"}')
    assert refused == (
        f"Error from server (Forbidden): {DENIED}ElasticQuota {lender.namespace}/{lender.name}: "
        f"metadata.annotations[{LENDING_LIMIT}]: cpu 8 exceeds spec.min.cpu 6: a group lends "
        "at most its min"
    ), refused
    assert await annotate(department, "lender", LENDING_LIMIT, '{"cpu": "2"}') == ""
    await eventually(
        lambda: cpu(department, "lender", keys.REQUEST) == "4",
        timeout=ACT,
        what="the lender asking for the 4 it keeps",
    )
    classes = [priority_class(f"{borrower.name}-{10 - i}", 10 - i) for i in range(5)]
    await borrower.cluster.kubectl("kubectl apply -f -", stdin=listed(*classes))
    await borrower.apply(
        *(pod(f"b{i}", "2", priority_class=c["metadata"]["name"]) for i, c in enumerate(classes))
    )
    await borrower.run(["b0", "b1", "b2"])
    await borrower.waits(2)
    await consistently(lambda: len(borrower.admitted()) == 3, seconds=DELAY, what="three admitted")
    assert cpu(department, "lender", keys.RUNTIME) == "4"

    dept = department.lender.quota()["metadata"]["labels"][keys.PARENT]
    wide = await lender.kubectl.run(f"kubectl eq tree {dept} -o wide")
    table = {row["GROUP"]: row for row in rows(wide.out)}
    assert {
        name: (table[name]["LENDABLE"], table[name]["LENT"], table[name]["BORROWED"])
        for name in (lender.name, borrower.name)
    } == {
        lender.name: ("2", "2", "0"),
        borrower.name: ("4", "0", "2"),
    }, wide
    series = (
        f'elastic_quota_group_lendable{{group="{lender.name}",namespace="{lender.namespace}",'
        f'parent="{dept}",resource="cpu",tree=""}} 2000.0'
    )
    assert series in await operator.metrics()

    await lender.apply(pod("l0", "6"))
    await lender.run(["l0"])
    await eventually(lambda: department.evicted() == ["b2"], timeout=ACT, what="b2 evicted")
    await borrower.run(["b0", "b1"])
    await consistently(
        lambda: len(department.evictions()) == 1 and borrower.waiting() == ["b3", "b4"],
        seconds=DELAY,
        what="one eviction, b3 and b4 still held",
    )


async def a_borrowing_limit_caps_what_the_borrower_may_take(
    department: Department, _: Process
) -> None:
    borrower = department.borrower
    refused = await annotate(department, "borrower", BORROWING_LIMIT, '{"memory": "1Gi"}')
    assert refused.endswith(
        f"ElasticQuota {borrower.namespace}/{borrower.name}: "
        f"metadata.annotations[{BORROWING_LIMIT}]: memory: the resource is not in spec.max"
    ), refused
    assert await annotate(department, "borrower", BORROWING_LIMIT, '{"cpu": "1"}') == ""
    names = [f"c{i}" for i in range(8)]
    await borrower.apply(*(pod(name, "1") for name in names))
    await borrower.run(names[:5])
    await borrower.waits(3)
    await consistently(lambda: len(borrower.admitted()) == 5, seconds=DELAY, what="five admitted")
    assert cpu(department, "borrower", keys.RUNTIME) == "5"  # its min 4 and its limit 1
    assert cpu(department, "lender", keys.RUNTIME) == "0"  # idle: 6 it would lend
    assert await annotate(department, "borrower", BORROWING_LIMIT, None) == ""
    await borrower.run(names)
    assert department.evicted() == []


STORIES = {
    "lend": (a_lending_limit_keeps_the_rest_of_the_lenders_min, 6),
    "borrow": (a_borrowing_limit_caps_what_the_borrower_may_take, 6),
}


async def test_lending_and_borrowing_limits_hold_on_the_real_control_plane(
    built: Built, tmp_path: Path
) -> None:
    settings = (f"operator.reclaim.delay={DELAY:g}",)
    async with installed(built, tmp_path, *settings, crds=CRDS) as (plane, cluster, started):
        kubectl = RealKubectl(cluster)
        kubectl.env["PATH"] = f"{BIN}{os.pathsep}{kubectl.env['PATH']}"  # kubectl eq
        await side_by_side(plane, cluster, kubectl, started.operators[0], STORIES)
