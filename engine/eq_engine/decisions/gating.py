"""Gating: which new pods wait behind the admission gate until their group has room for them.

The webhook puts the gate (`keys.ADMISSION_GATE`) on the pods `gate_exemption` does not exempt;
the operator lifts it when quota admits them (`admission.py`). Pure: one pod and a `Catalog`.
"""

from __future__ import annotations

from ..model import Pod, keys
from ..tree import Catalog


def gate_exemption(pod: Pod, catalog: Catalog) -> str | None:
    """Why a new pod does not wait behind the admission gate; None: it waits until its group
    has room for it. The one rule of which pods are gated (README, "Quota-gated scheduling").

    Whatever made the pod (a person, with a name or `generateName`, or a controller), it is
    gated unless: it is bound to a node already (the API server refuses gates there), it opts
    out (label `gate: "false"`), it has the gate already, it is a DaemonSet's or a mirror pod
    (placed on its node by its controller or the kubelet), or its group limits nothing: the
    system group, or the default group without a max (the gate would only add a wait on the
    operator).
    """
    if pod.node_name:
        return "bound to a node already"
    if pod.gate_opt_out:
        return f'labelled {keys.GATE_OPT_OUT}: "false"'
    if pod.gated:
        return "has the admission gate already"
    if pod.node_pinned:
        return "a DaemonSet or mirror pod, placed on its node by its controller"
    group, _ = catalog.group_of(pod)
    if not catalog.limits(group):
        return f"its group {group} has no limit"
    return None
