"""eq_operator: the Kopf operator that keeps quota numbers and pod labels true, and reclaims.

A thin edge around `eq_engine.QuotaEngine`: Kopf watches ElasticQuota, Pod and Node objects and
feeds the engine (`observing.py`); a loop recomputes in batches and writes only what changed
(`writing.py`); the leader evicts what the engine's reclaim plans name (`reclaiming.py`). No
finalizers, no Kopf state on anybody's objects. Never imports the webhook or the CLI.
"""
