"""Node pools, one quota tree each.

ElasticQuotaProfiles and the nodes they select (`Profile`), the root ElasticQuota each
profile's tree is kept at as nodes come and go (`desired_roots`), each pool's profile by tree id
(`pool_profiles`), and the node affinity that keeps a pool's pods on its nodes
(`pool_affinity`).

Must not import any part of the engine but `model`. The engine's core never imports it: to
the core, a pool is one more tree.
"""

from .affinity import pool_affinity
from .profile_roots import RootQuota, desired_roots, root_body, root_patch
from .profiles import KIND, Profile, parse_profile, pool_profiles, profile_of_tree, tree_hash

__all__ = [
    "KIND",
    "Profile",
    "RootQuota",
    "desired_roots",
    "parse_profile",
    "pool_affinity",
    "pool_profiles",
    "profile_of_tree",
    "root_body",
    "root_patch",
    "tree_hash",
]
