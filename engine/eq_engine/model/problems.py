"""Problems: configuration the engine can compute with but that the user should fix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SHOWN = 3
"""Names a message lists before "and N more"."""


def listing(names: Sequence[str], *, complete: bool = True) -> str:
    """`a, b, c and 2 more`: the objects a message names, kept short; `complete` False: the
    names are only the first found (`a, b, c and more`)."""
    if not complete and len(names) >= SHOWN:
        return ", ".join(names[:SHOWN]) + " and more"
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return ", ".join(names[:SHOWN]) + more


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One finding about one object, e.g. a missing parent or a pod bound to a parent group.

    `str(problem)` reads `ElasticQuota team-a/ml: metadata.labels[...]: parent "x" does not exist`.
    """

    kind: str
    ref: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind} {self.ref}: {self.field}: {self.message}"
