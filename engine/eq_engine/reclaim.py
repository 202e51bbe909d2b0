"""Which pods to evict from a group whose used exceeds its runtime (koordinator-semantics.md 5).

Pass 1 walks the preemptible pods least important first, taking each away while used is still
above runtime. If that is not enough, every pod taken is evicted. Otherwise pass 2 puts the
taken pods back, most important first, and keeps each one that still fits: only the rest are
evicted. Runtime cpu 50; pods (priority, cpu, memory) 10/20/0, 9/10/1, 8/20/0, 7/40/0; runtime
memory 0: pass 1 takes 7, 8 and 9; pass 2 keeps 8 and evicts 9 and 7. The plan lists the
evicted pods least important first (7, then 9), the order in which they should go.

Used is compared on the runtime's resources only (a resource the runtime lacks is not
limited). Unlike Koordinator, the working sum is not narrowed to each pod's own resources after
a subtraction, which could declare a group satisfied while it still exceeds its runtime.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .integers import Amounts


def exceeds(used: Amounts, runtime: Amounts, limited: npt.NDArray[np.bool_]) -> bool:
    """Whether `used` is above `runtime` on any limited resource."""
    return bool(((used > runtime) & limited).any())


def plan(
    *,
    used: Amounts,
    runtime: Amounts,
    limited: npt.NDArray[np.bool_],
    candidates: Sequence[Amounts],
) -> list[int]:
    """Indices into `candidates` (preemptible pods, least important first) to evict, in order."""
    remaining = used.copy()
    taken: list[int] = []
    for index, request in enumerate(candidates):
        if not exceeds(remaining, runtime, limited):
            break
        remaining -= request
        taken.append(index)
    if exceeds(remaining, runtime, limited):
        return taken
    evicted = []
    for index in reversed(taken):
        remaining += candidates[index]
        if exceeds(remaining, runtime, limited):
            remaining -= candidates[index]
            evicted.append(index)
    return evicted[::-1]
