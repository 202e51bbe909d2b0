"""Why, for people.

A pod's group, label, wait and eviction and a group's runtime (`explain_pod`, `explain_group`),
the difference a set of changed objects would make (`what_if`), and the gangs as a reader sees
them (`gang_views`): what `elastic-quota simulate` and `kubectl eq` print.

Must not change the engine or a decision it reads. The operator and the webhook never import
it: it is for people.
"""

from .explain import explain_pod
from .group import explain_group
from .views import GangView, gang_views
from .whatif import Object, what_if
from .wording import Explanation

__all__ = [
    "Explanation",
    "GangView",
    "Object",
    "explain_group",
    "explain_pod",
    "gang_views",
    "what_if",
]
