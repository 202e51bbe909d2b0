"""The arithmetic of one tree, on numpy arrays indexed by (group, resource).

Exact integer helpers, the split of a parent's runtime among its children and min scaling
(Koordinator's), request and used bottom-up and runtime top-down (`Accounting`).

Knows the groups only through `tree`. Must not keep objects or decide anything; numpy arrays
do not leave the engine, whose faces give `Mapping[str, int]`.
"""

from .accounting import NP_REQUEST, NP_USED, USED, Accounting, columns
from .integers import Amounts, amounts

__all__ = [
    "NP_REQUEST",
    "NP_USED",
    "USED",
    "Accounting",
    "Amounts",
    "amounts",
    "columns",
]
